// Data-parallel training across processes (PyTorch DDP's scheme, without a wrapper class): every
// rank holds the whole model, starts from rank 0's weights, computes gradients on its share of
// the global batch (its loss scaled by that share), sums them over the ranks and applies the
// same optimizer step, so the weights stay identical -- which check_replicas verifies.
#pragma once

#include "kernel/distributed/process_group.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tg::distributed {

// Replaces every parameter's gradient with its sum over the ranks. Gradients are realized in
// one schedule, then packed into buckets of about `bucket_bytes` (one dtype each): per bucket
// one packing kernel and one all-reduce, the gradients becoming views of the result. A
// parameter without a gradient must lack it on every rank (DistributedError otherwise, which
// names it).
void all_reduce_gradients(const std::vector<Tensor>& params, const ProcessGroup& group,
                          size_t bucket_bytes = size_t(25) << 20);

// Every rank's parameters become rank root's (realized).
void broadcast_parameters(std::vector<Tensor>& params, const ProcessGroup& group, int root = 0);

// Throws DistributedError unless every rank's parameters hold the same bytes as rank 0's (a
// 64-bit hash per parameter, all-gathered); the message names the parameter, the rank and `when`.
void check_replicas(const std::vector<Tensor>& params, const ProcessGroup& group, const std::string& when);

} // namespace tg::distributed
