// Step 3: autograd. requires_grad_() marks a leaf, backward() fills its grad() with more lazy
// graph. Each gradient is checked twice: against the derivative worked out by hand, and against
// central finite differences (f(x + h) - f(x - h)) / 2h computed from forward passes only (in
// float64, so the difference quotient is accurate to ~1e-8). Then an MLP learns XOR, and a Huber
// loss written from primitives gets its gradient checked numerically.
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {

constexpr double kStep = 1e-5; // h of the central difference

Tensor f64(const std::vector<double>& v) {
  return Tensor::from_vector(v, {int64_t(v.size())}, dtypes::float64);
}

// d f / d x_i by central differences, one forward pass per side and element.
std::vector<double> numeric_gradient(const std::function<Tensor(const Tensor&)>& f,
                                     const std::vector<double>& x) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    auto plus = x, minus = x;
    plus[i] += kStep;
    minus[i] -= kStep;
    g[i] = (f(f64(plus)).item<double>() - f(f64(minus)).item<double>()) / (2 * kStep);
  }
  return g;
}

// The autograd gradient of the scalar f at x.
std::vector<double> autograd_gradient(const std::function<Tensor(const Tensor&)>& f,
                                      const std::vector<double>& x) {
  Tensor t = f64(x).requires_grad_();
  f(t).backward();
  return t.grad()->to_vector<double>();
}

std::string list(const std::vector<double>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + "]";
}

} // namespace

int main() {
  examples::Claims claims;
  const std::vector<double> xs{-1.5, -0.5, 0.25, 2.0}, ws{0.5, -2.0, 3.0, 1.0};

  examples::section("d/dx sum(x^2) = 2x");
  auto square = [](const Tensor& x) { return x.pow(2).sum(); };
  auto g = autograd_gradient(square, xs);
  std::vector<double> hand;
  for (double x : xs) hand.push_back(2 * x);
  std::cout << "  x = " << list(xs) << "\n  autograd: " << list(g) << "\n";
  claims.close(g, hand, 1e-12, 1e-12, "autograd = 2x (by hand)");
  claims.close(g, numeric_gradient(square, xs), 1e-6, 1e-6, "autograd = finite differences");

  examples::section("d/dx sum(x*w) = w and d/dw sum(x*w) = x");
  Tensor x = f64(xs).requires_grad_(), w = f64(ws).requires_grad_();
  (x * w).sum().backward();
  auto gx = x.grad()->to_vector<double>(), gw = w.grad()->to_vector<double>();
  std::cout << "  x.grad() = " << list(gx) << "\n  w.grad() = " << list(gw) << "\n";
  claims.close(gx, ws, 0, 0, "x.grad() = w");
  claims.close(gw, xs, 0, 0, "w.grad() = x");
  auto wt = f64(ws);
  claims.close(gx, numeric_gradient([&](const Tensor& t) { return (t * wt).sum(); }, xs), 1e-6, 1e-6,
               "x.grad() = finite differences");

  examples::section("d/dx sum(sigmoid(x)) = s(1 - s)");
  auto sig = [](const Tensor& t) { return t.sigmoid().sum(); };
  auto gs = autograd_gradient(sig, xs);
  std::vector<double> hand_s;
  for (double v : xs) {
    double s = 1 / (1 + std::exp(-v));
    hand_s.push_back(s * (1 - s));
  }
  std::cout << "  autograd: " << list(gs) << "\n  by hand:  " << list(hand_s) << "\n";
  claims.close(gs, hand_s, 1e-9, 1e-12, "autograd = s(1 - s) (by hand)");
  claims.close(gs, numeric_gradient(sig, xs), 1e-6, 1e-8, "autograd = finite differences");

  examples::section("an MLP 2 -> 8 -> 1 overfits XOR (Adam, binary cross-entropy on logits)");
  Tensor::manual_seed(3);
  tg::nn::Sequential mlp;
  mlp.add(tg::nn::Linear(2, 8)).add([](const Tensor& t) { return t.tanh(); }).add(tg::nn::Linear(8, 1));
  tg::optim::Adam opt(mlp.parameters(), 0.1);
  Tensor in = Tensor::from_vector(std::vector<float>{0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  Tensor target = Tensor::from_vector(std::vector<float>{0, 1, 1, 0}, {4, 1});
  double first = 0, last = 0;
  const int steps = 40;
  for (int step = 1; step <= steps; ++step) {
    opt.zero_grad();
    Tensor loss = tg::nn::binary_crossentropy_with_logits(mlp(in), target).mean();
    loss.backward();
    opt.step_and_realize({loss});
    last = loss.item<float>();
    if (step == 1) first = last;
    if (step == 1 || step % 20 == 0) std::cout << "  step " << step << "  loss " << last << "\n";
  }
  std::vector<float> out;
  {
    Tensor::NoGrad no_grad; // evaluation builds no graph to differentiate
    out = mlp(in).sigmoid().to_vector<float>();
  }
  std::cout << "  p(xor) for 00 01 10 11: " << list(examples::doubles(out)) << "\n";
  claims.check(last < 0.05 && last < first, "the loss falls below 0.05",
               "first " + std::to_string(first) + ", last " + std::to_string(last));
  claims.check(out[0] < 0.5f && out[1] > 0.5f && out[2] > 0.5f && out[3] < 0.5f,
               "all four XOR cases are right");

  examples::section("a Huber loss from primitives: where(|d| <= 1, d^2 / 2, |d| - 1/2), mean");
  const double delta = 1;
  const std::vector<double> pred{-2.5, -0.3, 0.4, 1.7, 3.0}, truth{0.0, 0.2, -0.1, 0.1, 0.5};
  Tensor t_truth = f64(truth);
  auto huber = [&](const Tensor& p) {
    Tensor d = p - t_truth, a = d.abs();
    return a.le(a.const_like(delta)).where(d * d * 0.5, (a - 0.5 * delta) * delta).mean();
  };
  auto gh = autograd_gradient(huber, pred);
  std::vector<double> hand_h;
  for (size_t i = 0; i < pred.size(); ++i)
    hand_h.push_back(std::clamp(pred[i] - truth[i], -delta, delta) / double(pred.size()));
  std::cout << "  d = pred - truth = [-2.5, -0.5, 0.5, 1.6, 2.5]\n  autograd: " << list(gh)
            << "\n  by hand clip(d, -1, 1) / n: " << list(hand_h) << "\n";
  claims.close(gh, hand_h, 1e-12, 1e-12, "autograd = clip(d, -1, 1) / n (by hand)");
  claims.close(gh, numeric_gradient(huber, pred), 1e-6, 1e-8, "autograd = finite differences");
  return claims.finish("03_autograd");
}
