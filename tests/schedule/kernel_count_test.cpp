// Fusion: how many kernels realize() runs, compared with tinygrad's counts for the same code
// (tinygrad 0.14.0, measured with GlobalCounters.kernel_count on realized inputs).
#include "kernel/engine/launch_counter.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/schedule/schedule.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

using namespace tg;

namespace {
Tensor input(Dims shape, float scale = 1) {
  std::vector<float> v(size_t(dims_prod(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * float(int(i % 7) - 3);
  return Tensor::from_vector(v, shape);
}
size_t kernels(const Tensor& t) { return t.schedule().size(); }
} // namespace

BOOST_AUTO_TEST_CASE(elementwise_chain_is_one_kernel) {
  Tensor a = input({4, 4}), b = input({4, 4}, 2), c = input({4, 4}, 3);
  Tensor r = ((a + b) * c).relu();
  BOOST_TEST(kernels(r) == 1u); // tinygrad: 1
  auto got = r.to_vector<float>();
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) BOOST_TEST(got[i] == std::max(0.0f, (av[i] + bv[i]) * cv[i]));
}

BOOST_AUTO_TEST_CASE(elementwise_into_reduce_is_one_kernel) {
  Tensor a = input({4, 4}), b = input({4, 4}, 2);
  BOOST_TEST(kernels((a * b).sum()) == 1u); // tinygrad: 1
  BOOST_TEST((a * b).sum().item<float>() == (a * b).contiguous().sum().item<float>());
}

BOOST_AUTO_TEST_CASE(movement_only_is_zero_kernels) {
  Tensor a = input({4, 4});
  BOOST_TEST(kernels(a.permute({1, 0}).reshape({16})) == 0u); // tinygrad: 0
  BOOST_TEST(kernels(a.reshape({2, 8}).shrink({{0, 1}, {0, 8}}).flip({1})) == 0u);
}

BOOST_AUTO_TEST_CASE(matmul_then_sum_matches_tinygrad) {
  Tensor x = input({4, 4}), y = input({16}, 0.5f);
  Tensor r = (x.permute({1, 0}).matmul(y.reshape({4, 4}))).sum({1});
  BOOST_TEST(kernels(r) == 1u); // tinygrad: 1 (the two reductions merge)
  auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  auto got = r.to_vector<float>();
  for (int i = 0; i < 4; ++i) {
    float want = 0;
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) want += xv[size_t(k * 4 + i)] * yv[size_t(k * 4 + j)];
    BOOST_TEST(got[size_t(i)] == want, boost::test_tools::tolerance(1e-5f));
  }
}

// A large matmul's result (>= 65536 elements) is stored before a sum of it (tinygrad merges the
// two reduces): merged, the sum would redo the matmul's multiply-adds over its few outputs without
// the matmul's tiling, and again where the product is used elsewhere.
BOOST_AUTO_TEST_CASE(large_matmul_then_sum_is_two_kernels) {
  Tensor x = input({256, 32}, 0.25f), y = input({32, 256}, 0.5f);
  Tensor r = x.matmul(y).sum({0});
  BOOST_TEST(kernels(r) == 2u);
  auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  auto got = r.to_vector<float>();
  for (size_t j = 0; j < 256; ++j) {
    double want = 0;
    for (size_t i = 0; i < 256; ++i)
      for (size_t k = 0; k < 32; ++k) want += double(xv[i * 32 + k]) * double(yv[k * 256 + j]);
    BOOST_TEST(got[j] == want, boost::test_tools::tolerance(1e-4));
  }
}

// A whole matrix's sum (adjacent reduced axes, >= 32768 values, one output) is split into partial
// sums and their sum, as one long axis is: a single work group would otherwise read all of it.
BOOST_AUTO_TEST_CASE(long_sum_over_adjacent_axes_is_split) {
  Tensor x = input({256, 256}, 0.5f);
  Tensor s = x.sum();
  BOOST_TEST(kernels(s) == 2u);
  auto xv = x.to_vector<float>();
  double want = 0;
  for (float v : xv) want += double(v);
  BOOST_TEST(double(s.item<float>()) == want, boost::test_tools::tolerance(1e-6));
}

// Sums over different spaces that one value adds up (a gradient norm's per-parameter sums) are
// kernels of their own: a kernel runs only its first reduce with the optimizer's plan, the others
// as plain loops per output.
BOOST_AUTO_TEST_CASE(sums_over_different_spaces_are_separate_kernels) {
  Tensor a = input({64, 64}, 0.5f), b = input({128}, 2);
  Tensor t = a.square().sum() + b.sum();
  BOOST_TEST(kernels(t) == 2u);
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  double want = 0;
  for (float v : av) want += double(v) * double(v);
  for (float v : bv) want += double(v);
  BOOST_TEST(double(t.item<float>()) == want, boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(softmax_matches_tinygrad) {
  BOOST_TEST(kernels(input({4, 4}).softmax()) == 3u); // tinygrad: 3 (max, sum, divide)
}

BOOST_AUTO_TEST_CASE(elementwise_after_reduce_fuses) {
  Tensor a = input({8, 8});
  BOOST_TEST(kernels(a.sum({1}).relu() * 2.0f) == 1u);
  // broadcast back over the reduced axis: the reduce must be stored first
  BOOST_TEST(kernels(a - a.max({1}, true)) == 2u);
}

BOOST_AUTO_TEST_CASE(same_expression_is_the_same_node_and_realizes_once) {
  Tensor a = input({4, 4}), b = input({4, 4}, 2);
  Tensor x = (a + b) * 2.0f, y = (a + b) * 2.0f;
  BOOST_TEST(x.uop() == y.uop());
  x.realize();
  BOOST_TEST(kernels(y) == 0u); // already computed through x
  BOOST_TEST(y.to_vector<float>() == x.to_vector<float>());
}

BOOST_AUTO_TEST_CASE(nothing_runs_before_realize) {
  Tensor a = input({4, 4});
  Tensor lazy = a * 3.0f;
  BOOST_TEST(lazy.uop()->op() == Ops::MUL); // still a graph
  lazy.realize();
  BOOST_TEST(is_buffer_view(lazy.uop()));
}

BOOST_AUTO_TEST_CASE(reduce_read_by_two_kernels_is_computed_once) {
  // e.g. a gradient read by both of Adam's moment updates: stored once, not summed twice
  Tensor a = input({8, 8}), b = input({8, 8}, 2);
  Tensor g = (a * b).sum({0});
  Tensor x = g + 1.0f, y = g * g;
  BOOST_TEST(create_schedule({x.uop(), y.uop()}).items.size() == 3u);
  std::vector<Tensor*> both{&x, &y};
  Tensor::realize_all(both);
  auto gv = (a * b).contiguous().sum({0}).to_vector<float>();
  auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  for (size_t i = 0; i < gv.size(); ++i) {
    BOOST_TEST(xv[i] == gv[i] + 1.0f);
    BOOST_TEST(yv[i] == gv[i] * gv[i]);
  }
}

BOOST_AUTO_TEST_CASE(elementwise_broadcast_into_a_reduce_is_stored_first) {
  // (a + 1) broadcast over 8 output columns would be recomputed 8 times inside the sum
  Tensor a = input({4, 6}), b = input({6, 8}, 0.5f);
  Tensor r = (a + 1.0f).matmul(b);
  BOOST_TEST(kernels(r) == 2u);
  Tensor plain = a + 1.0f; // no reduce after the broadcast: one fused kernel
  BOOST_TEST(kernels(plain.reshape({4, 6, 1}).expand({4, 6, 8}) * 2.0f) == 1u);
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), got = r.to_vector<float>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) {
      float want = 0;
      for (int k = 0; k < 6; ++k) want += (av[size_t(i * 6 + k)] + 1.0f) * bv[size_t(k * 8 + j)];
      BOOST_TEST(got[size_t(i * 8 + j)] == want, boost::test_tools::tolerance(1e-5f));
    }
}

BOOST_AUTO_TEST_CASE(dead_results_are_reused_by_the_next_realize) {
  // A result nobody holds any more goes back to the allocator before the next realize runs, so
  // that realize reuses its memory (a training step then reuses the last step's buffers).
  Allocator& alloc = *open_device("CPU").allocator;
  Tensor a = input({1000, 3});
  Tensor held = (a - 1.0f).realize(); // this realize returns earlier tests' dead results first
  alloc.free_cache();
  {
    Tensor dead = a * 3.0f;
    dead.realize();
  }
  // a target belongs to its tensor: back in the allocator's cache as soon as the tensor dies
  BOOST_TEST(alloc.cached_bytes() == 1000u * 3u * sizeof(float));
  Tensor next = a + 5.0f; // same size
  next.realize();
  BOOST_TEST(alloc.cached_bytes() == 0u); // took the dead result's buffer instead of a new one
  BOOST_TEST(next.to_vector<float>()[1] == a.to_vector<float>()[1] + 5.0f);
}

// A convolution whose result a padded max pool reads (ResNet's stem): the convolution's reduce is
// stored at its own shape. Fused under the pad, its kernel wrote the padded shape, whose axes the
// optimizer could not map onto the reduce's: no tiling at all, 60x slower on the CPU.
BOOST_AUTO_TEST_CASE(reduce_under_a_pad_is_stored_unpadded) {
  Tensor x = input({1, 2, 10, 10}), w = input({4, 2, 3, 3}, 0.5f);
  Tensor y = x.conv2d(w).relu().max_pool(PoolOptions{{3, 3}, {2, 2}, {}, {{1, 1}, {1, 1}}, false});
  bool found = false;
  for (const auto& item : y.schedule()) {
    bool sums = false;
    for (const auto& u : toposort(item.ast))
      if (const auto* r = u->arg_if<ReduceArg>(); r && u->op() == Ops::REDUCE_AXIS) sums |= r->op == Ops::ADD;
    if (!sums) continue;
    found = true;
    BOOST_TEST(dims_prod(item.shape) == 1 * 4 * 8 * 8); // the conv's (1, 4, 8, 8), not padded (10, 10)
  }
  BOOST_TEST(found);
  // The ReLU is stored with the convolution it follows (the convolution is stored either way):
  // with the weight's copy made (Tensor::layout), two kernels, the convolution and the pool, with
  // no padded copy of the ReLU's result between them.
  x.conv2d(w).realize();
  {
    LaunchCounter counter;
    Tensor again = x.conv2d(w).relu().max_pool(PoolOptions{{3, 3}, {2, 2}, {}, {{1, 1}, {1, 1}}, false});
    again.realize();
    BOOST_TEST(counter.kernels() == 2u);
  }
  // and the values: max over each padded 3x3 window of relu(conv), against the unfused chain
  Tensor ref = x.conv2d(w).relu().contiguous();
  ref.realize();
  Tensor want = ref.max_pool(PoolOptions{{3, 3}, {2, 2}, {}, {{1, 1}, {1, 1}}, false});
  BOOST_TEST(y.to_vector<float>() == want.to_vector<float>(), boost::test_tools::per_element());
}

// A convolution's bias and activation feeding a window that reads each value only ~2.25 times (a
// stride-2 depthwise convolution, MobileNetV2's) run in the convolution's kernel, once per value:
// the convolution is stored for the window anyway. Its consumer reads the activated values.
BOOST_AUTO_TEST_CASE(an_activation_is_stored_with_its_convolution_not_recomputed_per_window) {
  Tensor x = input({1, 3, 12, 12}), w = input({8, 3, 1, 1}, 0.25f), b = input({8}, 0.5f);
  Tensor dw = input({8, 1, 3, 3}, 0.125f);
  auto net = [&] {
    return x.conv2d(w, b).clip(0, 6).conv2d(dw, {}, /*stride=*/2, /*padding=*/1, 1, /*groups=*/8);
  };
  net().realize(); // makes the weights' layout copies (Tensor::layout)
  Tensor y = net();
  const auto items = y.schedule();
  BOOST_TEST_REQUIRE(items.size() == 2u);
  auto max_ops = [](const ScheduleItem& item) {
    size_t n = 0;
    for (const auto& u : toposort(item.ast)) n += u->op() == Ops::MAX;
    return n;
  };
  BOOST_TEST(max_ops(items[0]) > 0u);  // the clamp, after the 1x1 convolution
  BOOST_TEST(max_ops(items[1]) == 0u); // the depthwise convolution reads clamped values
  Tensor clamped = x.conv2d(w, b).clip(0, 6).contiguous();
  clamped.realize();
  Tensor want = clamped.conv2d(dw, {}, 2, 1, 1, 8);
  BOOST_TEST(y.to_vector<float>() == want.to_vector<float>(), boost::test_tools::per_element());
}

// A bfloat16 product summed in float32 and cast back, which another reduce reads (attention's
// scores under its row max): the cast is stored, not the float32 sum (half the bytes for the
// product's kernel and every reader), in the product's own shape. Small integers, so every
// score is exact in bfloat16: values vs hand-computed.
BOOST_AUTO_TEST_CASE(a_narrowing_cast_of_a_product_is_stored_in_its_place) {
  std::vector<float> qv(8 * 4), kv(16 * 4);
  for (size_t i = 0; i < qv.size(); ++i) qv[i] = float(int(i % 5) - 2);
  for (size_t i = 0; i < kv.size(); ++i) kv[i] = float(int(i % 7) - 3);
  Tensor q = Tensor::from_vector(qv, {8, 4}).realize(), k = Tensor::from_vector(kv, {16, 4}).realize();
  Tensor scores = q.cast(dtypes::bfloat16).matmul(k.cast(dtypes::bfloat16).transpose());
  BOOST_REQUIRE(scores.dtype() == dtypes::bfloat16);
  Tensor top = scores.max({1});
  bool narrow = false, wide = false;
  for (const auto& item : top.schedule()) {
    const UOpRef& store = item.ast->src(0);
    if (store->op() != Ops::STORE || item.shape != Dims{8, 16}) continue;
    narrow |= store->src(1)->dtype() == dtypes::bfloat16;
    wide |= store->src(1)->dtype() == dtypes::float32;
  }
  BOOST_TEST(narrow, "the scores stored as bfloat16");
  BOOST_TEST(!wide);
  std::vector<float> want(8, -1e30f);
  for (size_t i = 0; i < 8; ++i)
    for (size_t j = 0; j < 16; ++j) {
      float s = 0;
      for (size_t c = 0; c < 4; ++c) s += qv[i * 4 + c] * kv[j * 4 + c];
      want[i] = std::max(want[i], s);
    }
  BOOST_TEST(top.cast(dtypes::float32).to_vector<float>() == want, boost::test_tools::per_element());
}

// Autocast: a value cast to bfloat16 and broadcast into a matmul is stored after the cast, so the
// matmul reads bfloat16 and does not recompute it per product (a LayerNorm's output: an ALU chain);
// where the cast reads a reduce's result through views (a projection's output cast as attention
// heads), the reduce is stored at its own shape instead, so its kernel keeps its own axes.
BOOST_AUTO_TEST_CASE(autocast_operands_are_stored_after_the_cast_unless_they_are_a_reduce) {
  Tensor x = input({16, 8}, 0.25f), w = input({8, 32}, 0.5f), v = input({32, 4}, 0.125f);
  auto stored = [](const Tensor& t) {
    std::vector<std::pair<Dims, DType>> out;
    for (const auto& item : t.schedule())
      if (item.ast->src(0)->op() == Ops::STORE)
        out.emplace_back(item.shape, item.ast->src(0)->src(1)->dtype());
    return out;
  };
  Tensor h = (x * 2.0f + 1.0f).cast(dtypes::bfloat16).matmul(w.cast(dtypes::bfloat16));
  bool cast_stored = false;
  for (const auto& [shape, dt] : stored(h)) cast_stored |= shape == Dims{16, 8} && dt == dtypes::bfloat16;
  BOOST_TEST(cast_stored);
  // (16, 32) seen as 2 heads of (16, 16), cast, then each head times v's rows
  Tensor heads = x.matmul(w).reshape({16, 2, 16}).permute({1, 0, 2}).cast(dtypes::bfloat16);
  Tensor y = heads.matmul(v.reshape({2, 16, 4}).cast(dtypes::bfloat16));
  bool projection_at_its_shape = false, permuted = false;
  for (const auto& [shape, dt] : stored(y)) {
    Dims sizes; // without its 1s: a reduce keeps its reduced dims as 1
    for (auto d : shape)
      if (d != 1) sizes.push_back(d);
    projection_at_its_shape |= sizes == Dims{16, 32} && dt == dtypes::float32;
    permuted |= shape == Dims{2, 16, 16};
  }
  BOOST_TEST(projection_at_its_shape);
  BOOST_TEST(!permuted);
  // the backward's form: a bfloat16 product cast back to float, seen as heads
  Tensor grads =
      x.matmul(w).cast(dtypes::bfloat16).reshape({16, 2, 16}).permute({1, 0, 2}).cast(dtypes::float32);
  Tensor z = grads.matmul(v.reshape({2, 16, 4}));
  bool back_at_its_shape = false, back_permuted = false;
  for (const auto& [shape, dt] : stored(z)) {
    Dims sizes;
    for (auto d : shape)
      if (d != 1) sizes.push_back(d);
    back_at_its_shape |= sizes == Dims{16, 32};
    back_permuted |= shape == Dims{2, 16, 16};
  }
  BOOST_TEST(back_at_its_shape);
  BOOST_TEST(!back_permuted);
  Tensor want = x.matmul(w)
                    .contiguous()
                    .reshape({16, 2, 16})
                    .permute({1, 0, 2})
                    .cast(dtypes::bfloat16)
                    .contiguous()
                    .matmul(v.reshape({2, 16, 4}).cast(dtypes::bfloat16));
  BOOST_TEST(y.cast(dtypes::float32).to_vector<float>() == want.cast(dtypes::float32).to_vector<float>(),
             boost::test_tools::per_element());
}
