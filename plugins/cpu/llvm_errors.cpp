#include "llvm_errors.hpp"

#include <llvm/Support/ErrorHandling.h>

#include <csetjmp>
#include <mutex>
#include <unistd.h>

namespace tg::cpu {
namespace {

// Why a handler and a jump, not llvm::CrashRecoveryContext or a child process: LLVM reports
// selection failures through report_fatal_error, which calls the installed handler first, so
// catching it needs no process-wide signal handlers (CrashRecoveryContext::Enable installs them
// for SIGSEGV/SIGABRT/..., taking them from the host application) and no fork per compile (which
// costs milliseconds and can deadlock on locks held by other threads). LLVM is built without
// exceptions, so the handler cannot throw; it jumps back to run_catching_fatal_errors instead.
struct RecoveryPoint {
  sigjmp_buf jump;
};
thread_local RecoveryPoint* t_point = nullptr; // innermost run_catching_fatal_errors on this thread
thread_local std::string t_message;            // not a local of the function that calls sigsetjmp

void on_fatal_error(void*, const char* reason, bool) {
  if (RecoveryPoint* point = t_point) {
    t_message = reason != nullptr ? reason : "(no message)";
    siglongjmp(point->jump, 1);
  }
  // Not inside a compile on this thread: what LLVM does without a handler (it aborts after this).
  std::string line = std::string("LLVM ERROR: ") + (reason != nullptr ? reason : "") + "\n";
  [[maybe_unused]] ssize_t written = ::write(2, line.data(), line.size());
}

// Installed for the plugin's lifetime; removed when it is unloaded, so libLLVM (which outlives
// the plugin) never calls into unmapped code.
struct Handler {
  Handler() { llvm::install_fatal_error_handler(&on_fatal_error, nullptr); }
  ~Handler() { llvm::remove_fatal_error_handler(); }
};

} // namespace

std::optional<std::string> run_catching_fatal_errors(llvm::function_ref<void()> fn) {
  static Handler handler;
  RecoveryPoint point;
  RecoveryPoint* const outer = t_point;
  if (sigsetjmp(point.jump, 0) != 0) {
    t_point = outer;
    return std::move(t_message);
  }
  t_point = &point;
  try {
    fn();
  } catch (...) {
    t_point = outer;
    throw;
  }
  t_point = outer;
  return std::nullopt;
}

} // namespace tg::cpu
