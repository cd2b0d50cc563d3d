// safetensors: save and load named tensors in the safetensors format
// (https://github.com/huggingface/safetensors, "Format" section):
//   8 bytes  little-endian uint64 N, the header size
//   N bytes  UTF-8 JSON: {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [2, 3],
//            "data_offsets": [begin, end]}, ...}
//   rest     the byte buffer; offsets are relative to its start, end exclusive; each tensor is
//            contiguous, little-endian, row-major; the tensors cover the buffer with no gap or overlap.
// Dtype codes: BOOL U8 I8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64 (others, e.g. F8_E4M3, are
// rejected as unsupported).
// Every malformed input raises SafetensorsError naming the file and the problem.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tg {

struct SafetensorsError : Error {
  using Error::Error;
};

// One tensor described by a header: byte range [begin, end) relative to the data buffer.
struct SafetensorsEntry {
  std::string name;
  DType dtype;
  Dims shape;
  uint64_t begin = 0, end = 0;
};

// A parsed and validated file; no tensor is created.
struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::vector<SafetensorsEntry> entries; // in header order
  uint64_t header_size = 0;              // N
  uint64_t data_start = 0;               // 8 + N: where the buffer begins in the file
  uint64_t data_size = 0;                // bytes of the buffer
};

// Parses and validates the whole file image (header and buffer size/coverage). `name` only labels
// error messages.
SafetensorsFile parse_safetensors(std::span<const std::byte> file, const std::string& name = "<memory>");

// The safetensors dtype code ("F32") of a dtype; throws SafetensorsError for one with no code.
std::string safetensors_dtype_code(DType dt);

// Writes the tensors (realizing them) and the metadata to `path` through a temporary file in the
// same directory that is fsynced and renamed over `path` (then the directory is fsynced), so
// readers never see a partial file, nor does `path` after a crash. The header is
// padded with spaces to a multiple of 8 bytes, as the reference implementation does; tensors are
// laid out in name order.
void safe_save(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
               const std::map<std::string, std::string>& metadata = {});

// Reads every tensor onto `device` ("" = the default device). A path that is not a regular file
// (a directory, FIFO, device) is refused before anything is read.
std::map<std::string, Tensor> safe_load(const std::filesystem::path& path, const std::string& device = "");

// Only the "__metadata__" strings (the file is still fully validated).
std::map<std::string, std::string> safe_load_metadata(const std::filesystem::path& path);

} // namespace tg
