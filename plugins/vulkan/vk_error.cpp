#include "vk_error.hpp"

namespace tg::vulkan {

const char* result_name(VkResult result) {
  switch (result) {
#define TG_VK_RESULT(r)                                                                                      \
  case r:                                                                                                    \
    return #r;
    TG_VK_RESULT(VK_SUCCESS)
    TG_VK_RESULT(VK_NOT_READY)
    TG_VK_RESULT(VK_TIMEOUT)
    TG_VK_RESULT(VK_INCOMPLETE)
    TG_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    TG_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TG_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    TG_VK_RESULT(VK_ERROR_DEVICE_LOST)
    TG_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    TG_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    TG_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    TG_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    TG_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    TG_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    TG_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TG_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    TG_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    TG_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    TG_VK_RESULT(VK_ERROR_FRAGMENTATION)
    TG_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef TG_VK_RESULT
  default:
    return "VkResult (unnamed)";
  }
}

tg_error_code error_code(VkResult result) {
  switch (result) {
  case VK_ERROR_OUT_OF_HOST_MEMORY:
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
  case VK_ERROR_OUT_OF_POOL_MEMORY:
  case VK_ERROR_FRAGMENTED_POOL:
  case VK_ERROR_FRAGMENTATION:
  case VK_ERROR_TOO_MANY_OBJECTS:
    return TG_ERROR_RESOURCE_EXHAUSTED;
  case VK_ERROR_INCOMPATIBLE_DRIVER:
  case VK_ERROR_INITIALIZATION_FAILED:
    return TG_ERROR_UNAVAILABLE;
  default:
    return TG_ERROR_INTERNAL;
  }
}

} // namespace tg::vulkan
