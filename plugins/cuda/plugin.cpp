// The CUDA device (CUDA:0..N-1): NVIDIA GPUs through the driver API (dlopen'ed libcuda.so.1, so the
// plugin loads anywhere and reports UNAVAILABLE with the reason where there is no driver or GPU),
// kernels as CUDA C from the SDK renderer compiled by NVRTC (linked; needs no GPU).
#include "compiler.hpp"
#include "device.hpp"
#include "driver.hpp"

#include <tg/sdk/adaptor.hpp>

#include <nvrtc.h>

namespace tg::cuda {
namespace {

class Plugin final : public sdk::Plugin {
public:
  sdk::PluginInfo info() const override {
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return {"cuda", TG_CUDA_PLUGIN_VERSION,
            "tg_device_cuda " TG_CUDA_PLUGIN_VERSION ", NVRTC " + std::to_string(major) + "." +
                std::to_string(minor) + ", driver API via dlopen(libcuda.so.1)" +
#ifdef NDEBUG
                ", release"
#else
                ", debug"
#endif
    };
  }

  int32_t device_count() override {
    const Driver& d = driver(); // UNAVAILABLE with the reason when there is no driver or GPU
    int count = 0;
    check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "NVIDIA driver present but no GPU");
    return count;
  }

  std::unique_ptr<sdk::Device> open_device(int32_t index) override { return std::make_unique<Device>(index); }
  sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; }

private:
  Compiler compiler_;
};

} // namespace
} // namespace tg::cuda

TG_SDK_DEFINE_PLUGIN(tg::cuda::Plugin)
