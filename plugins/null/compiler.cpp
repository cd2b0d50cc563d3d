#include "compiler.hpp"

namespace tg::null {

// TODO(copy): render request.ir (a C-family renderer or the LLVM renderer from the SDK), compile it
// for request.target ("" = your default), and return the payload, the resolved target (spelled as
// Device::target() spells it: by default the device's properties().arch), the source when
// request.want_source, and the compiler log. An op or dtype the target lacks is UNIMPLEMENTED.
sdk::CompileOutput Compiler::compile(const sdk::CompileRequest&) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "null plugin: compile is not written yet");
}

// TODO(copy): a string that changes whenever compile() would make other payloads for `target`:
// compiler/toolkit version, resolved target, flags. The adaptor adds the plugin name and version.
std::string Compiler::cache_key(const std::string&) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "null plugin: cache_key is not written yet");
}

} // namespace tg::null
