// libFuzzer target: tg::parse_safetensors (header JSON reader + layout validation) on arbitrary
// bytes. Any exception other than tg::SafetensorsError, a crash, or a sanitizer report is a bug.
// It also checks invariants of every accepted file (entries inside the buffer, sizes consistent).
// Build and run: see CMakeLists.txt in this folder.
#include "kernel/tensor/state.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    tg::SafetensorsFile f = tg::parse_safetensors(bytes, "fuzz");
    if (f.data_start + f.data_size != size) std::abort();
    uint64_t covered = 0;
    for (const auto& e : f.entries) {
      if (e.begin > e.end || e.end > f.data_size) std::abort();
      covered += e.end - e.begin;
    }
    if (covered != f.data_size) std::abort(); // no gap, no overlap
  } catch (const tg::SafetensorsError&) {
  }
  return 0;
}
