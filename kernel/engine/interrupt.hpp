// Safe points for a front end that must stop long work on request (Python's Ctrl-C). While an
// InterruptCheck lives on a thread, the engine calls its function before each kernel and copy it
// runs there and before each TinyJit replay; the function throws to stop the work (the exception
// leaves realize like any other failure: values not yet computed stay unrealized).
#pragma once

namespace tg {

class InterruptCheck {
public:
  // `check` is called at each safe point on this thread until the scope ends; it throws to stop.
  explicit InterruptCheck(void (*check)());
  ~InterruptCheck();
  InterruptCheck(const InterruptCheck&) = delete;
  InterruptCheck& operator=(const InterruptCheck&) = delete;

  // A safe point: calls the innermost live check of this thread, if any.
  static void poll();

private:
  void (*previous_)();
};

} // namespace tg
