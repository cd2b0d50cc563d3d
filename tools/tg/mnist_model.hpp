// tinygrad's beautiful_mnist model, shared by `tg train mnist` and `tg bench train`.
#pragma once

#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"

#include <vector>

namespace tg::cli {

// Conv 1->32 5x5, ReLU, Conv 32->32 5x5, ReLU, BatchNorm, maxpool, Conv 32->64 3x3, ReLU,
// Conv 64->64 3x3, ReLU, BatchNorm, maxpool, flatten, Linear 576->10.
struct MnistNet : nn::Module {
  nn::Conv2d c1{1, 32, 5}, c2{32, 32, 5}, c3{32, 64, 3}, c4{64, 64, 3};
  nn::BatchNorm bn1{32}, bn2{64};
  nn::Linear fc{576, 10};
  void members(nn::MemberVisitor& v) override {
    v.module("c1", c1);
    v.module("c2", c2);
    v.module("bn1", bn1);
    v.module("c3", c3);
    v.module("c4", c4);
    v.module("bn2", bn2);
    v.module("fc", fc);
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = bn1(c2(c1(x).relu()).relu()).max_pool2d(2);
    h = bn2(c4(c3(h).relu()).relu()).max_pool2d(2);
    return fc(h.flatten(1));
  }
};

// One training step, in the form tg::TinyJit takes: inputs {images, labels} -> {loss}, with Adam
// stepped and the new weights realized. An optional third input, a 0-d tensor, is this step's
// learning rate (a schedule's value: as an input, a TinyJit replay reads it too).
inline auto mnist_step(MnistNet& model, optim::Adam& opt) {
  return [&model, &opt](const std::vector<Tensor>& in) {
    if (in.size() > 2)
      opt.lr_tensor = in[2];
    else
      opt.lr_tensor.reset();
    opt.zero_grad();
    Tensor loss = nn::sparse_categorical_crossentropy(model(in[0]), in[1]);
    loss.backward();
    opt.step_and_realize({loss});
    return std::vector<Tensor>{loss};
  };
}

} // namespace tg::cli
