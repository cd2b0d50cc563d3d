// Entry point of the Vulkan plugin: VULKAN:N over the physical devices that can compute
// (instance.hpp), and the GLSL -> SPIR-V compiler. The SDK's adaptor builds the ABI table.
#include "compiler.hpp"
#include "device.hpp"
#include "instance.hpp"

#include <tg/sdk/adaptor.hpp>

namespace tg::vulkan {
namespace {

class Plugin final : public sdk::Plugin {
public:
  sdk::PluginInfo info() const override {
    return {"vulkan", TG_VULKAN_PLUGIN_VERSION,
            "tg_device_vulkan " TG_VULKAN_PLUGIN_VERSION ", Vulkan headers " +
                std::to_string(VK_HEADER_VERSION) + ", GLSL via static shaderc"};
  }
  int32_t device_count() override { return int32_t(Instance::get()->devices().size()); }
  std::unique_ptr<sdk::Device> open_device(int32_t index) override {
    auto instance = Instance::get();
    VkPhysicalDevice physical = instance->devices()[size_t(index)];
    return std::make_unique<Device>(std::move(instance), physical);
  }
  sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; }

private:
  Compiler compiler_;
};

} // namespace
} // namespace tg::vulkan

TG_SDK_DEFINE_PLUGIN(tg::vulkan::Plugin)
