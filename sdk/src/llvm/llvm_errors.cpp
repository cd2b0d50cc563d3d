#include <tg/sdk/llvm_errors.hpp>

#include <llvm/Support/ErrorHandling.h>

#include <csetjmp>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace tg::sdk {
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

// The handler is in libLLVM only while some call runs on some thread of this plugin: installed by
// the first, removed by the last, so an unloaded plugin never leaves it behind and another plugin
// with LLVM (its own copy of this file) gets the slot between our compiles.
std::mutex g_install_mutex;
int g_running = 0; // calls of run_catching_fatal_errors in progress, all threads

struct Installed {
  Installed() {
    std::lock_guard lock(g_install_mutex);
    if (g_running++ == 0) llvm::install_fatal_error_handler(&on_fatal_error, nullptr);
  }
  ~Installed() {
    std::lock_guard lock(g_install_mutex);
    if (--g_running == 0) llvm::remove_fatal_error_handler();
  }
  Installed(const Installed&) = delete;
  Installed& operator=(const Installed&) = delete;
};

} // namespace

std::optional<std::string> run_catching_fatal_errors(llvm::function_ref<void()> fn) {
  Installed installed; // declared before the jump point: destroyed on both ways out
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

void abandon_after_fatal_error(std::shared_ptr<void> state) {
  static std::mutex mutex;
  static std::vector<std::shared_ptr<void>> abandoned;
  std::lock_guard lock(mutex);
  abandoned.push_back(std::move(state));
}

} // namespace tg::sdk
