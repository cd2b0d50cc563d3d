// libFuzzer target: tg::parse_idx (IDX header and data, gzip inflation with its size limit) on
// arbitrary bytes. Any exception other than tg::DatasetError, a crash, or a sanitizer report is a
// bug. The first input byte picks the mode: odd, the rest is gzip-compressed here first, so the
// inflate path sees valid streams of any content (long runs, lying headers, bombs in miniature);
// even, the rest is parsed as it is (raw IDX, or broken gzip). Accepted arrays are checked against
// their shape. Build and run: see CMakeLists.txt in this folder.
#include "kernel/tensor/datasets.hpp"

#include <zlib.h>

#include <cstdlib>
#include <vector>

namespace {

std::vector<std::byte> gzip(const uint8_t* data, size_t size) {
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::vector<std::byte> out(deflateBound(&zs, uLong(size)) + 32);
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = uInt(size);
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<std::byte> input;
  if (data[0] & 1)
    input = gzip(data + 1, size - 1);
  else
    input.assign(reinterpret_cast<const std::byte*>(data + 1),
                 reinterpret_cast<const std::byte*>(data + size));
  try {
    tg::IdxArray a = tg::parse_idx(input, "fuzz");
    uint64_t elements = 1;
    for (int64_t d : a.shape) {
      if (d < 0) std::abort();
      elements *= uint64_t(d);
    }
    // itemsize 1, 2, 4 or 8 (dtype.cpp is not linked, so derived from the data)
    if (elements == 0 ? !a.data.empty() : a.data.size() % elements != 0) std::abort();
    uint64_t itemsize = elements ? a.data.size() / elements : 1;
    if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8) std::abort();
  } catch (const tg::DatasetError&) {
  }
  return 0;
}
