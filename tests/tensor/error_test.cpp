// Bad arguments raise tg::TensorError (a tg::Error) whose message names the shapes and values;
// laziness: nothing runs before realize, equal expressions are one node, and realizing one
// realizes the other.
#include "test_util.hpp"

using namespace tt;
using ref::Dims;
using tg::TensorError;

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(broadcast_mismatch) {
  Tensor a = Tensor::ones({2, 3}), b = Tensor::ones({4, 3}), c = Tensor::ones({3, 2});
  check_error<TensorError>([&] { (void)(a + b); }, {"(2, 3)", "(4, 3)", "broadcast"});
  check_error<TensorError>([&] { (void)a.mul(c); }, {"(2, 3)", "(3, 2)"});
  check_error<TensorError>([&] { (void)a.lt(Tensor::ones({5})); }, {"(2, 3)", "(5,)"});
  check_error<TensorError>([&] { (void)a.gt(Tensor::ones({3})).where(a, Tensor::ones({7})); }, {"(7,)"});
  static_assert(std::is_base_of_v<tg::Error, TensorError>);
}

BOOST_AUTO_TEST_CASE(matmul_and_conv_mismatch) {
  check_error<TensorError>(
      [] {
        (void)Tensor::ones({2, 3}).matmul(Tensor::ones({4, 5}));
      },
      {"(2, 3)", "(4, 5)", "3", "4"});
  check_error<TensorError>([] { (void)Tensor::ones({3}).matmul(Tensor::ones({4})); }, {"(3,)", "(4,)"});
  check_error<TensorError>([] { (void)Tensor::scalar(1).matmul(Tensor::ones({4})); }, {"matmul"});
  check_error<TensorError>(
      [] {
        (void)Tensor::ones({2, 3, 5, 5}).conv2d(Tensor::ones({4, 2, 3, 3}));
      },
      {"3 channels", "(4, 2, 3, 3)"});
  check_error<TensorError>(
      [] {
        (void)Tensor::ones({1, 4, 5, 5}).conv2d(Tensor::ones({3, 2, 3, 3}), std::nullopt, 1, 0, 1, 2);
      },
      {"groups=2"});
  check_error<TensorError>(
      [] {
        (void)Tensor::ones({1, 2, 5, 5}).conv2d(Tensor::ones({4, 2, 3, 3}), Tensor::ones({3}));
      },
      {"bias", "(3,)"});
  check_error<TensorError>(
      [] {
        (void)Tensor::ones({2, 5, 5}).conv2d(Tensor::ones({4, 2, 3, 3}));
      },
      {"(2, 5, 5)"});
  check_error<TensorError>(
      [] {
        (void)Tensor::ones({1, 1, 2, 2}).conv2d(Tensor::ones({1, 1, 3, 3}));
      },
      {"3", "2"});
  check_error<TensorError>([] { (void)Tensor::ones({1, 1, 2, 2}).max_pool2d(3); }, {"kernel 3", "2"});
}

BOOST_AUTO_TEST_CASE(bad_axes) {
  Tensor t = Tensor::ones({2, 3});
  check_error<TensorError>([&] { (void)t.sum({2}); }, {"axis 2", "(2, 3)"});
  check_error<TensorError>([&] { (void)t.sum({-3}); }, {"axis -3"});
  check_error<TensorError>([&] { (void)t.sum({0, -2}); }, {"axis -2", "repeated"});
  check_error<TensorError>([&] { (void)t.permute({0, 0}); }, {"repeats axis 0"});
  check_error<TensorError>([&] { (void)t.permute({0}); }, {"(2, 3)"});
  check_error<TensorError>([&] { (void)t.softmax(5); }, {"axis 5"});
  check_error<TensorError>([&] { (void)t.argmax(2); }, {"axis 2"});
  check_error<TensorError>([&] { (void)t.cumsum(-3); }, {"axis -3"});
  check_error<TensorError>([&] { (void)t.flip({1, -1}); }, {"repeated"});
  check_error<TensorError>([&] { (void)t.transpose(0, 2); }, {"axis 2"});
  check_error<TensorError>([&] { (void)t.unsqueeze(4); }, {"axis 4"});
  check_error<TensorError>(
      [&] {
        (void)Tensor::cat({t, Tensor::ones({2, 4})}, 0);
      },
      {"(2, 3)", "(2, 4)", "dim 1"});
  check_error<TensorError>([&] { (void)Tensor::cat({t, Tensor::ones({2})}, 0); }, {"rank"});
  check_error<TensorError>([&] { (void)Tensor::cat({}, 0); }, {"cat"});
  check_error<TensorError>([&] { (void)Tensor::stack({t, Tensor::ones({3, 2})}, 0); }, {"(2, 3)", "(3, 2)"});
  check_error<TensorError>([&] { (void)t.gather(0, Tensor::zeros({2}, dtypes::int32)); }, {"rank"});
  check_error<TensorError>([&] { (void)t.gather(0, Tensor::zeros({2, 3})); }, {"integer", "float"});
  check_error<TensorError>([&] { (void)Tensor::ones({2, 0}).max({1}); }, {"(2, 0)"});
}

BOOST_AUTO_TEST_CASE(bad_shapes) {
  Tensor t = Tensor::ones({2, 3});
  check_error<TensorError>([&] { (void)t.reshape({4, 2}); }, {"(2, 3)", "(4, 2)", "6", "8"});
  check_error<TensorError>([&] { (void)t.reshape({-1, -1}); }, {"-1"});
  check_error<TensorError>([&] { (void)t.reshape({4, -1}); }, {"(4, -1)"});
  check_error<TensorError>([&] { (void)t.reshape({-2, 3}); }, {"negative"});
  check_error<TensorError>([&] { (void)t.expand({4, 3, 2}); }, {"(2, 3)", "(4, 3, 2)"});
  check_error<TensorError>([&] { (void)t.expand({3}); }, {"fewer dims"});
  check_error<TensorError>([&] { (void)t.shrink({{0, 3}, {0, 3}}); }, {"(0, 3)", "dim 0"});
  check_error<TensorError>([&] { (void)t.shrink({{0, 2}}); }, {"(2, 3)"});
  check_error<TensorError>([&] { (void)t.pad({{0, 1}}); }, {"(2, 3)"});
  check_error<TensorError>([&] { (void)t.slice({{0, 1, 0}}); }, {"step of 0"});
  check_error<TensorError>([&] { (void)t.slice({{}, {}, {}}); }, {"(2, 3)"});
  check_error<TensorError>([&] { (void)t.repeat({2}); }, {"(2, 3)"});
  check_error<TensorError>([&] { (void)Tensor::full({-1, 2}, 0); }, {"(-1, 2)"});
  check_error<TensorError>(
      [&] {
        (void)Tensor::from_vector<float>({1, 2, 3}, {2, 2});
      },
      {"12 bytes", "(2, 2)", "16 bytes"});
  check_error<TensorError>([&] { (void)t.item<float>(); }, {"(2, 3)"});
  check_error<TensorError>([&] { (void)Tensor::arange(0, 5, 0); }, {"step"});
  check_error<TensorError>([&] { (void)Tensor::linspace(0, 1, -1); }, {"steps"});
  check_error<TensorError>([&] { (void)Tensor::eye(-1); }, {"eye"});
  check_error<TensorError>([&] { (void)t.clip(2, 1); }, {"low", "high"});
  check_error<TensorError>([&] { (void)Tensor::randint({2}, 5, 5); }, {"[5, 5)"});
}

BOOST_AUTO_TEST_CASE(bad_dtypes) {
  Tensor f = Tensor::ones({2}), i = Tensor::ones({2}, dtypes::int32), b = Tensor::ones({2}, dtypes::bool_);
  check_error<TensorError>([&] { (void)f.bitwise_xor(f); }, {"bitwise_xor", "float"});
  check_error<TensorError>([&] { (void)i.bitwise_xor(f); },
                           {"bitwise_xor", "float"}); // promotes to float first
  check_error<TensorError>([&] { (void)f.lshift(1); }, {"lshift", "float"});
  check_error<TensorError>([&] { (void)f.rshift(1); }, {"rshift", "float"});
  check_error<TensorError>([&] { (void)f.idiv(f); }, {"idiv", "float"});
  check_error<TensorError>([&] { (void)f.mod(i); }, {"mod", "float"});
  check_error<TensorError>([&] { (void)(b - b); }, {"bool"});
  check_error<TensorError>([&] { (void)f.bitcast(dtypes::int64); }, {"float", "long", "item sizes"});
  check_error<TensorError>([&] { (void)Tensor::randint({2}, 0, 5, dtypes::float32); }, {"integer", "float"});
  check_error<TensorError>([&] { (void)Tensor::full({2}, INFINITY, dtypes::int32); }, {"int", "inf"});
}

// A zero kernel, stride or dilation is refused instead of dividing by zero (SIGFPE) inside pool().
BOOST_AUTO_TEST_CASE(bad_pooling_arguments) {
  Tensor x = Tensor::ones({1, 1, 4, 4});
  check_error<TensorError>([&] { (void)x.max_pool2d(0); }, {"max_pool2d", "kernel 0", ">= 1"});
  check_error<TensorError>([&] { (void)x.avg_pool2d(0); }, {"avg_pool2d", "kernel 0", ">= 1"});
  check_error<TensorError>([&] { (void)x.max_pool2d(2, 0); }, {"max_pool2d", "stride 0"});
  check_error<TensorError>([&] { (void)x.avg_pool2d(2, 0); }, {"avg_pool2d", "stride 0"});
  check_error<TensorError>([&] { (void)x.max_pool2d(2, -1); }, {"stride -1"});
  check_error<TensorError>([&] { (void)x.max_pool2d(2, 1, 0, 0); }, {"dilation 0"});
  check_error<TensorError>([&] { (void)x.max_pool2d(-2); }, {"kernel -2"});
  check_error<TensorError>([&] { (void)x.max_pool2d(2, 1, -1); }, {"padding -1", "between 0"});
  check_error<TensorError>([&] { (void)x.avg_pool2d(2, 2, 2); }, {"avg_pool2d", "padding 2", "(1)"});
  // a window wholly in the padding would be -inf (max) or 0 (avg): refused as torch does
  check_error<TensorError>([&] { (void)x.max_pool2d(3, 1, 2); }, {"padding 2", "(1)"});
  check_error<TensorError>([&] { (void)x.pool({2, 2}, {1, 0}, {1, 1}); }, {"pool", "(1, 0)", ">= 1"});
  check_error<TensorError>([&] { (void)x.pool({2, 2}, {1}, {1, 1}); }, {"pool", "one entry per pooled dim"});
  // windows too large to count: an error, not an overflow
  constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
  check_error<TensorError>([&] { (void)x.max_pool2d(kBig); }, {"does not fit"});
  check_error<TensorError>([&] { (void)x.max_pool2d(3, 1, 0, kBig); }, {"does not fit"});
  check_error<TensorError>([&] { (void)x.pool({2, 2}, {1, 1}, {kBig, kBig}); }, {"does not fit"});
  // the limits themselves are accepted: padding = half the dilated window
  BOOST_TEST(x.max_pool2d(3, 1, 1).shape() == Dims({1, 1, 4, 4}));
  BOOST_TEST(x.max_pool2d(2, 1, 1, 2).shape() == Dims({1, 1, 4, 4}));
  check_close(x.max_pool2d(1, 1), NdArray({1, 1, 4, 4}, std::vector<double>(16, 1)), kExact, "1x1 pool");
}

// An integer index out of range is an error (t[7] on (2, 3) is not an empty (0, 3) tensor).
BOOST_AUTO_TEST_CASE(integer_index_out_of_range) {
  Tensor t = Tensor::arange(0, 6, 1, dtypes::float32).reshape({2, 3});
  check_error<TensorError>([&] { (void)t[7]; }, {"index 7", "dim 0 of size 2", "(2, 3)"});
  check_error<TensorError>([&] { (void)t[2]; }, {"index 2", "size 2"});
  check_error<TensorError>([&] { (void)t[-3]; }, {"index -3", "size 2"});
  check_error<TensorError>([&] { (void)t[1][3]; }, {"index 3", "size 3", "(3,)"});
  check_error<TensorError>([&] { (void)t[std::numeric_limits<int64_t>::max()]; }, {"out of range"});
  check_error<TensorError>([&] { (void)t[std::numeric_limits<int64_t>::min()]; }, {"out of range"});
  check_error<TensorError>([&] { (void)Tensor::scalar(1)[0]; }, {"0-d"});
  check_error<TensorError>(
      [&] {
        (void)t.slice({tg::Slice::all(), tg::Slice::at(-4)});
      },
      {"index -4", "dim 1"});
  // in range: negative indices count from the end
  check_close(t[1], NdArray({3}, {3, 4, 5}), kExact, "t[1]");
  check_close(t[-1], NdArray({3}, {3, 4, 5}), kExact, "t[-1]");
  check_close(t[-2], NdArray({3}, {0, 1, 2}), kExact, "t[-2]");
  check_close(t[0][-1], NdArray({}, {2}), kExact, "t[0][-1]");
  check_close(t.slice({tg::Slice::all(), tg::Slice::at(-3)}), NdArray({2, 1}, {0, 3}), kExact, "t[:, -3:-2]");
  // ranges still clamp, as in numpy
  BOOST_TEST(t.slice({tg::Slice{5, 9}}).shape() == Dims({0, 3}));
}

// Decided behaviours, documented in tensor.hpp.
BOOST_AUTO_TEST_CASE(cast_to_non_data_dtypes) {
  Tensor f = Tensor::ones({2});
  check_error<TensorError>([&] { (void)f.cast(dtypes::void_); }, {"cast", "float", "void"});
  check_error<TensorError>([&] { (void)f.cast(dtypes::float32.vec(4)); }, {"cast", "float.vec(4)"});
  check_error<TensorError>([&] { (void)f.cast(dtypes::float32.ptr_to()); }, {"cast", "float*"});
  check_error<TensorError>([&] { (void)f.bitcast(dtypes::void_); }, {"bitcast", "void"});
  check_error<TensorError>([&] { (void)f.bitcast(dtypes::int32.vec(1).ptr_to()); }, {"bitcast", "int*"});
  check_error<TensorError>([&] { (void)Tensor::from_bytes({}, {0}, dtypes::void_); }, {"from_bytes", "void"});
}

BOOST_AUTO_TEST_CASE(create_with_non_data_dtypes) {
  // refused at creation, not at realize with "invalid kernel IR"
  check_error<TensorError>([] { (void)Tensor::full({2}, 3, dtypes::void_); }, {"full", "void"});
  check_error<TensorError>([] { (void)Tensor::zeros({2}, dtypes::float32.vec(4)); },
                           {"zeros", "float.vec(4)"});
  check_error<TensorError>([] { (void)Tensor::ones({2, 3}, dtypes::int32.ptr_to()); }, {"ones", "int*"});
  check_error<TensorError>([] { (void)Tensor::scalar(1, dtypes::void_); }, {"scalar", "void"});
  check_error<TensorError>([] { (void)Tensor::full({}, 1, dtypes::float32.ptr_to()); }, {"full", "float*"});
}

BOOST_AUTO_TEST_CASE(gather_out_of_range_index_gives_zero) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor index = Tensor::from_vector<int32_t>({2, 3, -1, 0, 1, 100}, {2, 3});
  // [x[0][2], (3: past the end), (-1: no wrap-around)], [x[1][0], x[1][1], (100)]
  check_close(x.gather(1, index), NdArray({2, 3}, {3, 0, 0, 4, 5, 0}), kExact, "gather");
  // and no gradient flows from the missing entries
  Tensor p = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  p.gather(1, index).sum().backward();
  BOOST_REQUIRE(p.grad().has_value());
  check_close(*p.grad(), NdArray({2, 3}, {0, 0, 1, 1, 1, 0}), kExact, "d gather / dx");
}

// ---- laziness ----

BOOST_AUTO_TEST_CASE(nothing_runs_before_realize) {
  Rng rng(1);
  NdArray a = rand_array(rng, {5, 6}), b = rand_array(rng, {5, 6});
  Tensor ta = to_tensor(a), tb = to_tensor(b);
  Tensor expr = (ta * tb + 1.0f).sum({1}).softmax();
  // building the graph schedules kernels but runs nothing: the expression is still lazy
  size_t n = expr.schedule().size();
  BOOST_TEST(n >= 1u);
  BOOST_TEST(!tg::is_buffer_view(expr.uop()));
  BOOST_TEST(expr.schedule().size() == n); // asking twice changes nothing
  // the same expression built again is the same node (interned)
  Tensor again = (ta * tb + 1.0f).sum({1}).softmax();
  BOOST_TEST(again.uop().get() == expr.uop().get());
  // realizing one realizes the other: its uop() becomes a buffer view, with nothing left to run
  expr.realize();
  BOOST_TEST(tg::is_buffer_view(expr.uop()));
  BOOST_TEST(expr.schedule().empty());
  BOOST_TEST(tg::is_buffer_view(again.uop()));
  BOOST_TEST(again.schedule().empty());
  BOOST_TEST(again.uop().get() == expr.uop().get());
  NdArray want = ref::softmax(ref::sum(ref::zip(a, b, [](double x, double y) { return x * y + 1; }), {1}), 0);
  check_close(again, want, kTrans32, "lazy expression");
  // movement ops of a realized buffer need no kernel
  BOOST_TEST(ta.schedule().empty());
  BOOST_TEST(ta.permute({1, 0}).shrink({{1, 3}, {0, 5}}).schedule().empty());
  // a different expression is a different node
  Tensor other = (ta * tb + 2.0f).sum({1}).softmax();
  BOOST_TEST(other.uop().get() != expr.uop().get());
  BOOST_TEST(!other.schedule().empty());
}

BOOST_AUTO_TEST_CASE(realize_all_shares_work) {
  Tensor x = Tensor::arange(0, 12, 1, dtypes::float32).reshape({3, 4});
  Tensor s = x.sum({1}), m = x.max({1});
  Tensor::realize_all({&s, &m});
  BOOST_TEST(tg::is_buffer_view(s.uop()));
  BOOST_TEST(tg::is_buffer_view(m.uop()));
  check_close(s, NdArray({3}, {6, 22, 38}), kExact, "sum");
  check_close(m, NdArray({3}, {3, 7, 11}), kExact, "max");
  // reading twice gives the same data and runs nothing new
  BOOST_TEST(s.to_vector<float>() == s.to_vector<float>(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
