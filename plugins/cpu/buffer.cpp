#include "buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tg::cpu {

Buffer::Buffer(uint64_t size, uint64_t alignment) : size_(size) {
  alignment = std::max<uint64_t>(alignment, kBufferAlignment);
  if (alignment > (uint64_t(1) << 30))
    throw sdk::PluginError(TG_ERROR_RESOURCE_EXHAUSTED,
                           "cannot allocate with alignment " + std::to_string(alignment) + " (over 1 GiB)");
  // aligned_alloc wants a size that is a multiple of the alignment; size 0 still gets real memory.
  uint64_t padded = (std::max<uint64_t>(size, 1) + alignment - 1) / alignment * alignment;
  data_ = static_cast<char*>(std::aligned_alloc(size_t(alignment), size_t(padded)));
  if (data_ == nullptr)
    throw sdk::PluginError(TG_ERROR_RESOURCE_EXHAUSTED,
                           "out of host memory allocating " + std::to_string(size) + " bytes");
}

Buffer::Buffer(Imported, char* data, uint64_t size) : data_(data), size_(size), owned_(false) {
  static char nothing; // data() is never NULL, even for an empty import at address 0
  if (data_ == nullptr) data_ = &nothing;
}

} // namespace tg::cpu
