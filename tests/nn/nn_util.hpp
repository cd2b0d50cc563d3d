// Helpers for the nn/optim tests: seeded host data, tensors from host vectors, and tolerant
// comparison of a tensor (read back as float64) against host-computed values.
#pragma once

#include <boost/test/unit_test.hpp>

#include "kernel/engine/config.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace nt {

using tg::Dims;
using tg::Tensor;
namespace dtypes = tg::dtypes;

struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  double uniform(double lo = -1, double hi = 1) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  std::vector<double> vec(size_t n, double lo = -1, double hi = 1) {
    std::vector<double> v(n);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen); }
};

// Sets TG_REALIZE_EARLY's mode for one scope (kernel/engine/config.hpp); the default again after.
struct RealizeEarly {
  explicit RealizeEarly(int mode) { tg::set_realize_early(mode); }
  ~RealizeEarly() { tg::set_realize_early(-1); }
};

// Whether the tensor's value is stored (a view of a buffer), not a pending expression.
inline bool realized(const Tensor& t) { return tg::is_buffer_view(t.uop()); }

inline size_t numel(const Dims& d) {
  size_t n = 1;
  for (auto x : d) n *= size_t(x);
  return n;
}

inline Tensor f64(const std::vector<double>& v, Dims shape) {
  return Tensor::from_vector<double>(v, std::move(shape));
}
inline Tensor f32(const std::vector<double>& v, Dims shape) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_vector<float>(f, std::move(shape));
}
inline Tensor i32(const std::vector<int32_t>& v, Dims shape) {
  return Tensor::from_vector<int32_t>(v, std::move(shape));
}

inline std::vector<double> host(const Tensor& t) { return t.to_vector<double>(); }

// |got - want| <= atol + rtol * |want| elementwise; reports the first few misses with context.
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                        double atol, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_REQUIRE_EQUAL(got.size(), want.size());
    int misses = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      bool ok = std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]) ||
                (std::isnan(got[i]) && std::isnan(want[i]));
      if (!ok && misses++ < 5) BOOST_ERROR("element " << i << ": got " << got[i] << ", want " << want[i]);
    }
    if (misses > 5) BOOST_ERROR(misses << " elements differ");
  }
}
inline void check_close(const Tensor& got, const std::vector<double>& want, double rtol, double atol,
                        const std::string& what) {
  check_close(host(got), want, rtol, atol, what + " " + got.str());
}

// True when `fn` throws E and the message contains every string in `parts`.
template <class E, class F>
void check_throws(F&& fn, const std::vector<std::string>& parts, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    try {
      fn();
      BOOST_ERROR("no exception");
    } catch (const E& e) {
      std::string msg = e.what();
      for (const auto& p : parts)
        BOOST_TEST(msg.find(p) != std::string::npos, "message '" << msg << "' lacks '" << p << "'");
    }
  }
}

} // namespace nt
