// Programs: the CPU payload inside the SDK's blob envelope, loading its object code into the
// device's ORC JIT, and running a loaded kernel's work groups on the thread pool.
#pragma once

#include "thread_pool.hpp"

#include <tg/sdk/adaptor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace llvm::orc {
class JITDylib;
class LLJIT;
} // namespace llvm::orc

namespace tg::cpu {

// The compiled kernel's entry point (compiler.cpp renders it). Runs work groups gx in
// [gx_begin, gx_end) of row (gy, gz); for each it loops over local ids z, y, x in
// [0, local_z) x [0, local_y) x [0, local_x). buffers[i] = base + offset of buffer argument i;
// scalars[i] = the 8 raw bytes of scalar i.
using KernelFn = void (*)(void* const* buffers, const int64_t* scalars, int32_t gx_begin, int32_t gx_end,
                          int32_t gy, int32_t gz, int32_t local_x, int32_t local_y, int32_t local_z);

inline constexpr uint32_t kPayloadVersion = 2;

// The CPU's part of a blob (the envelope holds the plugin, the target "<triple>:<cpu>" and the
// kernel's signature).
struct Payload {
  uint32_t llvm_version[3] = {0, 0, 0};
  std::string features;     // the target features the object was compiled with
  std::string entry;        // symbol of the KernelFn in the object
  std::vector<char> object; // relocatable ELF object
};

std::vector<std::byte> encode_payload(const Payload& payload);
// Throws PluginError(INVALID_ARGUMENT) when the payload is malformed.
Payload decode_payload(std::span<const std::byte> bytes);

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
  Loaded load(const Payload& payload, const std::string& kernel_name);
  void unload(llvm::orc::JITDylib* dylib);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  uint64_t counter_ = 0;
};

class Program final : public sdk::Program {
public:
  // Checks that the payload suits this host (LLVM version, CPU features) and loads it.
  Program(Jit& jit, const sdk::Blob& blob);
  ~Program() override;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Runs every work group, spread over the pool in chunks of consecutive x groups.
  void run(ThreadPool& pool, void* const* buffers, const int64_t* scalars, std::array<uint32_t, 3> global,
           std::array<uint32_t, 3> local) const;

private:
  Jit& jit_;
  Jit::Loaded loaded_;
};

} // namespace tg::cpu
