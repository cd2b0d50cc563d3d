// How the ranks of world.hpp meet: a barrier and a broadcast of a few bytes, over MPI or over
// TCP sockets to rank 0. Internal to kernel/distributed.
#pragma once

#include "kernel/distributed/world.hpp"

#include <memory>

namespace tg::distributed::detail {

class Rendezvous {
public:
  virtual ~Rendezvous() = default;
  virtual void barrier() = 0;
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
  virtual void finalize() = 0;
  [[noreturn]] virtual void abort(int code) = 0;
};

// MPI_Init_thread and MPI_COMM_WORLD; fills world's rank, size and local rank.
std::unique_ptr<Rendezvous> mpi_rendezvous(World& world);
// Connects every rank to rank 0 at MASTER_ADDR:MASTER_PORT; world's rank and size are set.
std::unique_ptr<Rendezvous> tcp_rendezvous(const World& world, const std::string& address, int port);
// Whether a MPI launcher started this process (its environment variables).
bool launched_by_mpi();

} // namespace tg::distributed::detail
