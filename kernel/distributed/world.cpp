#include "kernel/distributed/world.hpp"

#include "kernel/distributed/rendezvous.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>

namespace tg::distributed {
namespace {

// The process's one World and rendezvous (set once by init, under the mutex).
struct State {
  std::mutex mutex;
  bool ready = false;
  World world;
  std::unique_ptr<detail::Rendezvous> rendezvous;
};

State& state() {
  static State s;
  return s;
}

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// A whole number from the environment, checked.
int env_int(const char* name, int fallback, int lo, int hi) {
  const char* text = env(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < lo || value > hi)
    throw DistributedError(std::string(name) + "='" + text + "' is not a whole number in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return int(value);
}

std::chrono::milliseconds timeout_from_env() {
  const char* text = env("TG_DISTRIBUTED_TIMEOUT");
  if (text == nullptr) return std::chrono::milliseconds(300000);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds >= 0) || seconds > 1e7)
    throw DistributedError(std::string("TG_DISTRIBUTED_TIMEOUT='") + text +
                           "' is not a number of seconds >= 0 (0 waits without limit)");
  return std::chrono::milliseconds(int64_t(seconds * 1000.0));
}

detail::Rendezvous& rendezvous(const char* call) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.ready)
    throw DistributedError(std::string("tg::distributed::") + call + ": call tg::distributed::init() first");
  if (!s.rendezvous)
    throw DistributedError(std::string("tg::distributed::") + call + ": finalize() already ran");
  return *s.rendezvous;
}

} // namespace

const World& init() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.ready) return s.world;
  World w;
  w.timeout = timeout_from_env();
  if (detail::launched_by_mpi()) {
    w.launcher = "mpi";
    detail::Ranks r;
    s.rendezvous = detail::mpi_rendezvous(r, w.timeout);
    w.rank = r.rank;
    w.size = r.size;
    w.local_rank = r.local_rank;
    w.local_size = r.local_size;
  } else if (env("WORLD_SIZE") != nullptr) {
    w.launcher = "env";
    w.size = env_int("WORLD_SIZE", 1, 1, 1 << 20);
    if (env("RANK") == nullptr)
      throw DistributedError("WORLD_SIZE is set but RANK is not (torchrun's convention)");
    w.rank = env_int("RANK", 0, 0, w.size - 1);
    w.local_rank = env_int("LOCAL_RANK", w.rank, 0, w.size - 1);
    w.local_size = env_int("LOCAL_WORLD_SIZE", w.size, 1, w.size);
    const char* address = env("MASTER_ADDR");
    const int port = env_int("MASTER_PORT", 29500, 1, 65535);
    if (w.size > 1)
      s.rendezvous = detail::tcp_rendezvous({w.rank, w.size, w.local_rank, w.local_size}, w.timeout,
                                            address ? address : "127.0.0.1", port);
  }
  s.world = w;
  s.ready = true;
  std::atexit([] { finalize(); });
  return s.world;
}

const World* world() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.ready ? &s.world : nullptr;
}

void barrier() {
  const World* w = world();
  if (w == nullptr) throw DistributedError("tg::distributed::barrier: call tg::distributed::init() first");
  if (w->size > 1) rendezvous("barrier").barrier();
}

void broadcast_bytes(std::span<std::byte> bytes, int root) {
  const World* w = world();
  if (w == nullptr)
    throw DistributedError("tg::distributed::broadcast_bytes: call tg::distributed::init() first");
  if (root < 0 || root >= w->size)
    throw DistributedError("tg::distributed::broadcast_bytes: root " + std::to_string(root) +
                           " is not a rank of " + std::to_string(w->size));
  if (w->size > 1) rendezvous("broadcast_bytes").broadcast(bytes, root);
}

void abort(const std::string& why, int code) {
  State& s = state();
  const int rank = s.ready ? s.world.rank : 0;
  std::cerr << "rank " << rank << ": " << why << std::endl;
  if (s.ready && s.rendezvous) s.rendezvous->abort(code); // the others end too
  std::_Exit(code);
}

void finalize() {
  State& s = state();
  std::unique_ptr<detail::Rendezvous> r;
  {
    std::lock_guard lock(s.mutex);
    r = std::move(s.rendezvous);
  }
  if (r) r->finalize();
}

} // namespace tg::distributed
