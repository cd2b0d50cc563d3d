// Model::run's replays: per input signature (each input's shape, dtype and device), the kernels
// of one run are captured (tg::TinyJit) and later runs with that signature replay them, without
// building the graph, scheduling or looking kernels up again (what onnxruntime's session plan
// saves). The first run with a signature runs eagerly, the second captures, the third and later
// replay. A signature whose run reads a value back to the host (NonZero, If's condition, a shape
// computed from an input's values) or draws random numbers (Dropout in training mode) stays eager,
// as do runs inside a caller's own capture, runs while another thread replays, inputs that
// require gradients (a replay records no autograd history) and inputs on another device.
#pragma once

#include "kernel/tensor/jit.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tg::onnx {

class Replays {
public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  // eager: one run of the model; device: the model's; source: the name messages use
  Replays(Fn eager, std::string device, std::string source);
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  int64_t replays() const { return replays_.load(); }

private:
  struct Entry {
    std::unique_ptr<TinyJit> jit;
    bool eager = false; // this signature's runs do not replay
  };
  bool replayable(const std::vector<Tensor>& inputs) const;
  // The signature `key` runs eagerly from now on; DEBUG=1 says why.
  void stop_replaying(Entry& entry, const std::string& key, const std::string& why);

  Fn eager_;
  std::string device_, source_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_; // by signature
  std::atomic<int64_t> replays_{0};
};

} // namespace tg::onnx
