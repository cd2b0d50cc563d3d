// Ranks in several processes: who this process is among the ranks a launcher started, and the
// rendezvous they share. Three launchers are recognized, in this order:
//   mpi   mpirun/mpiexec (Open MPI's OMPI_COMM_WORLD_*, PMIx or PMI variables): MPI_Init_thread
//         (MPI_THREAD_MULTIPLE), rank and size from MPI_COMM_WORLD, the rendezvous over MPI;
//   env   torchrun's convention, RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT (LOCAL_RANK and
//         LOCAL_WORLD_SIZE optional): a TCP rendezvous at rank 0's MASTER_ADDR:MASTER_PORT;
//   none  a single process: rank 0 of 1.
// The rendezvous carries small things only (a communicator's id, a barrier); tensors move through
// the plugins' collectives (process_group.hpp). TG_DISTRIBUTED_TIMEOUT (seconds, default 300)
// bounds every wait for the other ranks; 0 waits without limit.
#pragma once

#include "kernel/distributed/errors.hpp"

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tg::distributed {

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0; // among the ranks on this host (picks the GPU: CUDA:<local_rank>)
  int local_size = 1;
  std::string launcher = "none"; // "mpi", "env" or "none"
  std::chrono::milliseconds timeout{300000};
};

// Joins the ranks (once per process; later calls return the same World). Throws
// DistributedError for a bad environment (RANK outside WORLD_SIZE, an unreachable
// MASTER_ADDR, a rank that does not arrive within the timeout).
const World& init();
// The World of init(), or nullptr before it.
const World* world();
// Every rank reaches it before any leaves (throws DistributedError on timeout).
void barrier();
// `bytes` (the same size on every rank) becomes rank root's on every rank.
void broadcast_bytes(std::span<std::byte> bytes, int root = 0);
// Ends the process and, under MPI, every rank (MPI_Abort), after printing `why` to stderr with
// this rank's number. What a rank calls when it cannot go on, so the others never wait for it.
[[noreturn]] void abort(const std::string& why, int code = 1);
// Leaves cleanly (MPI_Finalize; closes the TCP rendezvous). Also runs at exit when init() ran.
void finalize();

} // namespace tg::distributed
