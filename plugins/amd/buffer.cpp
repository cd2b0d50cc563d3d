#include "buffer.hpp"

namespace tg::amd {
namespace {

[[noreturn]] void unimplemented(const char* what) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                         std::string("amd plugin: ") + what + " is not written yet (docs/amd.md)");
}

} // namespace

void Buffer::copy_from_host(uint64_t, const void*, uint64_t) { unimplemented("copy_from_host"); }

void Buffer::copy_to_host(uint64_t, void*, uint64_t) { unimplemented("copy_to_host"); }

void Buffer::copy_from(uint64_t, sdk::Buffer&, uint64_t, uint64_t) { unimplemented("copy_from"); }

} // namespace tg::amd
