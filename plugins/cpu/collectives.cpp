#include "collectives.hpp"

#include "buffer.hpp"

#include <algorithm>
#include <cstring>

namespace tg::cpu {
namespace {

constexpr uint64_t kChunkBytes = uint64_t(1)
                                 << 20; // one pool task: big enough to amortize, small enough to spread

char* at(sdk::Buffer* b, uint64_t offset) { return static_cast<Buffer*>(b)->data() + offset; }

// Elements [first, first + n) of every rank. Inputs may be their outputs (in place), never
// another rank's, so each rank's input is read before its output is written within a chunk.
void all_reduce_chunk(const sdk::Collective& c, size_t element, uint64_t first, uint64_t n) {
  const auto& m = c.members;
  auto bytes = [&](uint64_t offset) { return offset + first * element; };
  std::byte* acc = reinterpret_cast<std::byte*>(at(m[0].output, bytes(m[0].output_offset)));
  std::memmove(acc, at(m[0].input, bytes(m[0].input_offset)), n * element);
  for (size_t r = 1; r < m.size(); ++r)
    sdk::reduce_into(c.dtype, c.reduce, acc,
                     reinterpret_cast<std::byte*>(at(m[r].input, bytes(m[r].input_offset))), n);
  for (size_t r = 1; r < m.size(); ++r)
    std::memcpy(at(m[r].output, bytes(m[r].output_offset)), acc, n * element);
}

// dst = src unless they are the same bytes (in place: others may be reading them).
void move(char* dst, const char* src, uint64_t bytes) {
  if (dst != src) std::memmove(dst, src, size_t(bytes));
}

} // namespace

void peer_copy(const sdk::PeerCopy& copy) {
  std::memmove(at(copy.dst, copy.dst_offset), at(copy.src, copy.src_offset),
               size_t(copy.size)); // may be one buffer
}

void run_collective(const sdk::Collective& c, ThreadPool& pool) {
  const auto& m = c.members;
  const size_t element = sdk::dtype_size(c.dtype);
  const uint64_t bytes = c.count * element;
  switch (c.op) {
  case sdk::CollectiveOp::all_reduce: {
    const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / element);
    const uint64_t chunks = (c.count + per_chunk - 1) / per_chunk;
    pool.parallel_for(chunks, [&](uint64_t i) {
      uint64_t first = i * per_chunk;
      all_reduce_chunk(c, element, first, std::min(per_chunk, c.count - first));
    });
    return;
  }
  case sdk::CollectiveOp::all_gather: // an in-place input already sits at its rank's part
    pool.parallel_for(m.size() * m.size(), [&](uint64_t i) {
      size_t out = size_t(i / m.size()), part = size_t(i % m.size());
      move(at(m[out].output, m[out].output_offset + part * bytes), at(m[part].input, m[part].input_offset),
           bytes);
    });
    return;
  case sdk::CollectiveOp::broadcast: {
    const auto& root = m[size_t(c.root)];
    pool.parallel_for(m.size(), [&](uint64_t r) {
      move(at(m[r].output, m[r].output_offset), at(root.input, root.input_offset), bytes);
    });
    return;
  }
  }
}

} // namespace tg::cpu
