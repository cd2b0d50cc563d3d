// ABI 1.6 on CUDA devices: collectives across processes through NCCL (nccl.hpp), one process per
// GPU and one rank each. The id is NCCL's own (ncclGetUniqueId: rank 0's address, which the host
// sends to every rank); comm_init is ncclCommInitRank on the device's primary context. Each
// collective is one NCCL call on the device's stream and returns once queued (TG_FEATURE_ASYNC),
// so it orders with the launches there without a host wait.
//
// The comm's timeout is not enforced: NCCL's blocking init waits until every rank has joined, and
// a collective's wait happens on the stream, where synchronize waits for it. What NCCL notices in
// the background (a peer gone, a network failure) fails the next collective and aborts the comm.
// Without NCCL both entries answer UNAVAILABLE; what NCCL cannot reduce (16-bit integers, a BOOL
// sum) answers UNIMPLEMENTED, since across processes the host has no fallback.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <array>
#include <memory>

namespace tg::cuda {

std::array<std::byte, TG_COMM_ID_BYTES> nccl_unique_id();
std::unique_ptr<sdk::Comm> nccl_comm_init(const sdk::CommInit& init);

} // namespace tg::cuda
