#include "memory.hpp"

namespace tg::amd {
namespace {

hip::DevicePtr at(uint64_t address) { return reinterpret_cast<hip::DevicePtr>(address); }

} // namespace

Memory::~Memory() {
  const HipRuntime& h = hip_runtime();
  h.hipSetDevice(device_); // no check: a destructor must not throw
  h.hipStreamSynchronize(stream_);
  trim();
}

void Memory::bind() const { check(hip_runtime().hipSetDevice(device_), "hipSetDevice"); }

hip::DevicePtr Memory::allocate(uint64_t size) {
  const uint64_t bytes = cache_.rounded(size);
  if (auto block = cache_.take(bytes)) return *block;
  const HipRuntime& h = hip_runtime();
  hip::DevicePtr block = nullptr;
  hip::Error e = h.hipMalloc(&block, bytes);
  if (e == hip::kOutOfMemory && !cache_.empty()) { // the cache holds what we need: give it back
    h.hipStreamSynchronize(stream_);
    trim();
    e = h.hipMalloc(&block, bytes);
  }
  check(e, "hipMalloc of " + std::to_string(bytes) + " bytes");
  return block;
}

void Memory::release(hip::DevicePtr block, uint64_t size) {
  // Stream order keeps this safe: work queued before the release finishes before any later
  // allocation's work on the same (single) stream can touch the block.
  cache_.give(cache_.rounded(size), block);
}

void Memory::trim() {
  const HipRuntime& h = hip_runtime();
  for (hip::DevicePtr block : cache_.drain()) h.hipFree(block);
}

void Memory::upload(hip::DevicePtr dst, const void* src, uint64_t size) {
  const HipRuntime& h = hip_runtime();
  check(h.hipMemcpyAsync(dst, src, size, hip::kMemcpyHostToDevice, stream_),
        "hipMemcpyAsync(host to device)");
  check(h.hipStreamSynchronize(stream_), "hipStreamSynchronize(upload)"); // src may be reused on return
}

void Memory::download(void* dst, hip::DevicePtr src, uint64_t size) {
  const HipRuntime& h = hip_runtime();
  check(h.hipMemcpyAsync(dst, src, size, hip::kMemcpyDeviceToHost, stream_),
        "hipMemcpyAsync(device to host)");
  check(h.hipStreamSynchronize(stream_), "hipStreamSynchronize(download)");
}

void Memory::copy(hip::DevicePtr dst, hip::DevicePtr src, uint64_t size) {
  check(hip_runtime().hipMemcpyAsync(dst, src, size, hip::kMemcpyDeviceToDevice, stream_),
        "hipMemcpyAsync(device to device)");
}

Buffer::Buffer(Memory& memory, uint64_t size, uint64_t alignment)
    : memory_(memory), size_(sdk::AlignedBlock::block_size(size, alignment, kNaturalAlignment)),
      block_(memory.allocate(size_)),
      address_(sdk::AlignedBlock::start(reinterpret_cast<uint64_t>(block_), alignment, kNaturalAlignment)) {}

Buffer::~Buffer() { memory_.release(block_, size_); }

void Buffer::copy_from_host(uint64_t offset, const void* src, uint64_t size) {
  memory_.bind();
  memory_.upload(at(address_ + offset), src, size);
}

void Buffer::copy_to_host(uint64_t offset, void* dst, uint64_t size) {
  memory_.bind();
  memory_.download(dst, at(address_ + offset), size);
}

void Buffer::copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) {
  memory_.bind();
  const uint64_t from = static_cast<Buffer&>(src).device_address() + src_offset, to = address_ + offset;
  if (from + size <= to || to + size <= from) {
    memory_.copy(at(to), at(from), size);
    return;
  }
  // Overlapping ranges of one buffer: through a temporary block (HIP's copy is undefined there).
  const hip::DevicePtr temp = memory_.allocate(size);
  memory_.copy(temp, at(from), size);
  memory_.copy(at(to), temp, size);
  memory_.release(temp, size);
}

} // namespace tg::amd
