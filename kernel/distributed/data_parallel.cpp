#include "kernel/distributed/data_parallel.hpp"

#include <cstdint>

namespace tg::distributed {
namespace {

// FNV-1a over the bytes: equal values give equal hashes on every host.
uint64_t hash_bytes(std::span<const std::byte> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (std::byte b : bytes) {
    h ^= uint64_t(b);
    h *= 1099511628211ull;
  }
  return h;
}

// Sums `grads` (all of one dtype) over the ranks: packed into one buffer, one all-reduce, views.
void reduce_bucket(std::vector<Tensor>& grads, const ProcessGroup& group) {
  std::vector<Tensor> flat;
  for (const Tensor& g : grads) flat.push_back(g.reshape({g.numel()}));
  Tensor summed = group.all_reduce(flat.size() == 1 ? flat[0] : Tensor::cat(flat, 0));
  int64_t at = 0;
  for (Tensor& g : grads) {
    const int64_t n = g.numel();
    g = summed.shrink({{at, at + n}}).reshape(g.shape());
    at += n;
  }
}

} // namespace

void all_reduce_gradients(const std::vector<Tensor>& params, const ProcessGroup& group, size_t bucket_bytes) {
  // which parameters have gradients must agree across ranks, or the buckets would not line up
  std::vector<int32_t> has;
  std::vector<Tensor> grads;
  std::vector<size_t> owner;
  for (size_t i = 0; i < params.size(); ++i) {
    std::optional<Tensor> g = params[i].grad();
    has.push_back(g ? 1 : 0);
    if (g) {
      grads.push_back(*g);
      owner.push_back(i);
    }
  }
  if (has.empty()) return;
  const std::vector<int32_t> ranks_with =
      group
          .all_reduce(Tensor::from_vector<int32_t>(has, {int64_t(has.size())}, dtypes::int32, group.device()))
          .to_vector<int32_t>();
  for (size_t i = 0; i < params.size(); ++i)
    if (ranks_with[i] != 0 && ranks_with[i] != group.size())
      throw DistributedError("all_reduce_gradients: parameter #" + std::to_string(i) + " " + params[i].str() +
                             " has a gradient on " + std::to_string(ranks_with[i]) + " of " +
                             std::to_string(group.size()) + " ranks (this rank: " + (has[i] ? "yes" : "no") +
                             ")");
  std::vector<Tensor*> targets;
  for (Tensor& g : grads) targets.push_back(&g);
  Tensor::realize_all(targets);
  // buckets in order, each of one dtype and about bucket_bytes
  auto bytes_of = [](const Tensor& g) { return size_t(g.numel()) * size_t(g.dtype().itemsize()); };
  for (size_t first = 0; first < grads.size();) {
    size_t last = first + 1, bytes = bytes_of(grads[first]);
    for (; last < grads.size() && grads[last].dtype() == grads[first].dtype(); ++last) {
      if (bytes + bytes_of(grads[last]) > bucket_bytes) break;
      bytes += bytes_of(grads[last]);
    }
    std::vector<Tensor> bucket(grads.begin() + long(first), grads.begin() + long(last));
    reduce_bucket(bucket, group);
    for (size_t k = first; k < last; ++k) {
      Tensor p = params[owner[k]];
      p.set_grad(bucket[k - first]);
    }
    first = last;
  }
}

void broadcast_parameters(std::vector<Tensor>& params, const ProcessGroup& group, int root) {
  std::vector<Tensor*> targets;
  for (Tensor& p : params) {
    p.assign(group.broadcast(p.detach(), root));
    targets.push_back(&p);
  }
  Tensor::realize_all(targets);
}

void check_replicas(const std::vector<Tensor>& params, const ProcessGroup& group, const std::string& when) {
  std::vector<uint64_t> hashes;
  for (const Tensor& p : params) hashes.push_back(hash_bytes(p.to_bytes()));
  if (hashes.empty()) return;
  const int64_t n = int64_t(hashes.size());
  std::vector<uint64_t> all =
      group.all_gather(Tensor::from_vector<uint64_t>(hashes, {n}, dtypes::uint64, group.device()))
          .to_vector<uint64_t>();
  for (int r = 1; r < group.size(); ++r)
    for (int64_t i = 0; i < n; ++i)
      if (all[size_t(r * n + i)] != all[size_t(i)])
        throw DistributedError("the replicas differ " + when + ": parameter #" + std::to_string(i) + " " +
                               params[size_t(i)].str() + " on rank " + std::to_string(r) +
                               " is not rank 0's (the ranks applied different updates)");
}

} // namespace tg::distributed
