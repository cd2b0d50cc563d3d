// tg::TinyJit and the memory planner on the CPU plugin: a replayed training step equals the eager
// one (losses and weights, same seed and batches), a shape change captures again, and the
// planner's assignment shares storage only between buffers whose lifetimes are disjoint.
#include "kernel/engine/config.hpp"
#include "kernel/engine/memory_planner.hpp"
#include "kernel/runtime/allocator.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace tg;

namespace {

struct SmallNet : nn::Module {
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

struct Batch {
  std::vector<float> x;
  std::vector<int32_t> y;
};

std::vector<Batch> batches(int count, int64_t bs) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> pixel(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 2);
  std::vector<Batch> out(static_cast<size_t>(count));
  for (auto& b : out) {
    for (int64_t i = 0; i < bs * 64; ++i) b.x.push_back(pixel(gen));
    for (int64_t i = 0; i < bs; ++i) b.y.push_back(label(gen));
  }
  return out;
}

// Trains a fresh SmallNet (same seed) for data.size() steps; returns the losses and final weights.
struct Run {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;
  JitMemory memory;
  std::vector<BufferLifetime> lifetimes;
  MemoryPlan plan;
  int64_t replays = 0;
};
// With `lr_input`, each step's learning rate (a different one per step, as a schedule's) is the
// step function's third input.
Run train(const std::vector<Batch>& data, int64_t bs, bool jit, bool lr_input = false) {
  Tensor::manual_seed(3);
  SmallNet model;
  std::vector<Tensor> trainable = model.parameters();
  for (auto& b : model.buffers()) trainable.push_back(b);
  optim::Adam opt(trainable, 0.01);
  auto step = [&](const std::vector<Tensor>& in) {
    if (in.size() > 2) opt.lr_tensor = in[2];
    opt.zero_grad();
    Tensor loss = nn::sparse_categorical_crossentropy(model(in[0]), in[1]);
    loss.backward();
    opt.step_and_realize({loss});
    return std::vector<Tensor>{loss};
  };
  TinyJit jit_step(step);
  Run run;
  std::vector<Tensor> losses; // read at the end: each replay's output must stay intact
  for (const auto& b : data) {
    Tensor x = Tensor::from_vector(b.x, {bs, 1, 8, 8});
    Tensor y = Tensor::from_vector(b.y, {bs});
    std::vector<Tensor> in{x, y};
    if (lr_input) in.push_back(Tensor::full({}, losses.size() % 2 ? 0.002 : 0.03, dtypes::float32));
    losses.push_back(jit ? jit_step(in)[0] : step(in)[0]);
  }
  for (auto& l : losses) run.losses.push_back(l.item<float>());
  for (auto& p : trainable) run.weights.push_back(p.to_vector<float>());
  run.memory = jit_step.memory();
  run.lifetimes = jit_step.intermediate_lifetimes();
  run.plan = jit_step.memory_plan();
  run.replays = jit_step.replays();
  return run;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_REQUIRE_MESSAGE(std::fabs(got[i] - want[i]) <= 1e-5f + 1e-5f * std::fabs(want[i]),
                          what << "[" << i << "]: " << got[i] << " vs " << want[i]);
}

// Members of one group never live at the same time, and each group holds its largest member.
void check_assignment(const std::vector<BufferLifetime>& b, const MemoryPlan& plan) {
  BOOST_REQUIRE_EQUAL(plan.group_of.size(), b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    BOOST_TEST(plan.group_bytes.at(plan.group_of[i]) >= b[i].bytes);
    for (size_t j = i + 1; j < b.size(); ++j)
      if (plan.group_of[i] == plan.group_of[j])
        BOOST_TEST((b[i].last < b[j].first || b[j].last < b[i].first),
                   "buffers " << i << " and " << j << " share storage while both live");
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(replayed_training_steps_equal_eager_ones) {
  const int64_t bs = 4;
  auto data = batches(5, bs); // warm-up, capture, then 3 replays
  Run eager = train(data, bs, false);
  Run jit = train(data, bs, true);
  BOOST_TEST(jit.replays == 3);
  check_close(jit.losses, eager.losses, "loss");
  for (size_t p = 0; p < eager.weights.size(); ++p)
    check_close(jit.weights[p], eager.weights[p], "tensor " + std::to_string(p));
  // The losses differ from step to step: the replays trained (the weights moved).
  BOOST_TEST(jit.losses[4] != jit.losses[2]);
  // The captured step's planner: fewer bytes, and a valid assignment.
  BOOST_TEST(jit.memory.intermediates > 0u);
  BOOST_TEST(jit.memory.groups < jit.memory.intermediates);
  BOOST_TEST(jit.memory.planned_bytes < jit.memory.intermediate_bytes);
  BOOST_TEST(jit.memory.planned_bytes >= jit.memory.peak_live_bytes);
  check_assignment(jit.lifetimes, jit.plan);
}

// An lr schedule reaches the replays when the lr is one of the step's inputs (Optimizer::lr_tensor):
// host code such as `opt.lr = ...` does not run on replays, inputs are bound anew.
BOOST_AUTO_TEST_CASE(an_lr_input_changes_on_replays) {
  const int64_t bs = 4;
  auto data = batches(5, bs);
  Run eager = train(data, bs, false, true);
  Run jit = train(data, bs, true, true);
  Run constant = train(data, bs, true, false);
  BOOST_TEST(jit.replays == 3);
  check_close(jit.losses, eager.losses, "loss");
  for (size_t p = 0; p < eager.weights.size(); ++p)
    check_close(jit.weights[p], eager.weights[p], "tensor " + std::to_string(p));
  // lr alternates 0.03, 0.002, ...: a replay that kept the captured step's 0.002 would not match
  // the eager run; and the lr was read at all (the constant run's 0.01 trains differently)
  BOOST_TEST(jit.losses[4] != constant.losses[4]);
  BOOST_TEST(std::fabs(jit.losses[4] - constant.losses[4]) > 1e-4f);
}

// The JIT adds no memory: the capturing call leaves no autograd history (it clears the gradients
// it set), so its intermediates go back to the allocator and the planner's buffers are made of
// them. Before, the first replay allocated the planned buffers on top of them.
BOOST_AUTO_TEST_CASE(replays_reuse_the_captured_calls_memory) {
  const int64_t bs = 32;
  auto data = batches(4, bs);
  Tensor::manual_seed(3);
  SmallNet model;
  std::vector<Tensor> params = model.parameters();
  optim::Adam opt(params, 0.01);
  TinyJit jit_step([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = nn::sparse_categorical_crossentropy(model(in[0]), in[1]);
    loss.backward();
    opt.step_and_realize({loss});
    return std::vector<Tensor>{loss};
  });
  auto allocator = open_device("CPU").allocator;
  auto held = [&] { return allocator->live_bytes() + allocator->cached_bytes(); };
  auto call = [&](const Batch& b) {
    (void)jit_step({Tensor::from_vector(b.x, {bs, 1, 8, 8}), Tensor::from_vector(b.y, {bs})})[0]
        .item<float>();
  };
  call(data[0]); // warm-up, eager: the gradients stay on the parameters, as without a JIT
  BOOST_TEST(params[0].grad().has_value());
  call(data[1]); // capture
  BOOST_TEST(!params[0].grad().has_value(), "the capturing call's gradients were cleared");
  const uint64_t after_capture = held();
  call(data[2]); // first replay: allocates the planned buffers
  call(data[3]);
  BOOST_TEST(jit_step.replays() == 2);
  BOOST_TEST(jit_step.memory().planned_bytes > 0u);
  BOOST_TEST(held() <= after_capture + after_capture / 50,
             "device memory held grew from " << after_capture << " to " << held() << " bytes (planned "
                                             << jit_step.memory().planned_bytes << ")");
}

BOOST_AUTO_TEST_CASE(a_shape_change_captures_again) {
  Tensor w = Tensor::from_vector(std::vector<float>{2.0f}, {1}).realize();
  TinyJit f([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * w + 1.0).sum()}; });
  auto call = [&](std::vector<float> x) {
    auto n = int64_t(x.size());
    return f({Tensor::from_vector(x, {n})})[0].item<float>();
  };
  BOOST_TEST(call({1, 2, 3, 4}) == 24.0f); // warm-up
  BOOST_TEST(call({1, 1, 1, 1}) == 12.0f); // capture
  BOOST_TEST(call({0, 0, 0, 1}) == 6.0f);  // replay with the new input bound
  BOOST_TEST(f.replays() == 1);
  BOOST_TEST(f.captures() == 1);
  BOOST_TEST(call({1, 2, 3, 4, 5, 6}) == 48.0f); // another shape: captured again, eagerly
  BOOST_TEST(f.captures() == 2);
  BOOST_TEST(call({1, 1, 1, 1, 1, 1}) == 18.0f); // replayed at the new shape
  BOOST_TEST(f.replays() == 2);
  BOOST_TEST(call({1.0f, 1.0f}) == 6.0f); // and again
  BOOST_TEST(f.captures() == 3);
}

// A captured call that reads a value back to the host or draws random numbers says so
// (host_dependence); one that does neither says nothing.
BOOST_AUTO_TEST_CASE(host_dependence_names_reads_and_random_draws) {
  auto capture = [](TinyJit& f) {
    for (int i = 0; i < 2; ++i) f({Tensor::from_vector(std::vector<float>{1, 2}, {2})});
    BOOST_REQUIRE(f.captured());
    return f.host_dependence();
  };
  TinyJit pure([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; });
  BOOST_TEST(capture(pure).empty());
  TinyJit reads([](const std::vector<Tensor>& in) {
    float s = in[0].sum().item<float>();
    return std::vector<Tensor>{in[0] * s};
  });
  BOOST_TEST(capture(reads).find("read back to the host") != std::string::npos, capture(reads));
  TinyJit draws([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] + Tensor::rand({2}, dtypes::float32, in[0].device())};
  });
  BOOST_TEST(capture(draws).find("random draw") != std::string::npos, capture(draws));
}

// At DEBUG=2 a replay prints each kernel's line, as an eager run does, marked "(jit)", and still
// computes the right values.
BOOST_AUTO_TEST_CASE(debug2_replays_print_each_kernel) {
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}).realize();
  TinyJit f([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * w).sum(), (in[0] + w).exp2().contiguous()};
  });
  auto input = [](float s) { return Tensor::from_vector(std::vector<float>{s, s, s}, {3}); };
  for (int i = 0; i < 2; ++i) f({input(1)});
  BOOST_REQUIRE(f.captured());
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  set_debug_level(2);
  std::vector<Tensor> got = f({input(2)});
  set_debug_level(0);
  std::cout.rdbuf(old);
  BOOST_TEST(f.replays() == 1);
  size_t lines = 0;
  for (size_t at = out.str().find("(jit)"); at != std::string::npos; at = out.str().find("(jit)", at + 1))
    ++lines;
  BOOST_TEST(lines == f.kernel_count(), out.str());
  BOOST_TEST(out.str().find("*** CPU") != std::string::npos, out.str());
  BOOST_TEST(got[0].item<float>() == 12.0f); // 2 * (1 + 2 + 3)
  BOOST_TEST(got[1].to_vector<float>() == (std::vector<float>{8, 16, 32}), boost::test_tools::per_element());
}

// The same tensor passed twice binds one buffer in the capture: a later call with two different
// tensors captures again instead of reading the first one twice.
BOOST_AUTO_TEST_CASE(inputs_that_share_storage_capture_apart) {
  TinyJit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] - in[1]}; });
  Tensor a = Tensor::from_vector(std::vector<float>{5, 7}, {2}).realize();
  for (int i = 0; i < 3; ++i) BOOST_TEST(f({a, a})[0].to_vector<float>() == (std::vector<float>{0, 0}));
  BOOST_TEST(f.replays() == 1);
  Tensor b = Tensor::from_vector(std::vector<float>{1, 2}, {2}).realize();
  BOOST_TEST(f({a, b})[0].to_vector<float>() == (std::vector<float>{4, 5}));
  BOOST_TEST(f.captures() == 2);
}

BOOST_AUTO_TEST_CASE(planner_shares_only_disjoint_lifetimes) {
  // a chain: 0 dies before 2 starts, 1 before 3; 4 overlaps everything
  std::vector<BufferLifetime> b{{0, 1, 100}, {1, 2, 50}, {2, 3, 80}, {3, 4, 120}, {0, 4, 10}};
  MemoryPlan plan = plan_memory(b);
  check_assignment(b, plan);
  BOOST_TEST(plan.group_of[0] == plan.group_of[2]); // disjoint: same storage
  BOOST_TEST(plan.group_of[1] == plan.group_of[3]);
  BOOST_TEST(plan.group_of[0] != plan.group_of[1]); // overlap at launch 1
  BOOST_TEST(plan.group_of[4] != plan.group_of[0]);
  BOOST_TEST(plan.group_of[4] != plan.group_of[1]);
  BOOST_TEST(plan.unplanned_bytes == 360u);
  BOOST_TEST(plan.planned_bytes == 100u + 120u + 10u);
  BOOST_TEST(plan.peak_live_bytes == 210u); // launch 3: buffers 2, 3 and 4
  BOOST_CHECK_THROW(plan_memory(std::vector<BufferLifetime>{{3, 2, 8}}), Error);
  // random lifetimes: always a valid assignment
  std::mt19937 gen(1);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferLifetime> r;
    for (int i = 0; i < 30; ++i) {
      size_t first = gen() % 40;
      r.push_back({first, first + gen() % 6, 1 + gen() % 1000});
    }
    check_assignment(r, plan_memory(r));
  }
}
