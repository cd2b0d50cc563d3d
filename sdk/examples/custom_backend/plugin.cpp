// Entry point of the `my` plugin: one device, MY:0, and the C compiler. The SDK's adaptor builds
// the whole ABI table from these classes.
#include "compiler.hpp"
#include "device.hpp"

#include <tg/sdk/adaptor.hpp>

namespace my {

class Plugin final : public tg::sdk::Plugin {
public:
  tg::sdk::PluginInfo info() const override {
    return {"my", "0.1.0", "tg_device_my: the SDK's out-of-tree example (C renderer + system C compiler)"};
  }
  int32_t device_count() override { return 1; }
  std::unique_ptr<tg::sdk::Device> open_device(int32_t) override { return std::make_unique<Device>(); }
  tg::sdk::Compiler& compiler() override { return compiler_; }

private:
  Compiler compiler_;
};

} // namespace my

TG_SDK_DEFINE_PLUGIN(my::Plugin)
