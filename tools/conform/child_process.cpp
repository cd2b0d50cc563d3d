#include "tools/conform/child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tg::conform {
namespace {

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += size_t(n);
  }
}

} // namespace

ChildResult run_in_child(const std::function<std::string()>& body, std::chrono::milliseconds timeout) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr); // buffered output would be written twice
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    // A crash must end the child with its signal, so the parent can say `crash (signal N)`:
    // sanitizer runtimes (and some drivers) install handlers that would turn it into exit(1).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
    std::string answer;
    try {
      answer = "1" + body();
    } catch (const std::exception& e) {
      answer = "0" + std::string(e.what());
    } catch (...) {
      answer = "0unknown exception";
    }
    write_all(fds[1], answer);
    ::close(fds[1]);
    std::fflush(nullptr);
    _exit(0);
  }
  ::close(fds[1]);
  ChildResult result;
  std::string data;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[4096];
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // the child closed its end: finished or died
    data.append(chunk, size_t(n));
  }
  ::close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    result.kind = ChildResult::Kind::timed_out;
  } else if (WIFSIGNALED(status)) {
    result.kind = ChildResult::Kind::crashed;
    result.signal = WTERMSIG(status);
  } else if (data.empty()) {
    result.kind = ChildResult::Kind::silent;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  } else {
    result.payload = std::move(data);
  }
  return result;
}

} // namespace tg::conform
