// The golden kernel corpus: kernels the core's own codegen produces for a device (elementwise,
// broadcast, reductions, matmul, conv, gated loads, every dtype, many buffers, vector code when the
// device has vector registers), plus a few built by hand for what codegen does not emit yet (scalar
// arguments, local memory and barriers, an empty grid). `tg conform` launches them and compares
// with the SDK's reference interpreter; the renderer tests read a stored copy (tests/data/corpus,
// written by `tg corpus`) so their golden text does not move when codegen changes.
#pragma once

#include <tg/abi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tg::conform {

struct CorpusBuffer {
  tg_dtype dtype = TG_DTYPE_FLOAT32;
  uint64_t elements = 0;
};

struct CorpusKernel {
  std::string name;          // unique within the corpus, usable as a file name
  std::string origin;        // how it was made, e.g. "codegen: (a + b).relu()" or "hand-built: ..."
  std::vector<std::byte> ir; // serialized kernel IR
  std::array<uint32_t, 3> global{1, 1, 1};
  std::array<uint32_t, 3> local{1, 1, 1};
  std::vector<CorpusBuffer> buffers; // by DEFINE_GLOBAL index: [0] is the output for codegen kernels
  std::vector<tg_scalar_arg> scalars;
  uint64_t features = 0;   // TG_FEATURE_* the kernel needs (LOCAL_MEMORY, BARRIER)
  uint64_t dtype_mask = 0; // TG_DTYPE_BIT of every dtype its buffers, scalars and values use
};

// Every corpus kernel, lowered for a device with these properties (compute_units, max_global_size
// and vector_bytes steer codegen the way they do when realizing). Needs no device and no plugin.
std::vector<CorpusKernel> golden_corpus(const tg_device_properties& props);

// The properties the stored corpus is generated with: a generic device with 32-byte vectors, 4
// compute units, locals and barriers, every dtype.
tg_device_properties reference_properties();

// Stored form: <dir>/<name>.tgir (the IR bytes) and <dir>/manifest.json (everything else).
void write_corpus(const std::filesystem::path& dir, const std::vector<CorpusKernel>& kernels);
// Throws std::runtime_error naming the file and what is wrong.
std::vector<CorpusKernel> read_corpus(const std::filesystem::path& dir);

} // namespace tg::conform
