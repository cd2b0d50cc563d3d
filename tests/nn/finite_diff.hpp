// Central finite differences in float64, shared by the gradient tests: random inputs, the weighted
// loss sum(f(x) * w) that checks every output element's gradient, and its numeric gradient.
// h = 1e-5; tolerance |analytic - numeric| <= 1e-7 + 1e-6 |numeric| (truncation error ~h^2 = 1e-10
// and rounding ~1e-16 / h = 1e-11 are far below it).
#pragma once

#include "nn_util.hpp"

#include <functional>

namespace nt {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

constexpr double kH = 1e-5, kRtol = 1e-6, kAtol = 1e-7;

struct In {
  Dims shape;
  std::vector<double> data;
};

// Random values in [lo, hi]; with `away` > 0, magnitudes are pushed to at least `away` (keeps
// relu/abs away from their kink).
inline In in(Rng& rng, Dims shape, double lo = -1, double hi = 1, double away = 0) {
  std::vector<double> v = rng.vec(numel(shape), lo, hi);
  if (away > 0)
    for (auto& x : v) x = std::copysign(away + std::fabs(x), x);
  return {std::move(shape), v};
}

inline std::vector<Tensor> tensors(const std::vector<In>& ins) {
  std::vector<Tensor> ts;
  for (const auto& i : ins) ts.push_back(f64(i.data, i.shape));
  return ts;
}

// sum(f(ins) * w), realized.
inline double weighted(const Fn& f, const std::vector<In>& ins, const std::vector<double>& w) {
  Tensor y = f(tensors(ins));
  return (y * f64(w, y.shape())).sum().item<double>();
}

// d weighted / d(input i), element by element.
inline std::vector<double> finite_differences(const Fn& f, std::vector<In> ins, const std::vector<double>& w,
                                              size_t i) {
  std::vector<double> out;
  for (auto& x : ins[i].data) {
    double x0 = x;
    x = x0 + kH;
    double fp = weighted(f, ins, w);
    x = x0 - kH;
    double fm = weighted(f, ins, w);
    x = x0;
    out.push_back((fp - fm) / (2 * kH));
  }
  return out;
}

} // namespace nt
