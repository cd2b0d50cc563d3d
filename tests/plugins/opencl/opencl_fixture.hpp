// What the OpenCL and qcom plugin tests share: the whole executable reports "skipped: unavailable"
// (exit 77) when the plugin under test has no device here, so a machine without an OpenCL runtime
// never counts these tests as passed.
#pragma once

#include "plugin_fixture.hpp"

#include <cstdio>
#include <cstdlib>

namespace tgtest {

struct RequireDevice {
  RequireDevice() {
    int32_t count = 0;
    Status s = take(api().device_count(&count));
    if (s.code == TG_ERROR_UNAVAILABLE || (s.ok() && count == 0)) {
      std::printf("skipped: unavailable: %s\n", s.ok() ? "no device" : s.message.c_str());
      std::fflush(stdout);
      std::_Exit(77);
    }
    BOOST_REQUIRE_MESSAGE(s.ok(), "device_count failed: " + s.message);
  }
};

inline bool mentions(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// out[i] = a[i] + b[i] over n float32 elements, one element per work item, local size free.
inline tg::sdk::KernelBuilder add_kernel(tg_dtype dt = TG_DTYPE_FLOAT32) {
  tg::sdk::KernelBuilder k("add");
  auto out = k.global(0, dt), a = k.global(1, dt), b = k.global(2, dt);
  auto i = k.add(k.mul(k.group_id(0), k.var(0, TG_DTYPE_INT32)), k.local_id(0));
  k.store(k.index(out, i), k.add(k.load(k.index(a, i)), k.load(k.index(b, i))));
  return k;
}

} // namespace tgtest
