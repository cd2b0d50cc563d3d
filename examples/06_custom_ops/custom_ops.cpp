// Step 6: custom ops from primitives. gelu with the exact erf (erf itself written from exp, abs
// and sign: Abramowitz & Stegun 7.1.26), rms_norm and swiglu are ordinary C++ functions over
// Tensor ops, so they fuse and differentiate like built-in ones. Their values are checked
// against reference.txt (float64, plain Python: make_reference.py), rms_norm's gradient against
// finite differences, and each runs fused and step by step (realize after every op) to compare
// kernel counts and times.
#include "examples/common/args.hpp"
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>

using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {

// Called after every op: identity when fused, realize() when step by step.
using Step = std::function<Tensor(Tensor)>;
const Step fused = [](Tensor t) { return t; };
const Step stepwise = [](Tensor t) { return t.realize(); };

// erf(x) = sign(x) (1 - (a1 t + ... + a5 t^5) exp(-x^2)), t = 1 / (1 + p |x|); error < 1.5e-7.
Tensor erf(const Tensor& x, const Step& s = fused) {
  const double p = 0.3275911, a1 = 0.254829592, a2 = -0.284496736, a3 = 1.421413741, a4 = -1.453152027,
               a5 = 1.061405429;
  Tensor ax = s(x.abs());
  Tensor t = s(s(s(ax * p) + 1).reciprocal());
  Tensor poly = s(s(s(s(s(s(s(s(t * a5) + a4) * t) + a3) * t) + a2) * t) + a1);
  poly = s(poly * t);
  Tensor e = s(s(s(ax * ax).neg()).exp());
  return s(x.sign() * s(1 - s(poly * e)));
}

// gelu(x) = x/2 (1 + erf(x / sqrt 2)), the exact form (Tensor::gelu is the tanh approximation).
Tensor gelu(const Tensor& x, const Step& s = fused) {
  return s(s(x * 0.5) * s(1 + erf(s(x * M_SQRT1_2), s)));
}

// rms_norm(x) = x / sqrt(mean(x^2 over the last dim) + eps) * w.
Tensor rms_norm(const Tensor& x, const Tensor& w, double eps, const Step& s = fused) {
  Tensor ms = s(s(x * x).mean({-1}, true));
  return s(s(x * s(s(ms + eps).rsqrt())) * w);
}

// swiglu(x) = silu(x W) * (x V), silu(a) = a * sigmoid(a): the gated unit of LLaMA's feed-forward.
Tensor swiglu(const Tensor& x, const Tensor& w, const Tensor& v, const Step& s = fused) {
  Tensor g = s(x.matmul(w));
  return s(s(g * s(g.sigmoid())) * s(x.matmul(v)));
}

std::map<std::string, std::vector<double>> read_reference(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::map<std::string, std::vector<double>> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    for (double v; fields >> v;) out[name].push_back(v);
  }
  return out;
}

Tensor make(tg::Dims shape, const std::function<double(int64_t, int64_t)>& f,
            tg::DType dt = dtypes::float32) {
  std::vector<double> v;
  int64_t cols = shape.back(), rows = tg::dims_prod(shape) / cols;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) v.push_back(f(r, c));
  return Tensor::from_vector(v, shape, dt).realize();
}

struct Run {
  size_t kernels;
  double ms;
};

// Kernels and best wall time of `repeats` realizes of fn(step) (compiled before timing).
Run measure(const std::function<Tensor(const Step&)>& fn, const Step& s, int repeats) {
  fn(s).realize(); // compile
  Run best{0, 1e30};
  for (int i = 0; i < repeats; ++i) {
    tg::LaunchCounter counter;
    auto t0 = std::chrono::steady_clock::now();
    fn(s).realize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = {counter.kernels(), std::min(best.ms, ms)};
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  examples::Args args(
      argc, argv,
      {{"reference", TG_EXAMPLE_DIR "/reference.txt"}, {"rows", "512"}, {"cols", "1024"}, {"repeats", "3"}});
  examples::Claims claims;
  auto ref = read_reference(args.str("reference"));
  std::cout << "reference values: " << args.str("reference") << "\n";

  examples::section("values against the float64 reference");
  Tensor gx = make({16}, [](int64_t, int64_t c) { return double(c - 8) / 4; });
  auto g = examples::doubles(gelu(gx).to_vector<float>());
  claims.close(g, ref.at("gelu"), 0, 2e-6, "gelu (erf from primitives) = x/2 (1 + erf(x / sqrt 2))");
  auto approx = examples::doubles(gx.gelu().to_vector<float>());
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(approx[i] - ref.at("gelu")[i]));
  std::cout << "  (Tensor::gelu, the tanh approximation, differs from it by up to " << worst << ")\n";

  Tensor rx =
      make({2, 8}, [](int64_t r, int64_t c) { return double((8 * r + c) % 7 - 3) / 2 + double(r) * 0.25; });
  Tensor rw = make({8}, [](int64_t, int64_t c) { return 1 + double(c) / 8; });
  claims.close(examples::doubles(rms_norm(rx, rw, 1e-6).to_vector<float>()), ref.at("rms_norm"), 1e-6, 1e-6,
               "rms_norm");
  tg::nn::RMSNorm layer(8, 1e-6);
  layer.weight.assign(rw);
  claims.close(examples::doubles(layer(rx).to_vector<float>()), ref.at("rms_norm"), 1e-6, 1e-6,
               "nn::RMSNorm with the same weight agrees");

  Tensor sx = make({2, 4}, [](int64_t r, int64_t c) { return double(r * 4 + c) / 8 - 0.5; });
  Tensor sw = make({4, 3}, [](int64_t i, int64_t j) { return double((i * 3 + j) % 5 - 2) / 4; });
  Tensor sv = make({4, 3}, [](int64_t i, int64_t j) { return double((i * 2 + j) % 7 - 3) / 6; });
  claims.close(examples::doubles(swiglu(sx, sw, sv).to_vector<float>()), ref.at("swiglu"), 1e-5, 1e-7,
               "swiglu");

  examples::section("rms_norm's gradient: autograd against finite differences (float64)");
  Tensor x64 = rx.cast(dtypes::float64).realize(), w64 = rw.cast(dtypes::float64).realize();
  Tensor c64 = make(
      {2, 8}, [](int64_t r, int64_t c) { return std::sin(double(r * 8 + c)); }, dtypes::float64);
  auto loss = [&](const Tensor& x) { return (rms_norm(x, w64, 1e-6) * c64).sum(); }; // a weighted sum
  auto base = x64.to_vector<double>();
  Tensor leaf = Tensor::from_vector(base, {2, 8}).requires_grad_();
  loss(leaf).backward();
  auto auto_grad = leaf.grad()->to_vector<double>();
  // All 32 perturbed inputs (x + h e_i and x - h e_i) as one batch: one realize evaluates them all.
  const double h = 1e-6;
  std::vector<double> batch;
  for (double sign : {1.0, -1.0})
    for (size_t i = 0; i < base.size(); ++i) {
      auto moved = base;
      moved[i] += sign * h;
      batch.insert(batch.end(), moved.begin(), moved.end());
    }
  const int64_t n = int64_t(base.size());
  Tensor xs = Tensor::from_vector(batch, {2 * n, 2, 8});
  auto fx = (rms_norm(xs, w64, 1e-6) * c64).sum({1, 2}).to_vector<double>(); // broadcast over the batch
  std::vector<double> numeric(base.size());
  for (size_t i = 0; i < base.size(); ++i) numeric[i] = (fx[i] - fx[i + base.size()]) / (2 * h);
  std::cout << "  d/dx[0][0..3]: autograd " << auto_grad[0] << " " << auto_grad[1] << " " << auto_grad[2]
            << " " << auto_grad[3] << "\n                 numeric  " << numeric[0] << " " << numeric[1] << " "
            << numeric[2] << " " << numeric[3] << "\n";
  claims.close(auto_grad, numeric, 1e-6, 1e-7, "autograd = finite differences on all 16 inputs");

  const int64_t rows = args.integer("rows"), cols = args.integer("cols");
  examples::section("fused against step by step, on (" + std::to_string(rows) + ", " + std::to_string(cols) +
                    ")");
  Tensor big =
      make({rows, cols}, [](int64_t r, int64_t c) { return double((r * 31 + c * 17) % 101) / 50 - 1; });
  Tensor weight = make({cols}, [](int64_t, int64_t c) { return 1 + double(c % 5) / 10; });
  Tensor wsq = make({cols, 64}, [](int64_t i, int64_t j) { return double((i + 3 * j) % 9 - 4) / 64; });
  Tensor vsq = make({cols, 64}, [](int64_t i, int64_t j) { return double((2 * i + j) % 7 - 3) / 64; });
  struct Case {
    std::string name;
    std::function<Tensor(const Step&)> fn;
    size_t want_fused;
  };
  // A reduce whose result is broadcast back is stored first (step 2), so rms_norm is 2 kernels;
  // swiglu's two matmuls reduce over the same axis and neither is broadcast: one kernel computes
  // both and the gating.
  std::vector<Case> cases{{"gelu", [&](const Step& s) { return gelu(big, s); }, 1},
                          {"rms_norm", [&](const Step& s) { return rms_norm(big, weight, 1e-6, s); }, 2},
                          {"swiglu", [&](const Step& s) { return swiglu(big, wsq, vsq, s); }, 1}};
  std::cout << "  op        fused kernels   ms     step-by-step kernels   ms\n";
  for (const auto& c : cases) {
    const int repeats = int(args.integer("repeats"));
    Run f = measure(c.fn, fused, repeats), st = measure(c.fn, stepwise, repeats);
    char line[160];
    std::snprintf(line, sizeof line, "  %-9s %6zu %11.3f %14zu %15.3f\n", c.name.c_str(), f.kernels, f.ms,
                  st.kernels, st.ms);
    std::cout << line;
    claims.equal(f.kernels, c.want_fused, c.name + ": fused kernel count");
    claims.check(st.kernels > f.kernels, c.name + ": step by step launches more kernels",
                 std::to_string(st.kernels) + " vs " + std::to_string(f.kernels));
  }
  return claims.finish("06_custom_ops");
}
