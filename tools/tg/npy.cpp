#include "tools/tg/npy.hpp"

#include <cstring>
#include <fstream>
#include <map>
#include <regex>

namespace tg::cli {

namespace {

const std::map<std::string, DType>& descrs() {
  static const std::map<std::string, DType> m = {
      {"|b1", dtypes::bool_},  {"|i1", dtypes::int8},    {"|u1", dtypes::uint8},   {"<i2", dtypes::int16},
      {"<u2", dtypes::uint16}, {"<i4", dtypes::int32},   {"<u4", dtypes::uint32},  {"<i8", dtypes::int64},
      {"<u8", dtypes::uint64}, {"<f2", dtypes::float16}, {"<f4", dtypes::float32}, {"<f8", dtypes::float64},
  };
  return m;
}

} // namespace

Tensor load_npy(const std::filesystem::path& file, const std::string& device) {
  std::string where = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(where + ": cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw Error(where + ": not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint8_t b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (uint32_t(b[1]) << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    uint8_t b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24);
  } else {
    throw Error(where + ": .npy format version " + std::to_string(int(magic[6])) + " is not supported");
  }
  if (!in || header_len > (1u << 20)) throw Error(where + ": truncated or oversized .npy header");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) throw Error(where + ": truncated .npy header");
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    throw Error(where + ": .npy header has no descr");
  auto d = descrs().find(m[1].str());
  if (d == descrs().end()) throw Error(where + ": .npy dtype '" + m[1].str() + "' is not supported");
  if (std::regex_search(header, std::regex(R"('fortran_order'\s*:\s*True)")))
    throw Error(where + ": Fortran-ordered .npy arrays are not supported (save with np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    throw Error(where + ": .npy header has no shape");
  Dims shape;
  std::string dims = m[1].str();
  const std::regex number(R"(\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number); it != std::sregex_iterator(); ++it)
    shape.push_back(std::stoll(it->str()));
  int64_t n = 1;
  for (auto s : shape)
    if (__builtin_mul_overflow(n, s, &n)) throw Error(where + ": .npy shape overflows");
  std::vector<std::byte> data(size_t(n) * size_t(d->second.itemsize()));
  if (!in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size())))
    throw Error(where + ": the .npy data is shorter than its shape " + dims_str(shape) + " says");
  return Tensor::from_bytes(data, shape, d->second, device);
}

void save_npy(const std::filesystem::path& file, const Tensor& t) {
  std::string descr;
  for (const auto& [k, v] : descrs())
    if (v == t.dtype()) descr = k;
  if (descr.empty()) throw Error(file.string() + ": dtype " + t.dtype().name() + " has no .npy descr");
  std::string shape = "("; // numpy's repr: "()", "(4,)", "(2, 3)"
  for (size_t i = 0; i < t.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  shape += t.ndim() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(file, std::ios::binary);
  if (!out) throw Error(file.string() + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = uint16_t(header.size());
  out.put(char(len & 0xff)).put(char(len >> 8));
  out << header;
  auto bytes = t.to_bytes();
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) throw Error(file.string() + ": write failed");
}

} // namespace tg::cli
