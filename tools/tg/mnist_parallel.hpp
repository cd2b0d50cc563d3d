// Data-parallel beautiful_mnist for `tg train mnist --devices` and `tg bench train --devices`:
// one replica of the model per device (weights copied from the first, kept identical), the
// global batch split along axis 0, each replica's loss scaled by its share of the batch and
// all-reduced, gradients all-reduced (MultiTensor::grad through sync_grads), one Adam per device.
// BatchNorm uses each device's own batch statistics and running statistics (DDP's default);
// evaluation and checkpoints use the first device's replica.
#pragma once

#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/multi.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"
#include "tools/tg/mnist_model.hpp"

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace tg::cli {

// "CUDA:0,CUDA:1" -> {"CUDA:0", "CUDA:1"} (canonical; checked by tg::check_devices).
inline std::vector<std::string> parse_device_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) out.push_back(name);
  return check_devices(out);
}

class DataParallelMnist {
public:
  // `model` lives on devices[0] (the default device when it was built).
  DataParallelMnist(MnistNet& model, const std::vector<std::string>& devices, double lr) : devices_(devices) {
    std::vector<Tensor> first = model.parameters(), first_buffers = model.buffers();
    const std::string saved_default = default_device();
    for (size_t d = 0; d < devices.size(); ++d) {
      MnistNet* replica = &model;
      if (d > 0) {
        set_default_device(devices[d]); // the replica's modules create their tensors there
        owned_.push_back(std::make_unique<MnistNet>());
        replica = owned_.back().get();
      }
      replicas_.push_back(replica);
    }
    set_default_device(saved_default);
    // every replica starts from the first one's weights and statistics, copied through the host
    // once: plain buffers, with no collective (and so no gradient record) behind them
    auto copy_from_first = [&](std::vector<Tensor> (nn::Module::*list)(), std::vector<MultiTensor>* groups) {
      std::vector<Tensor> firsts = (replicas_[0]->*list)();
      std::vector<std::vector<Tensor>> per_device;
      for (auto* r : replicas_) per_device.push_back((r->*list)());
      for (size_t p = 0; p < firsts.size(); ++p) {
        const std::vector<std::byte> bytes = firsts[p].to_bytes();
        std::vector<Tensor> shards;
        for (size_t d = 0; d < replicas_.size(); ++d) {
          if (d > 0)
            per_device[d][p].assign(
                Tensor::from_bytes(bytes, firsts[p].shape(), firsts[p].dtype(), devices_[d]));
          shards.push_back(per_device[d][p]);
        }
        if (groups) groups->emplace_back(shards, std::nullopt);
      }
    };
    copy_from_first(&nn::Module::parameters, &params_);
    copy_from_first(&nn::Module::buffers, nullptr);
    for (auto* r : replicas_) {
      std::vector<Tensor> trainable = r->parameters();
      for (auto& b : r->buffers()) trainable.push_back(b);
      opts_.push_back(std::make_unique<optim::Adam>(trainable, lr));
    }
  }

  const std::vector<std::string>& devices() const { return devices_; }
  // The learning rate of every device's Adam from the next step on (a schedule; eager steps only).
  void set_lr(double lr) {
    for (auto& o : opts_) o->lr = lr;
  }

  // One step on the global batch (x: (n, 1, 28, 28) float, y: (n,) int; both sharded along axis
  // 0 over devices()). Returns the global mean loss (replicated).
  MultiTensor step(const MultiTensor& x, const MultiTensor& y) {
    using StepClock = std::chrono::steady_clock; // (bench_util.hpp has a Clock too)
    auto t = StepClock::now();
    auto lap = [&](std::string what) { // host time since the last lap (`tg bench train --devices`)
      auto now = StepClock::now();
      phase_ms.emplace_back(std::move(what), std::chrono::duration<double, std::milli>(now - t).count());
      t = now;
    };
    phase_ms.clear();
    for (auto& o : opts_) o->zero_grad();
    const double global = double(x.shape()[0]);
    std::vector<Tensor> partial;
    for (size_t d = 0; d < replicas_.size(); ++d) {
      const Tensor& xd = x.shards()[d];
      double share = double(xd.shape()[0]) / global; // the local mean, weighted to the global mean
      partial.push_back(nn::sparse_categorical_crossentropy((*replicas_[d])(xd), y.shards()[d]) * share);
      // The loss is the sum of the partials (an all-reduce), whose backward hands every partial
      // the seed 1: each device's pass starts at its own partial, lazily, so forward, backward
      // and the partial loss run in one schedule per device, before any collective.
      partial.back().backward();
    }
    lap("graphs");
    for (size_t d = 0; d < replicas_.size(); ++d) {
      std::vector<Tensor> work{partial[d]};
      for (auto& p : replicas_[d]->parameters())
        if (auto g = p.grad()) work.push_back(*g);
      // BatchNorm's running statistics are pending assigns over this batch's activations: realized
      // here they share the forward's kernels; left to the optimizer's schedule they recomputed the
      // convolutions (16.6 of 108 ms per step, batch 4096 on one H200).
      for (auto& b : replicas_[d]->buffers()) work.push_back(b);
      std::vector<Tensor*> targets;
      for (auto& w : work) targets.push_back(&w);
      Tensor::realize_all(targets);
      lap("forward+backward " + devices_[d]);
    }
    sync_grads(params_);
    lap("gradient all-reduce");
    for (auto& o : opts_) o->step();
    lap("optimizers");
    MultiTensor loss = all_reduce(partial);
    lap("loss all-reduce");
    return loss;
  }

  // Host time of the last step's phases in ms (launches return before the device finishes: a
  // phase that waits for a device shows it).
  std::vector<std::pair<std::string, double>> phase_ms;

private:
  std::vector<std::string> devices_;
  std::vector<std::unique_ptr<MnistNet>> owned_; // replicas 1..n-1
  std::vector<MnistNet*> replicas_;
  std::vector<MultiTensor> params_; // one replicated group per parameter
  std::vector<std::unique_ptr<optim::Adam>> opts_;
};

} // namespace tg::cli
