// The answer of every AMD runtime entry that is not written yet (devices, buffers, launches).
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <string>

namespace tg::amd {

[[noreturn]] inline void unwritten(const char* what) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                         std::string("amd plugin: ") + what + " is not written yet (docs/amd.md)");
}

} // namespace tg::amd
