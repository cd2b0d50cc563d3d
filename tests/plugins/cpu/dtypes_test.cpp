// ALU ops and casts for every dtype, compared with C++ (C semantics for ints, IEEE for floats).
#include "plugin_fixture.hpp"

#include <bit>
#include <cmath>
#include <functional>
#include <type_traits>

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

// ---- reference conversions for the 16-bit float formats (round to nearest even) ----
float half_bits_to_float(uint16_t h) {
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  float v = exp == 0    ? std::ldexp(float(mant), -24)
            : exp == 31 ? (mant ? NAN : INFINITY)
                        : std::ldexp(float(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t float_to_half_bits(float f) {
  // Exhaustive search over the 2^15 magnitudes is slow; use double arithmetic instead.
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(double(f));
  if (std::isnan(f)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) return uint16_t(sign | uint16_t(std::nearbyint(a * std::ldexp(1.0, 24))));
  int e;
  double m = std::frexp(a, &e);               // a = m * 2^e, m in [0.5, 1)
  double scaled = std::nearbyint(m * 2048.0); // 11 significant bits
  if (scaled == 2048.0) {
    scaled = 1024.0;
    ++e;
  }
  return uint16_t(sign | uint16_t((e + 14) << 10) | (uint16_t(scaled) & 0x3ff));
}
float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }
uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return uint16_t((x >> 16) | 0x40);
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// A float dtype's storage and conversions.
struct FloatFormat {
  tg_dtype dtype;
  size_t size;
  std::function<double(const std::byte*)> read;
  std::function<void(double, std::byte*)> write; // rounds to the format
};

FloatFormat float_format(tg_dtype dt) {
  switch (dt) {
  case TG_DTYPE_FLOAT16:
    return {dt, 2,
            [](const std::byte* p) {
              uint16_t h;
              std::memcpy(&h, p, 2);
              return double(half_bits_to_float(h));
            },
            [](double v, std::byte* p) {
              uint16_t h = float_to_half_bits(float(v));
              std::memcpy(p, &h, 2);
            }};
  case TG_DTYPE_BFLOAT16:
    return {dt, 2,
            [](const std::byte* p) {
              uint16_t h;
              std::memcpy(&h, p, 2);
              return double(bf16_bits_to_float(h));
            },
            [](double v, std::byte* p) {
              uint16_t h = float_to_bf16_bits(float(v));
              std::memcpy(p, &h, 2);
            }};
  case TG_DTYPE_FLOAT32:
    return {dt, 4,
            [](const std::byte* p) {
              float f;
              std::memcpy(&f, p, 4);
              return double(f);
            },
            [](double v, std::byte* p) {
              float f = float(v);
              std::memcpy(p, &f, 4);
            }};
  default:
    return {dt, 8,
            [](const std::byte* p) {
              double f;
              std::memcpy(&f, p, 8);
              return f;
            },
            [](double v, std::byte* p) { std::memcpy(p, &v, 8); }};
  }
}

// Runs a kernel with n elements per buffer: inputs first, then outputs; out[j][i] = op_j(inputs[i]).
struct OpsKernel {
  KernelBuilder k{"dtype_ops"};
  std::vector<tg_dtype> input_dtypes;
  std::vector<tg_dtype> output_dtypes;
  std::vector<Ref> inputs; // loaded values at element i
  Ref i = 0;

  explicit OpsKernel(std::vector<tg_dtype> in_dtypes, std::vector<tg_dtype> out_dtypes)
      : input_dtypes(std::move(in_dtypes)), output_dtypes(std::move(out_dtypes)) {
    std::vector<Ref> globals;
    for (size_t j = 0; j < input_dtypes.size() + output_dtypes.size(); ++j)
      globals.push_back(k.global(
          uint32_t(j), j < input_dtypes.size() ? input_dtypes[j] : output_dtypes[j - input_dtypes.size()]));
    i = k.group_id(0);
    for (size_t j = 0; j < input_dtypes.size(); ++j) inputs.push_back(k.load(k.index(globals[j], i)));
    out_globals.assign(globals.begin() + long(input_dtypes.size()), globals.end());
  }
  void store(size_t out, Ref value) { k.store(k.index(out_globals[out], i), value); }

  // Runs on n elements; inputs as raw bytes; returns outputs as raw bytes.
  std::vector<std::vector<std::byte>> run(const std::vector<std::vector<std::byte>>& in, uint32_t n) {
    Device device;
    Program program(device, k);
    std::vector<Buffer> buffers;
    std::vector<tg_buffer_arg> args;
    for (const auto& bytes : in) buffers.emplace_back(device, bytes);
    for (tg_dtype d : output_dtypes)
      buffers.emplace_back(device, std::vector<std::byte>(n * tg::sdk::dtype_size(d)));
    for (const auto& b : buffers) args.push_back(b.arg());
    program.launch({n, 1, 1}, {1, 1, 1}, args);
    std::vector<std::vector<std::byte>> out;
    for (size_t j = 0; j < output_dtypes.size(); ++j)
      out.push_back(buffers[in.size() + j].download<std::byte>(n * tg::sdk::dtype_size(output_dtypes[j])));
    return out;
  }

private:
  std::vector<Ref> out_globals;
};

template <class T> std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}
template <class T> T at(const std::vector<std::byte>& bytes, size_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

// ---- integers ----
template <class T> void check_int_dtype(tg_dtype dt) {
  constexpr bool is_signed = std::is_signed_v<T>;
  std::vector<T> a, b;
  std::vector<float> f; // cast source
  const long long sa[] = {-7, 7, -7, 7, 100, -100, 0, 1, 127, -128, 45, -3};
  const long long sb[] = {2, -2, -2, 2, 7, 7, 5, -1, -1, -1, 6, 3};
  const long long ua[] = {7, 200, 13, 255, 100, 0, 1, 250, 3, 77, 45, 9};
  const long long ub[] = {2, 3, 5, 1, 7, 9, 3, 11, 250, 76, 6, 4};
  const float fs[] = {-3.75f, 3.75f, -0.5f,   0.5f,    100.9f, -100.9f,
                      0.0f,   1.0f,  126.99f, -127.5f, 45.2f,  -2.9f};
  const float fu[] = {3.75f, 200.9f, 0.5f, 254.9f, 100.2f, 0.0f, 1.0f, 7.7f, 3.0f, 77.7f, 45.2f, 9.99f};
  const size_t n = 12;
  for (size_t i = 0; i < n; ++i) {
    a.push_back(T(is_signed ? sa[i] : ua[i]));
    b.push_back(T(is_signed ? sb[i] : ub[i]));
    f.push_back(is_signed ? fs[i] : fu[i]);
  }
  enum { ADD, SUB, MUL, MAX, IDIV, MOD, AND, XOR, SHR, WHERE, LT, NE, TO_F32, FROM_F32, TO_I64, COUNT };
  std::vector<tg_dtype> outs(COUNT, dt);
  outs[LT] = outs[NE] = TG_DTYPE_BOOL;
  outs[TO_F32] = TG_DTYPE_FLOAT32;
  outs[TO_I64] = TG_DTYPE_INT64;
  OpsKernel ok({dt, dt, TG_DTYPE_FLOAT32}, outs);
  auto& k = ok.k;
  Ref x = ok.inputs[0], y = ok.inputs[1];
  ok.store(ADD, k.add(x, y));
  ok.store(SUB, k.alu(TG_OP_SUB, x, y));
  ok.store(MUL, k.mul(x, y));
  ok.store(MAX, k.alu(TG_OP_MAX, x, y));
  ok.store(IDIV, k.alu(TG_OP_IDIV, x, y));
  ok.store(MOD, k.alu(TG_OP_MOD, x, y));
  ok.store(AND, k.alu(TG_OP_AND, x, y));
  ok.store(XOR, k.alu(TG_OP_XOR, x, y));
  ok.store(SHR, k.alu(TG_OP_SHR, x, k.const_int(dt, 1)));
  Ref lt = k.cmplt(x, y);
  ok.store(WHERE, k.alu(TG_OP_WHERE, lt, x, y));
  ok.store(LT, lt);
  ok.store(NE, k.alu(TG_OP_CMPNE, x, y));
  ok.store(TO_F32, k.cast(x, TG_DTYPE_FLOAT32));
  ok.store(FROM_F32, k.cast(ok.inputs[2], dt));
  ok.store(TO_I64, k.cast(x, TG_DTYPE_INT64));
  auto out = ok.run({bytes_of(a), bytes_of(b), bytes_of(f)}, uint32_t(n));
  for (size_t i = 0; i < n; ++i) {
    BOOST_TEST_CONTEXT("dtype " << tg::sdk::dtype_name(dt) << ", a=" << (long long)a[i]
                                << ", b=" << (long long)b[i]) {
      // Reference in the wide type, then wrapped to T (C++20 conversions are modular).
      using W = std::conditional_t<is_signed, long long, unsigned long long>;
      W wa = W(a[i]), wb = W(b[i]);
      BOOST_CHECK_EQUAL((long long)at<T>(out[ADD], i), (long long)T(wa + wb));
      BOOST_CHECK_EQUAL((long long)at<T>(out[SUB], i), (long long)T(wa - wb));
      BOOST_CHECK_EQUAL((long long)at<T>(out[MUL], i), (long long)T(wa * wb));
      BOOST_CHECK_EQUAL((long long)at<T>(out[MAX], i), (long long)std::max(a[i], b[i]));
      // C: truncating division, remainder has the dividend's sign (-7 / 2 = -3, -7 % 2 = -1)
      BOOST_CHECK_EQUAL((long long)at<T>(out[IDIV], i), (long long)T(wa / wb));
      BOOST_CHECK_EQUAL((long long)at<T>(out[MOD], i), (long long)T(wa % wb));
      BOOST_CHECK_EQUAL((long long)at<T>(out[AND], i), (long long)T(a[i] & b[i]));
      BOOST_CHECK_EQUAL((long long)at<T>(out[XOR], i), (long long)T(a[i] ^ b[i]));
      BOOST_CHECK_EQUAL((long long)at<T>(out[SHR], i), (long long)T(a[i] >> 1)); // arithmetic for signed
      BOOST_CHECK_EQUAL((long long)at<T>(out[WHERE], i), (long long)(a[i] < b[i] ? a[i] : b[i]));
      BOOST_CHECK_EQUAL(int(at<uint8_t>(out[LT], i)), int(a[i] < b[i]));
      BOOST_CHECK_EQUAL(int(at<uint8_t>(out[NE], i)), int(a[i] != b[i]));
      BOOST_CHECK_EQUAL(at<float>(out[TO_F32], i), float(a[i]));
      BOOST_CHECK_EQUAL((long long)at<T>(out[FROM_F32], i), (long long)T(f[i])); // truncates toward zero
      BOOST_CHECK_EQUAL(at<int64_t>(out[TO_I64], i), (long long)(a[i]));         // sign- or zero-extends
    }
  }
}

// ---- floats ----
void check_float_dtype(tg_dtype dt) {
  FloatFormat fmt = float_format(dt);
  const std::vector<double> av = {1.5, -2.25, 3.0, 0.1, 100.0, -0.5, 7.75, 1e-3, -1e4, 0.0};
  const std::vector<double> bv = {2.0, 0.75, -3.0, 0.3, 0.01, -0.5, 2.0, 1e3, 3.5, -1.0};
  const std::vector<float> cv = {1.1f, -2.6f, 1e-3f, 3.14159f, 250.5f, -0.0f, 65504.0f, 1e-5f, -7.0f, 0.33f};
  const size_t n = av.size();
  std::vector<std::byte> a(n * fmt.size), b(n * fmt.size);
  std::vector<double> ar(n), br(n); // the values as stored (rounded to the format)
  for (size_t i = 0; i < n; ++i) {
    fmt.write(av[i], a.data() + i * fmt.size);
    fmt.write(bv[i], b.data() + i * fmt.size);
    ar[i] = fmt.read(a.data() + i * fmt.size);
    br[i] = fmt.read(b.data() + i * fmt.size);
  }
  enum { ADD, SUB, MUL, DIV, MAX, WHERE, SQRT, LT, EQ, TO_F32, FROM_F32, TO_I32, TO_F64, COUNT };
  std::vector<tg_dtype> outs(COUNT, dt);
  outs[LT] = outs[EQ] = TG_DTYPE_BOOL;
  outs[TO_F32] = TG_DTYPE_FLOAT32;
  outs[TO_I32] = TG_DTYPE_INT32;
  outs[TO_F64] = TG_DTYPE_FLOAT64;
  OpsKernel ok({dt, dt, TG_DTYPE_FLOAT32}, outs);
  auto& k = ok.k;
  Ref x = ok.inputs[0], y = ok.inputs[1];
  ok.store(ADD, k.add(x, y));
  ok.store(SUB, k.alu(TG_OP_SUB, x, y));
  ok.store(MUL, k.mul(x, y));
  ok.store(DIV, k.alu(TG_OP_FDIV, x, y));
  ok.store(MAX, k.alu(TG_OP_MAX, x, y));
  Ref lt = k.cmplt(x, y);
  ok.store(WHERE, k.alu(TG_OP_WHERE, lt, x, y));
  ok.store(SQRT, k.alu(TG_OP_SQRT, k.alu(TG_OP_MAX, x, k.alu(TG_OP_NEG, x))));
  ok.store(LT, lt);
  ok.store(EQ, k.alu(TG_OP_CMPEQ, x, y));
  ok.store(TO_F32, k.cast(x, TG_DTYPE_FLOAT32));
  ok.store(FROM_F32, k.cast(ok.inputs[2], dt));
  ok.store(TO_I32, k.cast(x, TG_DTYPE_INT32));
  ok.store(TO_F64, k.cast(x, TG_DTYPE_FLOAT64));
  auto out = ok.run({a, b, bytes_of(cv)}, uint32_t(n));
  // Every op here is correctly rounded in the format (f16/bf16 computed in f32 then rounded,
  // which is exact for + - * / sqrt), so results must match bit for bit.
  auto rounded = [&](double v) {
    std::byte tmp[8];
    fmt.write(v, tmp);
    return fmt.read(tmp);
  };
  auto narrow = [&](double v) { // the op in the format's own precision
    if (dt == TG_DTYPE_FLOAT64) return v;
    return rounded(double(float(v)));
  };
  for (size_t i = 0; i < n; ++i) {
    BOOST_TEST_CONTEXT("dtype " << tg::sdk::dtype_name(dt) << ", a=" << ar[i] << ", b=" << br[i]) {
      double x0 = ar[i], y0 = br[i];
      auto got = [&](int which) { return fmt.read(out[size_t(which)].data() + i * fmt.size); };
      if (dt == TG_DTYPE_FLOAT32) { // float arithmetic, not double then rounded (same here)
        float xf = float(x0), yf = float(y0);
        BOOST_CHECK_EQUAL(got(ADD), double(xf + yf));
        BOOST_CHECK_EQUAL(got(MUL), double(xf * yf));
        BOOST_CHECK_EQUAL(got(DIV), double(xf / yf));
        BOOST_CHECK_EQUAL(got(SQRT), double(std::sqrt(std::fabs(xf))));
      } else {
        BOOST_CHECK_EQUAL(got(ADD), narrow(x0 + y0));
        BOOST_CHECK_EQUAL(got(MUL), narrow(x0 * y0));
        BOOST_CHECK_EQUAL(got(DIV), narrow(x0 / y0));
        BOOST_CHECK_EQUAL(got(SQRT), narrow(std::sqrt(std::fabs(x0))));
      }
      BOOST_CHECK_EQUAL(got(SUB), narrow(x0 - y0));
      BOOST_CHECK_EQUAL(got(MAX), std::max(x0, y0));
      BOOST_CHECK_EQUAL(got(WHERE), x0 < y0 ? x0 : y0);
      BOOST_CHECK_EQUAL(int(at<uint8_t>(out[LT], i)), int(x0 < y0));
      BOOST_CHECK_EQUAL(int(at<uint8_t>(out[EQ], i)), int(x0 == y0));
      BOOST_CHECK_EQUAL(double(at<float>(out[TO_F32], i)), double(float(x0)));
      BOOST_CHECK_EQUAL(fmt.read(out[FROM_F32].data() + i * fmt.size), rounded(double(cv[i])));
      BOOST_CHECK_EQUAL(at<int32_t>(out[TO_I32], i), int32_t(x0)); // toward zero
      BOOST_CHECK_EQUAL(at<double>(out[TO_F64], i), x0);
    }
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_dtypes)

BOOST_AUTO_TEST_CASE(int8) { check_int_dtype<int8_t>(TG_DTYPE_INT8); }
BOOST_AUTO_TEST_CASE(uint8) { check_int_dtype<uint8_t>(TG_DTYPE_UINT8); }
BOOST_AUTO_TEST_CASE(int16) { check_int_dtype<int16_t>(TG_DTYPE_INT16); }
BOOST_AUTO_TEST_CASE(uint16) { check_int_dtype<uint16_t>(TG_DTYPE_UINT16); }
BOOST_AUTO_TEST_CASE(int32) { check_int_dtype<int32_t>(TG_DTYPE_INT32); }
BOOST_AUTO_TEST_CASE(uint32) { check_int_dtype<uint32_t>(TG_DTYPE_UINT32); }
BOOST_AUTO_TEST_CASE(int64) { check_int_dtype<int64_t>(TG_DTYPE_INT64); }
BOOST_AUTO_TEST_CASE(uint64) { check_int_dtype<uint64_t>(TG_DTYPE_UINT64); }
BOOST_AUTO_TEST_CASE(float16) { check_float_dtype(TG_DTYPE_FLOAT16); }
BOOST_AUTO_TEST_CASE(bfloat16) { check_float_dtype(TG_DTYPE_BFLOAT16); }
BOOST_AUTO_TEST_CASE(float32) { check_float_dtype(TG_DTYPE_FLOAT32); }
BOOST_AUTO_TEST_CASE(float64) { check_float_dtype(TG_DTYPE_FLOAT64); }

BOOST_AUTO_TEST_CASE(boolean) {
  const std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  const std::vector<int32_t> ints = {0, -5, 3, 0};
  const std::vector<float> floats = {0.0f, 0.25f, -0.0f, NAN};
  enum { ADD, MUL, MAX, LT, NE, WHERE, TO_F32, FROM_I32, FROM_F32, NOT, COUNT };
  std::vector<tg_dtype> outs(COUNT, TG_DTYPE_BOOL);
  outs[TO_F32] = TG_DTYPE_FLOAT32;
  outs[WHERE] = TG_DTYPE_INT32;
  OpsKernel ok({TG_DTYPE_BOOL, TG_DTYPE_BOOL, TG_DTYPE_INT32, TG_DTYPE_FLOAT32}, outs);
  auto& k = ok.k;
  Ref x = ok.inputs[0], y = ok.inputs[1];
  ok.store(ADD, k.add(x, y));
  ok.store(MUL, k.mul(x, y));
  ok.store(MAX, k.alu(TG_OP_MAX, x, y));
  ok.store(LT, k.cmplt(x, y));
  ok.store(NE, k.alu(TG_OP_CMPNE, x, y));
  ok.store(WHERE, k.alu(TG_OP_WHERE, x, ok.inputs[2], k.i32(99)));
  ok.store(TO_F32, k.cast(x, TG_DTYPE_FLOAT32));
  ok.store(FROM_I32, k.cast(ok.inputs[2], TG_DTYPE_BOOL));
  ok.store(FROM_F32, k.cast(ok.inputs[3], TG_DTYPE_BOOL));
  ok.store(NOT, k.alu(TG_OP_CMPNE, x, k.const_int(TG_DTYPE_BOOL, 1)));
  auto out = ok.run({bytes_of(a), bytes_of(b), bytes_of(ints), bytes_of(floats)}, 4);
  for (size_t i = 0; i < 4; ++i) {
    bool p = a[i], q = b[i];
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[ADD], i)), int(p || q));
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[MUL], i)), int(p && q));
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[MAX], i)), int(p || q));
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[LT], i)), int(!p && q));
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[NE], i)), int(p != q));
    BOOST_CHECK_EQUAL(at<int32_t>(out[WHERE], i), p ? ints[i] : 99);
    BOOST_CHECK_EQUAL(at<float>(out[TO_F32], i), p ? 1.0f : 0.0f);
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[FROM_I32], i)), int(ints[i] != 0));
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[FROM_F32], i)), int(floats[i] != 0.0f)); // NaN is true, -0 false
    BOOST_CHECK_EQUAL(int(at<uint8_t>(out[NOT], i)), int(!p));
  }
}

BOOST_AUTO_TEST_CASE(bitcast_and_shifts) {
  const std::vector<float> f = {1.0f, -2.5f, 0.0f, 3.0e38f};
  const std::vector<int32_t> s = {1, -16, 1 << 30, -1};
  enum { BITS, BACK, SHL, SHR, COUNT };
  std::vector<tg_dtype> outs = {TG_DTYPE_UINT32, TG_DTYPE_FLOAT32, TG_DTYPE_INT32, TG_DTYPE_INT32};
  OpsKernel ok({TG_DTYPE_FLOAT32, TG_DTYPE_INT32}, outs);
  auto& k = ok.k;
  Ref bits = k.bitcast(ok.inputs[0], TG_DTYPE_UINT32);
  ok.store(BITS, bits);
  ok.store(BACK, k.bitcast(k.add(bits, k.const_int(TG_DTYPE_UINT32, 1)), TG_DTYPE_FLOAT32));
  ok.store(SHL, k.alu(TG_OP_SHL, ok.inputs[1], k.i32(2)));
  ok.store(SHR, k.alu(TG_OP_SHR, ok.inputs[1], k.i32(3)));
  auto out = ok.run({bytes_of(f), bytes_of(s)}, 4);
  for (size_t i = 0; i < 4; ++i) {
    BOOST_CHECK_EQUAL(at<uint32_t>(out[BITS], i), std::bit_cast<uint32_t>(f[i]));
    BOOST_CHECK_EQUAL(at<float>(out[BACK], i), std::bit_cast<float>(std::bit_cast<uint32_t>(f[i]) + 1));
    BOOST_CHECK_EQUAL(at<int32_t>(out[SHL], i), int32_t(uint32_t(s[i]) << 2));
    BOOST_CHECK_EQUAL(at<int32_t>(out[SHR], i), s[i] >> 3);
  }
}

BOOST_AUTO_TEST_CASE(half_conversions_from_double_and_ints) {
  // f64 -> f16 goes through the __truncdfhf2 helper the plugin provides; int <-> half too.
  const std::vector<double> d = {1.0 / 3.0, 65504.0, 70000.0, -1e-6, 6.1e-5, 0.5 + 1.0 / 4096.0};
  std::vector<int32_t> ints = {-3, 2047, 2049, 0, 65504, 7};
  enum { FROM_F64, FROM_I32, TO_I32, COUNT };
  OpsKernel ok({TG_DTYPE_FLOAT64, TG_DTYPE_INT32}, {TG_DTYPE_FLOAT16, TG_DTYPE_FLOAT16, TG_DTYPE_INT32});
  auto& k = ok.k;
  ok.store(FROM_F64, k.cast(ok.inputs[0], TG_DTYPE_FLOAT16));
  Ref h = k.cast(ok.inputs[1], TG_DTYPE_FLOAT16);
  ok.store(FROM_I32, h);
  ok.store(TO_I32, k.cast(h, TG_DTYPE_INT32));
  auto out = ok.run({bytes_of(d), bytes_of(ints)}, 6);
  for (size_t i = 0; i < 6; ++i) {
    // Reference: correctly rounded double -> half (float(d) is exact enough here except ties,
    // which these values avoid).
    BOOST_CHECK_EQUAL(at<uint16_t>(out[FROM_F64], i), float_to_half_bits(float(d[i])));
    BOOST_CHECK_EQUAL(at<uint16_t>(out[FROM_I32], i), float_to_half_bits(float(ints[i])));
    BOOST_CHECK_EQUAL(at<int32_t>(out[TO_I32], i),
                      int32_t(half_bits_to_float(float_to_half_bits(float(ints[i])))));
  }
}

BOOST_AUTO_TEST_SUITE_END()
