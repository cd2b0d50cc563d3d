// How the ranks of world.hpp meet: a barrier and a broadcast of a few bytes, over MPI or over
// TCP sockets to rank 0. Internal to kernel/distributed.
#pragma once

#include "kernel/distributed/errors.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace tg::distributed::detail {

class Rendezvous {
public:
  virtual ~Rendezvous() = default;
  virtual void barrier() = 0;
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
  virtual void finalize() = 0;
  [[noreturn]] virtual void abort(int code) = 0;
};

// Who this process is among the ranks.
struct Ranks {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
};

// MPI_Init_thread and MPI_COMM_WORLD; fills `ranks` from MPI.
std::unique_ptr<Rendezvous> mpi_rendezvous(Ranks& ranks, std::chrono::milliseconds timeout);
// Connects every rank to rank 0 at address:port (ranks.rank and ranks.size already known).
std::unique_ptr<Rendezvous> tcp_rendezvous(const Ranks& ranks, std::chrono::milliseconds timeout,
                                           const std::string& address, int port);
// Whether a MPI launcher started this process (its environment variables).
bool launched_by_mpi();

} // namespace tg::distributed::detail
