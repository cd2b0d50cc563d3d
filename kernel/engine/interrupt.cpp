#include "kernel/engine/interrupt.hpp"

namespace tg {

namespace {
thread_local void (*current_check)() = nullptr; // per-thread: each front-end thread has its own
} // namespace

InterruptCheck::InterruptCheck(void (*check)()) : previous_(current_check) { current_check = check; }
InterruptCheck::~InterruptCheck() { current_check = previous_; }

void InterruptCheck::poll() {
  if (current_check) current_check();
}

} // namespace tg
