// Byte and file helpers shared by the core (program cache, safetensors, datasets) and plugins (blob
// checksums), so there is one FNV-1a hash, one whole-file reader and one durable file writer.
// Everything here lives in the static SDK, below every ring of the core.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tg::sdk {

// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211). Not cryptographic: a
// checksum and a cache-file name.
uint64_t fnv1a64(std::span<const std::byte> bytes);
// The value as 16 lowercase hex digits.
std::string hex64(uint64_t value);

static_assert(std::endian::native == std::endian::little,
              "the kernel IR and the plugin blobs are little-endian; add byte swaps for this host");

// Input ended before a field. what() names the field and the byte offset; each format's reader
// catches it and throws its own typed error with that text.
class TruncatedError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Reads fixed-width little-endian fields from a byte span, checking bounds before every read.
class ByteReader {
public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  template <class T> T get(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, bytes(sizeof(T), what).data(), sizeof(T));
    return value;
  }
  std::span<const std::byte> bytes(size_t n, const char* what);
  std::string str(size_t n, const char* what);
  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }

private:
  std::span<const std::byte> bytes_;
  size_t pos_ = 0;
};

// Appends fixed-width little-endian fields: the writing half of ByteReader.
class ByteWriter {
public:
  template <class T> void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_bytes(&value, sizeof(T));
  }
  // resize + memcpy rather than insert: GCC 12 at -O3 reports a false -Wstringop-overflow for a
  // one-byte vector insert.
  void put_bytes(const void* data, size_t n) {
    if (n == 0) return;
    size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, data, n);
  }
  std::vector<std::byte> out;
};

// A file could not be read or written. what() says why without the path (e.g. "is a directory, not
// a regular file"), so each caller can prefix its own typed error that names the file.
class FileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Reads the first `max_bytes` bytes (all of it by default) of a regular file. Directories, FIFOs
// and devices are refused up front: reading one would fail late, block, or never end.
std::vector<std::byte> read_file(const std::filesystem::path& path,
                                 uint64_t max_bytes = std::numeric_limits<uint64_t>::max());

// Throws FileError unless a file can be created at `path`: its directory exists and accepts a new
// file, and `path` itself is not a directory. Tries it (creates and removes a probe file), so a
// long job can check its destination before it starts.
void check_writable(const std::filesystem::path& path);

// Replaces `path` with `parts` concatenated: writes a temporary file in the same directory, fsyncs
// it, renames it over `path` and fsyncs the directory, so after a crash `path` holds the old or
// the new contents, never a partial file. The temporary is removed on failure; temporaries that
// killed saves of the same file left behind are removed first. A symbolic link is written
// through (its final target is replaced; the link stays), and a replaced file keeps its mode.
void write_file_durably(const std::filesystem::path& path, std::span<const std::span<const std::byte>> parts);

} // namespace tg::sdk
