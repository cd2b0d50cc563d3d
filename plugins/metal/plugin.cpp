// Entry point of the Metal plugin (docs/metal.md), built on the SDK's adaptor, Apple only. The
// compiler (MSL source from the SDK renderer) is plain C++; the device is device.mm.
#include "compiler.hpp"
#include "device.hpp"

#include <tg/sdk/adaptor.hpp>

namespace tg::metal {
namespace {

class Plugin final : public sdk::Plugin {
public:
  sdk::PluginInfo info() const override {
    return {"metal", "0.1.0", "tg_device_metal: Apple GPUs through Metal"};
  }
  int32_t device_count() override { return metal_device_count(); }
  std::unique_ptr<sdk::Device> open_device(int32_t index) override { return open_metal_device(index); }
  sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; }

private:
  Compiler compiler_;
};

} // namespace
} // namespace tg::metal

TG_SDK_DEFINE_PLUGIN(tg::metal::Plugin)
