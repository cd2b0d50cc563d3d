// Counting what realizes run: while a LaunchCounter lives, every kernel that run_schedule launches
// on this thread (and every copy between devices it makes) is recorded in it, with the kernel's
// name, device and time. A program can then check a claim such as "(a + b).relu().sum() is one
// kernel" without parsing DEBUG=1's output. Counters nest: each live counter on the thread sees
// every launch. A TinyJit replay does not go through run_schedule, so it is not counted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tg {

struct KernelLaunch {
  std::string name;   // the lowered kernel's name, e.g. "r_16_4"
  std::string device; // canonical device name, e.g. "CPU"
  double ms = 0;      // device-timed where the device can time it (and DEBUG>=1), else host time
};

class LaunchCounter {
public:
  LaunchCounter();  // starts counting on this thread
  ~LaunchCounter(); // stops
  LaunchCounter(const LaunchCounter&) = delete;
  LaunchCounter& operator=(const LaunchCounter&) = delete;

  size_t kernels() const { return launches_.size(); }
  size_t copies() const { return copies_; }
  const std::vector<KernelLaunch>& launches() const { return launches_; }
  double total_ms() const;
  void reset(); // forget what was counted so far, keep counting

  // Called by run_schedule (kernel/engine/realize.cpp) for each launch and copy on this thread.
  static void note_kernel(const std::string& name, const std::string& device, double ms);
  static void note_copy();
  // Whether a counter lives on this thread (run_schedule times its launches only then, or at DEBUG).
  static bool counting();

private:
  std::vector<KernelLaunch> launches_;
  size_t copies_ = 0;
};

} // namespace tg
