// The OpenCL plugin skeleton: a tg::sdk::Plugin over find_devices/Device/Compiler for one Policy.
// A concrete plugin derives from it with its policy and defines its entry with TG_SDK_DEFINE_PLUGIN
// (plugins/opencl, plugins/qcom).
#pragma once

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/opencl/compiler.hpp>
#include <tg/sdk/opencl/policy.hpp>

namespace tg::sdk::opencl {

class Plugin : public tg::sdk::Plugin {
public:
  explicit Plugin(Policy policy) : policy_(std::move(policy)), compiler_(policy_) {}
  PluginInfo info() const override { return {policy_.plugin, policy_.version, policy_.build_info}; }
  // Enumerates on every call (cheap), so a device that appears later is seen.
  int32_t device_count() override;
  std::unique_ptr<tg::sdk::Device> open_device(int32_t index) override;
  tg::sdk::Compiler& compiler() override { return compiler_; }

private:
  Policy policy_;
  Compiler compiler_; // refers to policy_
};

} // namespace tg::sdk::opencl
