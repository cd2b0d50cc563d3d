// Dtype promotion (tinygrad's lattice and weak scalars), casts between every pair of the tested
// dtypes (checked against host conversions), float16 rounding, bitcast.
#include "test_util.hpp"

using namespace tt;
using ref::Dims;

namespace {
const DType kDtypes[] = {dtypes::bool_, dtypes::int8,   dtypes::int16,   dtypes::int32,   dtypes::int64,
                         dtypes::uint8, dtypes::uint32, dtypes::float16, dtypes::float32, dtypes::float64};

// What the host's C conversion of an exactly representable value v to dt gives (v within dt's
// range, or integral for int->int wrapping).
double host_cast(double v, DType dt) {
  if (dt.is_bool()) return v != 0;
  if (dt == dtypes::float16) return round_to_half(v);
  if (dt == dtypes::float32) return double(float(v));
  if (dt == dtypes::float64) return v;
  double t = std::trunc(v); // float -> int truncates toward zero
  if (dt.bits() >= 64) return t;
  double m = std::ldexp(1.0, dt.bits()), r = std::fmod(t, m); // int -> narrower int wraps
  if (r < 0) r += m;
  if (!dt.is_unsigned() && r >= m / 2) r -= m;
  return r;
}
} // namespace

BOOST_AUTO_TEST_SUITE(dtype)

BOOST_AUTO_TEST_CASE(promotion_rules) {
  Tensor i32 = Tensor::from_vector<int32_t>({1, -2, 3}, {3});
  Tensor i64 = Tensor::from_vector<int64_t>({10, 20, 30}, {3});
  Tensor i8 = Tensor::from_vector<int8_t>({1, 2, -3}, {3});
  Tensor u8 = Tensor::from_vector<uint8_t>({1, 2, 3}, {3});
  Tensor u32 = Tensor::from_vector<uint32_t>({1, 2, 3}, {3});
  Tensor b = Tensor::from_vector<bool>({true, false, true}, {3});
  Tensor f32 = Tensor::from_vector<float>({0.5f, 1.5f, -2.0f}, {3});
  Tensor f16 = f32.cast(dtypes::float16);
  Tensor f64 = Tensor::from_vector<double>({0.25, 0.5, 0.75}, {3});

  struct Case {
    std::string what;
    Tensor t;
    DType want;
    std::vector<double> values;
  };
  const std::vector<Case> cases = {
      {"int32 * 2.5", i32 * 2.5, dtypes::float32, {2.5, -5, 7.5}},
      {"int32 * 2", i32 * 2, dtypes::int32, {2, -4, 6}},
      {"2 - int8", 2 - i8, dtypes::int8, {1, 0, 5}},
      {"int8 * 2.0f", i8 * 2.0f, dtypes::float32, {2, 4, -6}},
      {"int32 + int64", i32 + i64, dtypes::int64, {11, 18, 33}},
      {"bool + int8", b + i8, dtypes::int8, {2, 2, -2}},
      {"float16 + float32", f16 + f32, dtypes::float32, {1, 3, -4}},
      {"uint8 + int8", u8 + i8, dtypes::int16, {2, 4, 0}},
      {"uint32 + int32", u32 + i32, dtypes::int64, {2, 0, 6}},
      {"int32 + float16", i32 + f16, dtypes::float16, {1.5, -0.5, 1}},
      {"float32 + float64", f32 + f64, dtypes::float64, {0.75, 2, -1.25}},
      {"int64 * float32", i64 * f32, dtypes::float32, {5, 30, -60}},
      {"bool + 1", b + 1, dtypes::int32, {2, 1, 2}},
      {"bool * 1.5", b * 1.5, dtypes::float32, {1.5, 0, 1.5}},
      {"bool * true", b * true, dtypes::bool_, {1, 0, 1}},
      {"float16 * 2.5", f16 * 2.5, dtypes::float16, {1.25, 3.75, -5}},
      {"uint8 * 3", u8 * 3, dtypes::uint8, {3, 6, 9}},
      {"int32 / int32", i32 / i32, dtypes::float32, {1, 1, 1}},
      {"int8 < 2.5", i8.lt(Tensor::full({3}, 2.5)), dtypes::bool_, {1, 1, 1}},
      {"where(bool, int8, uint8)", b.where(i8, u8), dtypes::int16, {1, 2, -3}},
  };
  for (const auto& c : cases) {
    BOOST_TEST(c.t.dtype() == c.want, c.what << ": " << c.t.dtype().name() << " vs " << c.want.name());
    check_close(c.t, NdArray({3}, c.values), kExact, c.what);
  }
  // commutes
  for (DType x : kDtypes)
    for (DType y : kDtypes)
      BOOST_TEST(Tensor::zeros({1}, x).add(Tensor::zeros({1}, y)).dtype() ==
                     Tensor::zeros({1}, y).add(Tensor::zeros({1}, x)).dtype(),
                 x.name() << " + " << y.name());
}

BOOST_AUTO_TEST_CASE(casts_between_all_dtypes,
                     *tt::needs({dtypes::bool_, dtypes::int8, dtypes::int16, dtypes::int64, dtypes::uint8,
                                 dtypes::uint32, dtypes::float16, dtypes::float64})) {
  Rng rng(9);
  // values every source dtype can hold exactly, plus fractions for the float sources
  for (DType from : kDtypes) {
    NdArray src = rand_for(rng, {2, 3, 4}, from);
    if (from.is_float()) src = ref::map(src, [&](double v) { return host_cast(v * 4, from); }); // [-8, 8)
    Tensor t = to_tensor(src, from).realize().permute({2, 0, 1}); // casts of a strided view
    NdArray sp = ref::permute(src, {2, 0, 1});
    for (DType to : kDtypes) {
      if (from.is_float() && to.is_unsigned()) continue; // negative float -> unsigned is undefined in C
      Tensor c = t.cast(to);
      BOOST_TEST(c.dtype() == to);
      std::string what = "cast " + from.name() + " -> " + to.name();
      check_close(c, ref::map(sp, [&](double v) { return host_cast(v, to); }), kExact, what);
    }
  }
}

BOOST_AUTO_TEST_CASE(cast_specials, *tt::needs({dtypes::float16})) {
  // float -> int truncates toward zero
  Tensor f = Tensor::from_vector<float>({2.9f, -2.9f, 0.5f, -0.5f, 100.0f}, {5});
  BOOST_TEST(f.cast(dtypes::int32).to_vector<int32_t>() == (std::vector<int32_t>{2, -2, 0, 0, 100}),
             boost::test_tools::per_element());
  // int -> narrower int keeps the low bits
  Tensor w = Tensor::from_vector<int64_t>({300, -129, 255, 65537, -1}, {5});
  BOOST_TEST(w.cast(dtypes::int8).to_vector<int8_t>() == (std::vector<int8_t>{44, 127, -1, 1, -1}),
             boost::test_tools::per_element());
  BOOST_TEST(w.cast(dtypes::uint8).to_vector<uint8_t>() == (std::vector<uint8_t>{44, 127, 255, 1, 255}),
             boost::test_tools::per_element());
  // float -> float16 rounds to nearest even, overflows to inf
  NdArray hv({6}, {1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048, 65504, 70000, 1e-8, -0.1});
  Tensor h = to_tensor(hv, dtypes::float32).cast(dtypes::float16);
  check_close(h, ref::map(hv, [](double v) { return round_to_half(double(float(v))); }), kExact,
              "float16 rounding");
  // NaN and inf survive float casts; nonzero (and NaN) is true
  Tensor s = Tensor::from_vector<float>({NAN, INFINITY, -INFINITY, 0.0f, -0.0f}, {5});
  NdArray d = to_array(s.cast(dtypes::float64));
  BOOST_TEST(std::isnan(d.data[0]));
  BOOST_TEST(d.data[1] == INFINITY);
  BOOST_TEST(d.data[2] == -INFINITY);
  BOOST_TEST(s.cast(dtypes::bool_).to_vector<bool>() == (std::vector<bool>{true, true, true, false, false}),
             boost::test_tools::per_element());
  // to_vector of another element type casts
  BOOST_TEST(Tensor::from_vector<int32_t>({1, 2}, {2}).to_vector<double>() == (std::vector<double>{1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(Tensor::full({}, 3.5).item<float>() == 3.5f);
}

BOOST_AUTO_TEST_CASE(bitcast, *tt::needs({dtypes::float16})) {
  std::vector<float> fv = {1.0f, -2.5f, 0.0f, 3.14159f, -0.0f, 1e-30f};
  Tensor f = Tensor::from_vector<float>(fv, {2, 3});
  std::vector<int32_t> want(fv.size());
  std::memcpy(want.data(), fv.data(), fv.size() * 4);
  BOOST_TEST(f.bitcast(dtypes::int32).to_vector<int32_t>() == want, boost::test_tools::per_element());
  std::vector<uint32_t> wantu(fv.size());
  std::memcpy(wantu.data(), fv.data(), fv.size() * 4);
  BOOST_TEST(f.bitcast(dtypes::uint32).to_vector<uint32_t>() == wantu, boost::test_tools::per_element());
  // round trip through a view, and a computed (not yet realized) input
  BOOST_TEST(f.T().bitcast(dtypes::int32).bitcast(dtypes::float32).to_vector<float>() ==
                 f.T().to_vector<float>(),
             boost::test_tools::per_element());
  Tensor g = (f * 2).bitcast(dtypes::int32);
  std::vector<float> f2(fv.size());
  for (size_t i = 0; i < fv.size(); ++i) f2[i] = fv[i] * 2;
  std::vector<int32_t> want2(fv.size());
  std::memcpy(want2.data(), f2.data(), f2.size() * 4);
  BOOST_TEST(g.to_vector<int32_t>() == want2, boost::test_tools::per_element());
  BOOST_TEST(Tensor::from_vector<int16_t>({0x3c00}, {1})
                 .bitcast(dtypes::float16)
                 .cast(dtypes::float32)
                 .item<float>() == 1.0f);
}

BOOST_AUTO_TEST_SUITE_END()
