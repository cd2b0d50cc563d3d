// A caching allocator's free lists for GPU plugins: freed device blocks wait, keyed by their rounded
// size, for the next allocation of that size (a training step frees and re-allocates the same sizes
// every iteration, and the driver's free is synchronous and slow). The plugin owns the blocks:
// it allocates on a miss and frees what drain() hands back (on out-of-memory, and at device close).
// Not thread-safe: one per device, and the host serializes calls per device (abi.h). Also here:
// AlignedBlock, where a buffer of a stricter alignment starts inside such a block.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tg::sdk {

template <class Block> class BlockCache {
public:
  // Sizes are rounded up (to 512 bytes, or to 2 MiB above 1 MiB) so near sizes share a list.
  static uint64_t rounded(uint64_t size) {
    const uint64_t step = size > (1ull << 20) ? (2ull << 20) : 512;
    return std::max<uint64_t>(step, (size + step - 1) / step * step);
  }
  // A cached block of exactly `rounded_size` bytes, removed from the cache; nullopt on a miss.
  std::optional<Block> take(uint64_t rounded_size) {
    auto it = free_.find(rounded_size);
    if (it == free_.end()) return std::nullopt;
    Block block = it->second;
    free_.erase(it);
    return block;
  }
  // Returns a block of `rounded_size` bytes to the cache.
  void give(uint64_t rounded_size, Block block) { free_.emplace(rounded_size, block); }
  // Every cached block, the cache emptied: the caller frees them.
  std::vector<Block> drain() {
    std::vector<Block> blocks;
    blocks.reserve(free_.size());
    for (const auto& entry : free_) blocks.push_back(entry.second);
    free_.clear();
    return blocks;
  }
  bool empty() const { return free_.empty(); }
  size_t size() const { return free_.size(); }

private:
  std::multimap<uint64_t, Block> free_; // rounded size -> block
};

// A buffer that must start at `alignment` (0 or a power of two) inside a block from an allocator
// whose blocks start at multiples of `natural` (cuMemAlloc's and hipMalloc's 256 bytes): above
// `natural` the block is over-allocated by `alignment` and the buffer starts at the first aligned
// address in it.
struct AlignedBlock {
  static uint64_t block_size(uint64_t size, uint64_t alignment, uint64_t natural) {
    return alignment > natural ? size + alignment : size;
  }
  static uint64_t start(uint64_t block, uint64_t alignment, uint64_t natural) {
    return alignment > natural ? (block + alignment - 1) / alignment * alignment : block;
  }
};

} // namespace tg::sdk
