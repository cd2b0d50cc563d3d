// Optimizers against torch's update equations computed on the host (3 steps on a tiny float64
// parameter whose gradient k * p + c depends on the parameter), LR schedules against torch's
// closed forms, and a short training run of a small MLP.
#include "nn_util.hpp"

#include "kernel/engine/engine.hpp"
#include "kernel/engine/launch_counter.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/schedule/schedule.hpp"
#include "kernel/tensor/autograd.hpp"

#include <functional>
#include <optional>

using namespace nt;
namespace nn = tg::nn;
namespace optim = tg::optim;

namespace {

const std::vector<double> kP0 = {1.0, -2.0, 3.0, 0.5}, kK = {1.0, 2.0, 0.5, 3.0}, kC = {0.1, -0.3, 0.2, 0.0};

// loss = sum(k p^2 / 2 + c p): gradient k * p + c
Tensor quad_loss(const Tensor& p) { return (f64(kK, {4}) * p * p * 0.5 + f64(kC, {4}) * p).sum(); }
std::vector<double> quad_grad(const std::vector<double>& p) {
  std::vector<double> g(p.size());
  for (size_t i = 0; i < p.size(); ++i) g[i] = kK[i] * p[i] + kC[i];
  return g;
}

// Runs `steps` optimizer steps on a fresh parameter and checks it against `reference` (which
// updates the host copy given the gradient and the 1-based step number) after each one.
void run_against(const std::string& name,
                 const std::function<std::unique_ptr<optim::Optimizer>(Tensor&)>& make,
                 const std::function<void(std::vector<double>&, const std::vector<double>&, int)>& reference,
                 int steps = 3, const std::function<void(optim::Optimizer&, int)>& between = {}) {
  BOOST_TEST_CONTEXT(name) {
    Tensor p = f64(kP0, {4});
    p.requires_grad_();
    auto opt = make(p);
    std::vector<double> want = kP0;
    for (int t = 1; t <= steps; ++t) {
      opt->zero_grad();
      quad_loss(p).backward();
      opt->step();
      BOOST_TEST(realized(p), "parameter realized by step()");
      reference(want, quad_grad(want), t);
      check_close(p, want, 1e-12, 1e-14, name + " after step " + std::to_string(t));
      if (between) between(*opt, t);
    }
    BOOST_TEST(opt->step_count() == steps);
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(optimizers)

BOOST_AUTO_TEST_CASE(sgd) {
  const double lr = 0.1;
  run_against(
      "SGD plain", [&](Tensor& p) { return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, lr); },
      [&](auto& p, const auto& g, int) {
        for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * g[i];
      });
  // momentum: buf = g on step 1, then momentum * buf + g
  for (bool nesterov : {false, true}) {
    std::vector<double> buf(4);
    run_against(
        nesterov ? "SGD nesterov" : "SGD momentum",
        [&](Tensor& p) {
          return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, lr, 0.9, 0.0, nesterov);
        },
        [&](auto& p, const auto& g, int t) {
          for (size_t i = 0; i < p.size(); ++i) {
            buf[i] = t == 1 ? g[i] : 0.9 * buf[i] + g[i];
            double d = nesterov ? g[i] + 0.9 * buf[i] : buf[i];
            p[i] -= lr * d;
          }
        });
  }
  // weight decay (L2 added to the gradient) with momentum
  std::vector<double> buf(4);
  run_against(
      "SGD weight decay + momentum",
      [&](Tensor& p) { return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, lr, 0.5, 0.1); },
      [&](auto& p, const auto& g, int t) {
        for (size_t i = 0; i < p.size(); ++i) {
          double d = g[i] + 0.1 * p[i];
          buf[i] = t == 1 ? d : 0.5 * buf[i] + d;
          p[i] -= lr * buf[i];
        }
      });
}

BOOST_AUTO_TEST_CASE(adam_adamw) {
  struct Cfg {
    const char* name;
    double lr, b1, b2, eps, wd;
    bool decoupled;
  };
  for (Cfg c : {Cfg{"Adam", 0.1, 0.9, 0.999, 1e-8, 0, false},
                Cfg{"Adam betas (0.5, 0.6), eps 0.1", 0.05, 0.5, 0.6, 0.1, 0, false},
                Cfg{"Adam L2 weight decay", 0.1, 0.9, 0.999, 1e-8, 0.2, false},
                Cfg{"AdamW", 0.1, 0.9, 0.999, 1e-8, 0.01, true},
                Cfg{"AdamW wd 0.3", 0.2, 0.8, 0.99, 1e-6, 0.3, true}}) {
    std::vector<double> m(4, 0), v(4, 0);
    run_against(
        c.name,
        [&](Tensor& p) -> std::unique_ptr<optim::Optimizer> {
          if (c.decoupled)
            return std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, c.lr, c.b1, c.b2, c.eps, c.wd);
          return std::make_unique<optim::Adam>(std::vector<Tensor>{p}, c.lr, c.b1, c.b2, c.eps, c.wd);
        },
        [&](auto& p, const auto& grad, int t) { // torch.optim.Adam/AdamW, single-tensor path
          for (size_t i = 0; i < p.size(); ++i) {
            double g = grad[i];
            if (c.decoupled)
              p[i] *= 1 - c.lr * c.wd;
            else
              g += c.wd * p[i];
            m[i] = c.b1 * m[i] + (1 - c.b1) * g;
            v[i] = c.b2 * v[i] + (1 - c.b2) * g * g;
            double bc1 = 1 - std::pow(c.b1, t), bc2 = 1 - std::pow(c.b2, t);
            p[i] -= c.lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps);
          }
        });
  }
  // the moments are realized optimizer state
  Tensor p = f64(kP0, {4});
  p.requires_grad_();
  optim::Adam adam({p}, 0.1);
  quad_loss(p).backward();
  adam.step();
  BOOST_TEST(realized(adam.m[0]));
  BOOST_TEST(realized(adam.v[0]));
  std::vector<double> g = quad_grad(kP0), m1(4);
  for (size_t i = 0; i < 4; ++i) m1[i] = 0.1 * g[i];
  check_close(adam.m[0], m1, 1e-12, 1e-15, "Adam m after one step");
}

// The step in parts (backward() realizes the loss, step_and_realize the gradients before the
// update; the default on asynchronous devices) against torch's equations, as adam_adamw above.
BOOST_AUTO_TEST_CASE(adam_realized_in_parts) {
  RealizeEarly early(1);
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  run_against(
      "Adam in parts",
      [&](Tensor& p) { return std::make_unique<optim::Adam>(std::vector<Tensor>{p}, lr, b1, b2, eps); },
      [&, m = std::vector<double>(4), v = std::vector<double>(4)](auto& p, const auto& g, int t) mutable {
        for (size_t i = 0; i < p.size(); ++i) {
          m[i] = b1 * m[i] + (1 - b1) * g[i];
          v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
          double mh = m[i] / (1 - std::pow(b1, t)), vh = v[i] / (1 - std::pow(b2, t));
          p[i] -= lr * mh / (std::sqrt(vh) + eps);
        }
      });
}

BOOST_AUTO_TEST_CASE(float32_and_lr_changes) {
  // float32 parameter: same equations, float32 rounding
  Tensor p = f32(kP0, {4});
  p.requires_grad_();
  optim::Adam adam({p}, 0.05);
  std::vector<double> want = kP0, m(4, 0), v(4, 0);
  for (int t = 1; t <= 3; ++t) {
    adam.zero_grad();
    (f32(kK, {4}) * p * p * 0.5f + f32(kC, {4}) * p).sum().backward();
    adam.step();
    std::vector<double> g = quad_grad(want);
    for (size_t i = 0; i < 4; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      want[i] -=
          0.05 / (1 - std::pow(0.9, t)) * m[i] / (std::sqrt(v[i]) / std::sqrt(1 - std::pow(0.999, t)) + 1e-8);
    }
    check_close(p, want, 1e-5, 1e-6, "Adam float32 step " + std::to_string(t));
  }
  // lr changed between steps (a schedule) takes effect on the next step; a value kept for a step
  // reuses its upload (Optimizer::host_scalar), one dropped and set again is uploaded anew
  std::vector<double> lrs = {0.1, 0.05, 0.05, 0.2, 0.1, 0.01};
  run_against(
      "SGD with lr changing every step",
      [&](Tensor& q) { return std::make_unique<optim::SGD>(std::vector<Tensor>{q}, lrs[0]); },
      [&](auto& q, const auto& g, int t) {
        for (size_t i = 0; i < q.size(); ++i) q[i] -= lrs[size_t(t - 1)] * g[i];
      },
      int(lrs.size()),
      [&](optim::Optimizer& o, int t) {
        if (size_t(t) < lrs.size()) o.lr = lrs[size_t(t)];
      });
}

// lr as a tensor (Optimizer::lr_tensor: a schedule's value passed into a step as an input) follows
// torch's equations with that lr, for Adam and for AdamW (whose decay reads it too); the double
// `lr` (99 here) is not read. A tensor that is not 0-d is refused before anything moves.
BOOST_AUTO_TEST_CASE(lr_tensor_changing_every_step) {
  const std::vector<double> lrs = {0.1, 0.05, 0.2, 0.01};
  for (bool decoupled : {false, true}) {
    const double wd = decoupled ? 0.1 : 0.0, eps = 1e-8;
    std::vector<double> m(4, 0), v(4, 0);
    run_against(
        decoupled ? "AdamW, lr tensor" : "Adam, lr tensor",
        [&](Tensor& p) -> std::unique_ptr<optim::Optimizer> {
          std::unique_ptr<optim::Optimizer> o;
          if (decoupled)
            o = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, 99.0, 0.9, 0.999, eps, wd);
          else
            o = std::make_unique<optim::Adam>(std::vector<Tensor>{p}, 99.0);
          o->lr_tensor = f64({lrs[0]}, tg::Dims{});
          return o;
        },
        [&](auto& p, const auto& grad, int t) {
          const double lr = lrs[size_t(t - 1)];
          for (size_t i = 0; i < p.size(); ++i) {
            if (decoupled) p[i] *= 1 - lr * wd;
            m[i] = 0.9 * m[i] + 0.1 * grad[i];
            v[i] = 0.999 * v[i] + 0.001 * grad[i] * grad[i];
            double bc1 = 1 - std::pow(0.9, t), bc2 = 1 - std::pow(0.999, t);
            p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
          }
        },
        int(lrs.size()),
        [&](optim::Optimizer& o, int t) {
          if (size_t(t) < lrs.size()) o.lr_tensor = f64({lrs[size_t(t)]}, tg::Dims{});
        });
  }
  Tensor p = f64(kP0, {4});
  p.requires_grad_();
  optim::Adam adam({p}, 0.1);
  adam.lr_tensor = f64({0.1, 0.2}, {2});
  quad_loss(p).backward();
  BOOST_CHECK_THROW(adam.step(), tg::TensorError);
  BOOST_TEST(adam.step_count() == 0);
  check_close(p, kP0, 0, 0, "parameter after the refused step");
  adam.lr_tensor.reset(); // the state did not move: the next step is torch's first
  adam.step();
  std::vector<double> want = kP0, g = quad_grad(kP0);
  for (size_t i = 0; i < 4; ++i) want[i] -= 0.1 * g[i] / (std::fabs(g[i]) + 1e-8);
  check_close(p, want, 1e-12, 1e-14, "first step after the refused one");
}

BOOST_AUTO_TEST_CASE(skips_and_buffers) {
  Tensor used = f64(kP0, {4}), unused = f64({5, 6}, {2});
  used.requires_grad_();
  unused.requires_grad_();
  Tensor lazy_buffer = f64({1, 2}, {2}) * 3.0; // no requires_grad: a buffer, realized by step()
  BOOST_TEST(!realized(lazy_buffer));
  optim::SGD sgd({used, unused, lazy_buffer, used}, 0.1, 0.9);
  BOOST_TEST(sgd.params().size() == 2u, "duplicates dropped");
  BOOST_TEST(sgd.buffers().size() == 1u);
  quad_loss(used).backward();
  BOOST_TEST(!unused.grad());
  sgd.step(); // unused has no gradient: skipped
  check_close(unused, {5, 6}, 0, 0, "param without grad unchanged");
  BOOST_TEST(realized(lazy_buffer));
  check_close(lazy_buffer, {3, 6}, 0, 0, "buffer value");
  BOOST_TEST(realized(sgd.momentum_buffers[0]));
  // zero_grad clears; a step without any gradient changes nothing
  sgd.zero_grad();
  BOOST_TEST(!used.grad());
  std::vector<double> before = host(used);
  sgd.step();
  check_close(used, before, 0, 0, "no grads, no change");
  // the loss realized in the same schedule as the update
  quad_loss(used).backward();
  Tensor loss = quad_loss(used);
  sgd.step_and_realize({loss});
  BOOST_TEST(realized(loss));
  // errors
  BOOST_CHECK_THROW(optim::SGD({used}, -1.0), tg::TensorError);
  BOOST_CHECK_THROW(optim::SGD({used}, 0.1, 0.0, 0.0, true), tg::TensorError);
  BOOST_CHECK_THROW(optim::Adam({used}, 0.1, 1.0), tg::TensorError);
}

// lr and Adam's bias corrections are uploaded scalars, not kernel constants: a changed lr or the
// next step count runs the very same compiled programs.
BOOST_AUTO_TEST_CASE(lr_change_reuses_kernels) {
  auto programs = [](optim::Optimizer& opt, Tensor& p) {
    opt.zero_grad();
    quad_loss(p).backward();
    std::vector<Tensor> targets = opt.schedule_step();
    std::vector<const void*> out;
    for (const auto& t : targets)
      for (const auto& item : t.schedule()) out.push_back(tg::prepare_kernel(item)->program.get());
    std::vector<Tensor*> ptrs;
    for (auto& t : targets) ptrs.push_back(&t);
    Tensor::realize_all(ptrs);
    return out;
  };
  Tensor p = f64(kP0, {4});
  p.requires_grad_();
  optim::SGD sgd({p}, 0.1, 0.9);
  programs(sgd, p); // step 1: the momentum buffer starts as a constant
  auto a = programs(sgd, p);
  sgd.lr = 0.37;
  auto b = programs(sgd, p);
  BOOST_TEST(!a.empty());
  BOOST_TEST((a == b), "SGD: same programs after an lr change");
  Tensor q = f64(kP0, {4});
  q.requires_grad_();
  optim::AdamW adamw({q}, 0.1);
  programs(adamw, q);
  auto c = programs(adamw, q);
  adamw.lr = 0.02;
  auto d = programs(adamw, q);
  BOOST_TEST((c == d), "AdamW: same programs for steps 2 and 3 with another lr");
}

BOOST_AUTO_TEST_CASE(lr_schedules) {
  Tensor p = f64(kP0, {4});
  p.requires_grad_();
  // StepLR: lr = base * gamma^(epoch // step_size)
  optim::SGD a({p}, 1.0);
  optim::StepLR step_lr(a, 3, 0.5);
  BOOST_TEST(a.lr == 1.0);
  for (int e = 1; e <= 10; ++e) {
    step_lr.step();
    BOOST_TEST(a.lr == std::pow(0.5, e / 3), "StepLR epoch " << e << ": " << a.lr);
  }
  // CosineAnnealingLR: torch's recursive form equals the closed form
  // eta_min + (base - eta_min) (1 + cos(pi e / T)) / 2, also past T (it continues periodically)
  const double base = 0.1, eta_min = 0.001, T = 4;
  optim::SGD b({p}, base);
  optim::CosineAnnealingLR cos_lr(b, 4, eta_min);
  BOOST_TEST(b.lr == base);
  for (int e = 1; e <= 12; ++e) {
    cos_lr.step();
    double want = eta_min + (base - eta_min) * (1 + std::cos(M_PI * e / T)) / 2;
    BOOST_TEST(std::fabs(b.lr - want) <= 1e-12, "cosine epoch " << e << ": " << b.lr << " vs " << want);
    BOOST_TEST(cos_lr.get_last_lr() == b.lr);
  }
  BOOST_CHECK_THROW(optim::StepLR(a, 0), tg::TensorError);
  BOOST_CHECK_THROW(optim::CosineAnnealingLR(a, 0), tg::TensorError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(training)

// A 2-16-2 MLP with BatchNorm on 64 linearly separable points: 30 Adam steps must bring the
// loss below 10% of the first one and classify at least 95% of the points.
BOOST_AUTO_TEST_CASE(mlp_learns_separable_data) {
  Tensor::manual_seed(42);
  Rng rng(9);
  const int64_t n = 64;
  std::vector<double> xs = rng.vec(size_t(2 * n));
  std::vector<int32_t> ys;
  for (int64_t i = 0; i < n; ++i) ys.push_back(xs[size_t(2 * i)] + 0.5 * xs[size_t(2 * i + 1)] > 0 ? 1 : 0);
  Tensor X = f32(xs, {n, 2}), Y = i32(ys, {n});
  nn::Sequential model;
  model.add(nn::Linear(2, 16))
      .add(nn::BatchNorm(16))
      .add([](const Tensor& x) { return x.relu(); })
      .add(nn::Linear(16, 2));
  std::vector<Tensor> state = model.parameters();
  for (auto& b : model.buffers()) state.push_back(b); // running statistics realized with each step
  optim::Adam opt(state, 0.05);
  std::vector<double> losses;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    Tensor loss = nn::sparse_categorical_crossentropy(model(X), Y);
    loss.backward();
    opt.step_and_realize({loss});
    losses.push_back(loss.item<double>());
  }
  BOOST_TEST_MESSAGE("loss " << losses.front() << " -> " << losses.back());
  BOOST_TEST(losses.back() < 0.10 * losses.front(), "loss " << losses.front() << " -> " << losses.back());
  auto* bn = dynamic_cast<nn::BatchNorm*>(model.layers[1].get());
  BOOST_REQUIRE(bn);
  check_close(*bn->num_batches_tracked, {30}, 0, 0, "BatchNorm tracked every step");
  model.eval();
  std::vector<int32_t> pred = model(X).argmax(1).to_vector<int32_t>();
  int correct = 0;
  for (int64_t i = 0; i < n; ++i) correct += pred[size_t(i)] == ys[size_t(i)];
  BOOST_TEST(correct >= 61, "accuracy " << correct << "/64");
}

// A small convolutional net (conv, ReLU, BatchNorm with running statistics, max pool, linear)
// trained 3 Adam steps realized in parts (TG_REALIZE_EARLY=1: the loss in backward(), the
// gradients and running statistics before the update) against the same steps in one schedule
// (=0). The parts read the forward values the earlier realize stored; a stale or recomputed value
// (the running statistics read the forward pass) would show as a different parameter or statistic.
BOOST_AUTO_TEST_CASE(step_in_parts_matches_one_schedule) {
  auto train = [](int mode) {
    RealizeEarly early(mode);
    Tensor::manual_seed(7);
    Rng rng(11);
    nn::Sequential model;
    model.add(nn::Conv2d(1, 4, 3))
        .add([](const Tensor& x) { return x.relu(); })
        .add(nn::BatchNorm(4))
        .add([](const Tensor& x) { return x.max_pool2d(2).flatten(1); })
        .add(nn::Linear(4 * 3 * 3, 3));
    std::vector<Tensor> state = model.parameters();
    for (auto& b : model.buffers()) state.push_back(b);
    optim::Adam opt(state, 0.01);
    Tensor X = f32(rng.vec(8 * 8 * 8), {8, 1, 8, 8});
    std::vector<int32_t> ys;
    for (int i = 0; i < 8; ++i) ys.push_back(int32_t(rng.integer(0, 2)));
    Tensor Y = i32(ys, {8});
    std::vector<double> out;
    size_t kernels = 0;
    for (int step = 0; step < 3; ++step) {
      tg::LaunchCounter counter;
      opt.zero_grad();
      Tensor loss = nn::sparse_categorical_crossentropy(model(X), Y);
      loss.backward();
      BOOST_TEST(realized(loss) == (mode == 1), "mode " << mode << ": loss realized by backward()");
      opt.step_and_realize({loss});
      if (mode == 1) {
        for (const auto& p : model.parameters())
          BOOST_TEST(realized(*p.grad()), "gradient realized by the step");
        // In parts the last part releases the dead results after its launches instead of before
        // (the step's graphs): still nothing is left for the next realize to release.
        const size_t live = tg::UOp::live_count();
        tg::engine().realized().release_dead();
        BOOST_TEST(tg::UOp::live_count() == live,
                   "nodes left to release after the step: " << live - tg::UOp::live_count());
      }
      out.push_back(loss.item<double>());
      kernels = counter.kernels(); // the last step's (the first ones also upload constants)
    }
    for (const auto& t : state)
      for (double x : host(t)) out.push_back(x);
    return std::make_pair(out, kernels);
  };
  auto [parts, parts_kernels] = train(1);
  auto [one, one_kernels] = train(0);
  check_close(parts, one, 1e-4, 1e-6, "losses, parameters and running statistics");
  // The parts read what the earlier parts stored instead of computing the forward pass again.
  BOOST_TEST_MESSAGE("kernels per step: " << parts_kernels << " in parts, " << one_kernels << " in one");
  BOOST_TEST(parts_kernels <= one_kernels + 2, parts_kernels << " kernels in parts vs " << one_kernels);
}

// A conv model trained with Adam, in one schedule and in parts, leaves no requires_grad tensor
// alive once it and its optimizer are gone: conv2d's custom gradient holds its weight's node, not
// the weight, so weight -> gradient -> gradient's closure -> weight is no cycle (it was one, and
// kept every trained conv model alive).
BOOST_AUTO_TEST_CASE(a_trained_model_dies_with_its_tensors) {
  BOOST_REQUIRE_MESSAGE(tg::detail::updates_every_leaf({}),
                        "a requires_grad tensor of an earlier case is alive");
  for (int mode : {0, 1}) {
    RealizeEarly early(mode);
    {
      Tensor::manual_seed(7);
      Rng rng(13);
      nn::Sequential model;
      model.add(nn::Conv2d(1, 4, 3))
          .add([](const Tensor& x) { return x.relu(); })
          .add([](const Tensor& x) { return x.max_pool2d(2).flatten(1); })
          .add(nn::Linear(4 * 3 * 3, 3));
      optim::Adam opt(model.parameters(), 0.01);
      Tensor X = f32(rng.vec(8 * 8 * 8), {8, 1, 8, 8});
      Tensor Y = i32({0, 1, 2, 0, 1, 2, 0, 1}, {8});
      for (int step = 0; step < 2; ++step) {
        opt.zero_grad();
        Tensor loss = nn::sparse_categorical_crossentropy(model(X), Y);
        loss.backward();
        opt.step_and_realize({loss});
        (void)loss.item<double>();
      }
      BOOST_TEST(!tg::detail::updates_every_leaf({}),
                 "mode " << mode << ": the model's parameters are leaves");
    }
    tg::engine().realized().release_dead();
    BOOST_TEST(tg::detail::updates_every_leaf({}), "mode " << mode << ": a parameter outlived its model");
  }
}

// When the step updates every requires_grad tensor, what its realizes would record for autograd
// could reach no leaf afterwards, so it records nothing (detail::WithoutHistory); with a
// requires_grad tensor the optimizer does not update (a frozen scale), it records as before, so a
// later backward through those values still reaches it. The losses match a run with the frozen
// scale at 1 either way, in parts and in one schedule. It needs no requires_grad tensor of an
// earlier case alive (a_trained_model_dies_with_its_tensors).
BOOST_AUTO_TEST_CASE(step_records_history_only_when_a_leaf_survives_it) {
  for (int mode : {0, 1}) {
    RealizeEarly early(mode);
    for (bool with_frozen : {false, true}) {
      Tensor::manual_seed(3);
      Rng rng(5);
      nn::Linear a(4, 8), b(8, 3);
      std::optional<Tensor> scale; // requires_grad and not in the optimizer
      if (with_frozen) scale = f32({1.0}, {1}).requires_grad_();
      std::vector<Tensor> params = a.parameters();
      for (const auto& p : b.parameters()) params.push_back(p);
      optim::Adam opt(params, 0.01);
      Tensor X = f32(rng.vec(16 * 4), {16, 4});
      Tensor Y = i32({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, {16});
      std::vector<double> losses;
      for (int step = 0; step < 3; ++step) {
        opt.zero_grad();
        Tensor h = a(X).relu();
        if (scale) h = h * *scale;
        Tensor loss = nn::sparse_categorical_crossentropy(b(h), Y);
        loss.backward();
        const size_t before = tg::detail::views_recorded();
        opt.step_and_realize({loss});
        const size_t after = tg::detail::views_recorded();
        if (with_frozen)
          BOOST_TEST(after > before, "mode " << mode << " step " << step << ": none recorded");
        else
          BOOST_TEST(after == before,
                     "mode " << mode << " step " << step << ": " << after - before << " recorded");
        losses.push_back(loss.item<double>());
      }
      static std::vector<double> reference;
      if (!with_frozen)
        reference = losses;
      else
        check_close(losses, reference, 1e-6, 1e-7, "losses with the frozen scale at 1");
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
