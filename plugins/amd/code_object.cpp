#include "code_object.hpp"

#include <tg/sdk/adaptor.hpp>

#include <cstring>
#include <optional>
#include <utility>

namespace tg::amd {
namespace {

[[noreturn]] void bad(const std::string& what) {
  throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "amd: the code object " + what);
}

template <class T> T read_le(std::span<const std::byte> bytes, uint64_t at) {
  if (at > bytes.size() || bytes.size() - at < sizeof(T)) bad("is truncated");
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v); // ELF64 for AMDGPU is little-endian, as is the host
  return v;
}

// The MessagePack subset the amdhsa metadata uses: maps with string keys, arrays, strings,
// integers, booleans, nil, floats, binary (kept as a string).
struct Msg {
  enum Kind { Nil, Bool, Int, Float, Str, Array, Map } kind = Nil;
  int64_t i = 0;
  std::string s;
  std::vector<Msg> items;                         // Array
  std::vector<std::pair<std::string, Msg>> pairs; // Map

  const Msg* find(const std::string& key) const {
    for (const auto& [k, v] : pairs)
      if (k == key) return &v;
    return nullptr;
  }
};

class MsgReader {
public:
  explicit MsgReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  Msg read(int depth = 0) {
    if (depth > 32) bad("metadata nests too deeply");
    const uint8_t t = byte();
    Msg m;
    if (t <= 0x7f) return integer(t);
    if (t >= 0xe0) return integer(int8_t(t));
    if ((t & 0xf0) == 0x80) return map(t & 0x0f, depth);
    if ((t & 0xf0) == 0x90) return array(t & 0x0f, depth);
    if ((t & 0xe0) == 0xa0) return string(t & 0x1f);
    switch (t) {
    case 0xc0:
      return m;
    case 0xc2:
    case 0xc3:
      m.kind = Msg::Bool, m.i = t == 0xc3;
      return m;
    case 0xc4:
      return string(big(1));
    case 0xc5:
      return string(big(2));
    case 0xc6:
      return string(big(4));
    case 0xca:
      skip(4), m.kind = Msg::Float;
      return m; // values not needed
    case 0xcb:
      skip(8), m.kind = Msg::Float;
      return m;
    case 0xcc:
      return integer(int64_t(big(1)));
    case 0xcd:
      return integer(int64_t(big(2)));
    case 0xce:
      return integer(int64_t(big(4)));
    case 0xcf:
      return integer(int64_t(big(8)));
    case 0xd0:
      return integer(int8_t(big(1)));
    case 0xd1:
      return integer(int16_t(big(2)));
    case 0xd2:
      return integer(int32_t(big(4)));
    case 0xd3:
      return integer(int64_t(big(8)));
    case 0xd9:
      return string(big(1));
    case 0xda:
      return string(big(2));
    case 0xdb:
      return string(big(4));
    case 0xdc:
      return array(big(2), depth);
    case 0xdd:
      return array(big(4), depth);
    case 0xde:
      return map(big(2), depth);
    case 0xdf:
      return map(big(4), depth);
    default:
      bad("metadata has an unexpected MessagePack type 0x" + hex(t));
    }
  }

private:
  static std::string hex(uint8_t v) {
    const char* d = "0123456789abcdef";
    return {d[v >> 4], d[v & 15]};
  }
  uint8_t byte() {
    if (at_ >= bytes_.size()) bad("metadata is truncated");
    return uint8_t(bytes_[at_++]);
  }
  uint64_t big(int n) { // MessagePack is big-endian
    uint64_t v = 0;
    for (int k = 0; k < n; ++k) v = v << 8 | byte();
    return v;
  }
  void skip(uint64_t n) {
    if (bytes_.size() - at_ < n) bad("metadata is truncated");
    at_ += n;
  }
  static Msg integer(int64_t v) {
    Msg m;
    m.kind = Msg::Int, m.i = v;
    return m;
  }
  Msg string(uint64_t n) {
    const uint64_t from = at_;
    skip(n);
    Msg m;
    m.kind = Msg::Str;
    m.s.assign(reinterpret_cast<const char*>(bytes_.data() + from), n);
    return m;
  }
  Msg array(uint64_t n, int depth) {
    Msg m;
    m.kind = Msg::Array;
    for (uint64_t k = 0; k < n; ++k) m.items.push_back(read(depth + 1));
    return m;
  }
  Msg map(uint64_t n, int depth) {
    Msg m;
    m.kind = Msg::Map;
    for (uint64_t k = 0; k < n; ++k) {
      Msg key = read(depth + 1);
      if (key.kind != Msg::Str) bad("metadata has a map key that is not a string");
      m.pairs.emplace_back(std::move(key.s), read(depth + 1));
    }
    return m;
  }

  std::span<const std::byte> bytes_;
  uint64_t at_ = 0;
};

constexpr uint32_t kNoteAmdgpuMetadata = 32; // NT_AMDGPU_METADATA
constexpr uint16_t kMachineAmdgpu = 224;     // EM_AMDGPU
constexpr uint32_t kSectionNote = 7;         // SHT_NOTE

// The MessagePack bytes of the "AMDGPU" metadata note.
std::span<const std::byte> metadata_note(std::span<const std::byte> elf) {
  if (elf.size() < 64 || std::memcmp(elf.data(),
                                     "\x7f"
                                     "ELF",
                                     4) != 0)
    bad("is not an ELF file");
  if (uint8_t(elf[4]) != 2 || uint8_t(elf[5]) != 1) bad("is not a little-endian ELF64 file");
  if (read_le<uint16_t>(elf, 0x12) != kMachineAmdgpu) bad("is not for AMDGPU (e_machine)");
  const auto shoff = read_le<uint64_t>(elf, 0x28);
  const auto shentsize = read_le<uint16_t>(elf, 0x3a), shnum = read_le<uint16_t>(elf, 0x3c);
  for (uint16_t s = 0; s < shnum; ++s) {
    const uint64_t header = shoff + uint64_t(s) * shentsize;
    if (read_le<uint32_t>(elf, header + 4) != kSectionNote) continue;
    const auto offset = read_le<uint64_t>(elf, header + 24), size = read_le<uint64_t>(elf, header + 32);
    if (offset > elf.size() || elf.size() - offset < size) bad("has a note section beyond its end");
    for (uint64_t at = offset; at + 12 <= offset + size;) {
      const auto namesz = read_le<uint32_t>(elf, at), descsz = read_le<uint32_t>(elf, at + 4);
      const auto type = read_le<uint32_t>(elf, at + 8);
      const uint64_t name = at + 12, desc = name + (uint64_t(namesz) + 3) / 4 * 4;
      const uint64_t next = desc + (uint64_t(descsz) + 3) / 4 * 4;
      if (next > offset + size) bad("has a truncated note");
      if (type == kNoteAmdgpuMetadata && namesz == 7 && std::memcmp(elf.data() + name, "AMDGPU", 7) == 0)
        return elf.subspan(desc, descsz);
      at = next;
    }
  }
  bad("has no amdhsa metadata note (NT_AMDGPU_METADATA)");
}

uint64_t unsigned_field(const Msg& map, const char* key, const std::string& where) {
  const Msg* v = map.find(key);
  if (!v || v->kind != Msg::Int || v->i < 0) bad("metadata of " + where + " lacks " + key);
  return uint64_t(v->i);
}

} // namespace

KernelLayout read_kernel_layout(std::span<const std::byte> elf, const std::string& kernel) {
  const Msg root = MsgReader(metadata_note(elf)).read();
  const Msg* kernels = root.find("amdhsa.kernels");
  if (!kernels || kernels->kind != Msg::Array) bad("metadata has no amdhsa.kernels list");
  for (const Msg& k : kernels->items) {
    const Msg* name = k.find(".name");
    if (!name || name->s != kernel) continue;
    KernelLayout layout;
    layout.name = kernel;
    layout.kernarg_segment_size = unsigned_field(k, ".kernarg_segment_size", kernel);
    layout.group_segment_fixed_size = unsigned_field(k, ".group_segment_fixed_size", kernel);
    layout.max_flat_workgroup_size = unsigned_field(k, ".max_flat_workgroup_size", kernel);
    if (const Msg* args = k.find(".args"); args && args->kind == Msg::Array) {
      for (const Msg& a : args->items) {
        const std::string where = kernel + " argument " + std::to_string(layout.args.size());
        const Msg* kind = a.find(".value_kind");
        if (!kind || kind->kind != Msg::Str) bad("metadata of " + where + " lacks .value_kind");
        layout.args.push_back(
            {unsigned_field(a, ".offset", where), unsigned_field(a, ".size", where), kind->s});
      }
    }
    return layout;
  }
  bad("declares no kernel named " + kernel);
}

} // namespace tg::amd
