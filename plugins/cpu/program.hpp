// Programs: the blob format compile() writes, its validation, loading object code into the
// device's ORC JIT, and launching a loaded kernel on the thread pool.
#pragma once

#include <tg/abi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class JITDylib;
class LLJIT;
} // namespace llvm::orc

namespace tg::cpu {

// The compiled kernel's entry point. Runs work groups gx in [gx_begin, gx_end) of row (gy, gz);
// for each it loops over local ids z, y, x in [0, local_z) x [0, local_y) x [0, local_x).
// buffers[i] = base + offset of buffer argument i; scalars[i] = the 8 raw bytes of scalar i.
using KernelFn = void (*)(void* const* buffers, const int64_t* scalars, int32_t gx_begin, int32_t gx_end,
                          int32_t gy, int32_t gz, int32_t local_x, int32_t local_y, int32_t local_z);

inline constexpr char kBlobMagic[8] = {'T', 'G', 'C', 'P', 'U', 'O', 'B', 'J'};
inline constexpr uint32_t kBlobFormatVersion = 1;

// Everything a blob holds.
struct BlobContents {
  uint32_t llvm_version[3] = {0, 0, 0};
  std::string triple;
  std::string cpu;
  std::string features;
  std::string entry;       // symbol of the KernelFn in the object
  std::string kernel_name; // the IR's name, for messages
  std::vector<tg_dtype> buffer_dtypes;
  std::vector<tg_dtype> scalar_dtypes;
  std::vector<char> object; // relocatable ELF object
};

std::vector<std::byte> encode_blob(const BlobContents& blob);
// Validates and decodes; anything truncated, corrupt or foreign throws INVALID_ARGUMENT.
BlobContents decode_blob(const void* data, size_t size);

// One ORC LLJIT per device; each program lives in its own JITDylib.
class Jit {
public:
  Jit();
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  struct Loaded {
    llvm::orc::JITDylib* dylib = nullptr;
    KernelFn fn = nullptr;
  };
  Loaded load(const BlobContents& blob);
  void unload(llvm::orc::JITDylib* dylib);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  uint64_t counter_ = 0;
};

tg_error* program_load(tg_device* device, const void* binary, size_t binary_size, tg_program** out_program);
void program_free(tg_program* program);
tg_error* launch(const tg_launch_args* args);

} // namespace tg::cpu

struct tg_program {
  tg_device* device = nullptr;
  llvm::orc::JITDylib* dylib = nullptr;
  tg::cpu::KernelFn fn = nullptr;
  std::string name;
  std::vector<tg_dtype> buffer_dtypes;
  std::vector<tg_dtype> scalar_dtypes;
};
