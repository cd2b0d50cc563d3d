#include "buffer.hpp"

namespace tg::null {
namespace {

[[noreturn]] void unimplemented(const char* what) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, std::string("null plugin: ") + what + " is not written yet");
}

} // namespace

// TODO(copy): host -> device copy; complete when it returns (the host may reuse `src` at once).
void Buffer::copy_from_host(uint64_t, const void*, uint64_t) { unimplemented("copy_from_host"); }

// TODO(copy): device -> host copy; complete when it returns.
void Buffer::copy_to_host(uint64_t, void*, uint64_t) { unimplemented("copy_to_host"); }

// TODO(copy): device -> device copy; `src` is a Buffer of this plugin on the same device, maybe this
// one with an overlapping range.
void Buffer::copy_from(uint64_t, sdk::Buffer&, uint64_t, uint64_t) { unimplemented("copy_from"); }

} // namespace tg::null
