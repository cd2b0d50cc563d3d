// Data-parallel beautiful_mnist across processes for `tg train mnist --distributed` (one rank per
// process, started by mpirun or torchrun's RANK/WORLD_SIZE convention): every rank holds the
// model on its own device and starts from rank 0's weights; each step it trains on its share of
// the global batch, its loss scaled by that share, and the gradients are summed over the ranks
// (tg::distributed::all_reduce_gradients), so every rank applies the same Adam step. BatchNorm
// keeps each rank's batch and running statistics (DDP's default); rank 0 evaluates and saves.
#pragma once

#include "kernel/distributed/data_parallel.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"
#include "tools/tg/mnist_model.hpp"

#include <string>
#include <vector>

namespace tg::cli {

class DistributedMnist {
public:
  DistributedMnist(MnistNet& model, optim::Adam& opt, const std::string& device)
      : model_(model), opt_(opt), group_(device), params_(model.parameters()) {
    distributed::broadcast_parameters(params_, group_);
  }

  const distributed::ProcessGroup& group() const { return group_; }

  // One step on this rank's share (x, y) of a global batch of `global` rows; returns the global
  // mean loss (the same on every rank).
  float step(const Tensor& x, const Tensor& y, int64_t global) {
    opt_.zero_grad();
    // the learning rate as an input, so a schedule does not compile new kernels each step
    opt_.lr_tensor =
        Tensor::from_vector<float>(std::vector<float>{float(opt_.lr)}, Dims{}, {}, group_.device());
    const double share = double(x.shape()[0]) / double(global);
    Tensor loss = nn::sparse_categorical_crossentropy(model_(x), y) * share;
    loss.backward();
    // the loss, the gradients and BatchNorm's pending running statistics in one schedule
    std::vector<Tensor> work{loss};
    for (auto& b : model_.buffers()) work.push_back(b);
    for (auto& p : params_)
      if (auto g = p.grad()) work.push_back(*g);
    std::vector<Tensor*> targets;
    for (auto& w : work) targets.push_back(&w);
    Tensor::realize_all(targets);
    distributed::all_reduce_gradients(params_, group_);
    opt_.step();
    return group_.all_reduce(work[0]).item<float>();
  }

  // Throws DistributedError unless every rank's weights are rank 0's.
  void check_replicas(const std::string& when) { distributed::check_replicas(params_, group_, when); }

private:
  MnistNet& model_;
  optim::Adam& opt_;
  distributed::ProcessGroup group_;
  std::vector<Tensor> params_;
};

} // namespace tg::cli
