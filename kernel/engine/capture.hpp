// Kernel capture for the JIT: while a CaptureScope lives on a thread, run_schedule records every
// kernel it launches there (the prepared program, the storage of each buffer argument, the launch
// dims) besides running it. The recording holds the buffers that no recorded kernel wrote (inputs,
// constants: a replay reads them) and only weak references to the ones a kernel wrote, so an
// intermediate goes back to the allocator as soon as the step drops it, as without a capture: the
// capturing call's peak memory is the eager step's. A weak reference's owner (its control block) is
// a buffer's identity for the whole recording, even after the buffer is freed and its memory reused.
#pragma once

#include "kernel/engine/prepared.hpp"
#include "kernel/runtime/allocator.hpp"

#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace tg {

struct CapturedBuffer {
  std::weak_ptr<DeviceStorage> ref;    // identity (compare with std::owner_less)
  std::shared_ptr<DeviceStorage> held; // set unless a recorded kernel wrote it before this launch
  uint64_t bytes = 0;
};

struct CapturedLaunch {
  std::shared_ptr<PreparedKernel> kernel;
  std::vector<CapturedBuffer> buffers; // the item's buffers: [0] the output
  LaunchDims dims;
  std::string device; // canonical name of the device it ran on
};

class CaptureScope {
public:
  CaptureScope();  // records on this thread; scopes do not nest (throws Error)
  ~CaptureScope(); // stops recording
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  const std::vector<CapturedLaunch>& launches() const { return launches_; }
  // The scope recording on this thread, or nullptr.
  static CaptureScope* active();
  // Records a launch; buffers[0] is the one it writes.
  void record(std::shared_ptr<PreparedKernel> kernel, std::span<const std::shared_ptr<DeviceStorage>> buffers,
              const LaunchDims& dims, std::string device);
  // Host work of the recorded call whose result a replay would keep as recorded: a value read
  // back to the host (what the host then did with it is not in the kernels), a random draw (the
  // generator's counter is host state). Keeps the first such note; empty when none.
  void note_host_dependence(std::string what);
  const std::string& host_dependence() const { return host_dependence_; }

private:
  std::vector<CapturedLaunch> launches_;
  std::string host_dependence_;
  std::set<std::weak_ptr<DeviceStorage>, std::owner_less<>> written_;
};

} // namespace tg
