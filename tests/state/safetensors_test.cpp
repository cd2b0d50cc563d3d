// safetensors: round trips of every dtype, the header layout, a file written by the reference
// implementation (data/peer.safetensors), the JSON reader, and every malformed-input error.
#include "kernel/tensor/state.hpp"
#include "test_util.hpp"

#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <limits>

using namespace st;
using tg::SafetensorsError;
using tg::Tensor;
using tg::dtypes::bfloat16;
namespace dtypes = tg::dtypes;

namespace {

// A file image: 8-byte little-endian length, the header, then `data` bytes of 0xAB.
std::vector<std::byte> image(const std::string& header, size_t data = 0, std::optional<uint64_t> n = {}) {
  uint64_t len = n.value_or(header.size());
  std::vector<std::byte> out(8);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = std::byte(uint8_t(len >> (8 * i)));
  for (char c : header) out.push_back(std::byte(uint8_t(c)));
  out.insert(out.end(), data, std::byte{0xAB});
  return out;
}

tg::SafetensorsFile parse(const std::string& header, size_t data = 0) {
  auto bytes = image(header, data);
  return tg::parse_safetensors(bytes, "mem.safetensors");
}

void bad(const std::string& header, size_t data, std::initializer_list<std::string> fragments) {
  BOOST_TEST_CONTEXT("header " << header) {
    require_throws<SafetensorsError>([&] { parse(header, data); }, fragments);
  }
}

std::vector<std::byte> raw(std::initializer_list<unsigned> bytes) {
  std::vector<std::byte> out;
  for (unsigned b : bytes) out.push_back(std::byte(uint8_t(b)));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(safetensors)

BOOST_AUTO_TEST_CASE(round_trip_every_dtype) {
  TempDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::map<std::string, std::vector<std::byte>> expect;
  std::map<std::string, Tensor> tensors;
  auto add = [&](const std::string& name, std::vector<std::byte> bytes, tg::Dims shape, tg::DType dt) {
    tensors.emplace(name, Tensor::from_bytes(bytes, shape, dt));
    expect[name] = std::move(bytes);
  };
  add("bool", raw({1, 0, 1, 1}), {2, 2}, dtypes::bool_);
  add("u8", raw({0, 1, 127, 128, 255, 0xAB}), {2, 3}, dtypes::uint8);
  add("i8", bytes_of<int8_t>({-128, -1, 0, 1, 127}), {5}, dtypes::int8);
  add("i16", bytes_of<int16_t>({-32768, -2, 0x1234, 32767}), {2, 2}, dtypes::int16);
  add("u16", bytes_of<uint16_t>({0, 0xFFFF, 0x8001}), {3}, dtypes::uint16);
  add("i32", bytes_of<int32_t>({INT32_MIN, -1, 0x01020304, INT32_MAX}), {4, 1}, dtypes::int32);
  add("u32", bytes_of<uint32_t>({0xFFFFFFFFu, 0xDEADBEEFu}), {2}, dtypes::uint32);
  add("i64", bytes_of<int64_t>({INT64_MIN, -42, 0x0102030405060708, INT64_MAX}), {2, 2}, dtypes::int64);
  add("u64", bytes_of<uint64_t>({~0ull, 0x8000000000000001ull}), {2}, dtypes::uint64);
  // float16 / bfloat16 bit patterns: 1, -2, +inf, NaN, smallest subnormal, -0.
  add("f16", bytes_of<uint16_t>({0x3C00, 0xC000, 0x7C00, 0x7E01, 0x0001, 0x8000}), {2, 3}, dtypes::float16);
  add("bf16", bytes_of<uint16_t>({0x3F80, 0xC000, 0x7F80, 0x7FC1, 0x0001, 0x8000}), {3, 2}, bfloat16);
  add("f32", bytes_of<float>({1.5f, -0.0f, nan, inf, -inf, std::numeric_limits<float>::denorm_min()}),
      {1, 2, 3}, dtypes::float32);
  add("f64", bytes_of<double>({-1e300, std::numeric_limits<double>::quiet_NaN(), 0.1, -double(inf)}), {4},
      dtypes::float64);
  add("scalar", bytes_of<float>({42.5f}), {}, dtypes::float32);
  add("empty", {}, {0, 3}, dtypes::float32);
  add("empty1d", {}, {0}, dtypes::int64);
  add("name with \"quotes\", \\ and \n ünïcödé", bytes_of<int32_t>({7}), {1}, dtypes::int32);
  std::map<std::string, std::string> meta{{"format", "pt"}, {"note", "tab\there \"q\" \xC3\xA9"}, {"", ""}};

  auto path = dir / "all.safetensors";
  tg::safe_save(path, tensors, meta);
  BOOST_CHECK(!fs::exists(dir / "all.safetensors.tmp"));
  auto loaded = tg::safe_load(path);
  BOOST_REQUIRE_EQUAL(loaded.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    BOOST_TEST_CONTEXT("tensor " << name) {
      BOOST_REQUIRE(loaded.count(name));
      const Tensor& l = loaded.at(name);
      BOOST_CHECK(l.dtype() == t.dtype());
      BOOST_CHECK(l.shape() == t.shape());
      auto got = l.to_bytes();
      BOOST_CHECK(got == expect.at(name));
    }
  }
  BOOST_CHECK(tg::safe_load_metadata(path) == meta);

  // Header layout: length prefix a multiple of 8, padded with spaces, offsets ordered as written.
  auto bytes = read_file(path);
  tg::SafetensorsFile f = tg::parse_safetensors(bytes);
  BOOST_CHECK_EQUAL(f.header_size % 8, 0u);
  BOOST_CHECK_EQUAL(f.data_start, 8 + f.header_size);
  BOOST_CHECK(f.metadata == meta);
  uint64_t at = 0;
  for (const auto& e : f.entries) {
    BOOST_CHECK_EQUAL(e.begin, at);
    at = e.end;
  }
  BOOST_CHECK_EQUAL(at, f.data_size);
  std::string header(reinterpret_cast<const char*>(bytes.data() + 8), f.header_size);
  BOOST_CHECK_EQUAL(header.front(), '{');
  auto last = header.find_last_not_of(' ');
  BOOST_CHECK_EQUAL(header[last], '}');
  BOOST_CHECK_LT(header.size() - last - 1, 8u);
}

BOOST_AUTO_TEST_CASE(round_trip_views_and_devices) {
  TempDir dir;
  Tensor t = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor sum = t + 10; // lazy: realized by safe_save
  tg::safe_save(dir / "v.safetensors", {{"t", t.transpose()}, {"sum", sum}});
  auto l = tg::safe_load(dir / "v.safetensors", "CPU");
  BOOST_CHECK(l.at("t").shape() == (tg::Dims{3, 2}));
  BOOST_CHECK(values_of<int32_t>(l.at("t")) == (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  BOOST_CHECK(values_of<int32_t>(l.at("sum")) == (std::vector<int32_t>{11, 12, 13, 14, 15, 16}));
  BOOST_CHECK_EQUAL(l.at("t").device(), t.device());

  // No tensors, no metadata: "{}" padded to 8 bytes.
  tg::safe_save(dir / "e.safetensors", {});
  auto bytes = read_file(dir / "e.safetensors");
  BOOST_CHECK_EQUAL(bytes.size(), 16u);
  BOOST_CHECK(tg::safe_load(dir / "e.safetensors").empty());
  BOOST_CHECK(tg::safe_load_metadata(dir / "e.safetensors").empty());

  // Overwrite an existing file (rename over it).
  tg::safe_save(dir / "e.safetensors", {{"x", Tensor::from_vector(std::vector<float>{1.f}, {1})}});
  BOOST_CHECK_EQUAL(tg::safe_load(dir / "e.safetensors").size(), 1u);
  BOOST_CHECK_EQUAL(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 2);

  require_throws<SafetensorsError>(
      [&] {
        tg::safe_save(dir / "m.safetensors", {{"__metadata__", t}});
      },
      {"reserved"});
  require_throws<SafetensorsError>(
      [&] {
        tg::safe_save(dir / "u.safetensors", {{"\xFF", t}});
      },
      {"not valid UTF-8"});
  require_throws<SafetensorsError>(
      [&] {
        tg::safe_save(dir / "nodir" / "x.safetensors", {{"t", t}});
      },
      {"cannot create"});
}

BOOST_AUTO_TEST_CASE(peer_file) {
  // Written by the Python safetensors package (data/make_peer_file.py).
  fs::path path = fs::path(TG_STATE_TEST_DATA) / "peer.safetensors";
  auto meta = tg::safe_load_metadata(path);
  BOOST_CHECK(meta ==
              (std::map<std::string, std::string>{{"format", "np"}, {"note", "caf\xC3\xA9 \"quoted\""}}));
  auto l = tg::safe_load(path);
  BOOST_REQUIRE_EQUAL(l.size(), 14u);
  auto check_shape = [&](const std::string& n, tg::Dims s, tg::DType dt) {
    BOOST_TEST_CONTEXT(n) {
      BOOST_CHECK(l.at(n).shape() == s);
      BOOST_CHECK(l.at(n).dtype() == dt);
    }
  };
  check_shape("f32", {2, 3}, dtypes::float32);
  BOOST_CHECK(values_of<float>(l.at("f32")) == (std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f}));
  BOOST_CHECK(std::signbit(values_of<float>(l.at("f32"))[4]));
  check_shape("f64", {2}, dtypes::float64);
  BOOST_CHECK(values_of<double>(l.at("f64")) == (std::vector<double>{3.141592653589793, -1e300}));
  check_shape("f16", {4}, dtypes::float16);
  BOOST_CHECK(values_of<uint16_t>(l.at("f16")) == (std::vector<uint16_t>{0x3C00, 0xC100, 0x7BFF, 0x0400}));
  check_shape("i64", {3}, dtypes::int64);
  BOOST_CHECK(values_of<int64_t>(l.at("i64")) == (std::vector<int64_t>{INT64_MIN, INT64_MAX, -1}));
  check_shape("u64", {2}, dtypes::uint64);
  BOOST_CHECK(values_of<uint64_t>(l.at("u64")) == (std::vector<uint64_t>{~0ull, 0}));
  check_shape("i32", {2, 3}, dtypes::int32);
  BOOST_CHECK(values_of<int32_t>(l.at("i32")) == (std::vector<int32_t>{-3, -2, -1, 0, 1, 2}));
  check_shape("u32", {2}, dtypes::uint32);
  BOOST_CHECK(values_of<uint32_t>(l.at("u32")) == (std::vector<uint32_t>{0xFFFFFFFFu, 7}));
  check_shape("i16", {2}, dtypes::int16);
  BOOST_CHECK(values_of<int16_t>(l.at("i16")) == (std::vector<int16_t>{-32768, 32767}));
  check_shape("u16", {2}, dtypes::uint16);
  BOOST_CHECK(values_of<uint16_t>(l.at("u16")) == (std::vector<uint16_t>{65535, 1}));
  check_shape("i8", {3}, dtypes::int8);
  BOOST_CHECK(values_of<int8_t>(l.at("i8")) == (std::vector<int8_t>{-128, 127, 0}));
  check_shape("u8", {2, 5}, dtypes::uint8);
  BOOST_CHECK(values_of<uint8_t>(l.at("u8")) ==
              (std::vector<uint8_t>{0, 25, 50, 75, 100, 125, 150, 175, 200, 225}));
  check_shape("bool", {3}, dtypes::bool_);
  BOOST_CHECK(values_of<uint8_t>(l.at("bool")) == (std::vector<uint8_t>{1, 0, 1}));
  check_shape("scalar", {}, dtypes::float32);
  BOOST_CHECK_EQUAL(values_of<float>(l.at("scalar")).at(0), 42.0f);
  check_shape("empty", {0, 3}, dtypes::float32);
  BOOST_CHECK(l.at("empty").to_bytes().empty());

  // Our own save of the same tensors reads back identically.
  TempDir dir;
  tg::safe_save(dir / "again.safetensors", l, meta);
  auto again = tg::safe_load(dir / "again.safetensors");
  for (const auto& [n, t] : l) BOOST_CHECK_MESSAGE(again.at(n).to_bytes() == t.to_bytes(), n);
}

BOOST_AUTO_TEST_CASE(json_reader) {
  // Escapes, surrogate pairs, whitespace, unknown fields, null metadata.
  auto f = parse(
      " \t\r\n{ \"__metadata__\" : { \"k\\u00e9\\ud83d\\ude00\" : \"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\" } ,"
      "\"x\\u0041\": {\"dtype\":\"U8\",\"shape\":[ 2 ],\"data_offsets\":[0,2],\"extra\":[1.5e3,-2,true,"
      "null,{\"a\":[]}]} }  ",
      2);
  BOOST_REQUIRE_EQUAL(f.entries.size(), 1u);
  BOOST_CHECK_EQUAL(f.entries[0].name, "xA");
  BOOST_CHECK(f.metadata.at("k\xC3\xA9\xF0\x9F\x98\x80") == "a\"b\\c/d\b\f\n\r\t");
  BOOST_CHECK(parse("{\"__metadata__\":null}").metadata.empty());
  BOOST_CHECK(parse("{\"\xE2\x82\xAC\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[0,1]}}", 1)
                  .entries.at(0)
                  .name == "\xE2\x82\xAC");
  // Zero-size tensors may share an offset with their neighbours.
  auto z = parse("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"c\":{\"dtype\":\"F32\",\"shape\":[2,0],\"data_offsets\":[4,4]}}",
                 4);
  BOOST_CHECK_EQUAL(z.entries.size(), 3u);
  BOOST_CHECK_EQUAL(z.entries[0].name, "a"); // header order is kept
}

BOOST_AUTO_TEST_CASE(malformed_prefix) {
  for (size_t n : {0u, 1u, 7u}) {
    std::vector<std::byte> b(n, std::byte{0});
    require_throws<SafetensorsError>([&] { tg::parse_safetensors(b, "short.st"); },
                                     {"short.st", "shorter than the 8-byte"});
  }
  auto b = image("{}  ", 0, 2); // N shorter than the JSON text: the rest counts as data
  require_throws<SafetensorsError>([&] { tg::parse_safetensors(b, "x"); }, {"not fully covered"});
  b = image("{}", 0, 100);
  require_throws<SafetensorsError>([&] { tg::parse_safetensors(b, "x"); },
                                   {"header size 100", "beyond the file size"});
  b = image("{}", 0, ~0ull);
  require_throws<SafetensorsError>([&] { tg::parse_safetensors(b, "x"); }, {"absurd"});
  b = image("{}", 0, 100'000'001);
  require_throws<SafetensorsError>([&] { tg::parse_safetensors(b, "x"); }, {"absurd"});
}

BOOST_AUTO_TEST_CASE(malformed_json) {
  bad("", 0, {"invalid JSON", "unexpected end"});
  bad("[]", 0, {"not a JSON object"});
  bad("{} x", 0, {"trailing characters"});
  bad("{}{}", 0, {"trailing characters"});
  bad("{\"__metadata__\":{\"a\":\"b\",}}", 0, {"expected a string key"});
  bad("{\"a\" 1}", 0, {"expected ':'"});
  bad("{\"__metadata__\":{}", 0, {"expected '}'"});
  bad("{\"__metadata__\":{}}}", 0, {"trailing characters"});
  bad("{\"a\":1}", 0, {"tensor \"a\": expected an object, found a number"});
  bad("{\"__metadata__\":{},\"__metadata__\":{}}", 0, {"duplicate key \"__metadata__\""});
  bad("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0, {"duplicate key \"k\""});
  bad("{\"__metadata__\":{\"k\":\"a\\q\"}}", 0, {"unknown escape \\q"});
  bad("{\"__metadata__\":{\"k\":\"a\\u12\"}}", 0, {"hex digit"});
  bad("{\"__metadata__\":{\"k\":\"\\ud800\"}}", 0, {"surrogate"});
  bad("{\"__metadata__\":{\"k\":\"\\ud800\\u0041\"}}", 0, {"surrogate"});
  bad("{\"__metadata__\":{\"k\":\"\\udc00\"}}", 0, {"lone low surrogate"});
  bad("{\"__metadata__\":{\"k\":\"a\nb\"}}", 0, {"control character"});
  bad("{\"__metadata__\":{\"k\":\"\xFF\"}}", 0, {"invalid UTF-8"});
  bad("{\"__metadata__\":{\"k\":\"\xC0\xAF\"}}", 0, {"invalid UTF-8"});     // overlong
  bad("{\"__metadata__\":{\"k\":\"\xED\xA0\x80\"}}", 0, {"invalid UTF-8"}); // encoded surrogate
  bad("{\"__metadata__\":{\"k\":\"abc", 0, {"unterminated string"});
  bad("{\"x\":{\"dtype\":\"U8\",\"shape\":[01],\"data_offsets\":[0,1]}}", 1, {"leading zero"});
  bad("{\"x\":tru}", 0, {"unexpected"});
  bad("{\"x\":-}", 0, {"bad number"});
  bad("{\"x\":1.}", 0, {"bad number"});
  std::string deep =
      "{\"__metadata__\":{\"k\":\"v\"},\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"z\":" +
      std::string(100, '[') + std::string(100, ']') + "}}";
  bad(deep, 1, {"nesting deeper than"});
  bad(std::string(100000, '['), 0, {"nesting deeper than"});
}

BOOST_AUTO_TEST_CASE(malformed_entries) {
  auto entry = [](const std::string& body) { return "{\"t\":{" + body + "}}"; };
  bad("{\"t\":[]}", 0, {"tensor \"t\"", "expected an object"});
  bad(entry("\"shape\":[1],\"data_offsets\":[0,1]"), 1, {"missing \"dtype\""});
  bad(entry("\"dtype\":\"U8\",\"data_offsets\":[0,1]"), 1, {"missing \"shape\""});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1]"), 1, {"missing \"data_offsets\""});
  bad(entry("\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]"), 1, {"unknown dtype \"F8_E4M3\""});
  bad(entry("\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]"), 4, {"unknown dtype \"f32\""});
  bad(entry("\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,1]"), 1, {"\"dtype\" must be a string"});
  bad(entry("\"dtype\":\"U8\",\"shape\":1,\"data_offsets\":[0,1]"), 1, {"\"shape\" must be an array"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1.0],\"data_offsets\":[0,1]"), 1,
      {"shape[0] must be an integer, found 1.0"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1e0],\"data_offsets\":[0,1]"), 1, {"must be an integer"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]"), 1, {"must not be negative"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[\"1\"],\"data_offsets\":[0,1]"), 1,
      {"must be an integer, found a string"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[18446744073709551616],\"data_offsets\":[0,1]"), 1,
      {"overflows 64 bits"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,1]"), 1, {"overflows"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[9223372036854775808],\"data_offsets\":[0,1]"), 1, {"overflows"});
  bad(entry("\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,1]"), 1, {"overflows"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]"), 1, {"must be [begin, end]"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]"), 1, {"must be [begin, end]"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":{}"), 1, {"must be [begin, end]"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[1,0]"), 1, {"begin <= end"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,-1]"), 1,
      {"data_offsets[1] must not be negative"});
  bad(entry("\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]"), 1,
      {"end 2", "beyond the data buffer of 1 bytes"});
  bad(entry("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"), 4,
      {"byte size 4", "does not match 2 elements of F32 (8 bytes)"});
  bad(entry("\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[0,1]"), 1, {"does not match"});
  bad("{\"__metadata__\":[]}", 0, {"\"__metadata__\" must be an object"});
  bad("{\"__metadata__\":{\"k\":1}}", 0, {"value of \"k\" must be a string, found a number"});
  bad("{\"__metadata__\":{\"k\":null}}", 0, {"must be a string"});
}

BOOST_AUTO_TEST_CASE(malformed_layout) {
  std::string a = "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}";
  std::string b_overlap = "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}";
  bad("{" + a + "," + b_overlap + "}", 6, {"tensor \"b\" [2, 6) overlaps tensor \"a\" [0, 4)"});
  std::string b_same = "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}";
  bad("{" + a + "," + b_same + "}", 4, {"overlaps"});
  std::string b_gap = "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[6,8]}";
  bad("{" + a + "," + b_gap + "}", 8, {"gap in the data buffer: bytes [4, 6)", "\"b\""});
  bad("{" + a + "}", 7, {"gap in the data buffer: bytes [4, 7)", "not fully covered"});
  bad("{}", 1, {"not fully covered"});
  std::string late = "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}";
  bad("{" + late + "}", 6, {"bytes [0, 2)"});
}

BOOST_AUTO_TEST_CASE(file_errors_name_the_file) {
  TempDir dir;
  auto missing = dir / "missing.safetensors";
  require_throws<SafetensorsError>([&] { tg::safe_load(missing); },
                                   {"missing.safetensors", "cannot be opened"});
  require_throws<SafetensorsError>([&] { tg::safe_load_metadata(missing); }, {"missing.safetensors"});
  auto p = dir / "bad.safetensors";
  write_file(p, image("{\"t\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1));
  require_throws<SafetensorsError>([&] { tg::safe_load(p); }, {"bad.safetensors", "unknown dtype \"Q\""});
  require_throws<SafetensorsError>([&] { tg::safe_load_metadata(p); }, {"bad.safetensors", "unknown dtype"});
  write_file(p, raw({1, 2, 3}));
  require_throws<SafetensorsError>([&] { tg::safe_load(p); }, {"bad.safetensors", "shorter"});
  require_throws<SafetensorsError>([&] { tg::safe_load_metadata(p); }, {"bad.safetensors", "shorter"});
  write_file(p, image("{}", 0, 50));
  require_throws<SafetensorsError>([&] { tg::safe_load_metadata(p); },
                                   {"bad.safetensors", "beyond the file size"});
  // Every error is a tg::Error.
  BOOST_CHECK_THROW(tg::safe_load(p), tg::Error);
}

// Non-regular files are refused before anything is read (so `tg train --load DIR` never asks for a
// 2^63-byte allocation), and a FIFO must not block the reader.
BOOST_AUTO_TEST_CASE(load_refuses_non_regular_files) {
  TempDir dir;
  fs::create_directory(dir / "ckpt");
  require_throws<SafetensorsError>([&] { tg::safe_load(dir / "ckpt"); },
                                   {"ckpt", "is a directory, not a regular file"});
  require_throws<SafetensorsError>([&] { tg::safe_load_metadata(dir / "ckpt"); }, {"ckpt", "is a directory"});
  BOOST_REQUIRE_EQUAL(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  require_throws<SafetensorsError>([&] { tg::safe_load(dir / "fifo"); }, {"fifo", "is a FIFO"});
}

// safe_save goes through a synced temporary file: the result is complete, no temporary is left
// behind, and a destination that cannot be written is a typed error naming it.
BOOST_AUTO_TEST_CASE(save_replaces_atomically) {
  TempDir dir;
  auto p = dir / "m.safetensors";
  tg::safe_save(p, {{"w", Tensor::from_vector(std::vector<float>{1, 2, 3}, {3})}}, {{"k", "v"}});
  tg::safe_save(p, {{"w", Tensor::from_vector(std::vector<float>{4, 5}, {2})}}, {{"k", "v2"}});
  auto back = tg::safe_load(p);
  BOOST_CHECK(values_of<float>(back.at("w")) == (std::vector<float>{4, 5}));
  BOOST_CHECK(tg::safe_load_metadata(p).at("k") == "v2");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path)) names.push_back(e.path().filename().string());
  BOOST_CHECK(names == std::vector<std::string>{"m.safetensors"});
  require_throws<SafetensorsError>(
      [&] {
        tg::safe_save(dir / "no-such-dir" / "m.safetensors", {{"w", back.at("w")}});
      },
      {"no-such-dir", "cannot create"});
  require_throws<SafetensorsError>(
      [&] {
        tg::safe_save(p, {{"w", back.at("w")}}, {{"k", "\xFF"}});
      },
      {"metadata value", "not valid UTF-8"});
}

BOOST_AUTO_TEST_SUITE_END()
