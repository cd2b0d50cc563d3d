// A small training step for VIZ's end-to-end test (viz_e2e.py): a two-layer MLP, its loss, the
// backward pass and an SGD step on the default device. Run with VIZ=1, it leaves a trace in
// $VIZ_FILE at exit.
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"
#include "kernel/tensor/tensor.hpp"

#include <iostream>

int main() {
  using namespace tg;
  nn::Linear l1(8, 16), l2(16, 4);
  std::vector<Tensor> params = l1.parameters();
  for (auto& p : l2.parameters()) params.push_back(p);
  optim::SGD opt(params, 0.1);
  Tensor x = Tensor::randn({4, 8});
  Tensor y = Tensor::randint({4}, 0, 4);
  opt.zero_grad();
  Tensor loss = nn::sparse_categorical_crossentropy(l2.forward(l1.forward(x).relu()), y);
  loss.backward();
  opt.step();
  std::cout << "loss " << loss.item<float>() << "\n";
  return 0;
}
