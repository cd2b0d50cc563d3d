// What every Vulkan plugin suite shares: the plugin loaded with dlopen (plugin_fixture.hpp), and a
// global fixture that ends the whole program with "skipped: unavailable" (exit 77) when this
// machine has no Vulkan driver or device, so a missing runtime is never counted as passed.
#pragma once

#include "plugin_fixture.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tgtest {

// Keeps the Vulkan driver and layer libraries loaded until exit: one that vkDestroyInstance
// unloads shows in LeakSanitizer's reports as "<unknown module>", which no suppression can name
// (vulkan_plugin_test.lsan.supp names the drivers' leaks).
inline void pin_vulkan_libraries() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libvulkan_") != std::string::npos || name.find("libVkLayer") != std::string::npos)
          dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD); // one more reference, never dropped
        return 0;
      },
      nullptr);
}

struct RequireVulkanDevice {
  RequireVulkanDevice() {
    int32_t count = 0;
    Status s = take(api().device_count(&count));
    if (s.code == TG_ERROR_UNAVAILABLE || (s.ok() && count == 0)) {
      std::printf("skipped: unavailable: %s\n", s.message.c_str());
      std::fflush(stdout);
      std::_Exit(77);
    }
    Device opened; // the driver is loaded while a device is open
    pin_vulkan_libraries();
  }
};

} // namespace tgtest
