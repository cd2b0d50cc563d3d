// Entry point of the null plugin: a skeleton to copy (README.md), built on the SDK's adaptor.
// Every method says what a real device does there; all of them answer UNIMPLEMENTED, and
// device_count answers UNAVAILABLE, so the host lists this plugin as "no hardware", not broken.
#include "compiler.hpp"
#include "device.hpp"

#include <tg/sdk/adaptor.hpp>

namespace tg::null {
namespace {

class Plugin final : public sdk::Plugin {
public:
  // TODO(copy): your plugin's short name (the file is libtg_device_<name>.so), version and what it
  // was built with (compiler, driver or toolkit versions, build type).
  sdk::PluginInfo info() const override { return {"null", "0.1.0", "tg_device_null: a skeleton plugin"}; }

  // TODO(copy): load the driver (dlopen it; never link a vendor library the host machine may lack)
  // and count the devices. Without hardware or driver throw UNAVAILABLE saying what is missing.
  int32_t device_count() override {
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "null plugin: no hardware; this is a template");
  }

  // TODO(copy): open device `index` (0 <= index < device_count(), checked by the adaptor).
  std::unique_ptr<sdk::Device> open_device(int32_t index) override { return std::make_unique<Device>(index); }

  sdk::Compiler& compiler() override { return compiler_; }

private:
  Compiler compiler_;
};

} // namespace
} // namespace tg::null

// The one exported symbol, tg_plugin_query_v1; the adaptor fills the whole function table.
TG_SDK_DEFINE_PLUGIN(tg::null::Plugin)
