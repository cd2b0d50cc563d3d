#include "payload.hpp"

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/plugin.hpp>

namespace tg::metal {
namespace {

constexpr uint32_t kVersion = 1;

void put_string(sdk::ByteWriter& w, const std::string& s) {
  w.put(uint32_t(s.size()));
  w.put_bytes(s.data(), s.size());
}

} // namespace

std::vector<std::byte> encode(const Payload& p) {
  sdk::ByteWriter w;
  w.put_bytes("TGMT", 4);
  w.put(kVersion);
  put_string(w, p.entry);
  put_string(w, p.source);
  w.put(uint32_t(p.buffer_slots.size()));
  for (uint32_t slot : p.buffer_slots) w.put(slot);
  w.put(uint32_t(p.scalars.size()));
  for (const ScalarSlot& s : p.scalars) {
    w.put(s.slot);
    w.put(uint32_t(s.passed_as));
  }
  w.put(uint8_t(p.uses_barrier));
  w.put(uint8_t(p.uses_local_memory));
  return std::move(w.out);
}

Payload decode(std::span<const std::byte> bytes) {
  try {
    sdk::ByteReader r(bytes);
    if (r.str(4, "magic") != "TGMT")
      throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "metal: the blob's payload is not a Metal payload");
    if (const auto v = r.get<uint32_t>("version"); v != kVersion)
      throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "metal: payload version " + std::to_string(v) +
                                                            ", this plugin reads " +
                                                            std::to_string(kVersion));
    Payload p;
    p.entry = r.str(r.get<uint32_t>("entry length"), "entry");
    p.source = r.str(r.get<uint32_t>("source length"), "source");
    const auto buffers = r.get<uint32_t>("buffer count");
    for (uint32_t i = 0; i < buffers; ++i) p.buffer_slots.push_back(r.get<uint32_t>("buffer slot"));
    const auto scalars = r.get<uint32_t>("scalar count");
    for (uint32_t i = 0; i < scalars; ++i) {
      ScalarSlot s;
      s.slot = r.get<uint32_t>("scalar slot");
      s.passed_as = tg_dtype(r.get<uint32_t>("scalar dtype"));
      p.scalars.push_back(s);
    }
    p.uses_barrier = r.get<uint8_t>("uses_barrier") != 0;
    p.uses_local_memory = r.get<uint8_t>("uses_local_memory") != 0;
    return p;
  } catch (const sdk::TruncatedError& e) {
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, std::string("metal: truncated payload: ") + e.what());
  }
}

} // namespace tg::metal
