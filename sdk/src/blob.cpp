// The blob envelope (see tg/sdk/blob.hpp).
#include <tg/sdk/blob.hpp>

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/plugin.hpp>

#include <cstring>

namespace tg::sdk {
namespace {

[[noreturn]] void invalid(const std::string& why) { throw PluginError(TG_ERROR_INVALID_ARGUMENT, why); }

// Lengths and counts are uint32 fields. (The bound also keeps GCC 12 at -O3 from reporting a false
// -Wstringop-overflow for the copy.)
uint32_t count32(size_t n, const char* what) {
  if (n > UINT32_MAX) throw PluginError(TG_ERROR_INTERNAL, std::string(what) + " too long for a blob");
  return uint32_t(n);
}

void put_string(ByteWriter& w, std::string_view s) {
  w.put<uint32_t>(count32(s.size(), "string"));
  w.put_bytes(s.data(), s.size());
}

void put_dtypes(ByteWriter& w, const std::vector<tg_dtype>& dtypes) {
  w.put<uint32_t>(count32(dtypes.size(), "signature"));
  for (tg_dtype d : dtypes) w.put<uint8_t>(uint8_t(d));
}

std::string get_string(ByteReader& r, const char* what) { return r.str(r.get<uint32_t>(what), what); }

std::vector<tg_dtype> get_dtypes(ByteReader& r, const char* what) {
  auto count = r.get<uint32_t>(what);
  auto bytes = r.bytes(count, what); // bounds-checked before anything is allocated
  std::vector<tg_dtype> out;
  out.reserve(count);
  for (std::byte b : bytes) {
    auto d = tg_dtype(b);
    if (d <= TG_DTYPE_VOID || d >= TG_DTYPE_COUNT)
      invalid(std::string("blob names an unknown dtype ") + std::to_string(d) + " in its " + what);
    out.push_back(d);
  }
  return out;
}

// Everything between the version and the checksum.
Blob read_fields(ByteReader& r, uint32_t version) {
  Blob blob;
  blob.plugin = get_string(r, "plugin name");
  blob.target = get_string(r, "target");
  blob.signature.kernel_name = get_string(r, "kernel name");
  blob.signature.buffers = get_dtypes(r, "buffer dtypes");
  blob.signature.scalars = get_dtypes(r, "scalar dtypes");
  if (version == kBlobEnvelopeVersionAligned) {
    auto count = r.get<uint32_t>("alignment count");
    if (count != blob.signature.buffers.size())
      invalid("blob has " + std::to_string(count) + " buffer alignments for " +
              std::to_string(blob.signature.buffers.size()) + " buffers");
    for (uint32_t k = 0; k < count; ++k) {
      auto a = r.get<uint32_t>("buffer alignment");
      if (a == 0 || (a & (a - 1)) != 0)
        invalid("blob names buffer alignment " + std::to_string(a) + ", not a power of two");
      blob.signature.alignments.push_back(a);
    }
  }
  auto payload_size = r.get<uint64_t>("payload size");
  if (payload_size != r.remaining())
    invalid("blob payload size " + std::to_string(payload_size) + " does not match the " +
            std::to_string(r.remaining()) + " bytes present");
  auto payload = r.bytes(size_t(payload_size), "payload");
  blob.payload.assign(payload.begin(), payload.end());
  return blob;
}

} // namespace

Signature Signature::of(const KernelIR& ir) {
  Signature s{ir.name, ir.buffer_dtypes, ir.scalar_dtypes, {}};
  for (size_t k = 0; k < ir.buffer_alignments.size(); ++k)
    if (ir.buffer_alignments[k] > dtype_size(ir.buffer_dtypes[k])) s.alignments = ir.buffer_alignments;
  return s;
}

std::vector<std::byte> seal_blob(const Blob& blob) {
  ByteWriter w;
  w.put_bytes(kBlobMagic, sizeof(kBlobMagic));
  const bool aligned = !blob.signature.alignments.empty();
  w.put<uint32_t>(aligned ? kBlobEnvelopeVersionAligned : kBlobEnvelopeVersion);
  put_string(w, blob.plugin);
  put_string(w, blob.target);
  put_string(w, blob.signature.kernel_name);
  put_dtypes(w, blob.signature.buffers);
  put_dtypes(w, blob.signature.scalars);
  if (aligned) {
    w.put<uint32_t>(count32(blob.signature.alignments.size(), "alignments"));
    for (uint32_t a : blob.signature.alignments) w.put<uint32_t>(a);
  }
  w.put<uint64_t>(uint64_t(blob.payload.size()));
  w.put_bytes(blob.payload.data(), blob.payload.size());
  w.put<uint64_t>(fnv1a64(w.out));
  return std::move(w.out);
}

Blob open_blob(std::span<const std::byte> bytes, std::string_view plugin, std::string_view target) {
  constexpr size_t kHead = sizeof(kBlobMagic) + sizeof(uint32_t), kTail = sizeof(uint64_t);
  if (bytes.size() < kHead + kTail || std::memcmp(bytes.data(), kBlobMagic, sizeof(kBlobMagic)) != 0)
    invalid("not a tinygrad.cpp program blob (bad magic or too short: " + std::to_string(bytes.size()) +
            " bytes)");
  ByteReader head(bytes.subspan(sizeof(kBlobMagic)));
  auto version = head.get<uint32_t>("envelope version");
  if (version != kBlobEnvelopeVersion && version != kBlobEnvelopeVersionAligned)
    invalid("blob envelope version " + std::to_string(version) + ", this plugin reads " +
            std::to_string(kBlobEnvelopeVersion) + ": recompile");
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - kTail, kTail);
  if (fnv1a64(bytes.first(bytes.size() - kTail)) != stored)
    invalid("blob checksum mismatch: the blob is truncated or corrupt");
  ByteReader r(bytes.subspan(kHead, bytes.size() - kHead - kTail));
  Blob blob;
  try {
    blob = read_fields(r, version);
  } catch (const TruncatedError& e) {
    invalid(std::string("blob ") + e.what());
  }
  if (blob.plugin != plugin)
    invalid("blob was made by the '" + blob.plugin + "' plugin, this is the '" + std::string(plugin) +
            "' plugin");
  if (blob.target != target)
    invalid("blob was compiled for " + blob.target + ", this device is " + std::string(target));
  return blob;
}

} // namespace tg::sdk
