// Runs a piece of work in a fork()ed child, so a crash or a hang in the plugin is reported and
// the run goes on. The child's answer comes back as bytes over a pipe; the child leaves with
// _exit (no atexit handlers or static destructors of the parent run twice).
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace tg::conform {

struct ChildResult {
  enum class Kind { answered, crashed, timed_out, silent } kind = Kind::answered;
  std::string payload; // answered: what the body returned
  int signal = 0;      // crashed: the signal that killed it
  int exit_code = 0;   // silent: the child exited without answering
};

// Runs body() in a child; kills it (SIGKILL) after `timeout`.
ChildResult run_in_child(const std::function<std::string()>& body, std::chrono::milliseconds timeout);

} // namespace tg::conform
