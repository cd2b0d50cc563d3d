// Elementwise ops against ref::map / ref::zip: every unary op over every input layout, edge shapes
// (0-d, size 0, size 1) and float dtypes; binary ops with broadcasting over all dtypes; integer
// division/modulo with C semantics; shifts and xor; where.
#include "test_util.hpp"

#include <functional>
#include <numbers>

using namespace tt;
using ref::Dims;

namespace {

using TFn = std::function<Tensor(const Tensor&)>;
using RFn = std::function<double(double)>;

struct Unary {
  std::string name;
  TFn t;
  RFn r;
  double lo = -2, hi = 2; // input domain
  Tol tol = kTrans32;
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

std::vector<Unary> unary_ops() {
  const double c = std::sqrt(2 / std::numbers::pi);
  return {
      {"neg", [](auto& x) { return -x; }, [](double x) { return -x; }, -2, 2, kExact},
      {"abs", [](auto& x) { return x.abs(); }, [](double x) { return std::fabs(x); }, -2, 2, kExact},
      {"square", [](auto& x) { return x.square(); }, [](double x) { return x * x; }, -2, 2, kArith32},
      {"exp", [](auto& x) { return x.exp(); }, [](double x) { return std::exp(x); }},
      {"exp2", [](auto& x) { return x.exp2(); }, [](double x) { return std::exp2(x); }},
      {"log", [](auto& x) { return x.log(); }, [](double x) { return std::log(x); }, 0.05, 4},
      {"log2", [](auto& x) { return x.log2(); }, [](double x) { return std::log2(x); }, 0.05, 4},
      {"sqrt", [](auto& x) { return x.sqrt(); }, [](double x) { return std::sqrt(x); }, 0, 4},
      {"rsqrt", [](auto& x) { return x.rsqrt(); }, [](double x) { return 1 / std::sqrt(x); }, 0.05, 4},
      {"reciprocal", [](auto& x) { return x.reciprocal(); }, [](double x) { return 1 / x; }, 0.25, 4},
      {"sin", [](auto& x) { return x.sin(); }, [](double x) { return std::sin(x); }, -6, 6},
      {"cos", [](auto& x) { return x.cos(); }, [](double x) { return std::cos(x); }, -6, 6},
      {"tan", [](auto& x) { return x.tan(); }, [](double x) { return std::tan(x); }, -1.2, 1.2},
      {"tanh", [](auto& x) { return x.tanh(); }, [](double x) { return std::tanh(x); }, -4, 4},
      {"sigmoid", [](auto& x) { return x.sigmoid(); }, sigmoid, -6, 6},
      {"relu", [](auto& x) { return x.relu(); }, [](double x) { return x > 0 ? x : 0; }, -2, 2, kExact},
      {"leaky_relu", [](auto& x) { return x.leaky_relu(0.1); }, [](double x) { return x < 0 ? 0.1 * x : x; },
       -2, 2, kArith32},
      {"gelu", [](auto& x) { return x.gelu(); },
       [c](double x) { return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x))); }},
      {"silu", [](auto& x) { return x.silu(); }, [](double x) { return x * sigmoid(x); }},
      {"softplus", [](auto& x) { return x.softplus(2); },
       [](double x) { return std::log1p(std::exp(2 * x)) / 2; }},
      {"sign", [](auto& x) { return x.sign(); }, [](double x) { return double((x > 0) - (x < 0)); }, -2, 2,
       kExact},
      {"trunc", [](auto& x) { return x.trunc(); }, [](double x) { return std::trunc(x); }, -4, 4, kExact},
      {"floor", [](auto& x) { return x.floor(); }, [](double x) { return std::floor(x); }, -4, 4, kExact},
      {"ceil", [](auto& x) { return x.ceil(); }, [](double x) { return std::ceil(x); }, -4, 4, kExact},
      {"pow3", [](auto& x) { return x.pow(3.0); }, [](double x) { return x * x * x; }},
      {"pow-2", [](auto& x) { return x.pow(-2.0); }, [](double x) { return 1 / (x * x); }, 0.25, 3},
      {"pow0.5", [](auto& x) { return x.pow(0.5); }, [](double x) { return std::sqrt(x); }, 0, 4},
      {"pow1.5", [](auto& x) { return x.pow(1.5); }, [](double x) { return std::pow(x, 1.5); }, 0, 4},
      {"clip", [](auto& x) { return x.clip(-0.5, 1); }, [](double x) { return std::clamp(x, -0.5, 1.0); }, -2,
       2, kExact},
      {"logical_not", [](auto& x) { return x.logical_not(); }, [](double x) { return double(x == 0); }, -2, 2,
       kExact},
      {"where_scalar", [](auto& x) { return x.gt(x.zeros_like()).where(1.5, -2.0); },
       [](double x) { return x > 0 ? 1.5 : -2.0; }, -2, 2, kExact},
  };
}

// Float16 results: the reference value rounded to half, compared with half's precision.
Tol half_tol(Tol t) { return t.rtol == 0 && t.atol == 0 ? t : Tol{2e-3, 2e-3}; }

} // namespace

BOOST_AUTO_TEST_SUITE(elementwise)

BOOST_AUTO_TEST_CASE(unary_ops_over_layouts) {
  Rng rng(1234);
  for (const auto& op : unary_ops()) {
    Dims shape = rand_shape(rng, 3, 5);
    for (Layout l : kLayouts) {
      Input in = make_input(rng, shape, dtypes::float32, l, op.lo, op.hi);
      check_close(op.t(in.t), ref::map(in.r, op.r), op.tol, ctx(op.name, shape, dtypes::float32, l));
    }
  }
}

BOOST_AUTO_TEST_CASE(unary_ops_edge_shapes) {
  Rng rng(99);
  const std::vector<Dims> shapes = {{}, {1}, {0}, {1, 1}, {3, 0, 2}, {1, 7}};
  for (const auto& op : unary_ops())
    for (const auto& shape : shapes) {
      Input in = make_input(rng, shape, dtypes::float32, Layout::Contiguous, op.lo, op.hi);
      check_close(op.t(in.t), ref::map(in.r, op.r), op.tol,
                  ctx(op.name, shape, dtypes::float32, Layout::Contiguous));
    }
}

BOOST_AUTO_TEST_CASE(unary_ops_float64_and_float16, *tt::needs({dtypes::float64, dtypes::float16})) {
  Rng rng(7);
  for (const auto& op : unary_ops()) {
    Dims shape = {3, 4};
    Input in64 = make_input(rng, shape, dtypes::float64, Layout::Permuted, op.lo, op.hi);
    Tensor r64 = op.t(in64.t);
    BOOST_TEST(r64.dtype() == (op.name == "logical_not"    ? dtypes::bool_
                               : op.name == "where_scalar" ? dtypes::float32
                                                           : dtypes::float64),
               op.name);
    // float64 math is done in double: far tighter than float32
    Tol tol64 = op.tol.rtol == 0 ? kExact : Tol{1e-10, 1e-12};
    check_close(r64, ref::map(in64.r, op.r), tol64, ctx(op.name, shape, dtypes::float64, Layout::Permuted));

    Input in16 = make_input(rng, shape, dtypes::float16, Layout::Contiguous, op.lo, op.hi);
    Tensor r16 = op.t(in16.t);
    NdArray want = ref::map(in16.r, op.r);
    if (r16.dtype() == dtypes::float16) want = ref::map(want, round_to_half);
    check_close(r16.cast(dtypes::float32), want, half_tol(op.tol),
                ctx(op.name, shape, dtypes::float16, Layout::Contiguous));
  }
}

// Unary ops on integer tensors: float results for math (int -> float32), int results otherwise.
BOOST_AUTO_TEST_CASE(unary_ops_on_ints) {
  Rng rng(8);
  for (DType dt : {dtypes::int8, dtypes::int32, dtypes::int64, dtypes::uint8}) {
    Input x = make_input(rng, {4, 5}, dt, Layout::Flipped);
    std::string c = dt.name();
    check_close(-x.t,
                ref::map(x.r, [&](double v) { return dt.is_unsigned() ? std::fmod(256 - v, 256) : -v; }),
                kExact, "neg " + c);
    check_close(x.t.abs(), ref::map(x.r, [](double v) { return std::fabs(v); }), kExact, "abs " + c);
    check_close(x.t.sign(), ref::map(x.r, [](double v) { return double((v > 0) - (v < 0)); }), kExact,
                "sign " + c);
    check_close(x.t.relu(), ref::map(x.r, [](double v) { return std::max(v, 0.0); }), kExact, "relu " + c);
    check_close(x.t.square(), ref::map(x.r, [](double v) { return v * v; }), kExact, "square " + c);
    Tensor e = x.t.exp();
    BOOST_TEST(e.dtype() == dtypes::float32);
    check_close(e, ref::map(x.r, [](double v) { return std::exp(v); }), kTrans32, "exp " + c);
    check_close(x.t.clip(-3, 4), ref::map(x.r, [](double v) { return std::clamp(v, -3.0, 4.0); }), kExact,
                "clip " + c);
    BOOST_TEST(x.t.clip(-3, 4).dtype() == dt);
  }
}

// ---- binary ----

namespace {

// Two broadcast-compatible shapes: b drops leading dims and/or sets dims to 1 (or vice versa).
std::pair<Dims, Dims> broadcast_shapes(Rng& rng, int64_t nd) {
  Dims out = rand_shape(rng, nd, 4);
  Dims a = out, b = out;
  for (size_t i = 0; i < out.size(); ++i) {
    int k = int(rint(rng, 0, 3));
    if (k == 1) a[i] = 1;
    if (k == 2) b[i] = 1;
  }
  if (rint(rng, 0, 1)) b.erase(b.begin(), b.begin() + rint(rng, 0, int64_t(b.size())));
  if (rint(rng, 0, 1)) std::swap(a, b);
  return {a, b};
}

// Wraps an exact integer result into dt's range (two's complement), as the device computes it.
double wrap(double v, DType dt) {
  if (!dt.is_int() || dt.bits() >= 64) return v;
  double m = std::ldexp(1.0, dt.bits());
  double r = std::fmod(v, m);
  if (r < 0) r += m;
  if (!dt.is_unsigned() && r >= m / 2) r -= m;
  return r;
}

struct Binary {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> t;
  std::function<double(double, double)> r;
  bool bool_result = false;
};

std::vector<Binary> arith_ops() {
  return {
      {"add", [](auto& a, auto& b) { return a + b; }, [](double x, double y) { return x + y; }},
      {"sub", [](auto& a, auto& b) { return a - b; }, [](double x, double y) { return x - y; }},
      {"mul", [](auto& a, auto& b) { return a * b; }, [](double x, double y) { return x * y; }},
      {"maximum", [](auto& a, auto& b) { return a.maximum(b); },
       [](double x, double y) { return std::max(x, y); }},
      {"minimum", [](auto& a, auto& b) { return a.minimum(b); },
       [](double x, double y) { return std::min(x, y); }},
      {"lt", [](auto& a, auto& b) { return a.lt(b); }, [](double x, double y) { return double(x < y); },
       true},
      {"gt", [](auto& a, auto& b) { return a.gt(b); }, [](double x, double y) { return double(x > y); },
       true},
      {"le", [](auto& a, auto& b) { return a.le(b); }, [](double x, double y) { return double(x <= y); },
       true},
      {"ge", [](auto& a, auto& b) { return a.ge(b); }, [](double x, double y) { return double(x >= y); },
       true},
      {"eq", [](auto& a, auto& b) { return a.eq(b); }, [](double x, double y) { return double(x == y); },
       true},
      {"ne", [](auto& a, auto& b) { return a.ne(b); }, [](double x, double y) { return double(x != y); },
       true},
      {"logical_and", [](auto& a, auto& b) { return a.logical_and(b); },
       [](double x, double y) { return double(x != 0 && y != 0); }, true},
      {"logical_or", [](auto& a, auto& b) { return a.logical_or(b); },
       [](double x, double y) { return double(x != 0 || y != 0); }, true},
  };
}

const DType kAllDtypes[] = {dtypes::bool_, dtypes::int8,   dtypes::int16,   dtypes::int32,   dtypes::int64,
                            dtypes::uint8, dtypes::uint32, dtypes::float16, dtypes::float32, dtypes::float64};

} // namespace

BOOST_AUTO_TEST_CASE(binary_ops_broadcast_all_dtypes) {
  Rng rng(42);
  for (DType dt : kAllDtypes)
    for (const auto& op : arith_ops()) {
      if (dt.is_bool() && op.name == "sub") continue; // a TensorError, see errors
      auto [sa, sb] = broadcast_shapes(rng, 3);
      Layout la = kLayouts[rint(rng, 0, 6)], lb = kLayouts[rint(rng, 0, 6)];
      Input a = make_input(rng, sa, dt, la), b = make_input(rng, sb, dt, lb);
      Tensor out = op.t(a.t, b.t);
      std::string c = op.name + " " + ref::str(sa) + " " + layout_name(la) + " with " + ref::str(sb) + " " +
                      layout_name(lb) + " " + dt.name();
      BOOST_TEST(out.dtype() == (op.bool_result ? dtypes::bool_ : dt), c);
      NdArray want = ref::zip(a.r, b.r, op.r);
      if (dt.is_bool() && !op.bool_result) want = ref::map(want, [](double v) { return double(v != 0); });
      want = ref::map(want, [&](double v) { return wrap(v, dt); });
      Tol tol = dt.is_float() ? (dt == dtypes::float16 ? Tol{1e-3, 1e-3} : kArith32) : kExact;
      if (dt == dtypes::float16 && !op.bool_result) want = ref::map(want, round_to_half);
      check_close(out, want, tol, c);
    }
}

BOOST_AUTO_TEST_CASE(division_float) {
  Rng rng(5);
  for (DType dt : {dtypes::float32, dtypes::float64}) {
    auto [sa, sb] = broadcast_shapes(rng, 3);
    Input a = make_input(rng, sa, dt, Layout::Permuted), b = make_input(rng, sb, dt, Layout::Strided, 0.5, 3);
    check_close(a.t / b.t, ref::zip(a.r, b.r, [](double x, double y) { return x / y; }),
                dt == dtypes::float64 ? kArith64 : kArith32, "div " + dt.name());
  }
  // integers divide as floats
  Tensor i = Tensor::from_vector<int32_t>({7, -7, 1, 0}, {4}),
         j = Tensor::from_vector<int32_t>({2, 2, 3, 5}, {4});
  Tensor q = i / j;
  BOOST_TEST(q.dtype() == dtypes::float32);
  check_close(q, NdArray({4}, {3.5, -3.5, 1.0 / 3, 0}), kArith32, "int / int");
  // x / 0
  Tensor z = Tensor::from_vector<float>({1, -1, 0}, {3}) / Tensor::zeros({3});
  NdArray got = to_array(z);
  BOOST_TEST(got.data[0] == INFINITY);
  BOOST_TEST(got.data[1] == -INFINITY);
  BOOST_TEST(std::isnan(got.data[2]));
}

BOOST_AUTO_TEST_CASE(pow_tensor_exponent) {
  Rng rng(11);
  Dims shape = {4, 6};
  Input base = make_input(rng, shape, dtypes::float32, Layout::Flipped);
  // exponents: integers -3..3 and halves, so negative bases give signed results or NaN
  NdArray e = ref::map(rand_int_array(rng, shape, -6, 6), [](double v) { return v / 2; });
  Tensor got = base.t.pow(to_tensor(e));
  check_close(got, ref::zip(base.r, e, [](double x, double y) { return std::pow(x, y); }), kTrans32, "pow");
  // 0^0 = 1, 0^2 = 0, (-2)^3 = -8, (-2)^0.5 = nan, 2^-1 = 0.5
  Tensor b = Tensor::from_vector<float>({0, 0, -2, -2, 2}, {5}),
         x = Tensor::from_vector<float>({0, 2, 3, 0.5, -1}, {5});
  check_close(b.pow(x), NdArray({5}, {1, 0, -8, NAN, 0.5}), kTrans32, "pow specials");
  // an exponent that is one constant tensor (an ONNX Pow's 2) takes the scalar forms: x^2 is x * x
  // (exact, no exp2), broadcast to the exponent's shape
  Tensor two = Tensor::full({2, 1, 5}, 2.0, dtypes::float32);
  Tensor sq = b.pow(two);
  BOOST_TEST((sq.shape() == Dims{2, 1, 5}));
  BOOST_TEST(sq.schedule().back().ast->str().find("EXP2") == std::string::npos);
  check_close(sq, NdArray({2, 1, 5}, {0, 0, 4, 4, 4, 0, 0, 4, 4, 4}), Tol{0, 0}, "x ^ constant 2");
  check_close(b.pow(b.const_like(0.5)), NdArray({5}, {0, 0, NAN, NAN, std::sqrt(2.0)}), kTrans32, "^ 0.5");
  // ... also behind a float cast (a float16 exponent taken to float32, as ONNX's half Pow does)
  Tensor sq16 = b.pow(b.const_like(2.0, dtypes::float16).cast(dtypes::float32));
  BOOST_TEST(sq16.schedule().back().ast->str().find("EXP2") == std::string::npos);
  check_close(sq16, NdArray({5}, {0, 0, 4, 4, 4}), Tol{0, 0}, "x ^ constant 2 behind a cast");
}

// C semantics: quotient truncates toward zero, remainder takes the dividend's sign.
BOOST_AUTO_TEST_CASE(integer_idiv_mod_c_semantics) {
  Rng rng(3);
  for (DType dt :
       {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::uint32}) {
    auto [sa, sb] = broadcast_shapes(rng, 2);
    Input a = make_input(rng, sa, dt, Layout::Permuted);
    NdArray bd = rand_int_array(rng, sb, dt.is_unsigned() ? 1 : -7, 7);
    for (auto& v : bd.data)
      if (v == 0) v = 3;
    Tensor b = to_tensor(bd, dt);
    std::string c = dt.name() + " " + ref::str(sa) + " by " + ref::str(sb);
    check_close(a.t.idiv(b), ref::zip(a.r, bd, [](double x, double y) { return std::trunc(x / y); }), kExact,
                "idiv " + c);
    check_close(a.t.mod(b), ref::zip(a.r, bd, [](double x, double y) { return std::fmod(x, y); }), kExact,
                "mod " + c);
    BOOST_TEST(a.t.idiv(b).dtype() == dt);
  }
  // the classic cases, spelled out
  Tensor x = Tensor::from_vector<int32_t>({7, -7, 7, -7, 0, -1}, {6});
  Tensor y = Tensor::from_vector<int32_t>({2, 2, -2, -2, 3, 5}, {6});
  BOOST_TEST(x.idiv(y).to_vector<int32_t>() == (std::vector<int32_t>{3, -3, -3, 3, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(x.mod(y).to_vector<int32_t>() == (std::vector<int32_t>{1, -1, 1, -1, 0, -1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bitwise_and_shifts) {
  Rng rng(17);
  for (DType dt : {dtypes::int8, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::uint32}) {
    Dims s = {3, 5};
    NdArray ad = rand_int_array(rng, s, dt.is_unsigned() ? 0 : -100, 100),
            bd = rand_int_array(rng, s, 0, 100);
    Tensor a = to_tensor(ad, dt).permute({1, 0}), b = to_tensor(bd, dt).permute({1, 0});
    ad = ref::permute(ad, {1, 0});
    bd = ref::permute(bd, {1, 0});
    std::string c = dt.name();
    check_close(a.bitwise_xor(b),
                ref::zip(ad, bd, [](double x, double y) { return double(int64_t(x) ^ int64_t(y)); }), kExact,
                "xor " + c);
    check_close(a.lshift(2), ref::map(ad, [&](double x) { return wrap(x * 4, dt); }), kExact, "lshift " + c);
    // right shift of a negative value is arithmetic (floor division by 2^k)
    check_close(a.rshift(3), ref::map(ad, [](double x) { return std::floor(x / 8); }), kExact, "rshift " + c);
  }
  Tensor bools = Tensor::from_vector<bool>({true, false, true}, {3});
  BOOST_TEST(bools.bitwise_xor(Tensor::from_vector<bool>({true, true, false}, {3})).to_vector<bool>() ==
                 (std::vector<bool>{false, true, true}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(where_broadcast_and_mixed_dtypes) {
  Rng rng(23);
  for (int trial = 0; trial < 6; ++trial) {
    auto [sc, st] = broadcast_shapes(rng, 3);
    Dims sf = ref::broadcast_shape(sc, st);
    if (!sf.empty() && trial % 2) sf.erase(sf.begin());
    Input c = make_input(rng, sc, dtypes::bool_, kLayouts[rint(rng, 0, 6)]);
    Input t = make_input(rng, st, dtypes::float32, kLayouts[rint(rng, 0, 6)]);
    Input f = make_input(rng, sf, dtypes::int32, kLayouts[rint(rng, 0, 6)]);
    Tensor out = c.t.where(t.t, f.t);
    BOOST_TEST(out.dtype() == dtypes::float32);
    check_close(out, ref::where(c.r, t.r, f.r), kExact,
                "where " + ref::str(sc) + " " + ref::str(st) + " " + ref::str(sf));
  }
  // a non-bool condition counts nonzero as true
  Tensor cond = Tensor::from_vector<int32_t>({0, 3, -1}, {3});
  check_close(cond.where(Tensor::ones({3}), Tensor::zeros({1})), NdArray({3}, {0, 1, 1}), kExact,
              "int condition");
}

BOOST_AUTO_TEST_SUITE_END()
