// ABI 1.6 on CPU devices: collectives across processes through MPI, in place on the buffers this
// plugin owns. The ranks of a communicator are MPI_COMM_WORLD's (the process must have called
// MPI_Init_thread, as tg::distributed::init does under mpirun); the id carries only a tag that
// says so; a communicator of one rank needs no MPI (its collectives are copies). Every wait polls a
// nonblocking MPI call against the comm's timeout, so a rank that died or skipped a call gives
// DEADLINE_EXCEEDED instead of a hang.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <array>
#include <memory>

namespace tg::cpu {

std::array<std::byte, TG_COMM_ID_BYTES> mpi_unique_id();
std::unique_ptr<sdk::Comm> mpi_comm_init(const sdk::CommInit& init);

} // namespace tg::cpu
