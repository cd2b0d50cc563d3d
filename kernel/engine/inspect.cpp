#include "kernel/engine/inspect.hpp"

#include "kernel/engine/realize.hpp"

namespace tg {

KernelReport inspect_kernel(const ScheduleItem& item) {
  std::shared_ptr<PreparedKernel> kernel = prepare_kernel(item, /*want_source=*/true);
  return {kernel->lowered.name, kernel->lowered.opts, kernel->lowered.applied, kernel->linear.text,
          kernel->program->source};
}

} // namespace tg
