// IDX reader (raw or gzip, via zlib's inflate) and the MNIST loader (see datasets.hpp). Built with
// -DTG_DATASETS_PARSE_ONLY (the fuzzer, tools/fuzz) only parse_idx is compiled, so it needs no
// other object of the core.
#include "kernel/tensor/datasets.hpp"

#include <sys/resource.h>
#include <tg/sdk/bytes.hpp>
#include <zlib.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <system_error>
#include <tuple>

namespace tg {
namespace {

[[noreturn]] void raise(const std::string& file, const std::string& what) {
  throw DatasetError("IDX file " + file + ": " + what);
}

[[maybe_unused]] std::string show(const std::filesystem::path& p) { return "\"" + p.string() + "\""; }

uint32_t be32(const std::byte* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

// The element type named by the magic's third byte.
std::pair<DType, int> idx_type(std::byte code, const std::string& name) {
  switch (uint8_t(code)) {
  case 0x08:
    return {dtypes::uint8, 1};
  case 0x09:
    return {dtypes::int8, 1};
  case 0x0B:
    return {dtypes::int16, 2};
  case 0x0C:
    return {dtypes::int32, 4};
  case 0x0D:
    return {dtypes::float32, 4};
  case 0x0E:
    return {dtypes::float64, 8};
  default: {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", unsigned(code));
    raise(name, std::string("bad magic: unknown data type ") + buf);
  }
  }
}

// The header of an IDX image: dtype, shape, and the total size (header + data) it declares.
struct IdxHeader {
  DType dtype = dtypes::uint8;
  int itemsize = 1;
  std::vector<int64_t> shape;
  size_t header_bytes = 0;
  uint64_t data_bytes = 0;
};

// Reads the header from the first bytes of an IDX image; nullopt while `bytes` is too short to
// hold it (`final`: there are no more bytes, so that is an error).
std::optional<IdxHeader> read_header(std::span<const std::byte> bytes, const std::string& name, bool final) {
  if (bytes.size() < 4) {
    if (!final) return std::nullopt;
    raise(name, "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the 4-byte magic");
  }
  if (bytes[0] != std::byte{0} || bytes[1] != std::byte{0})
    raise(name, "bad magic: the first two bytes must be 00 00 (is this an IDX file?)");
  IdxHeader h;
  std::tie(h.dtype, h.itemsize) = idx_type(bytes[2], name);
  size_t ndim = size_t(bytes[3]);
  h.header_bytes = 4 + 4 * ndim;
  if (bytes.size() < h.header_bytes) {
    if (!final) return std::nullopt;
    raise(name, "truncated: " + std::to_string(ndim) + " dimensions need a " +
                    std::to_string(h.header_bytes) + "-byte header, the file has " +
                    std::to_string(bytes.size()) + " bytes");
  }
  uint64_t count = 1;
  bool overflow = false;
  for (size_t i = 0; i < ndim; ++i) {
    uint32_t d = be32(bytes.data() + 4 + 4 * i);
    h.shape.push_back(int64_t(d));
    overflow |= __builtin_mul_overflow(count, uint64_t(d), &count);
  }
  overflow |= __builtin_mul_overflow(count, uint64_t(h.itemsize), &h.data_bytes);
  if (overflow || h.data_bytes > std::numeric_limits<uint64_t>::max() - h.header_bytes)
    raise(name, "truncated: the shape needs more than 2^64 data bytes, the file has " +
                    std::to_string(bytes.size() - h.header_bytes));
  return h;
}

// DEFLATE's largest expansion: a 258-byte match in about two bits, 1032 to 1.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint64_t read_meminfo_available() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return std::numeric_limits<uint64_t>::max();
  char line[256];
  uint64_t kb = 0;
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f))
    found = std::sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1;
  std::fclose(f);
  return found ? kb * 1024 : std::numeric_limits<uint64_t>::max();
}

// A cgroup v2 file holding one number or "max".
std::optional<uint64_t> read_cgroup_value(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return std::nullopt;
  uint64_t v = 0;
  const bool ok = std::fscanf(f, "%" SCNu64, &v) == 1;
  std::fclose(f);
  return ok ? std::optional<uint64_t>(v) : std::nullopt;
}

// Inflates a gzip stream (several concatenated members are allowed, as gzip(1) does). Once the IDX
// header at its start is inflated, the size it declares is checked against what the file can
// hold (DEFLATE expands at most 1032-fold) and against `budget` bytes of memory, and refused
// before anything more is inflated; the output is then allocated once, and inflating stops as
// soon as it grows past the declared size. So a small file that would inflate to gigabytes (a
// gzip bomb) costs a few kilobytes before it is refused.
std::vector<std::byte> gunzip(std::span<const std::byte> in, const std::string& name, uint64_t budget) {
  std::vector<std::byte> out;
  std::optional<uint64_t> limit; // header + data bytes, once the header has been inflated
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) raise(name, "zlib inflateInit2 failed");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  size_t pos = 0;
  std::vector<std::byte> chunk(1 << 16);
  for (;;) {
    size_t avail = std::min<size_t>(in.size() - pos, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + pos));
    zs.avail_in = uInt(avail);
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = uInt(chunk.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    pos += avail - zs.avail_in;
    out.insert(out.end(), chunk.begin(), chunk.begin() + std::ptrdiff_t(chunk.size() - zs.avail_out));
    if (!limit)
      if (auto h = read_header(out, name, false)) {
        limit = h->header_bytes + h->data_bytes;
        const uint64_t most = uint64_t(in.size()) * kMaxDeflateRatio + 1024;
        if (*limit > most)
          raise(name, "its header declares " + std::to_string(*limit) + " bytes, more than a " +
                          std::to_string(in.size()) + "-byte gzip file can inflate to (" +
                          std::to_string(most) + "): a corrupt file or a gzip bomb");
        if (*limit > budget)
          raise(name, "its header declares " + std::to_string(*limit) + " bytes, more than the " +
                          std::to_string(budget) + " bytes of memory available; refused before inflating");
        out.reserve(size_t(*limit) + chunk.size()); // the chunk that overshoots must not reallocate
      }
    if (limit && out.size() > *limit)
      raise(name, "size mismatch: the gzip stream inflates to more than the " + std::to_string(*limit) +
                      " bytes its IDX header declares (stopped after " + std::to_string(out.size()) +
                      " bytes; a corrupt file or a gzip bomb)");
    if (rc == Z_STREAM_END) {
      if (pos == in.size()) break;
      // Another member, unless the rest is not gzip (trailing garbage): refuse it.
      if (in.size() - pos < 2 || in[pos] != std::byte{0x1f} || in[pos + 1] != std::byte{0x8b})
        raise(name, "trailing data after the gzip stream");
      if (inflateReset(&zs) != Z_OK) raise(name, "zlib inflateReset failed");
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (pos == in.size()) raise(name, "truncated gzip stream");
      continue;
    }
    raise(name,
          std::string("corrupt gzip stream: ") + (zs.msg ? zs.msg : "zlib error " + std::to_string(rc)));
  }
  return out;
}

} // namespace

uint64_t available_memory() {
  uint64_t avail = read_meminfo_available();
  // a cgroup's limit (containers, systemd slices) binds before the machine's memory does
  if (auto max = read_cgroup_value("/sys/fs/cgroup/memory.max"))
    avail = std::min(avail,
                     *max - std::min(*max, read_cgroup_value("/sys/fs/cgroup/memory.current").value_or(0)));
  if (rlimit rl{}; ::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    avail = std::min<uint64_t>(avail, rl.rlim_cur);
  return avail;
}

IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name) {
  return parse_idx(bytes, name, available_memory());
}

IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name, uint64_t memory_budget) {
  std::vector<std::byte> inflated;
  if (bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b}) {
    try {
      inflated = gunzip(bytes, name, memory_budget);
    } catch (const std::bad_alloc&) {
      raise(name, "out of memory while inflating the gzip stream");
    }
    bytes = inflated;
  }
  IdxHeader h = *read_header(bytes, name, true);
  uint64_t have = bytes.size() - h.header_bytes, want = h.data_bytes;
  if (want > have)
    raise(name, "truncated: the shape needs " + std::to_string(want) + " data bytes, the file has " +
                    std::to_string(have));
  if (want < have)
    raise(name, "size mismatch: the shape needs " + std::to_string(want) + " data bytes, the file has " +
                    std::to_string(have) + " (" + std::to_string(have - want) + " trailing bytes)");
  IdxArray a;
  a.dtype = h.dtype;
  a.shape = std::move(h.shape);
  if (!inflated.empty()) { // the inflated bytes become the data in place: no second copy
    inflated.erase(inflated.begin(), inflated.begin() + std::ptrdiff_t(h.header_bytes));
    a.data = std::move(inflated);
  } else {
    if (want > memory_budget)
      raise(name, "its data needs " + std::to_string(want) + " bytes, more than the " +
                      std::to_string(memory_budget) + " bytes of memory available");
    const std::byte* src = bytes.data() + h.header_bytes;
    a.data.assign(src, src + want);
  }
  if (h.itemsize > 1) // big-endian to host (little-endian)
    for (size_t i = 0; i < a.data.size(); i += size_t(h.itemsize))
      std::reverse(&a.data[i], &a.data[i] + h.itemsize);
  return a;
}

#ifndef TG_DATASETS_PARSE_ONLY

IdxArray read_idx(const std::filesystem::path& path) {
  std::string name = show(path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) raise(name, "does not exist");
  std::vector<std::byte> bytes;
  try {
    bytes = sdk::read_file(path);
  } catch (const sdk::FileError& e) {
    raise(name, e.what());
  }
  return parse_idx(bytes, name);
}

std::filesystem::path default_mnist_dir() {
  if (const char* env = std::getenv("TG_MNIST_DIR"); env && *env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

MnistData load_mnist(const std::filesystem::path& dir, const std::string& device) {
  static const char* const kFiles[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  std::filesystem::path found[4];
  std::vector<std::string> missing;
  for (int i = 0; i < 4; ++i) {
    std::error_code ec;
    std::filesystem::path gz = dir / (std::string(kFiles[i]) + ".gz"), raw = dir / kFiles[i];
    if (std::filesystem::is_regular_file(gz, ec))
      found[i] = gz;
    else if (std::filesystem::is_regular_file(raw, ec))
      found[i] = raw;
    else
      missing.push_back(kFiles[i] + std::string("[.gz]"));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw DatasetError(
        "MNIST directory " + show(dir) + " lacks " + list +
        " (expected train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
        "t10k-labels-idx1-ubyte, each optionally .gz); install the Debian package "
        "dataset-fashion-mnist, or pass --data DIR / set TG_MNIST_DIR to a directory holding them");
  }
  // The trainer gathers 28x28 images by row and uses labels as class indices: check both here, so a
  // wrong file fails with its name instead of reading out of bounds or training on garbage.
  auto images = [&](const std::filesystem::path& p) {
    IdxArray a = read_idx(p);
    if (a.dtype != dtypes::uint8 || a.shape.size() != 3)
      throw DatasetError("IDX file " + show(p) + ": expected uint8 images of shape (N, rows, cols)");
    if (a.shape[1] != 28 || a.shape[2] != 28)
      throw DatasetError("IDX file " + show(p) + ": images are " + std::to_string(a.shape[1]) + "x" +
                         std::to_string(a.shape[2]) + ", MNIST images are 28x28");
    if (a.shape[0] == 0) throw DatasetError("IDX file " + show(p) + ": holds 0 images");
    return Tensor::from_bytes(a.data, {a.shape[0], 1, a.shape[1], a.shape[2]}, dtypes::uint8, device);
  };
  auto labels = [&](const std::filesystem::path& p, int64_t n) {
    IdxArray a = read_idx(p);
    if (a.dtype != dtypes::uint8 || a.shape.size() != 1)
      throw DatasetError("IDX file " + show(p) + ": expected uint8 labels of shape (N)");
    if (a.shape[0] != n)
      throw DatasetError("IDX file " + show(p) + ": " + std::to_string(a.shape[0]) + " labels for " +
                         std::to_string(n) + " images");
    auto bad = std::find_if(a.data.begin(), a.data.end(), [](std::byte b) { return uint8_t(b) > 9; });
    if (bad != a.data.end())
      throw DatasetError("IDX file " + show(p) + ": label " + std::to_string(unsigned(*bad)) + " at index " +
                         std::to_string(bad - a.data.begin()) + " is not a class 0..9");
    return Tensor::from_bytes(a.data, {a.shape[0]}, dtypes::uint8, device);
  };
  Tensor x_train = images(found[0]);
  Tensor y_train = labels(found[1], x_train.shape()[0]);
  Tensor x_test = images(found[2]);
  Tensor y_test = labels(found[3], x_test.shape()[0]);
  return MnistData{x_train, y_train, x_test, y_test};
}

#endif // TG_DATASETS_PARSE_ONLY

} // namespace tg
