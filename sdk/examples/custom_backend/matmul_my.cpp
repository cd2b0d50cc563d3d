// A float32 matmul on MY, checked against the host. The core runs it on MY's matrix unit
// (my.m4n4k4.f32, compiler.cpp): DEBUG=3 shows the generated C with its `/* my.m4n4k4 */` lines.
#include <tinygrad/tinygrad.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  using tg::Tensor;
  const int64_t m = 32, k = 48, n = 16; // multiples of the unit's 4 x 4 x 4, not square
  // Small integers: every sum is exact in float32, whatever order the kernel adds in.
  std::vector<float> a(size_t(m * k)), b(size_t(k * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) - 2;
  Tensor ta = Tensor::from_vector(a, {m, k}, {}, "MY");
  Tensor tb = Tensor::from_vector(b, {k, n}, {}, "MY");
  std::vector<float> c = ta.matmul(tb).to_vector<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t l = 0; l < k; ++l) want += a[size_t(i * k + l)] * b[size_t(l * n + j)];
      wrong += c[size_t(i * n + j)] != want;
    }
  std::printf("%lldx%lld @ %lldx%lld on MY: %s\n", (long long)m, (long long)k, (long long)k, (long long)n,
              wrong ? "WRONG" : "correct");
  return wrong ? 1 : 0;
}
