#include "memory.hpp"

#include <algorithm>
#include <cstring>

namespace tg::cuda {

Memory::Memory(CUcontext context, Stream& stream) : context_(context), stream_(stream) {
  const Driver& d = driver();
  check(d.cuMemAllocHost(&staging_, kStagingBytes), "cuMemAllocHost(staging)");
  for (CUevent& e : staging_done_)
    check(d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate(staging)");
}

Memory::~Memory() {
  const Driver& d = driver();
  stream_.drain();
  trim();
  for (CUevent e : staging_done_)
    if (e) d.cuEventDestroy(e);
  if (staging_) d.cuMemFreeHost(staging_);
}

uint64_t Memory::rounded(uint64_t size) { return sdk::BlockCache<CUdeviceptr>::rounded(size); }

CUdeviceptr Memory::allocate(uint64_t size) {
  const uint64_t bytes = rounded(size);
  if (auto cached = cache_.take(bytes)) return *cached;
  const Driver& d = driver();
  CUdeviceptr ptr = 0;
  CUresult r = d.cuMemAlloc(&ptr, bytes);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && !cache_.empty()) { // the cache holds what we need: give it back
    stream_.drain();
    trim();
    r = d.cuMemAlloc(&ptr, bytes);
  }
  check(r, "cuMemAlloc of " + std::to_string(bytes) + " bytes");
  return ptr;
}

void Memory::release(CUdeviceptr ptr, uint64_t size) {
  // Stream order keeps this safe: work queued before the release finishes before any later
  // allocation's work on the same (single) stream can touch the block.
  cache_.give(rounded(size), ptr);
}

void Memory::trim() {
  const Driver& d = driver();
  for (CUdeviceptr ptr : cache_.drain()) d.cuMemFree(ptr);
}

void Memory::upload(CUdeviceptr dst, const void* src, uint64_t size) {
  const Driver& d = driver();
  const uint64_t half = kStagingBytes / 2;
  const auto* from = static_cast<const unsigned char*>(src);
  int turn = 0;
  for (uint64_t done = 0; done < size; done += half, turn ^= 1) {
    const uint64_t n = std::min(half, size - done);
    auto* stage = static_cast<unsigned char*>(staging_) + turn * half;
    check(d.cuEventSynchronize(staging_done_[turn]), "cuEventSynchronize(staging)"); // its last copy is done
    std::memcpy(stage, from + done, n);
    check(d.cuMemcpyHtoDAsync(dst + done, stage, n, stream_.get()), "cuMemcpyHtoDAsync");
    check(d.cuEventRecord(staging_done_[turn], stream_.get()), "cuEventRecord(staging)");
  }
  // The staging stays in use until the copies finish; the caller's memory is already free.
  // A later upload waits on the events above; download and destruction synchronize the stream.
}

void Memory::download(void* dst, CUdeviceptr src, uint64_t size) {
  const Driver& d = driver();
  auto* to = static_cast<unsigned char*>(dst);
  for (uint64_t done = 0; done < size; done += kStagingBytes) {
    const uint64_t n = std::min(kStagingBytes, size - done);
    check(d.cuMemcpyDtoHAsync(staging_, src + done, n, stream_.get()), "cuMemcpyDtoHAsync");
    stream_.wait("cuStreamSynchronize(download)");
    std::memcpy(to + done, staging_, n);
  }
}

Buffer::Buffer(Memory& memory, uint64_t size, uint64_t alignment)
    : memory_(memory), size_(sdk::AlignedBlock::block_size(size, alignment, kNaturalAlignment)),
      block_(memory.allocate(size_)), ptr_(sdk::AlignedBlock::start(block_, alignment, kNaturalAlignment)) {}

Buffer::Buffer(Imported, Memory& memory, CUdeviceptr address, uint64_t size)
    : memory_(memory), size_(size), ptr_(address) {}

Buffer::~Buffer() {
  if (block_ != 0) {
    memory_.release(block_, size_);
    return;
  }
  // Imported: the owner may reuse the memory once its release runs, right after this; let the
  // stream finish with it first (the host synchronizes before freeing, so this rarely waits).
  memory_.stream().drain();
}

void Buffer::copy_from_host(uint64_t offset, const void* src, uint64_t size) {
  make_current(memory_.context());
  memory_.upload(ptr_ + offset, src, size);
}

void Buffer::copy_to_host(uint64_t offset, void* dst, uint64_t size) {
  make_current(memory_.context());
  memory_.download(dst, ptr_ + offset, size);
}

void Buffer::copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) {
  const Driver& d = driver();
  make_current(memory_.context());
  const CUdeviceptr from = static_cast<Buffer&>(src).device_address() + src_offset;
  const CUdeviceptr to = ptr_ + offset;
  if (from + size <= to || to + size <= from) {
    check(d.cuMemcpyDtoDAsync(to, from, size, memory_.stream().get()), "cuMemcpyDtoDAsync");
    return;
  }
  // Overlapping ranges of one buffer: through a temporary block (the driver's copy is undefined there).
  const CUdeviceptr temp = memory_.allocate(size);
  check(d.cuMemcpyDtoDAsync(temp, from, size, memory_.stream().get()), "cuMemcpyDtoDAsync(to temporary)");
  check(d.cuMemcpyDtoDAsync(to, temp, size, memory_.stream().get()), "cuMemcpyDtoDAsync(from temporary)");
  memory_.release(temp, size);
}

} // namespace tg::cuda
