#include "payload.hpp"

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/plugin.hpp>

#include <cstring>
#include <string>

namespace tg::vulkan {
namespace {

constexpr char kMagic[4] = {'T', 'G', 'V', 'K'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kSpirvMagic = 0x07230203;

[[noreturn]] void refuse(const std::string& why) {
  throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "VULKAN program payload " + why);
}

} // namespace

std::vector<std::byte> encode(const Payload& p) {
  sdk::ByteWriter w;
  w.put_bytes(kMagic, sizeof kMagic);
  w.put(kVersion);
  w.put(p.push_constant_bytes);
  w.put(uint32_t(p.scalars.size()));
  for (const auto& s : p.scalars) {
    w.put(s.offset);
    w.put(s.size);
    w.put(uint8_t(s.passed_as));
  }
  w.put(uint32_t(p.bindings.size()));
  for (uint32_t b : p.bindings) w.put(b);
  w.put(uint32_t(p.spirv.size()));
  w.put_bytes(p.spirv.data(), p.spirv.size() * sizeof(uint32_t));
  return std::move(w.out);
}

Payload decode(std::span<const std::byte> bytes) {
  Payload p;
  try {
    sdk::ByteReader r(bytes);
    if (std::memcmp(r.bytes(4, "magic").data(), kMagic, 4) != 0) refuse("does not start with TGVK");
    if (uint32_t v = r.get<uint32_t>("version"); v != kVersion)
      refuse("has version " + std::to_string(v) + ", this plugin reads " + std::to_string(kVersion));
    p.push_constant_bytes = r.get<uint32_t>("push-constant bytes");
    p.scalars.resize(r.get<uint32_t>("scalar count"));
    for (auto& s : p.scalars) {
      s.offset = r.get<uint32_t>("scalar offset");
      s.size = r.get<uint32_t>("scalar size");
      s.passed_as = r.get<uint8_t>("scalar dtype");
      if ((s.size != 4 && s.size != 8) || s.offset + s.size > p.push_constant_bytes)
        refuse("has a scalar outside its push-constant block");
    }
    const uint32_t buffers = r.get<uint32_t>("buffer count");
    if (buffers > r.remaining() / 4) refuse("is truncated (buffer bindings)");
    p.bindings.resize(buffers);
    for (auto& b : p.bindings) b = r.get<uint32_t>("binding");
    const uint32_t words = r.get<uint32_t>("word count");
    if (size_t(words) * 4 != r.remaining())
      refuse("has " + std::to_string(r.remaining()) + " bytes of SPIR-V, not " + std::to_string(words) +
             " words");
    p.spirv.resize(words);
    if (words) std::memcpy(p.spirv.data(), r.bytes(size_t(words) * 4, "SPIR-V").data(), size_t(words) * 4);
  } catch (const sdk::TruncatedError& e) {
    refuse(std::string("is truncated: ") + e.what());
  }
  if (p.spirv.size() < 5 || p.spirv[0] != kSpirvMagic) refuse("holds no SPIR-V module (bad magic)");
  return p;
}

} // namespace tg::vulkan
