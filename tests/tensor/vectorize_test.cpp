// Vector lanes (kernel/codegen/vectorize.cpp): tiles whose leading upcast is contiguous compute
// as vector values. Results must equal the naive references whatever bundles: consecutive loads
// (vector load), broadcast loads, strided and gated (padded) loads (packed lanes), and the
// conv2d weight gradient whose batch sum runs in cache-sized chunks.
#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/engine/config.hpp"
#include "test_util.hpp"

#include <iostream>
#include <sstream>

using namespace tt;

namespace {
// The "=== lowered (...)" lines DEBUG=4 prints for the kernels `f` compiles.
template <class F> std::string lowered_opts(F&& f) {
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  tg::set_debug_level(4);
  try {
    f();
  } catch (...) {
    tg::set_debug_level(0);
    std::cout.rdbuf(old);
    throw;
  }
  tg::set_debug_level(0);
  std::cout.rdbuf(old);
  std::string opts, line;
  std::istringstream in(out.str());
  while (std::getline(in, line))
    if (line.rfind("=== lowered", 0) == 0) opts += line + "\n";
  return opts;
}
} // namespace

BOOST_AUTO_TEST_SUITE(vectorize)

BOOST_AUTO_TEST_CASE(matmul_tiles_become_vectors, *tt::needs_vectors()) {
  Rng rng(301);
  NdArray a = rand_array(rng, {24, 40}), b = rand_array(rng, {40, 48});
  Tensor got = to_tensor(a).matmul(to_tensor(b));
  std::string opts = lowered_opts([&] { got.realize(); });
  BOOST_TEST_INFO(opts);
  BOOST_TEST(opts.find("vector=") != std::string::npos); // B is contiguous along the output columns
  check_close(got, ref::matmul(a, b), kReduce32, "matmul 24x40 @ 40x48");
}

BOOST_AUTO_TEST_CASE(every_input_layout_matches_the_reference) {
  // The same product with B seen through each view: contiguous lanes become vector loads,
  // flipped/strided ones stay per-lane, padded ones are gated.
  Rng rng(302);
  for (Layout l : kLayouts) {
    Input a = make_input(rng, {16, 20}, dtypes::float32, Layout::Contiguous);
    Input b = make_input(rng, {20, 32}, dtypes::float32, l);
    check_close(a.t.matmul(b.t), ref::matmul(a.r, b.r), kReduce32,
                std::string("matmul 16x20 @ 20x32, B ") + layout_name(l));
  }
}

BOOST_AUTO_TEST_CASE(elementwise_inside_the_reduce_and_after_it) {
  Rng rng(303);
  NdArray a = rand_array(rng, {8, 32}), b = rand_array(rng, {32, 64}), c = rand_array(rng, {64});
  // relu of a broadcast operand inside the sum, a bias and a max after it
  Tensor got =
      (to_tensor(a).relu().matmul(to_tensor(b) * 0.5f) + to_tensor(c)).maximum(Tensor::full({8, 64}, 0.25f));
  NdArray ra = ref::map(a, [](double x) { return std::max(x, 0.0); });
  NdArray rb = ref::map(b, [](double x) { return x * 0.5; });
  NdArray want = ref::matmul(ra, rb);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      double& v = want.data[size_t(i * 64 + j)];
      v = std::max(v + c.data[size_t(j)], 0.25);
    }
  check_close(got, want, kReduce32, "relu(a) @ (b * 0.5) + c, max 0.25");
}

BOOST_AUTO_TEST_CASE(conv2d_weight_gradient_in_batch_chunks) {
  // 40 images of 8x32x32 are larger than the 512 KiB chunk, so dW sums 5 chunks of 8 images.
  Rng rng(304);
  const int64_t n = 40, ci = 8, co = 8, h = 32, k = 3, o = h - k + 1;
  NdArray x = rand_array(rng, {n, ci, h, h}), w = rand_array(rng, {co, ci, k, k}),
          g = rand_array(rng, {n, co, o, o});
  Tensor wt = to_tensor(w).requires_grad_();
  (to_tensor(x).conv2d(wt, std::nullopt) * to_tensor(g)).sum().backward();
  NdArray want({co, ci, k, k});
  for (int64_t a = 0; a < co; ++a)
    for (int64_t b = 0; b < ci; ++b)
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          double s = 0;
          for (int64_t m = 0; m < n; ++m)
            for (int64_t y = 0; y < o; ++y)
              for (int64_t z = 0; z < o; ++z)
                s += g.data[size_t(((m * co + a) * o + y) * o + z)] *
                     x.data[size_t(((m * ci + b) * h + y + i) * h + z + j)];
          want.data[size_t(((a * ci + b) * k + i) * k + j)] = s;
        }
  check_close(*wt.grad(), want, Tol{1e-4, 1e-3}, "conv2d dW, 40 images in chunks");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(vectorize_widths)

BOOST_AUTO_TEST_CASE(lanes_follow_the_device_vector_width) {
  // The same matmul kernel lowered for devices with other vector registers: the leading upcast
  // (16 contiguous columns) becomes vectors of at most two registers, or stays scalar for 0; the
  // program always passes the SDK's validator.
  Rng rng(305);
  Tensor c = to_tensor(rand_array(rng, {8, 24})).matmul(to_tensor(rand_array(rng, {24, 32})));
  auto items = c.schedule();
  BOOST_REQUIRE(!items.empty());
  const struct {
    uint32_t bytes;
    const char* expect; // in the opts string, or nullptr for none
  } widths[] = {{0, nullptr}, {8, "vector=4"}, {16, "vector=8"}, {32, "vector=16"}, {64, "vector=16"}};
  for (const auto& w : widths) {
    tg::LowerOptions options;
    options.vector_bytes = w.bytes;
    tg::LoweredKernel k = tg::lower_kernel(items.back(), options);
    BOOST_TEST_CONTEXT("vector_bytes " << w.bytes << ": " << k.opts) {
      if (w.expect)
        BOOST_TEST(k.opts.find(w.expect) != std::string::npos);
      else
        BOOST_TEST(k.opts.find("vector=") == std::string::npos);
      BOOST_CHECK_NO_THROW(tg::linearize(k.sink, k.name));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
