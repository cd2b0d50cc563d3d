// Vulkan results -> the SDK's typed errors: out-of-memory results become RESOURCE_EXHAUSTED (so
// the host may free and retry), a missing driver UNAVAILABLE, anything else INTERNAL; every
// message names the Vulkan call that failed and its result.
#pragma once

#include <tg/sdk/plugin.hpp>

#include <vulkan/vulkan.h>

#include <string>

namespace tg::vulkan {

const char* result_name(VkResult result);
tg_error_code error_code(VkResult result);

// Throws PluginError when `result` is not VK_SUCCESS; `what` names the call ("vkCreateBuffer").
inline void check(VkResult result, const std::string& what) {
  if (result == VK_SUCCESS) return;
  throw sdk::PluginError(error_code(result), what + " failed: " + result_name(result));
}

} // namespace tg::vulkan
