// Composites against naive loops: matmul (1-D, batched, broadcast, transposed views, ints),
// linear, conv2d (stride, padding, dilation, groups, bias), max/avg pooling.
#include "test_util.hpp"

#include "kernel/engine/config.hpp"
#include "kernel/engine/launch_counter.hpp"
#include "kernel/tensor/matmul_pack.hpp"

using namespace tt;
using ref::Dims;

BOOST_AUTO_TEST_SUITE(composite)

// b packed into 16-wide panels (kernel/tensor/matmul_pack.hpp), on shapes the 4x16 tile does not
// divide (m, k odd; a batch), and a matmul large enough that a CPU device takes the packed path.
BOOST_AUTO_TEST_CASE(matmul_packed_panels) {
  Rng rng(101);
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{5, 3}, {3, 16}}, {{37, 29}, {29, 48}}, {{2, 9, 70}, {70, 32}}, {{64, 64}, {64, 64}}};
  for (const auto& [sa, sb] : cases) {
    Input a = make_input(rng, sa, dtypes::float32, Layout::Contiguous),
          b = make_input(rng, sb, dtypes::float32, Layout::Strided);
    check_close(packed_product(a.t, b.t), ref::matmul(a.r, b.r), Tol{1e-5, 1e-5},
                "packed " + ref::str(sa) + " @ " + ref::str(sb));
  }
  // 256^3 (the CPU packs from 2^24 multiply-adds on) times a diagonal: each column scaled by its
  // own factor, a reference of n^2 steps (a full one takes seconds under ASan)
  Input a = make_input(rng, {256, 256}, dtypes::float32, Layout::Contiguous);
  ref::NdArray d({256, 256}), want({256, 256});
  for (int64_t j = 0; j < 256; ++j) {
    d.at({j, j}) = double(j % 7) - 3.5;
    for (int64_t i = 0; i < 256; ++i) want.at({i, j}) = a.r.at({i, j}) * d.at({j, j});
  }
  Tensor c = a.t.matmul(to_tensor(d));
  // on the CPU: the panels' copy, then the product in its own shape
  if (tg::default_device().starts_with("CPU") && tg::config().pack && !tg::config().noopt) {
    auto items = c.schedule();
    BOOST_TEST_REQUIRE(items.size() == 2u);
    BOOST_TEST(items[1].shape == (tg::Dims{256, 16, 16}));
  }
  check_close(c, want, Tol{1e-5, 1e-5}, "matmul 256^3 by a diagonal");
}

// The matmul whose gradient for b reads a stored transposed (Tensor::matmul takes it for 16-bit
// operands on devices with matrix units): value and both gradients against naive loops, b 2-D
// under a batch of a (summed over it) and b batched like a.
BOOST_AUTO_TEST_CASE(matmul_transposed_gradient) {
  Rng rng(102);
  for (const auto& [sa, sb] :
       std::vector<std::pair<Dims, Dims>>{{{3, 5, 7}, {7, 9}}, {{2, 3, 5, 7}, {2, 3, 7, 9}}}) {
    const std::string c = ref::str(sa) + " @ " + ref::str(sb);
    NdArray a = rand_array(rng, sa), b = rand_array(rng, sb);
    NdArray want = ref::matmul(a, b), g = rand_array(rng, want.shape);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back(), batch = a.numel() / (m * k);
    NdArray want_da(sa), want_db(sb);
    for (int64_t t = 0; t < batch; ++t) // flat batches: a, g and (when batched) b share them
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) {
            const int64_t bi = (sb.size() == 2 ? 0 : t * k * n) + p * n + j;
            const double gv = g.data[size_t(t * m * n + i * n + j)];
            want_da.data[size_t(t * m * k + i * k + p)] += gv * b.data[size_t(bi)];
            want_db.data[size_t(bi)] += a.data[size_t(t * m * k + i * k + p)] * gv;
          }
    Tensor at = to_tensor(a).requires_grad_(), bt = to_tensor(b).requires_grad_();
    Tensor y = tg::matmul_with_transposed_gradient(at, bt);
    (y * to_tensor(g)).sum().backward();
    check_close(y, want, Tol{1e-5, 1e-5}, c);
    check_close(*at.grad(), want_da, Tol{1e-5, 1e-5}, c + " dA");
    check_close(*bt.grad(), want_db, Tol{1e-5, 1e-5}, c + " dB");
  }
}

BOOST_AUTO_TEST_CASE(matmul_shapes) {
  Rng rng(100);
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{3}, {3}},       {{4}, {4, 5}},       {{4, 5}, {5}},       {{2, 3}, {3, 4}},          {{1, 1}, {1, 1}},
      {{5, 1}, {1, 6}}, {{2, 3, 4}, {4, 5}}, {{4, 5}, {3, 5, 2}}, {{2, 1, 3, 4}, {5, 4, 2}}, {{3}, {2, 3, 4}},
      {{2, 3, 4}, {4}}, {{2, 0}, {0, 3}},    {{0, 3}, {3, 2}},    {{7, 16}, {16, 9}},
  };
  for (const auto& [sa, sb] : cases)
    for (Layout l : {Layout::Contiguous, Layout::Permuted, Layout::Flipped}) {
      Input a = make_input(rng, sa, dtypes::float32, l),
            b = make_input(rng, sb, dtypes::float32, Layout::Strided);
      std::string c = "matmul " + ref::str(sa) + " " + layout_name(l) + " @ " + ref::str(sb);
      check_close(a.t.matmul(b.t), ref::matmul(a.r, b.r), Tol{1e-5, 1e-5}, c);
    }
  // transposed operands, the common case of x @ W.T
  Input x = make_input(rng, {6, 8}, dtypes::float32, Layout::Contiguous);
  Input w = make_input(rng, {5, 8}, dtypes::float32, Layout::Contiguous);
  check_close(x.t.matmul(w.t.T()), ref::matmul(x.r, ref::transpose(w.r, 0, 1)), Tol{1e-5, 1e-5}, "x @ W.T");
  check_close(x.t.T().dot(x.t), ref::matmul(ref::transpose(x.r, 0, 1), x.r), Tol{1e-5, 1e-5}, "x.T @ x");
  // integers: exact, result keeps the dtype
  for (DType dt : {dtypes::int32, dtypes::int64, dtypes::int8}) {
    Input ia = make_input(rng, {3, 4}, dt, Layout::Permuted),
          ib = make_input(rng, {4, 2}, dt, Layout::Contiguous);
    Tensor r = ia.t.matmul(ib.t);
    BOOST_TEST(r.dtype() == (dt == dtypes::int8 ? dtypes::int32 : dt), "matmul dtype " << dt.name());
    check_close(r, ref::matmul(ia.r, ib.r), kExact, "matmul " + dt.name());
  }
  // float64
  Input da = make_input(rng, {3, 5}, dtypes::float64, Layout::Contiguous),
        db = make_input(rng, {5, 2}, dtypes::float64, Layout::Flipped);
  check_close(da.t.matmul(db.t), ref::matmul(da.r, db.r), kArith64, "matmul float64");
}

BOOST_AUTO_TEST_CASE(linear) {
  Rng rng(101);
  Input x = make_input(rng, {2, 3, 6}, dtypes::float32, Layout::Permuted);
  Input w = make_input(rng, {4, 6}, dtypes::float32, Layout::Contiguous);
  Input b = make_input(rng, {4}, dtypes::float32, Layout::Flipped);
  NdArray want = ref::matmul(x.r, ref::transpose(w.r, 0, 1));
  check_close(x.t.linear(w.t), want, Tol{1e-5, 1e-5}, "linear without bias");
  check_close(x.t.linear(w.t, b.t), ref::zip(want, b.r, [](double p, double q) { return p + q; }),
              Tol{1e-5, 1e-5}, "linear with bias");
}

BOOST_AUTO_TEST_CASE(conv2d) {
  Rng rng(102);
  struct Case {
    int64_t n, cin, h, w, cout, k, stride, padding, dilation, groups;
    bool bias;
  };
  const Case cases[] = {
      {1, 1, 5, 5, 1, 3, 1, 0, 1, 1, false}, {2, 3, 6, 7, 4, 3, 1, 1, 1, 1, true},
      {1, 2, 7, 7, 3, 3, 2, 0, 1, 1, true},  {1, 2, 8, 6, 2, 2, 2, 1, 1, 1, false},
      {1, 2, 9, 9, 2, 3, 1, 2, 2, 1, true},  {2, 4, 5, 5, 6, 3, 1, 1, 1, 2, true},
      {1, 4, 6, 6, 4, 3, 2, 1, 1, 4, false}, {1, 3, 4, 4, 2, 1, 1, 0, 1, 1, true},
      {1, 2, 3, 3, 1, 3, 1, 0, 1, 1, false}, {1, 6, 7, 5, 3, 2, 3, 2, 2, 3, true},
  };
  int i = 0;
  for (const auto& cs : cases) {
    Layout l = kLayouts[i++ % 7];
    Input x = make_input(rng, {cs.n, cs.cin, cs.h, cs.w}, dtypes::float32, l);
    Input wt =
        make_input(rng, {cs.cout, cs.cin / cs.groups, cs.k, cs.k}, dtypes::float32, Layout::Contiguous);
    Input bias = make_input(rng, {cs.cout}, dtypes::float32, Layout::Contiguous);
    std::string c = "conv2d x " + ref::str(x.r.shape) + " " + layout_name(l) + " w " + ref::str(wt.r.shape) +
                    " stride " + std::to_string(cs.stride) + " padding " + std::to_string(cs.padding) +
                    " dilation " + std::to_string(cs.dilation) + " groups " + std::to_string(cs.groups) +
                    (cs.bias ? " bias" : "");
    Tensor got = cs.bias ? x.t.conv2d(wt.t, bias.t, cs.stride, cs.padding, cs.dilation, cs.groups)
                         : x.t.conv2d(wt.t, std::nullopt, cs.stride, cs.padding, cs.dilation, cs.groups);
    check_close(
        got,
        ref::conv2d(x.r, wt.r, cs.bias ? &bias.r : nullptr, cs.stride, cs.padding, cs.dilation, cs.groups),
        Tol{1e-5, 1e-5}, c);
  }
}

// The shapes of the GPU heuristic's staged convolutions (heuristic.cpp: staged_conv_opts): 64
// output channels, rows of 26 columns, an even batch (2 images per work group, 8 channels per
// thread on a GPU of up to 143 compute units) and an odd one (one image per work group, 4 channels
// per thread), against naive loops. Other devices run their own lists on the same shapes.
BOOST_AUTO_TEST_CASE(conv2d_staged_shapes) {
  Rng rng(107);
  for (int64_t n : {22, 21}) {
    NdArray x = rand_array(rng, {n, 4, 28, 28}), w = rand_array(rng, {64, 4, 3, 3});
    check_close(to_tensor(x).conv2d(to_tensor(w)), ref::conv2d(x, w, nullptr, 1, 0, 1, 1), Tol{1e-4, 1e-4},
                "conv2d x " + ref::str(x.shape) + " w " + ref::str(w.shape));
  }
}

// conv2d copies its weight to output-channel-minor once per weight value (Tensor::layout): a
// second convolution with the same stored weight runs only the convolution, a new value (assign)
// gets its copy made again, and a weight that is an expression keeps nothing; every result
// matches the naive loops.
BOOST_AUTO_TEST_CASE(conv2d_weight_copy_once_per_value) {
  Rng rng(109);
  NdArray x = rand_array(rng, {2, 3, 8, 8}), w1 = rand_array(rng, {4, 3, 3, 3}),
          w2 = rand_array(rng, {4, 3, 3, 3});
  Tensor xt = to_tensor(x).realize(), wt = to_tensor(w1).realize();
  auto run = [&](const Tensor& weight, const NdArray& w, const std::string& what) {
    tg::LaunchCounter counter;
    Tensor y = xt.conv2d(weight);
    y.realize();
    const size_t kernels = counter.kernels();
    check_close(y, ref::conv2d(x, w, nullptr, 1, 0, 1, 1), Tol{1e-4, 1e-4}, what);
    return kernels;
  };
  const size_t first = run(wt, w1, "first");
  BOOST_TEST(first >= 2u, "the weight's copy and the convolution");
  BOOST_TEST(run(wt, w1, "again") == first - 1);
  BOOST_TEST(run(wt, w1, "a third time") == first - 1);
  wt.assign(to_tensor(w2));
  BOOST_TEST(run(wt, w2, "assigned") == first);
  BOOST_TEST(run(wt, w2, "assigned, again") == first - 1);
  // an expression as the value: its copy is not kept (it would keep the expression's graph)
  NdArray w1x2 = w1;
  for (auto& v : w1x2.data) v *= 2;
  wt.assign(to_tensor(w1) * 2.0f);
  const size_t lazy = run(wt, w1x2, "an expression");
  BOOST_TEST(lazy >= first);
  BOOST_TEST(run(wt, w1x2, "an expression, again") == lazy);
  wt.realize();
  BOOST_TEST(run(wt, w1x2, "the expression stored") == first);
  BOOST_TEST(run(wt, w1x2, "the expression stored, again") == first - 1);
}

// Tensor::layout: the same values in the same shape, stored in the asked order.
BOOST_AUTO_TEST_CASE(layout_keeps_values) {
  Rng rng(110);
  NdArray a = rand_array(rng, {2, 3, 4});
  for (const tg::Axes& order : {tg::Axes{2, 0, 1}, tg::Axes{1, 2, 0}, tg::Axes{-1, 0, 1}}) {
    Tensor t = to_tensor(a).realize().layout(order);
    BOOST_TEST((t.shape() == tg::Dims{2, 3, 4}));
    check_close(t, a, Tol{0, 0}, "layout " + ref::str(order));
  }
  // split first: (2, 3, 4) seen as (2, 3, 2, 2), stored with the last axis outermost
  Tensor split = to_tensor(a).realize().layout({3, 0, 1, 2}, {2, 3, 2, 2});
  BOOST_TEST((split.shape() == tg::Dims{2, 3, 2, 2}));
  check_close(split.reshape({2, 3, 4}), a, Tol{0, 0}, "layout after a split");
  BOOST_CHECK_THROW(to_tensor(a).layout({0, 1, 2, 3}, {2, 3, 3}), tg::TensorError);
  BOOST_CHECK_THROW(to_tensor(a).layout({0, 1}), tg::TensorError);
  BOOST_CHECK_THROW(to_tensor(a).layout({0, 0, 1}), tg::TensorError);
}

// keep_copy: over a stored value the same key returns the kept copy without building it again
// (a model's weight rearrangements, built once per weight value); another key, a new value
// (assign) or a value that is not stored builds it.
BOOST_AUTO_TEST_CASE(keep_copy_builds_once_per_value_and_key) {
  Rng rng(112);
  NdArray a = rand_array(rng, {3, 4});
  Tensor t = to_tensor(a).realize();
  int builds = 0;
  auto twice = [&] {
    ++builds;
    return (t * 2.0f).contiguous();
  };
  Tensor first = t.keep_copy("twice", twice);
  Tensor again = t.keep_copy("twice", twice);
  BOOST_TEST(builds == 1);
  BOOST_TEST((again.shape() == tg::Dims{3, 4}));
  NdArray want = a;
  for (auto& v : want.data) v *= 2;
  check_close(again, want, Tol{0, 0}, "the kept copy");
  BOOST_TEST((first.uop() == again.uop()), "one stored result");
  t.keep_copy("transposed", [&] {
    ++builds;
    return t.permute({1, 0}).contiguous();
  });
  BOOST_TEST(builds == 2, "another key builds");
  t.keep_copy("twice", twice);
  BOOST_TEST(builds == 3, "one copy is kept: the key before is built again");
  t.assign(to_tensor(a) + 1.0f);
  t.realize();
  for (auto& v : want.data) v += 2;
  check_close(t.keep_copy("twice", twice), want, Tol{1e-6, 1e-6}, "after assign");
  BOOST_TEST(builds == 4, "a new value builds");
  Tensor lazy = to_tensor(a) * 3.0f;
  lazy.keep_copy("twice", twice);
  lazy.keep_copy("twice", twice);
  BOOST_TEST(builds == 6, "an expression keeps nothing");
}

// From 64 output channels (multiples of 32) a CPU stores the weight in 32-channel panels
// (composite.cpp) and the convolution keeps its (N, cout/32, 32, y, x) axes under a fused bias
// and ReLU: one kernel after the panel copy. Forward at strides 1 and 2 with padding, and the
// custom gradient, whose input-gradient convolution has 128 output channels too; against naive
// loops.
BOOST_AUTO_TEST_CASE(conv2d_weight_panels) {
  Rng rng(111);
  for (int64_t cout : {64, 128})
    for (int64_t stride : {1, 2}) {
      NdArray x = rand_array(rng, {2, 8, 7, 7}), w = rand_array(rng, {cout, 8, 3, 3}),
              b = rand_array(rng, {cout});
      NdArray want = ref::conv2d(x, w, &b, stride, 1, 1, 1);
      for (auto& v : want.data) v = std::max(v, 0.0);
      Tensor wt = to_tensor(w).realize(), bt = to_tensor(b).realize(), xt = to_tensor(x).realize();
      tg::LaunchCounter counter;
      Tensor y = xt.conv2d(wt, bt, stride, 1).relu();
      y.realize();
      BOOST_TEST(counter.kernels() == 2u, "the panel copy and the fused convolution");
      check_close(y, want, Tol{1e-4, 1e-4},
                  std::to_string(cout) + " channels, stride " + std::to_string(stride));
    }
  NdArray x = rand_array(rng, {1, 128, 6, 6}), w = rand_array(rng, {32, 128, 3, 3});
  NdArray want = ref::conv2d(x, w, nullptr, 1, 1, 1, 1), g = rand_array(rng, want.shape);
  auto [want_dx, want_dw] = ref::conv2d_grads(x, w, g, 1, 1, 1, 1);
  Tensor xt = to_tensor(x).requires_grad_(), wt = to_tensor(w).requires_grad_();
  Tensor y = xt.conv2d(wt, std::nullopt, 1, 1);
  (y * to_tensor(g)).sum().backward();
  check_close(y, want, Tol{1e-4, 1e-4}, "128 input channels");
  check_close(*xt.grad(), want_dx, Tol{1e-4, 1e-4}, "dX: 128 output channels");
  check_close(*wt.grad(), want_dw, Tol{1e-4, 1e-4}, "dW");
}

// Three convolutions of fresh inputs by one stored weight of shape `ws`, each against the naive
// convolution: the second and third launch one kernel fewer than the first (the weight's
// rearranged copy is made once while the weight is unchanged).
void check_weight_copied_once(Rng& rng, const Dims& ws, const Dims& xs, int64_t stride, int64_t padding,
                              Tol tol) {
  Tensor w = to_tensor(rand_array(rng, ws)).realize();
  std::vector<size_t> launched;
  for (int run = 0; run < 3; ++run) {
    NdArray x = rand_array(rng, xs);
    tg::LaunchCounter counter;
    Tensor y = to_tensor(x).conv2d(w, std::nullopt, stride, padding);
    y.realize();
    launched.push_back(counter.kernels());
    check_close(y, ref::conv2d(x, to_array(w), nullptr, stride, padding, 1, 1), tol,
                "run " + std::to_string(run));
  }
  BOOST_TEST(launched[1] + 1 == launched[0], "the second run reuses the weight's copy");
  BOOST_TEST(launched[2] == launched[1]);
}

// Winograd's F(4x4, 3x3) (kernel/tensor/winograd.cpp) against the naive convolution: output tiles
// that fit exactly and ones cut at the edges, with and without padding, with a bias, and both
// gradients (conv2d's own identities); a convolution of fewer than 16 tiles stays direct; the
// default takes it for inference on CPU-style devices only; and the transformed weight is
// computed once while the weight is unchanged.
BOOST_AUTO_TEST_CASE(conv2d_winograd) {
  struct Restore {
    ~Restore() { tg::set_winograd(-1); }
  } restore;
  struct Case {
    Dims x;
    int64_t cout, padding;
  };
  // F(4x4, 3x3) rounds in its transforms (entries up to 8 and 1/24): errors of ~1e-6 of the sum of
  // the products' magnitudes (up to ~150 here), against ~1e-7 for the direct sum
  constexpr Tol kWino{1e-4, 5e-4};
  Rng rng(131);
  for (const auto& [xs, cout, padding] : {Case{{2, 16, 10, 13}, 24, 1}, Case{{1, 16, 18, 18}, 16, 0}}) {
    const std::string c = "x " + ref::str(xs) + ", padding " + std::to_string(padding);
    NdArray x = rand_array(rng, xs), w = rand_array(rng, {cout, xs[1], 3, 3}), b = rand_array(rng, {cout});
    NdArray want = ref::conv2d(x, w, &b, 1, padding, 1, 1), g = rand_array(rng, want.shape);
    auto [want_dx, want_dw] = ref::conv2d_grads(x, w, g, 1, padding, 1, 1);
    Tensor xt = to_tensor(x).requires_grad_(), wt = to_tensor(w).requires_grad_();
    tg::set_winograd(0);
    const size_t direct = xt.conv2d(wt, to_tensor(b), 1, padding).schedule().size();
    tg::set_winograd(1);
    Tensor y = xt.conv2d(wt, to_tensor(b), 1, padding);
    BOOST_TEST(y.schedule().size() >= direct + 4, c << ": the transforms and the products are kernels");
    (y * to_tensor(g)).sum().backward();
    check_close(y, want, kWino, c);
    check_close(*xt.grad(), want_dx, kWino, c + " dX");
    check_close(*wt.grad(), want_dw, kWino, c + " dW");
  }
  Tensor small = to_tensor(rand_array(rng, {1, 16, 6, 6})), ws = to_tensor(rand_array(rng, {16, 16, 3, 3}));
  tg::set_winograd(0);
  const size_t direct = small.conv2d(ws, std::nullopt, 1, 1).schedule().size();
  tg::set_winograd(1);
  BOOST_TEST(small.conv2d(ws, std::nullopt, 1, 1).schedule().size() == direct, "4 tiles: direct");
  // the default: inference on devices that run work groups as CPU tasks
  {
    Tensor x = to_tensor(rand_array(rng, {1, 16, 16, 16})), wi = to_tensor(rand_array(rng, {16, 16, 3, 3}));
    tg::set_winograd(0);
    const size_t plain = x.conv2d(wi, std::nullopt, 1, 1).schedule().size();
    tg::set_winograd(-1);
    const bool cpu_tasks = !tg::parallel_work_groups(x.device());
    BOOST_TEST((x.conv2d(wi, std::nullopt, 1, 1).schedule().size() > plain) == cpu_tasks,
               "default on " << x.device() << " for 16 input channels");
    wi.requires_grad_();
    BOOST_TEST(x.conv2d(wi, std::nullopt, 1, 1).schedule().size() == plain, "a trained weight: direct");
    tg::set_winograd(1);
  }

  check_weight_copied_once(rng, {32, 16, 3, 3}, {1, 16, 16, 16}, 1, 1, kWino);
}

// A stride-2 convolution over few input channels with a wide window as a stride-1 one over the
// input's space-to-depth rearrangement (composite.cpp) against the naive convolution: odd and even
// windows, sizes the rearrangement pads or cuts, a bias, and both gradients (through the
// rearrangement's movement ops); the default takes it for inference on GPU-style devices only;
// the rearranged weight is computed once while the weight is unchanged.
BOOST_AUTO_TEST_CASE(conv2d_space_to_depth) {
  struct Restore {
    ~Restore() { tg::set_space_to_depth(-1); }
  } restore;
  struct Case {
    Dims x;
    int64_t cout, k, padding;
  };
  Rng rng(137);
  for (const auto& [xs, cout, k, padding] :
       {Case{{2, 3, 17, 20}, 16, 7, 3}, Case{{1, 2, 12, 11}, 8, 5, 2}, Case{{1, 4, 10, 9}, 8, 6, 1}}) {
    const std::string c =
        "x " + ref::str(xs) + ", window " + std::to_string(k) + ", padding " + std::to_string(padding);
    NdArray x = rand_array(rng, xs), w = rand_array(rng, {cout, xs[1], k, k}), b = rand_array(rng, {cout});
    NdArray want = ref::conv2d(x, w, &b, 2, padding, 1, 1), g = rand_array(rng, want.shape);
    auto [want_dx, want_dw] = ref::conv2d_grads(x, w, g, 2, padding, 1, 1);
    Tensor xt = to_tensor(x).requires_grad_(), wt = to_tensor(w).requires_grad_();
    tg::set_space_to_depth(0);
    const size_t direct = xt.conv2d(wt, to_tensor(b), 2, padding).schedule().size();
    tg::set_space_to_depth(1);
    Tensor y = xt.conv2d(wt, to_tensor(b), 2, padding);
    BOOST_TEST(y.schedule().size() > direct, c << ": the rearrangements are kernels");
    (y * to_tensor(g)).sum().backward();
    check_close(y, want, Tol{1e-4, 1e-4}, c);
    check_close(*xt.grad(), want_dx, Tol{1e-4, 1e-4}, c + " dX");
    check_close(*wt.grad(), want_dw, Tol{1e-4, 1e-4}, c + " dW");
  }
  {
    Tensor x = to_tensor(rand_array(rng, {1, 3, 16, 16})), wi = to_tensor(rand_array(rng, {8, 3, 7, 7}));
    tg::set_space_to_depth(0);
    const size_t plain = x.conv2d(wi, std::nullopt, 2, 3).schedule().size();
    tg::set_space_to_depth(1);
    BOOST_TEST(x.conv2d(wi, std::nullopt, 1, 3).schedule().size() ==
                   (tg::set_space_to_depth(0), x.conv2d(wi, std::nullopt, 1, 3).schedule().size()),
               "stride 1: direct");
    tg::set_space_to_depth(-1);
    const bool gpu_style = tg::parallel_work_groups(x.device());
    BOOST_TEST((x.conv2d(wi, std::nullopt, 2, 3).schedule().size() > plain) == gpu_style,
               "default on " << x.device());
    wi.requires_grad_();
    BOOST_TEST(x.conv2d(wi, std::nullopt, 2, 3).schedule().size() == plain, "a trained weight: direct");
    Tensor wide = to_tensor(rand_array(rng, {8, 8, 7, 7}));
    Tensor x8 = to_tensor(rand_array(rng, {1, 8, 16, 16}));
    tg::set_space_to_depth(0);
    const size_t plain8 = x8.conv2d(wide, std::nullopt, 2, 3).schedule().size();
    tg::set_space_to_depth(1);
    BOOST_TEST(x8.conv2d(wide, std::nullopt, 2, 3).schedule().size() == plain8, "8 input channels: direct");
  }
  tg::set_space_to_depth(1);
  check_weight_copied_once(rng, {16, 3, 7, 7}, {1, 3, 20, 20}, 2, 3, Tol{1e-4, 1e-4});
}

// Output channels in multiples of 16: the CPU heuristic's convolution register tile (heuristic.cpp
// cpu_conv_tile: 16 or 32 channels times a row of outputs) in the forward pass and in both
// gradients (the custom gradient's convolutions at stride 1, the window view's otherwise), with
// odd input channels, strides, padding, dilation, groups, and sizes no tile divides (11 wide, 20
// channels), against naive loops.
BOOST_AUTO_TEST_CASE(conv2d_register_tiles_with_gradients) {
  Rng rng(105);
  struct Case {
    int64_t n, cin, h, w, cout, k, stride, padding, dilation, groups;
  };
  const Case cases[] = {
      {2, 3, 12, 12, 16, 5, 1, 0, 1, 1}, {2, 5, 13, 11, 32, 3, 1, 1, 1, 1}, {1, 4, 12, 12, 16, 3, 2, 1, 1, 1},
      {2, 8, 10, 10, 32, 3, 1, 0, 1, 2}, {1, 4, 9, 9, 48, 2, 1, 0, 2, 1},   {3, 16, 7, 7, 20, 3, 1, 1, 1, 1},
  };
  for (const auto& cs : cases) {
    NdArray x = rand_array(rng, {cs.n, cs.cin, cs.h, cs.w});
    NdArray w = rand_array(rng, {cs.cout, cs.cin / cs.groups, cs.k, cs.k});
    NdArray want = ref::conv2d(x, w, nullptr, cs.stride, cs.padding, cs.dilation, cs.groups);
    NdArray g = rand_array(rng, want.shape);
    auto [want_dx, want_dw] = ref::conv2d_grads(x, w, g, cs.stride, cs.padding, cs.dilation, cs.groups);
    std::string c = "conv2d x " + ref::str(x.shape) + " w " + ref::str(w.shape) + " stride " +
                    std::to_string(cs.stride) + " padding " + std::to_string(cs.padding) + " dilation " +
                    std::to_string(cs.dilation) + " groups " + std::to_string(cs.groups);
    Tensor xt = to_tensor(x).requires_grad_(), wt = to_tensor(w).requires_grad_();
    Tensor y = xt.conv2d(wt, std::nullopt, cs.stride, cs.padding, cs.dilation, cs.groups);
    (y * to_tensor(g)).sum().backward();
    check_close(y, want, Tol{1e-4, 1e-4}, c);
    check_close(*xt.grad(), want_dx, Tol{1e-4, 1e-4}, c + " dX");
    check_close(*wt.grad(), want_dw, Tol{1e-4, 1e-4}, c + " dW");
  }
}

// beautiful_mnist's middle: conv, 2x2 max pool, conv, with gradients. The pool's backward divides
// each window's gradient (the second convolution's input gradient) by the window's count of
// maxima, stored by its own kernel (autograd.cpp); the first layer's input needs no gradient.
// Against naive loops; random inputs have no tied maxima, so each window's gradient goes to its
// one maximum.
BOOST_AUTO_TEST_CASE(conv_pool_conv_gradients) {
  Rng rng(106);
  NdArray x = rand_array(rng, {2, 3, 12, 12}), w1 = rand_array(rng, {16, 3, 3, 3}),
          w2 = rand_array(rng, {32, 16, 3, 3});
  NdArray a = ref::conv2d(x, w1, nullptr, 1, 0, 1, 1); // (2, 16, 10, 10)
  NdArray p = ref::max_pool2d(a, 2);                   // (2, 16, 5, 5)
  NdArray y = ref::conv2d(p, w2, nullptr, 1, 1, 1, 1); // (2, 32, 5, 5)
  NdArray g = rand_array(rng, y.shape);
  auto [want_dp, want_dw2] = ref::conv2d_grads(p, w2, g, 1, 1, 1, 1);
  NdArray da(a.shape); // the pool's gradient: each window's to its maximum
  ref::for_each_index(p.shape, [&](const Dims& o) {
    Dims best = {o[0], o[1], 2 * o[2], 2 * o[3]};
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        Dims at = {o[0], o[1], 2 * o[2] + i, 2 * o[3] + j};
        if (a.at(at) > a.at(best)) best = at;
      }
    da.at(best) += want_dp.at(o);
  });
  NdArray want_dw1 = ref::conv2d_grads(x, w1, da, 1, 0, 1, 1).second;
  Tensor xt = to_tensor(x), w1t = to_tensor(w1).requires_grad_(), w2t = to_tensor(w2).requires_grad_();
  Tensor yt = xt.conv2d(w1t).max_pool2d(2).conv2d(w2t, std::nullopt, 1, 1);
  (yt * to_tensor(g)).sum().backward();
  check_close(yt, y, Tol{1e-4, 1e-4}, "conv, pool, conv");
  check_close(*w2t.grad(), want_dw2, Tol{1e-4, 1e-4}, "second dW");
  check_close(*w1t.grad(), want_dw1, Tol{1e-4, 1e-4}, "first dW, through the pool and dX");
}

BOOST_AUTO_TEST_CASE(pooling) {
  Rng rng(103);
  struct Case {
    Dims shape;
    int64_t k;
    std::optional<int64_t> stride;
    int64_t padding, dilation;
  };
  const Case cases[] = {
      {{1, 1, 4, 4}, 2, {}, 0, 1}, {{2, 3, 5, 7}, 3, 1, 1, 1}, {{1, 2, 6, 6}, 3, 2, 0, 1},
      {{1, 1, 7, 7}, 2, 3, 1, 1},  {{3, 5, 5}, 2, 1, 0, 1},    {{5, 5}, 3, 2, 1, 1},
      {{1, 2, 8, 8}, 2, 1, 0, 2},  {{1, 1, 9, 9}, 3, 2, 1, 2},
  };
  int i = 0;
  for (const auto& cs : cases) {
    Layout l = kLayouts[i++ % 7];
    Input x = make_input(rng, cs.shape, dtypes::float32, l);
    std::string c = "pool " + ref::str(cs.shape) + " " + layout_name(l) + " k " + std::to_string(cs.k) +
                    " stride " + std::to_string(cs.stride.value_or(-1)) + " padding " +
                    std::to_string(cs.padding) + " dilation " + std::to_string(cs.dilation);
    check_close(x.t.max_pool2d(cs.k, cs.stride, cs.padding, cs.dilation),
                ref::max_pool2d(x.r, cs.k, cs.stride, cs.padding, cs.dilation), kExact, "max_" + c);
    if (cs.dilation == 1)
      check_close(x.t.avg_pool2d(cs.k, cs.stride, cs.padding),
                  ref::avg_pool2d(x.r, cs.k, cs.stride, cs.padding), Tol{1e-5, 1e-6}, "avg_" + c);
  }
  // integer max pool, padded with the dtype's minimum
  Input xi = make_input(rng, {1, 1, 5, 5}, dtypes::int32, Layout::Contiguous);
  xi.r = ref::map(xi.r, [](double v) { return v - 20; }); // all negative: padding must not win
  Tensor ti = to_tensor(xi.r, dtypes::int32);
  check_close(ti.max_pool2d(3, 2, 1), ref::max_pool2d(xi.r, 3, 2, 1), kExact, "int max_pool2d padded");
}

BOOST_AUTO_TEST_SUITE_END()
