#include "kernel/onnx/replay.hpp"

#include "kernel/engine/capture.hpp"
#include "kernel/engine/config.hpp"

#include <iostream>

namespace tg::onnx {

namespace {

// Signatures kept at once; a model run with more distinct input shapes starts over (each entry
// holds its capture's intermediates).
constexpr size_t kMaxSignatures = 8;

std::string signature(const std::vector<Tensor>& inputs) {
  std::string key;
  for (const auto& t : inputs) key += t.dtype().name() + dims_str(t.shape()) + t.device() + "|";
  return key;
}

} // namespace

Replays::Replays(Fn eager, std::string device, std::string source)
    : eager_(std::move(eager)), device_(std::move(device)), source_(std::move(source)) {}

bool Replays::replayable(const std::vector<Tensor>& inputs) const {
  if (!config().jit || CaptureScope::active()) return false;
  for (const auto& t : inputs)
    if (t.device() != device_ || t.requires_grad() || t.numel() == 0) return false;
  return true;
}

void Replays::stop_replaying(Entry& entry, const std::string& key, const std::string& why) {
  entry.eager = true;
  entry.jit.reset();
  if (config().debug >= 1)
    std::cout << "onnx: " << source_ << ": runs with inputs " << key << " run eagerly, not replayed: " << why
              << "\n";
}

std::vector<Tensor> Replays::run(const std::vector<Tensor>& inputs) {
  if (!replayable(inputs)) return eager_(inputs);
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return eager_(inputs); // another thread is replaying
  std::string key = signature(inputs);
  if (!entries_.count(key) && entries_.size() >= kMaxSignatures) entries_.clear();
  Entry& entry = entries_[key];
  if (entry.eager) return eager_(inputs);
  if (!entry.jit) entry.jit = std::make_unique<TinyJit>(eager_);
  const int64_t replayed = entry.jit->replays();
  std::vector<Tensor> out;
  try {
    out = (*entry.jit)(inputs);
  } catch (const JitError& e) { // the run cannot be captured (an output that no kernel computes)
    stop_replaying(entry, key, e.what());
    return eager_(inputs);
  }
  if (entry.jit->replays() > replayed) ++replays_;
  // (this run's outputs are the eager run's, right as they are)
  if (entry.jit->captured() && !entry.jit->host_dependence().empty())
    stop_replaying(entry, key, "the run made " + entry.jit->host_dependence());
  return out;
}

} // namespace tg::onnx
