// Kernel capture for the JIT: while a CaptureScope lives on a thread, run_schedule records every
// kernel it launches there (the prepared program, the storage of each buffer argument, the launch
// dims) besides running it. The scope keeps that storage alive, so no buffer of the captured step
// is recycled while it records and a storage's identity names one buffer.
#pragma once

#include "kernel/runtime/realize.hpp"

#include <memory>
#include <string>
#include <vector>

namespace tg {

struct CapturedLaunch {
  std::shared_ptr<PreparedKernel> kernel;
  std::vector<std::shared_ptr<DeviceStorage>> buffers; // the item's buffers: [0] the output
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
  void record(CapturedLaunch launch) { launches_.push_back(std::move(launch)); }

private:
  std::vector<CapturedLaunch> launches_;
};

} // namespace tg
