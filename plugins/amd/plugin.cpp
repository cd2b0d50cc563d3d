// Entry point of the AMD plugin (docs/amd.md), built on the SDK's adaptor. device_count asks the
// dlopen'ed HIP runtime; without ROCm it answers UNAVAILABLE with the reason, so the host lists this
// plugin as "no hardware", not broken. Kernels compile to HSACO code objects without a GPU.
#include "compiler.hpp"
#include "device.hpp"
#include "hip.hpp"

#include <tg/sdk/adaptor.hpp>

namespace tg::amd {
namespace {

class Plugin final : public sdk::Plugin {
public:
  sdk::PluginInfo info() const override {
    return {"amd", "0.1.0", "tg_device_amd: AMD GPUs through HIP (dlopen)"};
  }

  int32_t device_count() override { return hip_device_count(); }

  std::unique_ptr<sdk::Device> open_device(int32_t index) override { return std::make_unique<Device>(index); }

  sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; }

private:
  Compiler compiler_;
};

} // namespace
} // namespace tg::amd

// The one exported symbol, tg_plugin_query_v1; the adaptor fills the whole function table.
TG_SDK_DEFINE_PLUGIN(tg::amd::Plugin)
