// ABI 1.2 between the CPU plugin's logical devices: their buffers are all host memory, so a peer
// copy is a memmove and a collective is a reduction over host memory, split into chunks that run
// on the shared thread pool.
#pragma once

#include "thread_pool.hpp"

#include <tg/sdk/adaptor.hpp>

namespace tg::cpu {

void peer_copy(const sdk::PeerCopy& copy);
void run_collective(const sdk::Collective& collective, ThreadPool& pool);

} // namespace tg::cpu
