// Shared helpers for the tensor tests: moving data between Tensor and ref::NdArray (raw bytes,
// decoded on the host, so reading back does not depend on the library's casts), tolerant
// comparison, seeded random shapes/data, and non-contiguous views built identically on both sides.
#pragma once

#include <boost/test/unit_test.hpp>

#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/tensor.hpp"
#include "reference.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace tt {

using ref::NdArray;
using tg::DType;
using tg::Tensor;
namespace dtypes = tg::dtypes;

// ---- the device under test ----
// Tensors made without a device go to the default device: $TG_DEVICE, or `-- --device NAME` on
// the suite's command line (device_under_test.cpp). ctest registers each suite once per plugin
// (tg_add_device_suite in tests/TgTesting.cmake). Tests never name a device themselves.
inline const tg_device_properties& device_properties() {
  return tg::open_device(tg::default_device()).device->properties();
}
inline bool device_has(DType dt) { return device_properties().dtype_mask & TG_DTYPE_BIT(tg::to_abi(dt)); }
inline bool device_has_feature(uint64_t feature) { return (device_properties().features & feature) != 0; }

// What a test case needs from the device; as a decorator the case runs only when the device has
// every dtype and feature listed, else Boost.Test reports it skipped with the reason, e.g.
//   BOOST_AUTO_TEST_CASE(f16_math, *tt::needs({dtypes::float16}))
struct DeviceNeeds {
  std::vector<DType> dtypes_needed;
  uint64_t features = 0; // TG_FEATURE_* bits
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result ok(true);
    for (DType dt : dtypes_needed)
      if (!device_has(dt)) {
        ok = false;
        ok.message() << "skipped: device " << tg::default_device() << " lacks " << dt.name() << "; ";
      }
    if ((device_properties().features & features) != features) {
      ok = false;
      ok.message() << "skipped: device " << tg::default_device() << " lacks a needed feature; ";
    }
    return ok;
  }
};
// For tests of vector code generation: the device must report vector registers and get the
// CPU-style optimizations (wide UPCAST tiles become vectors). Devices whose work groups run threads
// in parallel get LOCAL threads instead, which their compilers vectorize across (heuristic.cpp).
struct DeviceHasVectors {
  uint32_t min_bytes = 1; // a member: GCC 12 -O3 warns about copying an empty functor into boost::function
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    const auto& p = device_properties();
    const bool cpu_style =
        !tg::kernel_options(*tg::open_device(tg::default_device()).device, true).parallel_groups();
    boost::test_tools::assertion_result ok(p.vector_bytes >= min_bytes && cpu_style);
    if (p.vector_bytes < min_bytes)
      ok.message() << "skipped: device " << tg::default_device()
                   << " has no vector registers (vector_bytes 0)";
    else if (!ok)
      ok.message() << "skipped: device " << tg::default_device()
                   << " gets work-group optimizations (parallel work groups), not CPU-style vector tiles";
    return ok;
  }
};
inline boost::unit_test::decorator::precondition needs_vectors() {
  return boost::unit_test::precondition(DeviceHasVectors{});
}

inline boost::unit_test::decorator::precondition needs(std::initializer_list<DType> dtypes_needed,
                                                       uint64_t features = 0) {
  return boost::unit_test::precondition(DeviceNeeds{dtypes_needed, features});
}

// ---- float16 on the host (round to nearest even), independent of the library ----
inline double round_to_half(double v) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  double a = std::fabs(v);
  int e = 0;
  (void)std::frexp(a, &e); // a in [2^(e-1), 2^e)
  int ex = std::max(e - 1, -14);
  double ulp = std::ldexp(1.0, ex - 10);
  double r = std::nearbyint(a / ulp) * ulp;
  if (r > 65504) r = INFINITY;
  return std::copysign(r, v);
}
inline double half_bits_to_double(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0)
    v = std::ldexp(double(m), -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = std::ldexp(double(m | 0x400), e - 25);
  return s ? -v : v;
}

// ---- Tensor <-> NdArray ----
template <class T> Tensor typed_tensor(const NdArray& a) {
  std::vector<T> v;
  v.reserve(a.data.size());
  for (double x : a.data) v.push_back(static_cast<T>(x));
  return Tensor::from_vector<T>(v, a.shape);
}

// A tensor holding a's values (converted to dt on the host; float16 via a float32 buffer + cast).
inline Tensor to_tensor(const NdArray& a, DType dt = dtypes::float32) {
  using tg::Scalar;
  switch (dt.scalar) {
  case Scalar::Bool: {
    std::vector<bool> v;
    for (double x : a.data) v.push_back(x != 0);
    std::vector<uint8_t> bytes(v.begin(), v.end());
    return Tensor::from_bytes(std::as_bytes(std::span<const uint8_t>(bytes)), a.shape, dtypes::bool_);
  }
  case Scalar::Int8:
    return typed_tensor<int8_t>(a);
  case Scalar::UInt8:
    return typed_tensor<uint8_t>(a);
  case Scalar::Int16:
    return typed_tensor<int16_t>(a);
  case Scalar::UInt16:
    return typed_tensor<uint16_t>(a);
  case Scalar::Int32:
    return typed_tensor<int32_t>(a);
  case Scalar::UInt32:
    return typed_tensor<uint32_t>(a);
  case Scalar::Int64:
    return typed_tensor<int64_t>(a);
  case Scalar::UInt64:
    return typed_tensor<uint64_t>(a);
  case Scalar::Float32:
    return typed_tensor<float>(a);
  case Scalar::Float64:
    return typed_tensor<double>(a);
  case Scalar::Float16:
    return typed_tensor<float>(a).cast(dtypes::float16);
  default:
    throw std::logic_error("to_tensor: unsupported dtype " + dt.name());
  }
}

template <class T> void decode(const std::vector<std::byte>& bytes, std::vector<double>& out) {
  size_t n = bytes.size() / sizeof(T);
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

// The realized values of t, decoded on the host from its own dtype.
inline NdArray to_array(const Tensor& t) {
  using tg::Scalar;
  std::vector<std::byte> bytes = t.to_bytes();
  NdArray out;
  out.shape = t.shape();
  switch (t.dtype().scalar) {
  case Scalar::Bool:
    decode<uint8_t>(bytes, out.data);
    break;
  case Scalar::Int8:
    decode<int8_t>(bytes, out.data);
    break;
  case Scalar::UInt8:
    decode<uint8_t>(bytes, out.data);
    break;
  case Scalar::Int16:
    decode<int16_t>(bytes, out.data);
    break;
  case Scalar::UInt16:
    decode<uint16_t>(bytes, out.data);
    break;
  case Scalar::Int32:
    decode<int32_t>(bytes, out.data);
    break;
  case Scalar::UInt32:
    decode<uint32_t>(bytes, out.data);
    break;
  case Scalar::Int64:
    decode<int64_t>(bytes, out.data);
    break;
  case Scalar::UInt64:
    decode<uint64_t>(bytes, out.data);
    break;
  case Scalar::Float32:
    decode<float>(bytes, out.data);
    break;
  case Scalar::Float64:
    decode<double>(bytes, out.data);
    break;
  case Scalar::Float16: {
    std::vector<double> d;
    out.data.resize(bytes.size() / 2);
    for (size_t i = 0; i < out.data.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out.data[i] = half_bits_to_double(h);
    }
    break;
  }
  default:
    throw std::logic_error("to_array: unsupported dtype " + t.dtype().name());
  }
  if (int64_t(out.data.size()) != ref::prod(out.shape)) throw std::logic_error("to_array: size mismatch");
  return out;
}

// ---- comparison ----
struct Tol {
  double rtol = 0, atol = 0;
};
inline constexpr Tol kExact{0, 0};
inline constexpr Tol kArith32{1e-5, 1e-6};  // + - * on float32 (one rounding each)
inline constexpr Tol kReduce32{1e-5, 1e-5}; // sums of O(1) values in float32
inline constexpr Tol kTrans32{1e-4, 1e-5};  // transcendental functions on float32
inline constexpr Tol kArith64{1e-12, 1e-12};

inline bool close(double got, double want, Tol tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

// Checks shape and every element; reports the first few mismatches with their index.
inline void check_close(const NdArray& got, const NdArray& want, Tol tol, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    if (got.shape != want.shape) {
      BOOST_ERROR("shape " << ref::str(got.shape) << " != expected " << ref::str(want.shape));
      return;
    }
    int bad = 0;
    for (size_t i = 0; i < got.data.size(); ++i) {
      if (close(got.data[i], want.data[i], tol)) continue;
      if (++bad <= 4)
        BOOST_ERROR("element " << i << " of " << ref::str(got.shape) << ": got " << got.data[i]
                               << ", expected " << want.data[i] << " (rtol " << tol.rtol << ", atol "
                               << tol.atol << ")");
    }
    if (bad > 4) BOOST_ERROR(bad << " mismatching elements in total");
  }
}
inline void check_close(const Tensor& got, const NdArray& want, Tol tol, const std::string& what) {
  check_close(to_array(got), want, tol, what + " " + got.str());
}

// ---- seeded random data ----
using Rng = std::mt19937;

inline NdArray rand_array(Rng& rng, const ref::Dims& shape, double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> d(lo, hi);
  NdArray a(shape);
  for (auto& x : a.data) x = double(float(d(rng))); // representable in float32
  return a;
}
inline NdArray rand_int_array(Rng& rng, const ref::Dims& shape, int64_t lo, int64_t hi) { // [lo, hi]
  std::uniform_int_distribution<int64_t> d(lo, hi);
  NdArray a(shape);
  for (auto& x : a.data) x = double(d(rng));
  return a;
}
// A random value range that fits every dtype's arithmetic used in the tests.
// Floats come from [lo, hi).
inline NdArray rand_for(Rng& rng, const ref::Dims& shape, DType dt, double lo = -2, double hi = 2) {
  if (dt.is_bool()) return rand_int_array(rng, shape, 0, 1);
  if (dt.is_unsigned()) return rand_int_array(rng, shape, 0, 10);
  if (dt.is_int()) return rand_int_array(rng, shape, -10, 10);
  NdArray a = rand_array(rng, shape, lo, hi);
  if (dt == dtypes::float16) a = ref::map(a, round_to_half);
  return a;
}

inline int64_t rint(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// A random shape of `ndim` dims in [1, maxdim]; with allow_zero, a dim is 0 now and then.
inline ref::Dims rand_shape(Rng& rng, int64_t ndim, int64_t maxdim = 5, bool allow_zero = false) {
  ref::Dims s;
  for (int64_t i = 0; i < ndim; ++i)
    s.push_back(allow_zero && rint(rng, 0, 9) == 0 ? 0 : rint(rng, 1, maxdim));
  return s;
}

// ---- inputs as views: the same movement ops applied to the tensor and the reference ----
enum class Layout { Contiguous, Permuted, Strided, Flipped, Padded, Expanded, Shrunk };
inline const char* layout_name(Layout l) {
  switch (l) {
  case Layout::Contiguous:
    return "contiguous";
  case Layout::Permuted:
    return "permuted";
  case Layout::Strided:
    return "strided";
  case Layout::Flipped:
    return "flipped";
  case Layout::Padded:
    return "padded";
  case Layout::Expanded:
    return "expanded";
  case Layout::Shrunk:
    return "shrunk";
  }
  return "?";
}
inline constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Permuted, Layout::Strided, Layout::Flipped,
                                      Layout::Padded,     Layout::Expanded, Layout::Shrunk};

struct Input {
  Tensor t;
  NdArray r; // the values the view shows
};

// An input of `shape` and dtype `dt` whose tensor is a view of `layout` over a realized buffer.
inline Input make_input(Rng& rng, const ref::Dims& shape, DType dt, Layout layout, double lo = -2,
                        double hi = 2) {
  const int64_t nd = int64_t(shape.size());
  auto rand_for = [&](Rng& g, const ref::Dims& s, DType d) { return tt::rand_for(g, s, d, lo, hi); };
  auto realized = [&](const NdArray& a) {
    Tensor t = to_tensor(a, dt);
    t.realize();
    return t;
  };
  if (layout == Layout::Contiguous) {
    NdArray a = rand_for(rng, shape, dt);
    return {realized(a), a};
  }
  if (layout == Layout::Permuted) {
    std::vector<int64_t> order(static_cast<size_t>(nd));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    ref::Dims base(static_cast<size_t>(nd));
    for (size_t i = 0; i < size_t(nd); ++i) base[size_t(order[i])] = shape[i];
    NdArray a = rand_for(rng, base, dt);
    return {realized(a).permute(order), ref::permute(a, order)};
  }
  if (layout == Layout::Strided) { // every other element, starting at 1
    ref::Dims base;
    std::vector<tg::Slice> ts;
    std::vector<ref::SliceSpec> rs;
    for (auto d : shape) {
      base.push_back(2 * d + 1);
      ts.push_back(tg::Slice{1, std::nullopt, 2});
      rs.push_back(ref::SliceSpec{1, std::nullopt, 2});
    }
    NdArray a = rand_for(rng, base, dt);
    return {realized(a).slice(ts), ref::slice(a, rs)};
  }
  if (layout == Layout::Flipped) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < nd; ++i)
      if (rint(rng, 0, 1)) axes.push_back(i);
    if (axes.empty() && nd) axes.push_back(nd - 1);
    NdArray a = rand_for(rng, shape, dt);
    return {realized(a).flip(axes), ref::flip(a, axes)};
  }
  if (layout == Layout::Padded) { // zero padding where the dim allows it
    ref::Dims base = shape;
    std::vector<std::pair<int64_t, int64_t>> p(size_t(nd), {0, 0});
    for (size_t i = 0; i < size_t(nd); ++i)
      if (shape[i] >= 2) {
        p[i] = {1, shape[i] >= 3 ? 1 : 0};
        base[i] -= p[i].first + p[i].second;
      }
    NdArray a = rand_for(rng, base, dt);
    return {realized(a).pad(p), ref::pad(a, p)};
  }
  if (layout == Layout::Expanded) { // random dims broadcast from size 1
    ref::Dims base = shape;
    for (size_t i = 0; i < size_t(nd); ++i)
      if (rint(rng, 0, 1)) base[i] = std::min<int64_t>(1, shape[i]);
    NdArray a = rand_for(rng, base, dt);
    return {realized(a).expand(shape), ref::expand(a, shape)};
  }
  if (layout == Layout::Shrunk) {
    ref::Dims base;
    std::vector<std::pair<int64_t, int64_t>> r;
    for (auto d : shape) {
      base.push_back(d + 2);
      r.emplace_back(1, d + 1);
    }
    NdArray a = rand_for(rng, base, dt);
    return {realized(a).shrink(r), ref::shrink(a, r)};
  }
  throw std::logic_error("make_input");
}

inline std::string ctx(const std::string& op, const ref::Dims& shape, DType dt, Layout l) {
  return op + " shape " + ref::str(shape) + " " + dt.name() + " " + layout_name(l);
}

// Runs f and checks that it throws tg::TensorError (or another tg::Error) whose message contains
// every one of `needles`.
template <class E = tg::Error, class F> void check_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
    BOOST_ERROR("expected an exception mentioning " << *needles.begin());
  } catch (const E& e) {
    std::string msg = e.what();
    for (const auto& n : needles)
      BOOST_CHECK_MESSAGE(msg.find(n) != std::string::npos, "message '" << msg << "' lacks '" << n << "'");
  }
}

} // namespace tt
