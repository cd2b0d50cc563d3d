#include "buffer.hpp"

#include "unwritten.hpp"

namespace tg::amd {

void Buffer::copy_from_host(uint64_t, const void*, uint64_t) { unwritten("copy_from_host"); }

void Buffer::copy_to_host(uint64_t, void*, uint64_t) { unwritten("copy_to_host"); }

void Buffer::copy_from(uint64_t, sdk::Buffer&, uint64_t, uint64_t) { unwritten("copy_from"); }

} // namespace tg::amd
