// What every Vulkan plugin suite shares: the plugin loaded with dlopen (plugin_fixture.hpp), and a
// global fixture that ends the whole program with "skipped: unavailable" (exit 77) when this
// machine has no Vulkan driver or device, so a missing runtime is never counted as passed.
#pragma once

#include "plugin_fixture.hpp"

#include <cstdio>
#include <cstdlib>

namespace tgtest {

struct RequireVulkanDevice {
  RequireVulkanDevice() {
    int32_t count = 0;
    Status s = take(api().device_count(&count));
    if (s.code == TG_ERROR_UNAVAILABLE || (s.ok() && count == 0)) {
      std::printf("skipped: unavailable: %s\n", s.message.c_str());
      std::fflush(stdout);
      std::_Exit(77);
    }
  }
};

} // namespace tgtest
