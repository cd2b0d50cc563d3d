// Computes a small graph on the default device through the installed libtg and checks it
// against values worked out by hand. Prints where libtg found its plugin.
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/tensor.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  tg::Tensor a = tg::Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  tg::Tensor b = tg::Tensor::from_vector(std::vector<float>{10, 20, 30}, {3});
  // (a * 2 + b).sum(axis 1): row 0: 2+10 + 4+20 + 6+30 = 72; row 1: 8+10 + 10+20 + 12+30 = 90
  std::vector<float> got = (a * 2.0 + b).sum({1}).to_vector<float>();
  const std::vector<float> want{72, 90};
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = std::fabs(got[i] - want[i]) < 1e-5f;
  std::printf("device %s: [%g, %g] %s\n", tg::default_device().c_str(), got.size() > 0 ? got[0] : -1.0,
              got.size() > 1 ? got[1] : -1.0, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
