// Reading a value must not change what backward() computes. Realizing swaps a
// tensor's expression for its stored result; autograd must still see the expression. Every
// differentiable op is differentiated in float64 several ways — no read, the loss read first, the
// op's output read before or after the loss is built from it, the inputs read through a realized
// copy, everything read, and a read after backward — and each gradient must equal the unread one
// and central finite differences (as in gradcheck_test.cpp).
#include "finite_diff.hpp"

#include "kernel/engine/launch_counter.hpp"
#include "kernel/ir/uop.hpp"

using namespace nt;

namespace {

struct Case {
  std::string name;
  Fn f;
  std::vector<In> ins;
};

enum class Read {
  None,        // backward on the lazy graph
  LossFirst,   // loss.item() before backward (the common case: the loss printed)
  OutputFirst, // the op's output realized, then the loss built from its buffer
  OutputAfter, // the op's output realized after the loss was built from it
  InputsCopy,  // every input passed through a realized contiguous copy before the op
  All,         // all of the above at once
  AfterwardToo // backward, then the loss read, then backward again (gradients accumulate)
};

const char* name_of(Read r) {
  switch (r) {
  case Read::None:
    return "no read";
  case Read::LossFirst:
    return "loss read first";
  case Read::OutputFirst:
    return "output read before the loss is built";
  case Read::OutputAfter:
    return "output read after the loss is built";
  case Read::InputsCopy:
    return "inputs read through a realized copy";
  case Read::All:
    return "everything read";
  case Read::AfterwardToo:
    return "read between two backward calls";
  }
  return "?";
}

// d(sum(f(x) * w))/dx for every input, concatenated, computed with backward() after `read`.
std::vector<double> grads(const Case& c, const std::vector<double>& w, Read read) {
  std::vector<Tensor> leaves, xs;
  for (const auto& i : c.ins) {
    leaves.push_back(f64(i.data, i.shape).requires_grad_());
    xs.push_back(leaves.back());
  }
  if (read == Read::InputsCopy || read == Read::All)
    for (auto& x : xs) {
      x = x.contiguous();
      (void)host(x);
    }
  Tensor y = c.f(xs);
  BOOST_REQUIRE(y.dtype() == dtypes::float64);
  if (read == Read::OutputFirst || read == Read::All) (void)host(y);
  Tensor loss = (y * f64(w, y.shape())).sum();
  if (read == Read::OutputAfter || read == Read::All) (void)host(y);
  if (read == Read::LossFirst || read == Read::All) (void)loss.item<double>();
  loss.backward();
  if (read == Read::AfterwardToo) {
    (void)loss.item<double>();
    loss.backward(); // accumulates: twice the gradient
  }
  std::vector<double> out;
  for (auto& x : leaves) {
    BOOST_REQUIRE_MESSAGE(x.grad().has_value(), "an input got no gradient");
    BOOST_REQUIRE(x.grad()->shape() == x.shape());
    for (double v : host(*x.grad())) out.push_back(read == Read::AfterwardToo ? v / 2 : v);
  }
  return out;
}

// Every input's numeric gradient, concatenated in the order grads() returns them.
std::vector<double> finite_differences(const Case& c, const std::vector<double>& w) {
  std::vector<double> out;
  for (size_t i = 0; i < c.ins.size(); ++i) {
    std::vector<double> d = finite_differences(c.f, c.ins, w, i);
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

void check_all_reads(const std::vector<Case>& cases, uint64_t seed) {
  Rng rng(seed);
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("op " << c.name) {
      std::vector<Tensor> xs;
      for (const auto& i : c.ins) xs.push_back(f64(i.data, i.shape));
      std::vector<double> w = rng.vec(numel(c.f(xs).shape()), -1.5, 1.5);
      std::vector<double> unread = grads(c, w, Read::None);
      check_close(unread, finite_differences(c, w), kRtol, kAtol, c.name + ": no read vs finite differences");
      for (Read r : {Read::LossFirst, Read::OutputFirst, Read::OutputAfter, Read::InputsCopy, Read::All,
                     Read::AfterwardToo})
        check_close(grads(c, w, r), unread, 1e-12, 1e-14, c.name + ": " + name_of(r) + " vs no read");
    }
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(grad_after_read)

// The common case, in float32: the loss printed before backward.
BOOST_AUTO_TEST_CASE(loss_read_before_backward) {
  Tensor p = f32({1, -2, 3}, {3}).requires_grad_();
  Tensor out = (p * p).sum();
  BOOST_TEST(out.item<float>() == 14.0f);
  out.backward();
  BOOST_REQUIRE(p.grad().has_value());
  BOOST_TEST(p.grad()->to_vector<float>() == std::vector<float>({2, -4, 6}),
             boost::test_tools::per_element());
  // and gradient() agrees, after the read
  check_close(out.gradient({p})[0], {2, -4, 6}, 0, 0, "gradient() after a read");
}

// A lazily created leaf (random values, not yet stored) realized between building the loss and
// backward: its tensor now holds a buffer, the loss's graph still holds the expression.
BOOST_AUTO_TEST_CASE(leaf_realized_after_use) {
  Tensor::manual_seed(3);
  Tensor p = Tensor::rand({4}, dtypes::float64).requires_grad_();
  Tensor out = (p * p).sum();
  std::vector<double> values = host(p); // realizes p alone
  Tensor later = (p * 3.0).sum();       // built from p's buffer
  (out + later).backward();
  BOOST_REQUIRE(p.grad().has_value());
  std::vector<double> want;
  for (double v : values) want.push_back(2 * v + 3);
  check_close(*p.grad(), want, 1e-12, 0, "d/dp of sum(p*p) + sum(3p)");
}

// A tensor that becomes a leaf after graphs over it were read: reads before requires_grad_ must not
// hide it from later ones (the search for leaves skips subgraphs known to reach none).
BOOST_AUTO_TEST_CASE(leaf_marked_after_a_read) {
  Tensor other = f64({1}, {1}).requires_grad_(); // some leaf exists, so reads are examined
  Tensor x = f64({1, 2}, {2});
  (void)host(x * 2.0 + 1.0); // x is no leaf yet: this graph reaches none
  x.requires_grad_();
  Tensor d = (x * 2.0 + 1.0) * 3.0; // shares the node read above
  (void)host(d);
  d.sum().backward(); // built from d's stored view
  BOOST_REQUIRE(x.grad().has_value());
  check_close(*x.grad(), {6, 6}, 0, 0, "d/dx of sum(3(2x+1))");
  BOOST_TEST(!other.grad().has_value());
}

// Ops whose gradient finite differences in float64 cannot check (float32 rounding) or that cut it,
// against hand-derived values: cast, detach. Reads of every stage change nothing.
BOOST_AUTO_TEST_CASE(cast_detach_against_hand_values) {
  const std::vector<double> pv{0.5, -1.25, 2.0};
  for (bool read : {false, true}) {
    BOOST_TEST_CONTEXT((read ? "with reads" : "without reads")) {
      Tensor p = f32(pv, {3}).requires_grad_();
      Tensor wide = p.cast(dtypes::float64);
      if (read) (void)host(wide);
      Tensor moved = (wide * 3.0).exp();
      if (read) (void)host(moved);
      Tensor y = moved + p.detach().cast(dtypes::float64) * wide; // d/dp: 3 exp(3p) + p
      Tensor loss = y.sum();
      if (read) (void)loss.item<double>();
      loss.backward();
      BOOST_REQUIRE(p.grad().has_value());
      BOOST_TEST(p.grad()->dtype() == dtypes::float32);
      std::vector<double> want;
      for (double v : pv) want.push_back(3 * std::exp(3 * v) + v);
      check_close(*p.grad(), want, 1e-6, 0, "d/dp");
    }
  }
}

// A detached copy made a leaf is a leaf like any other: d/da sum(a*a) = 2a (it was all zeros),
// and the tensor it was detached from gets nothing.
BOOST_AUTO_TEST_CASE(detached_copy_as_a_leaf) {
  for (bool read : {false, true}) {
    BOOST_TEST_CONTEXT((read ? "realized source" : "lazy source")) {
      Tensor x = f32({1, 2, 3}, {3});
      if (read) (void)host(x);
      Tensor a = x.detach().requires_grad_();
      (a * a).sum().backward();
      BOOST_REQUIRE(a.grad().has_value());
      check_close(*a.grad(), {2, 4, 6}, 0, 0, "d/da of sum(a*a)");
      BOOST_TEST(!x.grad().has_value());
    }
  }
}

// conv2d's custom gradient names its input and weight tensors; both realized after the call.
BOOST_AUTO_TEST_CASE(custom_gradient_inputs_realized_later) {
  Rng r(11);
  std::vector<double> xd = r.vec(1 * 2 * 4 * 4), wd = r.vec(2 * 2 * 3 * 3);
  auto run = [&](bool read) {
    Tensor x = f64(xd, {1, 2, 4, 4}).requires_grad_(), w = f64(wd, {2, 2, 3, 3}).requires_grad_();
    Tensor h = x * 2.0; // an expression, so reading it swaps it for a buffer
    Tensor loss = h.conv2d(w, std::nullopt, 1, 1).square().sum();
    if (read) {
      (void)host(h);
      (void)host(w);
      (void)loss.item<double>();
    }
    loss.backward();
    BOOST_REQUIRE(x.grad().has_value() && w.grad().has_value());
    return std::pair{host(*x.grad()), host(*w.grad())};
  };
  auto [gx0, gw0] = run(false);
  auto [gx1, gw1] = run(true);
  check_close(gx1, gx0, 1e-12, 1e-14, "dx after reads");
  check_close(gw1, gw0, 1e-12, 1e-14, "dw after reads");
}

// A custom gradient's vjp that reads a captured tensor whose value an earlier realize stored
// records that read (note_realized) while the gradient is being built; looking the vjp's input up
// afterwards must see the record (autograd's Unrealize takes its snapshot of the records again
// when they changed), or the input's gradient, and w's, is lost. d/dw sum(exp(3w)) = 3 exp(3w).
BOOST_AUTO_TEST_CASE(custom_gradient_reads_a_stored_input_while_differentiating) {
  const std::vector<double> wv{0.5, -1.0, 0.25};
  Tensor w = f64(wv, {3}).requires_grad_();
  Tensor a = (w * 3.0).contiguous(); // its own kernel: the loss's realize stores it
  Tensor y = Tensor::with_custom_gradient(a.exp(), [a](const Tensor& g) {
    return std::vector<std::pair<Tensor, Tensor>>{{a, g * a.exp()}}; // reads a's stored value
  });
  Tensor loss = y.sum();
  (void)loss.item<double>(); // a's tensor still holds its expression
  loss.backward();
  BOOST_REQUIRE(w.grad().has_value());
  std::vector<double> want;
  for (double v : wv) want.push_back(3 * std::exp(3 * v));
  check_close(*w.grad(), want, 1e-12, 0, "d/dw sum(exp(3w)) through a custom gradient");
}

// After a read, the gradient reads the forward values already stored instead of computing them
// again: softmax's max and sum are stored kernels of the forward pass.
BOOST_AUTO_TEST_CASE(gradient_reuses_stored_forward_values) {
  RealizeEarly lazy(0); // "unread" needs backward() to leave the loss unrealized (TG_REALIZE_EARLY)
  Rng r(12);
  std::vector<double> xd = r.vec(4 * 16, -2, 2);
  auto kernels = [&](bool read) {
    Tensor x = f64(xd, {4, 16}).requires_grad_();
    Tensor loss = (x.softmax(1) * x).sum();
    if (read) (void)loss.item<double>();
    loss.backward();
    BOOST_REQUIRE(x.grad().has_value());
    return x.grad()->schedule().size();
  };
  size_t unread = kernels(false), read = kernels(true);
  BOOST_TEST_MESSAGE("gradient kernels: " << unread << " unread, " << read << " after a read");
  BOOST_TEST(read < unread);
}

// A gradient built (and substituted with the stored values) before a realize stores values it
// contains still reads them when it is realized: the substitute walk skips the graphs an earlier
// walk returned only while nothing was stored since (RealizedCache::substitute). The
// loss is realized after backward() and stores softmax's reductions; the gradient then needs fewer
// kernels than without that realize, and equals the hand value
// d/dx_k sum_j s_j x_j = s_k (1 + x_k - sum_j s_j x_j) per row (s = softmax(x)).
BOOST_AUTO_TEST_CASE(gradient_reads_values_stored_after_it_was_built) {
  RealizeEarly lazy(0); // backward() leaves the loss unrealized
  Rng r(13);
  std::vector<double> xd = r.vec(4 * 16, -2, 2);
  std::vector<double> want(xd.size());
  for (size_t row = 0; row < 4; ++row) {
    double mx = -1e300, z = 0, f = 0;
    for (size_t k = 0; k < 16; ++k) mx = std::max(mx, xd[row * 16 + k]);
    for (size_t k = 0; k < 16; ++k) z += std::exp(xd[row * 16 + k] - mx);
    for (size_t k = 0; k < 16; ++k) f += std::exp(xd[row * 16 + k] - mx) / z * xd[row * 16 + k];
    for (size_t k = 0; k < 16; ++k) {
      const double s = std::exp(xd[row * 16 + k] - mx) / z;
      want[row * 16 + k] = s * (1 + xd[row * 16 + k] - f);
    }
  }
  auto kernels = [&](bool loss_first) {
    // a stored result, so backward() substitutes the gradient (an empty cache skips the walk)
    Tensor held = (Tensor::zeros({}, dtypes::float64) + 1.0).realize();
    Tensor x = f64(xd, {4, 16}).requires_grad_();
    Tensor loss = (x.softmax(1) * x).sum();
    loss.backward();
    BOOST_REQUIRE(x.grad().has_value());
    Tensor g = *x.grad();
    if (loss_first) (void)loss.item<double>(); // stores softmax's reductions, which g contains
    tg::LaunchCounter counter;
    g.realize();
    check_close(g, want, 1e-12, 1e-14, loss_first ? "gradient after the loss's realize" : "gradient");
    return counter.kernels();
  };
  size_t alone = kernels(false), after = kernels(true);
  BOOST_TEST_MESSAGE("gradient kernels: " << alone << " alone, " << after << " after the loss's realize");
  BOOST_TEST(after < alone);
}

// One realize of several tensors (as the optimizer's step does): values read in the same realize
// as their leaf's update, before or after it in the list, the leaf listed twice. Each value read
// still differentiates to its leaf (its record was made with the leaves as they were at its turn:
// `b`, built from p's new expression, reaches p whether p's swap comes first or not), the values
// match a host reference, and old steps' graphs are released (bounded live nodes).
BOOST_AUTO_TEST_CASE(values_realized_with_their_leaf_update) {
  for (bool leaf_first : {false, true}) {
    BOOST_TEST_CONTEXT((leaf_first ? "leaf listed first" : "leaf listed after a value")) {
      std::vector<double> pv{0.5, -0.25, 1.0}, mv(3, 0.0);
      double running_want = 0;
      Tensor p = f64(pv, {3}).requires_grad_();
      Tensor m = Tensor::zeros({3}, dtypes::float64).contiguous().realize();
      Tensor running = Tensor::zeros({}, dtypes::float64);
      std::vector<size_t> live;
      for (int step = 0; step < 8; ++step) {
        p.zero_grad();
        Tensor loss = (p * p).sum();
        running = running + loss; // reaches the current p
        loss.backward();
        BOOST_REQUIRE(p.grad().has_value());
        Tensor b = [&] {
          Tensor::NoGrad no_grad;
          m.assign(m * 0.5 + *p.grad());
          p.assign(p - m * 0.1);
          return p * 2.0; // built from p's new expression
        }();
        Tensor p_again = p; // the same tensor twice in one realize
        std::vector<Tensor*> batch = leaf_first ? std::vector<Tensor*>{&p, &running, &b, &m, &p_again}
                                                : std::vector<Tensor*>{&running, &b, &m, &p, &p_again};
        Tensor::realize_all(batch);
        // the host reference of the same step
        for (size_t i = 0; i < 3; ++i) {
          running_want += pv[i] * pv[i];
          mv[i] = mv[i] * 0.5 + 2 * pv[i];
          pv[i] -= mv[i] * 0.1;
        }
        check_close(p, pv, 1e-12, 0, "p");
        check_close(b, {2 * pv[0], 2 * pv[1], 2 * pv[2]}, 1e-12, 0, "b");
        BOOST_TEST(std::abs(running.item<double>() - running_want) <= 1e-12 * running_want);
        // d/dp sum(b*b) = 8p: through b's stored value, recorded as reaching p
        check_close((b * b).sum().gradient({p})[0], {8 * pv[0], 8 * pv[1], 8 * pv[2]}, 1e-12, 0,
                    "gradient through b's read value");
        live.push_back(tg::UOp::live_count());
      }
      BOOST_TEST_MESSAGE("live nodes per step: " << live[2] << " ... " << live.back());
      BOOST_TEST(live.back() <= live[3]);
    }
  }
}

// Stored expressions are dropped once their leaves change: a loop that reads and accumulates the
// loss while updating the parameter keeps a bounded number of nodes alive (a chain of old steps'
// graphs would grow every step).
BOOST_AUTO_TEST_CASE(old_steps_graphs_are_released) {
  Tensor p = f64({0.5, -0.25, 1.0}, {3}).requires_grad_();
  Tensor running = Tensor::zeros({}, dtypes::float64);
  std::vector<size_t> live;
  for (int step = 0; step < 8; ++step) {
    p.zero_grad();
    Tensor loss = (p * p).sum();
    running = running + loss;
    (void)running.item<double>(); // read: its expression reaches the current p
    loss.backward();
    BOOST_REQUIRE(p.grad().has_value());
    {
      Tensor::NoGrad no_grad;
      p.assign(p - *p.grad() * 0.1);
    }
    p.realize();
    live.push_back(tg::UOp::live_count());
  }
  BOOST_TEST_MESSAGE("live nodes per step: " << live[2] << " ... " << live.back());
  BOOST_TEST(live.back() <= live[3]);
  // the values are right too: p shrinks by 0.8 each step
  check_close(p, {0.5 * std::pow(0.8, 8), -0.25 * std::pow(0.8, 8), std::pow(0.8, 8)}, 1e-12, 0, "p");
}

BOOST_AUTO_TEST_CASE(elementwise) {
  Rng r(1);
  std::vector<Case> cases = {
      {"add (broadcast)", [](auto& x) { return x[0] + x[1]; }, {in(r, {3, 4}), in(r, {4})}},
      {"sub", [](auto& x) { return x[0] - x[1]; }, {in(r, {2, 3}), in(r, {2, 3})}},
      {"mul (broadcast both)", [](auto& x) { return x[0] * x[1]; }, {in(r, {3, 1}), in(r, {1, 4})}},
      {"div", [](auto& x) { return x[0] / x[1]; }, {in(r, {2, 3}), in(r, {2, 3}, 0.5, 2)}},
      {"neg", [](auto& x) { return -x[0]; }, {in(r, {5})}},
      {"self product", [](auto& x) { return x[0] * x[0] * x[0]; }, {in(r, {4})}},
      {"exp", [](auto& x) { return x[0].exp(); }, {in(r, {4})}},
      {"exp2", [](auto& x) { return x[0].exp2(); }, {in(r, {4})}},
      {"log", [](auto& x) { return x[0].log(); }, {in(r, {4}, 0.5, 2)}},
      {"log2", [](auto& x) { return x[0].log2(); }, {in(r, {4}, 0.5, 2)}},
      {"sqrt", [](auto& x) { return x[0].sqrt(); }, {in(r, {4}, 0.5, 2)}},
      {"rsqrt", [](auto& x) { return x[0].rsqrt(); }, {in(r, {4}, 0.5, 2)}},
      {"reciprocal", [](auto& x) { return x[0].reciprocal(); }, {in(r, {4}, 0.5, 2)}},
      {"sin", [](auto& x) { return x[0].sin(); }, {in(r, {5}, -3, 3)}},
      {"cos", [](auto& x) { return x[0].cos(); }, {in(r, {5}, -3, 3)}},
      {"tan", [](auto& x) { return x[0].tan(); }, {in(r, {5}, -1, 1)}},
      {"tanh", [](auto& x) { return x[0].tanh(); }, {in(r, {5}, -2, 2)}},
      {"sigmoid", [](auto& x) { return x[0].sigmoid(); }, {in(r, {5}, -3, 3)}},
      {"relu", [](auto& x) { return x[0].relu(); }, {in(r, {6}, -1, 1, 0.05)}},
      {"leaky_relu", [](auto& x) { return x[0].leaky_relu(0.1); }, {in(r, {6}, -1, 1, 0.05)}},
      {"gelu/silu/softplus",
       [](auto& x) { return x[0].gelu() + x[0].silu() + x[0].softplus(); },
       {in(r, {5}, -2, 2)}},
      {"abs", [](auto& x) { return x[0].abs(); }, {in(r, {5}, -1, 1, 0.05)}},
      {"square", [](auto& x) { return x[0].square(); }, {in(r, {5})}},
      {"pow", [](auto& x) { return x[0].pow(x[1]); }, {in(r, {4}, 0.5, 2), in(r, {4})}},
      {"pow scalar", [](auto& x) { return x[0].pow(3.0); }, {in(r, {4})}},
      {"maximum/minimum",
       [](auto& x) { return x[0].maximum(x[1]) + x[0].minimum(x[1]) * 2.0; },
       {in(r, {5}), in(r, {5})}},
      {"clip", [](auto& x) { return x[0].clip(-0.5, 0.5); }, {in(r, {6}, -1, 1)}},
      {"where",
       [](auto& x) {
         Tensor c =
             Tensor::from_vector<bool>(std::vector<bool>{true, false, true, false, false, true}, {2, 3});
         return c.where(x[0], x[1]);
       },
       {in(r, {2, 3}), in(r, {2, 3})}},
      {"contiguous", [](auto& x) { return x[0].T().contiguous() * 1.5; }, {in(r, {2, 3})}},
  };
  check_all_reads(cases, 101);
}

BOOST_AUTO_TEST_CASE(reductions) {
  Rng r(3);
  std::vector<Case> cases = {
      {"sum axes {0,2}",
       [](auto& x) {
         return x[0].sum({0, 2});
       },
       {in(r, {2, 3, 2})}},
      {"sum keepdim * x", [](auto& x) { return x[0].sum({1}, true) * x[0]; }, {in(r, {2, 3})}},
      {"prod", [](auto& x) { return x[0].prod({1}); }, {in(r, {2, 3}, 0.5, 1.5)}},
      {"max axis 1", [](auto& x) { return x[0].max({1}); }, {in(r, {3, 4})}},
      {"min keepdim", [](auto& x) { return x[0].min({0}, true) * x[0]; }, {in(r, {3, 2})}},
      {"mean", [](auto& x) { return x[0].mean({1}) + x[0].mean(); }, {in(r, {3, 4})}},
      {"var/std", [](auto& x) { return x[0].var({1}) + x[0].std({0}).sum(); }, {in(r, {3, 4})}},
      {"softmax", [](auto& x) { return x[0].softmax(0); }, {in(r, {3, 4}, -2, 2)}},
      {"log_softmax", [](auto& x) { return x[0].log_softmax(-1); }, {in(r, {3, 4}, -2, 2)}},
      {"logsumexp", [](auto& x) { return x[0].logsumexp(1); }, {in(r, {2, 5}, -2, 2)}},
      {"cumsum", [](auto& x) { return x[0].cumsum(1); }, {in(r, {2, 4})}},
  };
  check_all_reads(cases, 103);
}

BOOST_AUTO_TEST_CASE(movement) {
  Rng r(4);
  std::vector<Case> cases = {
      {"reshape/permute",
       [](auto& x) {
         return x[0].reshape({4, 6}).permute({1, 0}) * x[1];
       },
       {in(r, {2, 3, 4}), in(r, {6, 4})}},
      {"expand",
       [](auto& x) {
         return x[0].expand({3, 4}) * x[1];
       },
       {in(r, {3, 1}), in(r, {3, 4})}},
      {"pad",
       [](auto& x) {
         return x[0].pad({{1, 0}, {2, 1}}) * x[1];
       },
       {in(r, {2, 3}), in(r, {3, 6})}},
      {"pad with value",
       [](auto& x) {
         return x[0].pad({{1, 1}}, 2.5) * x[0].pad({{2, 0}});
       },
       {in(r, {3})}},
      {"shrink",
       [](auto& x) {
         return x[0].shrink({{0, 1}, {1, 3}});
       },
       {in(r, {2, 3})}},
      {"flip", [](auto& x) { return x[0].flip({0}) * x[1]; }, {in(r, {3, 2}), in(r, {3, 2})}},
      {"slice with steps",
       [](auto& x) {
         return x[0].slice({tg::Slice{1, std::nullopt, 1}, tg::Slice{std::nullopt, std::nullopt, -2}});
       },
       {in(r, {3, 4})}},
      {"index", [](auto& x) { return x[0][1] * x[0][-1]; }, {in(r, {3, 2})}},
      {"cat/stack",
       [](auto& x) {
         return Tensor::cat({x[0], x[1]}, 0).sum({1}) + Tensor::stack({x[1], x[1] * 2.0}, 0).sum();
       },
       {in(r, {3, 2}), in(r, {2, 2})}},
      {"transpose/squeeze/unsqueeze",
       [](auto& x) { return x[0].transpose(0, 2).squeeze(1).unsqueeze(0) * 2.0; },
       {in(r, {2, 1, 3})}},
      {"flatten", [](auto& x) { return x[0].flatten() * x[1]; }, {in(r, {2, 3}), in(r, {6})}},
      {"repeat",
       [](auto& x) {
         return x[0].repeat({2, 3}) * x[1];
       },
       {in(r, {2, 2}), in(r, {4, 6})}},
      {"gather",
       [](auto& x) {
         return x[0].gather(1, Tensor::from_vector<int32_t>(std::vector<int32_t>{2, 0, 1, 1}, {2, 2}));
       },
       {in(r, {2, 3})}},
  };
  check_all_reads(cases, 104);
}

BOOST_AUTO_TEST_CASE(composites) {
  Rng r(5);
  std::vector<Case> cases = {
      {"matmul", [](auto& x) { return x[0].matmul(x[1]); }, {in(r, {3, 4}), in(r, {4, 2})}},
      {"matmul batched broadcast",
       [](auto& x) { return x[0].matmul(x[1]); },
       {in(r, {2, 2, 3}), in(r, {3, 2})}},
      {"linear", [](auto& x) { return x[0].linear(x[1], x[2]); }, {in(r, {2, 3}), in(r, {4, 3}), in(r, {4})}},
      {"conv2d padding 1 + bias (custom gradient)",
       [](auto& x) { return x[0].conv2d(x[1], x[2], 1, 1); },
       {in(r, {1, 2, 4, 4}), in(r, {2, 2, 3, 3}), in(r, {2})}},
      {"conv2d stride 2, groups 2, dilation 2",
       [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 2, 1, 2, 2); },
       {in(r, {1, 2, 5, 5}), in(r, {2, 1, 2, 2})}},
      {"max_pool2d 2x2", [](auto& x) { return x[0].max_pool2d(2); }, {in(r, {1, 2, 4, 4})}},
      {"max_pool2d 3x3 stride 1 padding 1",
       [](auto& x) { return x[0].max_pool2d(3, 1, 1); },
       {in(r, {1, 1, 4, 4})}},
      {"avg_pool2d", [](auto& x) { return x[0].avg_pool2d(2); }, {in(r, {1, 1, 4, 4})}},
      {"sparse_categorical_crossentropy",
       [](auto& x) {
         return tg::nn::sparse_categorical_crossentropy(x[0], i32({1, 3, 0}, {3})).reshape({1});
       },
       {in(r, {3, 4}, -2, 2)}},
      {"mse", [](auto& x) { return tg::nn::mse(x[0], x[1]).reshape({1}); }, {in(r, {2, 3}), in(r, {2, 3})}},
  };
  check_all_reads(cases, 105);
}

BOOST_AUTO_TEST_SUITE_END()
