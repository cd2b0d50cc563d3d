// What the engine tells an observer (VIZ, kernel/viz/recorder.hpp) while it works. The engine
// holds at most one; without one, each notification point costs one pointer check. While one is
// attached the engine shows it every kernel: schedules are not replayed from the schedule cache nor
// launched as one batch, kernels are timed and their sources rendered.
#pragma once

#include "kernel/schedule/schedule.hpp"

#include <vector>

namespace tg {

struct PreparedKernel;

class EngineObserver {
public:
  virtual ~EngineObserver() = default;
  // A realize of these targets starts (Tensor::realize_all); its run_schedule follows on the same
  // thread.
  virtual void begin_realize(const std::vector<UOpRef>& targets) = 0;
  // run_schedule starts: it belongs to the realize just begun, or stands on its own.
  virtual void on_schedule() = 0;
  // One kernel of the schedule ran (ms: its time) / one copy between devices ran.
  virtual void on_kernel(const ScheduleItem& item, const PreparedKernel& kernel, double ms) = 0;
  virtual void on_copy(const ScheduleItem& item, double ms) = 0;
  // The calling thread lowers one kernel between these two (its graph rewrites belong to it).
  virtual void begin_lowering() = 0;
  virtual void end_lowering() = 0;
};

} // namespace tg
