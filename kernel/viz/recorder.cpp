#include "kernel/viz/recorder.hpp"

#include "kernel/engine/engine.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/viz/json.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iostream>

namespace tg::viz {
namespace {

std::size_t kernel_count(const Trace& t) {
  std::size_t n = 0;
  for (const auto& r : t.realizes) n += r.kernels.size();
  return n;
}

// A rule step's node, for the step list: small expressions in infix form; render() expands
// shared subtrees, so large ones show only their root.
std::string describe(const UOpRef& u) {
  if (toposort(u).size() <= 16) {
    std::string s = u->render();
    return s.size() > 200 ? s.substr(0, 197) + "..." : s;
  }
  std::string s = std::string(op_name(u->op())) + " " + u->dtype().name();
  if (!std::holds_alternative<std::monostate>(u->arg())) s += " " + arg_str(u->arg());
  return s + " (" + std::to_string(u->src().size()) + " sources)";
}

// VIZ=1: recording starts when libtg loads, and the trace is saved at exit (the default engine,
// which owns the recorder, is never destroyed).
[[maybe_unused]] const bool recording_from_environment = [] {
  if (!viz_from_environment()) return false;
  start_recording();
  std::atexit([] {
    if (Recorder* r = recorder()) try {
        r->save();
      } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
      }
  });
  return true;
}();

} // namespace

bool viz_from_environment() {
  const char* v = std::getenv("VIZ");
  return v && *v && std::string(v) != "0";
}

std::size_t max_rewrites_per_kernel() {
  // Read once: it bounds every kernel of the run alike.
  static const std::size_t bound = [] {
    const char* v = std::getenv("VIZ_MAX_REWRITES");
    if (!v || !*v) return kDefaultMaxRewrites;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end != '\0' || v[0] == '-') {
      std::cerr << "VIZ_MAX_REWRITES=" << v << " is not a count; using " << kDefaultMaxRewrites << "\n";
      return kDefaultMaxRewrites;
    }
    return std::size_t(n);
  }();
  return bound;
}

Recorder* recorder() { return dynamic_cast<Recorder*>(engine().observer()); }

Recorder& start_recording() {
  Engine& e = engine();
  Recorder& r = e.extension<Recorder>();
  e.set_observer(&r);
  return r;
}

Recorder::Recorder() { set_rewrite_sink(this); }

Recorder::~Recorder() { set_rewrite_sink(nullptr); }

Recorder::ThreadState& Recorder::state() { return threads_[std::this_thread::get_id()]; }

RealizeRecord& Recorder::current() {
  ThreadState& s = state();
  if (s.realize >= trace_.realizes.size()) {
    s.realize = trace_.realizes.size();
    trace_.realizes.emplace_back();
  }
  return trace_.realizes[s.realize];
}

void Recorder::begin_realize(const std::vector<UOpRef>& targets) {
  Graph g = graph_of(UOp::sink(targets));
  std::lock_guard lock(mutex_);
  ThreadState& s = state();
  s.realize = trace_.realizes.size();
  s.fresh_realize = true;
  trace_.realizes.push_back({std::move(g), {}});
}

void Recorder::on_schedule() {
  std::lock_guard lock(mutex_);
  ThreadState& s = state();
  if (!s.fresh_realize) s.realize = SIZE_MAX; // a schedule run on its own: a realize of its own
  s.fresh_realize = false;
  (void)current();
}

KernelRecord Recorder::base_record(const ScheduleItem& item, double ms) const {
  KernelRecord k;
  k.device = buffer_arg(item.buffers[0]).device();
  for (const auto& b : item.buffers) k.buffers.push_back(buffer_arg(b).str());
  k.ms = ms;
  return k;
}

void Recorder::on_kernel(const ScheduleItem& item, const PreparedKernel& kernel, double ms) {
  KernelRecord k = base_record(item, ms);
  k.name = kernel.lowered.name;
  k.opts = kernel.lowered.opts;
  std::lock_guard lock(mutex_);
  ThreadState& s = state();
  k.cached = !s.prepared;
  if (s.prepared) { // the stages, once per compiled kernel
    k.ast = graph_of(item.ast);
    k.rewrites = std::move(s.pending);
    k.rewrites_dropped = s.dropped;
    k.lowered = graph_of(kernel.lowered.sink);
    k.linear = kernel.linear.text;
    k.source = kernel.program->source;
  }
  s.pending.clear();
  s.prepared = false;
  current().kernels.push_back(std::move(k));
}

void Recorder::on_copy(const ScheduleItem& item, double ms) {
  KernelRecord k = base_record(item, ms);
  k.name = "copy";
  k.ast = graph_of(item.ast);
  std::lock_guard lock(mutex_);
  current().kernels.push_back(std::move(k));
}

bool Recorder::wants_rewrites() const {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(std::this_thread::get_id());
  return it != threads_.end() && it->second.in_kernel; // past the bound: counted, not recorded
}

void Recorder::on_graph_rewrite(const UOpRef& before, const UOpRef& after, std::vector<RewriteStep> steps) {
  {
    std::lock_guard lock(mutex_);
    ThreadState& s = state();
    if (s.pending.size() >= max_rewrites_per_kernel()) {
      ++s.dropped;
      return;
    }
  }
  RewriteRecord r;
  for (const auto& s : steps) r.steps.push_back({s.rule, describe(s.from), describe(s.to)});
  r.before = graph_of(before);
  r.after = graph_of(after, before);
  std::lock_guard lock(mutex_);
  state().pending.push_back(std::move(r));
}

void Recorder::begin_lowering() {
  std::lock_guard lock(mutex_);
  ThreadState& s = state();
  s.in_kernel = true;
  s.pending.clear();
  s.dropped = 0;
}

void Recorder::end_lowering() {
  std::lock_guard lock(mutex_);
  ThreadState& s = state();
  s.in_kernel = false;
  s.prepared = true;
}

Recorder::KernelScope::KernelScope(Recorder* r) : r_(r) {
  if (r_) r_->begin_lowering();
}

Recorder::KernelScope::~KernelScope() {
  if (r_) r_->end_lowering();
}

Trace Recorder::snapshot() const {
  std::lock_guard lock(mutex_);
  return trace_;
}

void Recorder::clear() {
  std::lock_guard lock(mutex_);
  trace_ = {};
  threads_.clear();
  saved_kernels_ = SIZE_MAX;
}

std::filesystem::path Recorder::save() {
  std::filesystem::path path;
  if (const char* f = std::getenv("VIZ_FILE"); f && *f)
    path = f;
  else
    path = std::filesystem::temp_directory_path() / ("tg_viz_" + std::to_string(::getpid()) + ".json");
  Trace t;
  {
    std::lock_guard lock(mutex_);
    if (saved_kernels_ == kernel_count(trace_) && !trace_.realizes.empty()) return path;
    saved_kernels_ = kernel_count(trace_);
    t = trace_;
  }
  save_trace(t, path);
  std::cerr << "VIZ: " << t.realizes.size() << " realizes, " << kernel_count(t) << " kernels saved to "
            << path.string() << " (open it with: tg viz " << path.string() << ")\n";
  return path;
}

} // namespace tg::viz
