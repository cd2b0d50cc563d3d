// Reductions against ref::reduce and friends: random axis lists (negative too) with and without
// keepdim over every input layout and the dtypes each reduction supports; accumulation dtypes;
// empty and size-1 dims; the split path for long reductions; several long axes with few outputs;
// argmax/argmin ties; softmax family; cumsum.
#include "test_util.hpp"

using namespace tt;
using ref::Dims;

namespace {

// A random non-empty subset of the axes of an nd-dim tensor, each maybe spelled negatively;
// sometimes empty (= all axes).
std::vector<int64_t> rand_axes(Rng& rng, int64_t nd) {
  std::vector<int64_t> axes;
  if (nd == 0 || rint(rng, 0, 4) == 0) return axes;
  for (int64_t i = 0; i < nd; ++i)
    if (rint(rng, 0, 1)) axes.push_back(rint(rng, 0, 1) ? i - nd : i);
  if (axes.empty()) axes.push_back(rint(rng, 0, nd - 1));
  std::shuffle(axes.begin(), axes.end(), rng);
  return axes;
}

std::string axes_str(const std::vector<int64_t>& a) { return "axes " + ref::str(a); }

double wrap32(double v) { // int32 two's complement wrap of an exact integer
  double m = 4294967296.0, r = std::fmod(v, m);
  if (r < 0) r += m;
  return r >= m / 2 ? r - m : r;
}

} // namespace

BOOST_AUTO_TEST_SUITE(reduce)

BOOST_AUTO_TEST_CASE(sum_max_min_mean_over_layouts) {
  Rng rng(2024);
  for (Layout l : kLayouts)
    for (int trial = 0; trial < 3; ++trial) {
      Dims shape = rand_shape(rng, 3, 5);
      Input x = make_input(rng, shape, dtypes::float32, l);
      auto axes = rand_axes(rng, 3);
      bool keep = rint(rng, 0, 1);
      std::string c = ctx("", shape, dtypes::float32, l) + " " + axes_str(axes) + (keep ? " keepdim" : "");
      check_close(x.t.sum(axes, keep), ref::sum(x.r, axes, keep), Tol{1e-5, 1e-4}, "sum" + c);
      check_close(x.t.max(axes, keep), ref::max(x.r, axes, keep), kExact, "max" + c);
      check_close(x.t.min(axes, keep), ref::min(x.r, axes, keep), kExact, "min" + c);
      check_close(x.t.mean(axes, keep), ref::mean(x.r, axes, keep), Tol{1e-5, 1e-5}, "mean" + c);
      check_close(x.t.prod(axes, keep), ref::prod(x.r, axes, keep), Tol{1e-4, 1e-6}, "prod" + c);
    }
}

BOOST_AUTO_TEST_CASE(var_std) {
  Rng rng(77);
  for (Layout l : {Layout::Contiguous, Layout::Permuted, Layout::Expanded, Layout::Padded})
    for (double correction : {1.0, 0.0}) {
      Dims shape = rand_shape(rng, 3, 5);
      Input x = make_input(rng, shape, dtypes::float32, l);
      auto axes = rand_axes(rng, 3);
      bool keep = rint(rng, 0, 1);
      std::string c = ctx("", shape, dtypes::float32, l) + " " + axes_str(axes) + " correction " +
                      std::to_string(correction);
      check_close(x.t.var(axes, keep, correction), ref::var(x.r, axes, keep, correction), Tol{1e-4, 1e-5},
                  "var" + c);
      check_close(x.t.std(axes, keep, correction), ref::std_(x.r, axes, keep, correction), Tol{1e-4, 1e-5},
                  "std" + c);
    }
  // an int tensor's var is float
  Tensor i = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {4});
  BOOST_TEST(i.var().dtype() == dtypes::float32);
  BOOST_TEST(i.var().item<float>() == 5.0f / 3.0f, boost::test_tools::tolerance(1e-6f));
  // a single element with correction 1 divides by zero: NaN like torch
  BOOST_TEST(std::isnan(Tensor::ones({1}).var().item<float>()));
}

BOOST_AUTO_TEST_CASE(reductions_over_dtypes) {
  Rng rng(31);
  struct Case {
    DType in, sum_out;
  };
  const Case cases[] = {{dtypes::bool_, dtypes::int32},    {dtypes::int8, dtypes::int32},
                        {dtypes::int16, dtypes::int32},    {dtypes::int32, dtypes::int32},
                        {dtypes::int64, dtypes::int64},    {dtypes::uint8, dtypes::uint32},
                        {dtypes::uint32, dtypes::uint32},  {dtypes::float16, dtypes::float16},
                        {dtypes::float64, dtypes::float64}};
  for (const auto& cs : cases) {
    Dims shape = {3, 4, 5};
    Input x = make_input(rng, shape, cs.in, Layout::Permuted);
    auto axes = rand_axes(rng, 3);
    std::string c = ctx("", shape, cs.in, Layout::Permuted) + " " + axes_str(axes);
    Tensor s = x.t.sum(axes);
    BOOST_TEST(s.dtype() == cs.sum_out, "sum dtype" + c);
    Tol tol = cs.in == dtypes::float16 ? Tol{2e-3, 2e-2} : cs.in.is_float() ? kArith64 : kExact;
    check_close(s, ref::sum(x.r, axes), tol, "sum" + c);
    BOOST_TEST(x.t.max(axes).dtype() == cs.in, "max dtype" + c);
    check_close(x.t.max(axes), ref::max(x.r, axes), kExact, "max" + c);
    check_close(x.t.min(axes), ref::min(x.r, axes), kExact, "min" + c);
    Tensor m = x.t.mean(axes);
    BOOST_TEST(m.dtype() == (cs.in.is_float() ? cs.in : dtypes::float32), "mean dtype" + c);
    check_close(m, ref::mean(x.r, axes), cs.in == dtypes::float16 ? Tol{2e-3, 2e-3} : Tol{1e-6, 1e-6},
                "mean" + c);
  }
  // prod of ints: exact, wrapping in the int32 accumulator
  for (DType dt : {dtypes::int8, dtypes::int32}) {
    NdArray a = rand_int_array(rng, {3, 3, 4}, -3, 3);
    Tensor t = to_tensor(a, dt);
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {1, 2}, {}}) {
      NdArray want = ref::map(ref::prod(a, axes), wrap32);
      check_close(t.prod(axes), want, kExact, "prod " + dt.name() + " " + axes_str(axes));
    }
  }
}

BOOST_AUTO_TEST_CASE(empty_and_unit_dims) {
  Tensor e = Tensor::ones({3, 0, 2});
  check_close(e.sum({1}), NdArray({3, 2}, 0.0), kExact, "sum over an empty dim");
  check_close(e.sum({0}), NdArray({0, 2}), kExact, "sum with an empty output");
  check_close(e.sum(), NdArray({}, 0.0), kExact, "sum of an empty tensor");
  check_close(e.prod({1}, true), NdArray({3, 1, 2}, 1.0), kExact, "prod over an empty dim");
  NdArray m = to_array(e.mean({1}));
  BOOST_TEST(m.data.size() == 6u);
  for (double v : m.data) BOOST_TEST(std::isnan(v));
  BOOST_CHECK_THROW(e.max({1}), tg::TensorError);
  // reducing size-1 dims only reshapes
  Rng rng(5);
  Input x = make_input(rng, {1, 4, 1}, dtypes::float32, Layout::Flipped);
  check_close(x.t.sum({0, 2}), ref::sum(x.r, {0, 2}), kExact, "sum over unit dims");
  check_close(x.t.max({0, 2}, true), ref::max(x.r, {0, 2}, true), kExact, "max over unit dims keepdim");
  // 0-d tensor
  Tensor s = Tensor::scalar(2.5);
  BOOST_TEST(s.sum().item<float>() == 2.5f);
  BOOST_TEST(s.max().item<float>() == 2.5f);
  BOOST_TEST(s.sum().shape().empty());
}

BOOST_AUTO_TEST_CASE(long_reductions_split) {
  Rng rng(8);
  NdArray a = rand_array(rng, {2, 65536}, -1, 1);
  a.data[12345] = 5; // a unique max in row 0
  Tensor t = to_tensor(a);
  check_close(t.sum({1}), ref::sum(a, {1}), Tol{1e-4, 1e-3}, "split sum");
  check_close(t.max({1}), ref::max(a, {1}), kExact, "split max");
  check_close(t.min({1}), ref::min(a, {1}), kExact, "split min");
  check_close(t.argmax(1), ref::argmax(a, 1), kExact, "split argmax");
  NdArray ones({65536 * 2}, 1.0);
  BOOST_TEST(to_tensor(ones, dtypes::int32).sum().item<int32_t>() == 131072);
  // 2^22 values (256 slices of 16384, two kernels): sums of ones are exact in float32, and one 3
  // among them is the max
  Tensor many = Tensor::ones({4, 1 << 20}).reshape({1 << 22});
  Tensor with_max =
      (many + (Tensor::arange(0, 1 << 22).eq(Tensor::scalar(777777.0)).cast(dtypes::float32) * 2)).realize();
  BOOST_TEST(many.sum().item<float>() == 4194304.0f);
  BOOST_TEST(with_max.max().item<float>() == 3.0f);
  BOOST_TEST(with_max.sum().schedule().size() == 2u);
}

// Few outputs over several long axes (BatchNorm's per-channel sums: one work group per output on
// a GPU, partial sums per element on the CPU).
BOOST_AUTO_TEST_CASE(multi_axis_reductions_with_few_outputs) {
  Rng rng(9);
  NdArray a = rand_array(rng, {128, 4, 16, 16}, -1, 1);
  a.data[70000] = 7; // a unique max in channel (70000 / 256) % 4
  Tensor t = to_tensor(a);
  check_close(t.sum({0, 2, 3}), ref::sum(a, {0, 2, 3}), Tol{1e-4, 1e-3}, "channel sums");
  check_close(t.sum({0, 2, 3}, true), ref::sum(a, {0, 2, 3}, true), Tol{1e-4, 1e-3}, "channel sums keepdim");
  check_close(t.max({0, 2, 3}), ref::max(a, {0, 2, 3}), kExact, "channel max");
  check_close(t.mean({0, 2, 3}), ref::mean(a, {0, 2, 3}), Tol{1e-5, 1e-3}, "channel means");
}

// The split of few-output reduces over several axes (kernel/tensor/reduce.cpp): on GPU-style
// devices two kernels (partials over slices of the first reduced axis, then their reduce), one
// kernel elsewhere; the reference's values either way, for adjacent reduced dims (H, W merged),
// runs of reduced dims apart, every input layout, sum and max.
BOOST_AUTO_TEST_CASE(multi_axis_reductions_split_on_gpus) {
  const bool gpu = tg::kernel_options(*tg::open_device(tg::default_device()).device, true).parallel_groups();
  Rng rng(10);
  struct Case {
    Dims shape;
    std::vector<int64_t> axes;
  };
  for (const Case& c : {Case{{64, 8, 8, 64}, {0, 2, 3}}, Case{{256, 2, 4, 128}, {0, 3}}})
    for (Layout l : {Layout::Contiguous, Layout::Permuted, Layout::Flipped}) {
      Input x = make_input(rng, c.shape, dtypes::float32, l, -1, 1);
      const std::string what = ctx("", c.shape, dtypes::float32, l) + " " + axes_str(c.axes);
      BOOST_TEST(x.t.sum(c.axes).schedule().size() == (gpu ? 2u : 1u), what);
      check_close(x.t.sum(c.axes), ref::sum(x.r, c.axes), Tol{1e-4, 1e-3}, "sum " + what);
      check_close(x.t.sum(c.axes, true), ref::sum(x.r, c.axes, true), Tol{1e-4, 1e-3}, "sum keepdim " + what);
      check_close(x.t.max(c.axes), ref::max(x.r, c.axes), kExact, "max " + what);
    }
}

// Column sums (the reduced dims lead, a bias gradient's shape): on GPU-style devices two kernels
// (partial sums over slices of the rows, then theirs), one kernel elsewhere; the reference's
// values either way, every input layout, sum and max.
BOOST_AUTO_TEST_CASE(column_sums_split_on_gpus) {
  const bool gpu = tg::kernel_options(*tg::open_device(tg::default_device()).device, true).parallel_groups();
  Rng rng(11);
  struct Case {
    Dims shape;
    std::vector<int64_t> axes;
  };
  for (const Case& c : {Case{{8, 1024, 256}, {0, 1}}, Case{{1, 8192, 128}, {1}}})
    for (Layout l : {Layout::Contiguous, Layout::Permuted, Layout::Flipped}) {
      Input x = make_input(rng, c.shape, dtypes::float32, l, -1, 1);
      const std::string what = ctx("", c.shape, dtypes::float32, l) + " " + axes_str(c.axes);
      BOOST_TEST(x.t.sum(c.axes).schedule().size() == (gpu ? 2u : 1u), what);
      check_close(x.t.sum(c.axes), ref::sum(x.r, c.axes), Tol{1e-4, 1e-3}, "sum " + what);
      check_close(x.t.max(c.axes, true), ref::max(x.r, c.axes, true), kExact, "max keepdim " + what);
    }
}

BOOST_AUTO_TEST_CASE(argmax_argmin) {
  Rng rng(13);
  for (DType dt : {dtypes::float32, dtypes::int32, dtypes::uint8, dtypes::bool_, dtypes::int8})
    // (no Expanded layout and no size-1 dims: argmax over a broadcast or size-1 dim compares x
    // with itself, which hits the folded-load launch bug, see known_bugs/folded_loads_launch)
    for (Layout l : {Layout::Contiguous, Layout::Permuted, Layout::Flipped, Layout::Strided}) {
      Dims shape = rand_shape(rng, 3, 5);
      for (auto& d : shape) d = std::max<int64_t>(d, 2);
      Input x = make_input(rng, shape, dt, l); // ints in [-10, 10] on 3-5 elements: ties are common
      std::optional<int64_t> axis;
      if (rint(rng, 0, 3)) axis = rint(rng, -3, 2);
      bool keep = rint(rng, 0, 1);
      std::string c = ctx("", shape, dt, l) + " axis " + (axis ? std::to_string(*axis) : "none") +
                      (keep ? " keepdim" : "");
      Tensor am = x.t.argmax(axis, keep);
      BOOST_TEST(am.dtype() == dtypes::int32, c);
      check_close(am, ref::argmax(x.r, axis, keep), kExact, "argmax" + c);
      check_close(x.t.argmin(axis, keep), ref::argmin(x.r, axis, keep), kExact, "argmin" + c);
    }
}

BOOST_AUTO_TEST_CASE(softmax_family) {
  Rng rng(19);
  for (Layout l : kLayouts) {
    Dims shape = rand_shape(rng, 3, 5);
    Input x = make_input(rng, shape, dtypes::float32, l, -5, 5);
    int64_t axis = rint(rng, -3, 2);
    std::string c = ctx("", shape, dtypes::float32, l) + " axis " + std::to_string(axis);
    check_close(x.t.softmax(axis), ref::softmax(x.r, axis), kTrans32, "softmax" + c);
    check_close(x.t.log_softmax(axis), ref::log_softmax(x.r, axis), kTrans32, "log_softmax" + c);
    bool keep = rint(rng, 0, 1);
    check_close(x.t.logsumexp(axis, keep), ref::logsumexp(x.r, axis, keep), kTrans32, "logsumexp" + c);
  }
  // large values do not overflow (the max is subtracted first)
  NdArray big({2, 3}, {1000, 1001, 1002, -1000, -1001, -1002});
  check_close(to_tensor(big).softmax(), ref::softmax(big, -1), kTrans32, "softmax of large values");
  check_close(to_tensor(big).logsumexp(1), ref::logsumexp(big, 1), kTrans32, "logsumexp of large values");
  // int input: float result
  Tensor i = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  BOOST_TEST(i.softmax().dtype() == dtypes::float32);
  check_close(i.softmax(), ref::softmax(NdArray({3}, {1, 2, 3}), 0), kTrans32, "softmax int");
}

BOOST_AUTO_TEST_CASE(cumsum) {
  Rng rng(29);
  for (Layout l : {Layout::Contiguous, Layout::Permuted, Layout::Strided, Layout::Flipped, Layout::Padded}) {
    Dims shape = rand_shape(rng, 3, 6);
    int64_t axis = rint(rng, -3, 2);
    Input x = make_input(rng, shape, dtypes::float32, l);
    check_close(x.t.cumsum(axis), ref::cumsum(x.r, axis), Tol{1e-5, 1e-5},
                ctx("cumsum", shape, dtypes::float32, l) + " axis " + std::to_string(axis));
  }
  for (auto [in, out] : {std::pair{dtypes::int32, dtypes::int32},
                         {dtypes::int8, dtypes::int32},
                         {dtypes::bool_, dtypes::int32},
                         {dtypes::int64, dtypes::int64}}) {
    Input x = make_input(rng, {4, 7}, in, Layout::Permuted);
    Tensor c = x.t.cumsum(1);
    BOOST_TEST(c.dtype() == out, "cumsum dtype of " << in.name());
    check_close(c, ref::cumsum(x.r, 1), kExact, "cumsum " + in.name());
  }
  check_close(Tensor::ones({1}).cumsum(0), NdArray({1}, 1.0), kExact, "cumsum of one element");
  check_close(Tensor::ones({2, 0}).cumsum(1), NdArray({2, 0}), kExact, "cumsum of an empty dim");
}

BOOST_AUTO_TEST_SUITE_END()
