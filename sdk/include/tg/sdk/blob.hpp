// The envelope around every program blob a plugin built on the SDK makes: a magic, the envelope
// version, the plugin's name, the target string the code is for, the kernel's signature (what
// launch validation checks arguments against), the plugin's own payload and a checksum. The
// adaptor seals compile() output in it and opens it in program_load(), so a plugin only ever sees
// its payload, and a truncated, corrupt, foreign or other-target blob fails the same way in every
// plugin: PluginError(INVALID_ARGUMENT) with a message saying which.
//
// Layout (little-endian): "TGBL", uint32 envelope version, then three strings (uint32 length +
// bytes: plugin, target, kernel name), uint32 buffer count + one dtype byte each, uint32 scalar
// count + one dtype byte each, uint64 payload size + payload, and last uint64 fnv1a64 of every
// byte before it.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tg::sdk {

inline constexpr char kBlobMagic[4] = {'T', 'G', 'B', 'L'};
inline constexpr uint32_t kBlobEnvelopeVersion = 1;
// Version 2 appends the buffers' assumed alignments; written only when a buffer assumes more than
// its element size, so every other blob stays byte for byte a version 1 blob.
inline constexpr uint32_t kBlobEnvelopeVersionAligned = 2;

// What a program takes: the element dtype of each buffer argument (by DEFINE_GLOBAL index) and the
// dtype of each scalar argument (by DEFINE_VAR index), plus the kernel's name for messages.
struct Signature {
  std::string kernel_name;
  std::vector<tg_dtype> buffers;
  std::vector<tg_dtype> scalars;
  // Bytes each buffer argument's address must be a multiple of, by index; empty when every buffer
  // assumes only its element's alignment (KernelIR::buffer_alignments).
  std::vector<uint32_t> alignments;

  static Signature of(const KernelIR& ir);
  bool operator==(const Signature&) const = default;
};

struct Blob {
  std::string plugin; // the plugin's name, e.g. "cpu"
  std::string target; // the compile target the code is for, in the plugin's own spelling
  Signature signature;
  std::vector<std::byte> payload; // the plugin's part: object code, PTX, SPIR-V, ...
};

std::vector<std::byte> seal_blob(const Blob& blob);

// Checks and unpacks a blob for `plugin` on a device whose target is `target`. Throws
// PluginError(INVALID_ARGUMENT) naming the cause: not a blob, other envelope version, checksum
// mismatch (truncated or corrupt), another plugin's or another target's blob.
Blob open_blob(std::span<const std::byte> bytes, std::string_view plugin, std::string_view target);

} // namespace tg::sdk
