// The HIP runtime, dlopen'ed: the plugin must load on machines without ROCm (docs/amd.md).
#pragma once

#include <string>

namespace tg::amd {

// How many HIP devices the runtime sees; throws PluginError(TG_ERROR_UNAVAILABLE) saying why not
// (no libamdhip64.so, a missing symbol, or the driver's error) when there are none.
int hip_device_count();

} // namespace tg::amd
