// Tensor::assign tells the JIT capturing on this thread (if any) that a tensor is about to change:
// the capture records it as step state. The JIT (jit.cpp) sets the observer; assign calls it.
#pragma once

namespace tg {

class Tensor;

class AssignObserver {
public:
  virtual ~AssignObserver() = default;
  virtual void on_assign(const Tensor& t) = 0;
};

// This thread's observer, or null.
AssignObserver* assign_observer();
// Sets this thread's observer (null: none); returns the one it replaces.
AssignObserver* set_assign_observer(AssignObserver* observer);

} // namespace tg
