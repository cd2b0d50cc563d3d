#include "compiler.hpp"

namespace tg::amd {

// for request.target ("" = your default), and return the payload, the resolved target (spelled as
// Device::target() spells it: by default the device's properties().arch), the source when
// request.want_source, and the compiler log. An op or dtype the target lacks is UNIMPLEMENTED.
sdk::CompileOutput Compiler::compile(const sdk::CompileRequest&) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "amd plugin: compile is not written yet (docs/amd.md)");
}

// compiler/toolkit version, resolved target, flags. The adaptor adds the plugin name and version.
std::string Compiler::cache_key(const std::string&) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "amd plugin: cache_key is not written yet (docs/amd.md)");
}

} // namespace tg::amd
