// IDX reader (raw or gzip, via zlib's inflate) and the MNIST loader (see datasets.hpp).
#include "kernel/tensor/datasets.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

namespace tg {
namespace {

[[noreturn]] void raise(const std::string& file, const std::string& what) {
  throw DatasetError("IDX file " + file + ": " + what);
}

std::string show(const std::filesystem::path& p) { return "\"" + p.string() + "\""; }

// Inflates a gzip stream (several concatenated members are allowed, as gzip(1) does).
std::vector<std::byte> gunzip(std::span<const std::byte> in, const std::string& name) {
  std::vector<std::byte> out;
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

uint32_t be32(const std::byte* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

} // namespace

IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name) {
  std::vector<std::byte> inflated;
  if (bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b}) {
    inflated = gunzip(bytes, name);
    bytes = inflated;
  }
  if (bytes.size() < 4)
    raise(name, "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the 4-byte magic");
  if (bytes[0] != std::byte{0} || bytes[1] != std::byte{0})
    raise(name, "bad magic: the first two bytes must be 00 00 (is this an IDX file?)");
  IdxArray a;
  int itemsize = 0;
  switch (uint8_t(bytes[2])) {
  case 0x08:
    a.dtype = dtypes::uint8, itemsize = 1;
    break;
  case 0x09:
    a.dtype = dtypes::int8, itemsize = 1;
    break;
  case 0x0B:
    a.dtype = dtypes::int16, itemsize = 2;
    break;
  case 0x0C:
    a.dtype = dtypes::int32, itemsize = 4;
    break;
  case 0x0D:
    a.dtype = dtypes::float32, itemsize = 4;
    break;
  case 0x0E:
    a.dtype = dtypes::float64, itemsize = 8;
    break;
  default: {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", unsigned(bytes[2]));
    raise(name, std::string("bad magic: unknown data type ") + buf);
  }
  }
  size_t ndim = size_t(bytes[3]);
  size_t header = 4 + 4 * ndim;
  if (bytes.size() < header)
    raise(name, "truncated: " + std::to_string(ndim) + " dimensions need a " + std::to_string(header) +
                    "-byte header, the file has " + std::to_string(bytes.size()) + " bytes");
  uint64_t count = 1;
  bool overflow = false;
  for (size_t i = 0; i < ndim; ++i) {
    uint32_t d = be32(bytes.data() + 4 + 4 * i);
    a.shape.push_back(int64_t(d));
    overflow |= __builtin_mul_overflow(count, uint64_t(d), &count);
  }
  uint64_t want = 0;
  overflow |= __builtin_mul_overflow(count, uint64_t(itemsize), &want);
  uint64_t have = bytes.size() - header;
  if (overflow || want > have)
    raise(name, "truncated: the shape needs " +
                    (overflow ? std::string("more than 2^64") : std::to_string(want)) +
                    " data bytes, the file has " + std::to_string(have));
  if (want < have)
    raise(name, "size mismatch: the shape needs " + std::to_string(want) + " data bytes, the file has " +
                    std::to_string(have) + " (" + std::to_string(have - want) + " trailing bytes)");
  const std::byte* src = bytes.data() + header;
  a.data.assign(src, src + want);
  if (itemsize > 1) // big-endian to host (little-endian)
    for (size_t i = 0; i < a.data.size(); i += size_t(itemsize))
      std::reverse(&a.data[i], &a.data[i] + itemsize);
  return a;
}

IdxArray read_idx(const std::filesystem::path& path) {
  std::string name = show(path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) raise(name, "does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(name, std::string("cannot be opened: ") + std::strerror(errno));
  std::vector<std::byte> bytes;
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0) raise(name, "cannot determine its size");
  in.seekg(0);
  bytes.resize(size_t(size));
  if (size && !in.read(reinterpret_cast<char*>(bytes.data()), size)) raise(name, "read failed");
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
  auto images = [&](const std::filesystem::path& p) {
    IdxArray a = read_idx(p);
    if (a.dtype != dtypes::uint8 || a.shape.size() != 3)
      throw DatasetError("IDX file " + show(p) + ": expected uint8 images of shape (N, rows, cols)");
    return Tensor::from_bytes(a.data, {a.shape[0], 1, a.shape[1], a.shape[2]}, dtypes::uint8, device);
  };
  auto labels = [&](const std::filesystem::path& p, int64_t n) {
    IdxArray a = read_idx(p);
    if (a.dtype != dtypes::uint8 || a.shape.size() != 1)
      throw DatasetError("IDX file " + show(p) + ": expected uint8 labels of shape (N)");
    if (a.shape[0] != n)
      throw DatasetError("IDX file " + show(p) + ": " + std::to_string(a.shape[0]) + " labels for " +
                         std::to_string(n) + " images");
    return Tensor::from_bytes(a.data, {a.shape[0]}, dtypes::uint8, device);
  };
  Tensor x_train = images(found[0]);
  Tensor y_train = labels(found[1], x_train.shape()[0]);
  Tensor x_test = images(found[2]);
  Tensor y_test = labels(found[3], x_test.shape()[0]);
  return MnistData{x_train, y_train, x_test, y_test};
}

} // namespace tg
