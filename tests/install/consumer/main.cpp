// Computes a small graph on the default device through the installed libtg, including only the
// public header, and checks it against values worked out by hand; counts its kernels with
// tg::LaunchCounter, reads the schedule through tg::summarize and tg::inspect_kernel. Prints where
// libtg found its plugin. Built twice by install_package.cmake: with find_package and with
// pkg-config's flags.
#include <tinygrad/tinygrad.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {
int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("WRONG: %s\n", what.c_str());
    ++failures;
  }
}
} // namespace

int main() {
  tg::Tensor a = tg::Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  tg::Tensor b = tg::Tensor::from_vector(std::vector<float>{10, 20, 30}, {3});
  // (a * 2 + b).sum(axis 1): row 0: 2+10 + 4+20 + 6+30 = 72; row 1: 8+10 + 10+20 + 12+30 = 90
  tg::Tensor expr = (a * 2.0 + b).sum({1});

  // What realize() will run: one fused kernel (the multiply and add fuse into the sum).
  std::vector<tg::ScheduleItem> items = expr.schedule();
  std::string summary = tg::summarize(items);
  check(summary.rfind("1 kernel:\n  kernel 0: (2,) float on ", 0) == 0 &&
            summary.find("reduce SUM over axes (1)") != std::string::npos,
        "summarize(schedule) says one (2,) float kernel summing axis 1, got:\n" + summary);
  if (items.size() == 1) {
    tg::KernelReport report = tg::inspect_kernel(items[0]);
    check(!report.name.empty() && !report.ir.empty(), "inspect_kernel reports the kernel's name and IR");
  }

  size_t kernels = 0;
  std::vector<float> got;
  {
    tg::LaunchCounter counter;
    got = expr.to_vector<float>();
    kernels = counter.kernels();
  }
  check(kernels == 1, "LaunchCounter counted " + std::to_string(kernels) + " kernels, expected 1");

  const std::vector<float> want{72, 90};
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = std::fabs(got[i] - want[i]) < 1e-5f;
  check(ok, "(a * 2 + b).sum(1) == [72, 90]");
  std::printf("device %s: [%g, %g] in %zu kernel %s\n", tg::default_device().c_str(),
              got.size() > 0 ? got[0] : -1.0, got.size() > 1 ? got[1] : -1.0, kernels,
              failures == 0 ? "ok" : "WRONG");
  return failures == 0 ? 0 : 1;
}
