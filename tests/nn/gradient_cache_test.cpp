// The gradient cache (kernel/tensor/gradient_cache.hpp): training steps of one structure rebuild the
// gradient graph the first one built, as the very nodes the rules build (checked on every hit with
// TG_GRADIENT_CACHE=2), and train to the same numbers bit for bit as with the cache off; what it
// must not reuse (custom gradients without a kind, gradients that reach a tensor outside the
// forward graph, explicit seeds, other structures) runs the rules.
#include "nn_util.hpp"

#include "kernel/tensor/gradient_cache.hpp"

#include <iostream>
#include <sstream>
#include <stdexcept>

using namespace nt;
namespace nn = tg::nn;
namespace optim = tg::optim;
using tg::detail::gradient_cache_stats;

namespace {

// Sets TG_GRADIENT_CACHE's mode for one scope (whatever the environment says); on (1) again after.
struct GradientCacheMode {
  explicit GradientCacheMode(int mode) { tg::set_gradient_cache(mode); }
  ~GradientCacheMode() { tg::set_gradient_cache(1); }
};

// 3x, with a custom gradient that multiplies g by `slope` and counts its calls. The forward
// graph does not show the slope.
Tensor scaled(const Tensor& x, double slope, int& calls, const std::string& kind) {
  Tensor node = x.with(x.uop(), x.shape());
  return Tensor::with_custom_gradient(
      x * 3.0,
      [node, slope, &calls](const Tensor& g) {
        ++calls;
        return std::vector<std::pair<Tensor, Tensor>>{{node, g * slope}};
      },
      kind);
}

} // namespace

BOOST_AUTO_TEST_SUITE(gradient_cache)

// Adam steps of a conv/BatchNorm/linear model, in one schedule and in parts: from the second step
// on the gradient graph comes from the cache, checked against the rules' (mode 2 throws on any
// difference), and the losses and parameters equal those of a run with the cache off.
BOOST_AUTO_TEST_CASE(training_steps_rebuild_the_rules_gradient_graph) {
  auto train = [](int cache_mode, int realize_mode) {
    GradientCacheMode cache(cache_mode);
    RealizeEarly early(realize_mode);
    Tensor::manual_seed(3);
    Rng rng(5);
    nn::Sequential model;
    model.add(nn::Conv2d(1, 4, 3, 1, 1))
        .add([](const Tensor& x) { return x.relu(); })
        .add(nn::BatchNorm(4))
        .add([](const Tensor& x) { return x.max_pool2d(2).flatten(1); })
        .add(nn::Linear(4 * 4 * 4, 3));
    std::vector<Tensor> state = model.parameters();
    for (auto& b : model.buffers()) state.push_back(b);
    optim::Adam opt(state, 0.01);
    Tensor X = f32(rng.vec(6 * 8 * 8), {6, 1, 8, 8});
    Tensor Y = i32({0, 2, 1, 1, 0, 2}, {6});
    const auto before = gradient_cache_stats();
    std::vector<double> out;
    for (int step = 0; step < 4; ++step) {
      opt.zero_grad();
      Tensor loss = nn::sparse_categorical_crossentropy(model(X), Y);
      loss.backward();
      opt.step_and_realize({loss});
      out.push_back(loss.item<double>());
    }
    for (const auto& t : state)
      for (double v : host(t)) out.push_back(v);
    const auto after = gradient_cache_stats();
    if (cache_mode > 0) {
      BOOST_TEST_MESSAGE("realize mode " << realize_mode << ": " << after.hits - before.hits << " hits, "
                                         << after.misses - before.misses << " misses");
      BOOST_TEST(after.hits - before.hits >= 2u, "steps 3 and 4 at least rebuild from the cache");
      BOOST_TEST(after.not_reusable == before.not_reusable);
    } else {
      BOOST_TEST(after.hits == before.hits);
      BOOST_TEST(after.misses == before.misses);
    }
    return out;
  };
  for (int realize_mode : {0, 1}) {
    const std::vector<double> off = train(0, realize_mode), checked = train(2, realize_mode);
    BOOST_TEST(off == checked, boost::test_tools::per_element());
  }
}

// A custom gradient without a kind runs every time; one with a kind runs until its structure's
// template is made (the second time: the first only notes the structure), then never.
BOOST_AUTO_TEST_CASE(a_custom_gradient_is_reused_only_with_a_kind) {
  GradientCacheMode on(1);
  for (const std::string kind : {"", "scaled by 3"}) {
    BOOST_TEST_CONTEXT("kind '" << kind << "'") {
      int calls = 0;
      const auto before = gradient_cache_stats();
      for (int step = 0; step < 4; ++step) {
        Tensor w = f64({1.0 + step, -2.0, 0.5}, {3}).requires_grad_();
        Tensor loss = (scaled(w, 3.0, calls, kind) * w).sum(); // d/dw = 3w (custom) + 3w
        loss.backward();
        BOOST_REQUIRE(w.grad().has_value());
        check_close(*w.grad(), {6.0 * (1.0 + step), -12.0, 3.0}, 1e-12, 0, "step " + std::to_string(step));
      }
      const auto after = gradient_cache_stats();
      BOOST_TEST(calls == (kind.empty() ? 4 : 2));
      BOOST_TEST(after.hits - before.hits == (kind.empty() ? 0u : 2u));
    }
  }
}

// A kind that does not name a parameter the function reads breaks the contract: the cache
// returns the first step's gradient. TG_GRADIENT_CACHE=2 catches it.
BOOST_AUTO_TEST_CASE(the_check_catches_a_kind_that_hides_a_parameter) {
  GradientCacheMode checked(2);
  int calls = 0;
  auto grad_with = [&](double slope) {
    Tensor w = f64({1.0, 2.0}, {2}).requires_grad_();
    scaled(w, slope, calls, "hides its slope").sum().backward();
    return host(*w.grad());
  };
  for (int i = 0; i < 2; ++i) // the second time makes the template
    BOOST_TEST(grad_with(2.0) == (std::vector<double>{2.0, 2.0}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(grad_with(5.0), std::logic_error);
}

// A gradient that reaches a tensor outside the forward graph (a captured input) would not follow
// the next step's tensor: it is not remembered, and each step runs the function on its own.
BOOST_AUTO_TEST_CASE(a_gradient_reaching_a_tensor_outside_the_graph_is_not_reused) {
  GradientCacheMode on(1);
  int calls = 0;
  const auto before = gradient_cache_stats();
  for (int step = 0; step < 3; ++step) {
    Tensor c = f64({double(step + 1), 10.0}, {2}).realize(); // not in the forward graph
    Tensor w = f64({1.0, 2.0}, {2}).requires_grad_();
    Tensor node = w.with(w.uop(), w.shape());
    Tensor y = Tensor::with_custom_gradient(
        w * 2.0,
        [node, c, &calls](const Tensor& g) {
          ++calls;
          return std::vector<std::pair<Tensor, Tensor>>{{node, g * c}};
        },
        "multiplies by a captured tensor");
    y.sum().backward();
    check_close(*w.grad(), {double(step + 1), 10.0}, 0, 0, "step " + std::to_string(step));
  }
  const auto after = gradient_cache_stats();
  BOOST_TEST(calls == 3);
  BOOST_TEST(after.hits == before.hits);
  BOOST_TEST(after.not_reusable - before.not_reusable == 2u); // the first time only notes the structure
}

// Another shape, other targets or an explicit seed are not the cached structure.
BOOST_AUTO_TEST_CASE(other_shapes_targets_and_seeds_run_the_rules) {
  GradientCacheMode checked(2);
  auto loss_of = [](const Tensor& a, const Tensor& b) { return (a * b + a.exp()).sum(); };
  Tensor a = f64({0.5, -1.0, 2.0}, {3}).requires_grad_(), b = f64({1.0, 2.0, 3.0}, {3}).requires_grad_();
  for (int i = 0; i < 2; ++i) (void)loss_of(a, b).gradient({a, b}); // noted, then remembered
  auto before = gradient_cache_stats();
  std::vector<Tensor> g = loss_of(a, b).gradient({a, b});
  BOOST_TEST(gradient_cache_stats().hits == before.hits + 1);
  check_close(g[0], {1.0 + std::exp(0.5), 2.0 + std::exp(-1.0), 3.0 + std::exp(2.0)}, 1e-12, 0, "d/da");
  check_close(g[1], {0.5, -1.0, 2.0}, 1e-12, 0, "d/db");

  before = gradient_cache_stats();
  std::vector<Tensor> only_b = loss_of(a, b).gradient({b}); // other targets
  Tensor a4 = f64({0.5, -1.0, 2.0, 0.0}, {4}).requires_grad_(), b4 = f64({1, 2, 3, 4}, {4});
  std::vector<Tensor> g4 = loss_of(a4, b4).gradient({a4}); // another shape
  auto after = gradient_cache_stats();
  BOOST_TEST(after.hits == before.hits);
  BOOST_TEST(after.misses == before.misses + 2);
  check_close(only_b[0], {0.5, -1.0, 2.0}, 1e-12, 0, "d/db alone");
  check_close(g4[0], {1.0 + std::exp(0.5), 2.0 + std::exp(-1.0), 3.0 + std::exp(2.0), 4.0 + 1.0}, 1e-12, 0,
              "d/da over 4");

  before = gradient_cache_stats();
  Tensor y = a * b;
  std::vector<Tensor> seeded = y.gradient({a}, f64({1.0, 0.0, -1.0}, {3})); // an explicit seed
  after = gradient_cache_stats();
  BOOST_TEST(after.hits == before.hits);
  BOOST_TEST(after.misses == before.misses);
  check_close(seeded[0], {1.0, 0.0, -3.0}, 1e-12, 0, "seeded d/da");
}

// DEBUG=1 says when a gradient graph came from the cache (and is silent when the rules ran).
BOOST_AUTO_TEST_CASE(debug_1_says_when_gradients_come_from_the_cache) {
  GradientCacheMode on(1);
  auto printed = [](int scale) {
    Tensor a = f64({0.5, -1.0}, {2}).requires_grad_();
    std::ostringstream out;
    std::streambuf* old = std::cout.rdbuf(out.rdbuf());
    tg::set_debug_level(1);
    (void)(a * a * double(scale)).sum().gradient({a});
    tg::set_debug_level(0);
    std::cout.rdbuf(old);
    return out.str();
  };
  BOOST_TEST(printed(7) == ""); // the structure noted
  BOOST_TEST(printed(7) == ""); // remembered
  BOOST_TEST(printed(7) == "gradient: 1 gradient rebuilt from the gradient cache\n");
}

BOOST_AUTO_TEST_SUITE_END()
