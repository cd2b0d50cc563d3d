#include "kernel/tensor/assign_hook.hpp"

namespace tg {

namespace {
thread_local AssignObserver* observer = nullptr; // per thread, like a JIT capture
} // namespace

AssignObserver* assign_observer() { return observer; }

AssignObserver* set_assign_observer(AssignObserver* o) {
  AssignObserver* before = observer;
  observer = o;
  return before;
}

} // namespace tg
