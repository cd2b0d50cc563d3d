// tg::TinyJit on the device under test (TG_DEVICE; ctest runs it on CUDA, where launch_batch is
// one CUDA graph): a replayed training step equals the eager one, at a batch where BatchNorm
// reduces over 36864 values per channel (work-group reductions on a GPU).
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tg;

namespace {

struct Net : nn::Module {
  nn::Conv2d c1{1, 4, 3};
  nn::BatchNorm bn{4};
  nn::Linear fc{4 * 6 * 6, 3};
  void members(nn::MemberVisitor& v) override {
    v.module("c1", c1);
    v.module("bn", bn);
    v.module("fc", fc);
  }
  Tensor forward(const Tensor& x) override { return fc(bn(c1(x).relu()).flatten(1)); }
};

constexpr int64_t kBatch = 1024; // BatchNorm reduces 1024 * 6 * 6 = 36864 values per channel

struct Run {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;
  bool batched = false;
  size_t kernels = 0;
};

Run train(bool jit, int steps) {
  Tensor::manual_seed(5);
  Net model;
  std::vector<Tensor> trainable = model.parameters();
  for (auto& b : model.buffers()) trainable.push_back(b);
  optim::Adam opt(trainable, 0.01);
  auto step = [&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = nn::sparse_categorical_crossentropy(model(in[0]), in[1]);
    loss.backward();
    opt.step_and_realize({loss});
    return std::vector<Tensor>{loss};
  };
  TinyJit jit_step(step);
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> pixel(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 2);
  Run run;
  for (int s = 0; s < steps; ++s) {
    std::vector<float> x(size_t(kBatch) * 64);
    std::vector<int32_t> y(static_cast<size_t>(kBatch));
    for (auto& v : x) v = pixel(gen);
    for (auto& v : y) v = label(gen);
    Tensor tx = Tensor::from_vector(x, {kBatch, 1, 8, 8}), ty = Tensor::from_vector(y, {kBatch});
    run.losses.push_back((jit ? jit_step({tx, ty}) : step({tx, ty}))[0].item<float>());
  }
  for (auto& p : trainable) run.weights.push_back(p.to_vector<float>());
  run.batched = jit_step.captured() && jit_step.uses_launch_batch();
  run.kernels = jit_step.captured() ? jit_step.kernel_count() : 0;
  return run;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_REQUIRE_MESSAGE(std::isfinite(got[i]) &&
                              std::fabs(got[i] - want[i]) <= 1e-5f + 1e-4f * std::fabs(want[i]),
                          what << "[" << i << "]: " << got[i] << " vs " << want[i]);
}

} // namespace

BOOST_AUTO_TEST_CASE(replayed_steps_equal_eager_ones_on_the_device) {
  const int steps = 5; // warm-up, capture, 3 replays
  Run eager = train(false, steps);
  Run jit = train(true, steps);
  BOOST_TEST(jit.batched); // the replay went through the device's launch_batch
  BOOST_TEST(jit.kernels > 1u);
  check_close(jit.losses, eager.losses, "loss");
  for (size_t p = 0; p < eager.weights.size(); ++p)
    check_close(jit.weights[p], eager.weights[p], "tensor " + std::to_string(p));
  BOOST_TEST(jit.losses[4] != jit.losses[2]); // the replays trained
}
