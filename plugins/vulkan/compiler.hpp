// Kernel IR -> GLSL 450 compute (the SDK's glsl dialect) -> SPIR-V for Vulkan 1.1 by shaderc (the
// static shaderc_combined) -> checked by the SPIRV-Tools validator. The payload (payload.hpp) is
// the SPIR-V with the push-constant and binding layout. Needs no device; thread-safe.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tg::vulkan {

// The one target: SPIR-V is portable; what a device can run is declared by its dtype_mask.
inline constexpr const char* kTarget = "spirv1.3-vulkan1.1";

// GLSL compute source -> validated SPIR-V words. A compile error is PluginError(INTERNAL) whose
// message carries glslang's first error and whose log holds all of them and the source; invalid
// SPIR-V is PluginError(INTERNAL) with the validator's message.
std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& name);
// Throws PluginError(INVALID_ARGUMENT) with the validator's message when `spirv` is not a valid
// Vulkan 1.1 module.
void validate_spirv(const std::vector<uint32_t>& spirv, const std::string& name);

class Compiler final : public sdk::Compiler {
public:
  sdk::CompileOutput compile(const sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace tg::vulkan
