#include "kernel/engine/launch_counter.hpp"

#include <algorithm>

namespace tg {

namespace {
// The live counters of this thread, innermost last (like CaptureScope, per thread).
thread_local std::vector<LaunchCounter*> counters;
} // namespace

LaunchCounter::LaunchCounter() { counters.push_back(this); }

LaunchCounter::~LaunchCounter() { std::erase(counters, this); }

double LaunchCounter::total_ms() const {
  double ms = 0;
  for (const auto& l : launches_) ms += l.ms;
  return ms;
}

void LaunchCounter::reset() {
  launches_.clear();
  copies_ = 0;
}

void LaunchCounter::note_kernel(const std::string& name, const std::string& device, double ms) {
  for (LaunchCounter* c : counters) c->launches_.push_back({name, device, ms});
}

bool LaunchCounter::counting() { return !counters.empty(); }

void LaunchCounter::note_copy() {
  for (LaunchCounter* c : counters) ++c->copies_;
}

} // namespace tg
