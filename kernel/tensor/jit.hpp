// tg::TinyJit: captures the kernels one call of a function runs and replays them on later calls,
// skipping scheduling, lowering and the kernel/program cache lookups (tinygrad's TinyJit).
//
//   TinyJit step([&](const std::vector<Tensor>& in) { ...; return std::vector<Tensor>{loss}; });
//   for (...) Tensor loss = step({x, y})[0];
//
// Call 1 runs the function eagerly (warm-up: compiles, realizes lazily created state). Call 2
// runs it eagerly while recording every kernel it launches, then builds the replay. Calls 3+ run
// only the recorded kernels: on the device's launch_batch (ABI 1.1) when the plugin has it, else
// one launch per kernel. At DEBUG>=2 a replay launches its kernels one at a time and prints each
// one's line as an eager run does, marked "(jit)".
//
// What a replay binds, and what it freezes:
//  - inputs: the tensors passed in (made contiguous and realized first) replace call 2's inputs;
//  - state: tensors the function assign()s (parameters, optimizer and BatchNorm state) are read
//    from their current storage and get fresh storage with the new value, as eagerly;
//  - outputs: the returned tensors are fresh tensors on fresh storage after every call;
//  - everything else the kernels read (uploaded host scalars such as the learning rate, cached
//    constants) is call 2's data, frozen. Host code inside the function does not run on replays:
//    host values it computes per call (an lr schedule, the RNG counter) stay as captured.
//  - intermediates (written and dead within the step) live in the memory planner's shared
//    allocations (kernel/engine/memory_planner.hpp), allocated by the first replay from what
//    call 2's intermediates gave back to the allocator, so the JIT adds no peak memory.
//  - autograd history: a replay leaves none, so call 2 leaves none either. Gradients its
//    function set on requires_grad tensors are cleared when it returns (replays do not compute
//    them: return them from the function to read them), and what autograd kept to differentiate
//    through values realized inside it is dropped. Otherwise that history would keep every
//    intermediate of call 2 alive for as long as the JIT replays.
// Inputs of another shape, dtype or device than the capture's, or that share storage where the
// capture's did not (or the reverse), re-capture: that call runs eagerly
// and records again (it is not replayed). All captured kernels must run on one device, and a
// captured call may not copy between devices (JitError). JIT=0 in the environment runs every call
// eagerly.
#pragma once

#include "kernel/engine/memory_planner.hpp"
#include "kernel/tensor/tensor.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tg {

// A function the JIT cannot capture or replay; the message says why.
struct JitError : Error {
  using Error::Error;
};

// The memory of a captured step (bytes on the device).
struct JitMemory {
  uint64_t intermediate_bytes = 0; // each intermediate in its own buffer (no planner)
  uint64_t planned_bytes = 0;      // intermediates after the planner
  uint64_t peak_live_bytes = 0;    // most intermediate bytes live at one kernel (the bound)
  uint64_t bound_bytes = 0;        // inputs, state before and after, outputs, frozen constants
  size_t intermediates = 0, groups = 0;
  uint64_t unplanned_step_bytes() const { return bound_bytes + intermediate_bytes; }
  uint64_t planned_step_bytes() const { return bound_bytes + planned_bytes; }
};

class TinyJit {
public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;
  explicit TinyJit(Fn fn);
  ~TinyJit();
  TinyJit(const TinyJit&) = delete;
  TinyJit& operator=(const TinyJit&) = delete;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  bool captured() const { return captured_ != nullptr; }
  int64_t calls() const { return calls_; }
  int64_t replays() const { return replays_; }
  int64_t captures() const { return captures_; }
  size_t kernel_count() const; // kernels per replay (0 before capture)
  bool uses_launch_batch() const;
  // What the captured call computed on the host from device values or host state that may differ
  // per call (CaptureScope::note_host_dependence: "a read back to the host of ...", "a random
  // draw ..."); a replay keeps the captured call's outcome of it. Empty when none, or before capture.
  const std::string& host_dependence() const;
  // The planner's view of the captured step (empty before capture).
  const JitMemory& memory() const;
  const std::vector<BufferLifetime>& intermediate_lifetimes() const;
  const MemoryPlan& memory_plan() const;
  // Replays measure their kernels' total time (elapsed_ns) when this is on or DEBUG >= 1 and
  // the device has TG_FEATURE_TIMING (for `tg bench train --jit`).
  void measure_kernels(bool on) { measure_ = on; }
  // The last replay: kernel time (0 unless measured) and host wall time from binding the
  // buffers to the return of the launches, in ns.
  uint64_t last_replay_kernel_ns() const { return last_kernel_ns_; }
  uint64_t last_replay_wall_ns() const { return last_wall_ns_; }
  // Drops the capture: the next call records again.
  void reset();

private:
  struct Captured;
  std::vector<Tensor> capture(const std::vector<Tensor>& inputs);
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs);

  Fn fn_;
  std::unique_ptr<Captured> captured_;
  int64_t calls_ = 0, replays_ = 0, captures_ = 0;
  bool measure_ = false;
  uint64_t last_kernel_ns_ = 0, last_wall_ns_ = 0;
};

} // namespace tg
