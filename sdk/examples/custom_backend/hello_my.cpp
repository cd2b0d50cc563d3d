// An application that uses the MY device through the installed library: the seeds' capstone.
// Run with TG_PLUGIN_PATH=<this build folder> so the host finds libtg_device_my.so.
#include <tinygrad/tinygrad.hpp>

#include <cstdio>
#include <vector>

int main() {
  using tg::Tensor;
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}, {}, "MY");
  Tensor b = Tensor::from_vector(std::vector<float>{4, 5, 6}, {3}, {}, "MY");
  std::vector<float> c = (a + b).to_vector<float>();
  std::printf("on %s: [%g, %g, %g]\n", (a + b).device().c_str(), c[0], c[1], c[2]);
  return c == std::vector<float>{5, 7, 9} ? 0 : 1;
}
