// safetensors reader/writer with a small, strict JSON reader for the header (see state.hpp).
// Built with -DTG_STATE_PARSE_ONLY (the fuzzer, tools/fuzz) only the parsing half is compiled, so it
// needs no other object of the core.
#include "kernel/tensor/state.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <atomic>
#include <unordered_set>
#include <unistd.h>
#include <string_view>
#include <system_error>
#include <utility>

namespace tg {
namespace {

constexpr uint64_t kMaxHeaderSize = 100'000'000;  // the reference implementation's limit
constexpr int kMaxJsonDepth = 32;

// ---------------------------------------------------------------------------------------------
// dtype codes

struct DtypeCode {
  const char* code;
  DType dtype;
  uint64_t itemsize;
};
constexpr std::array<DtypeCode, 13> kDtypeCodes{{
    {"BOOL", dtypes::bool_, 1},
    {"U8", dtypes::uint8, 1},
    {"I8", dtypes::int8, 1},
    {"I16", dtypes::int16, 2},
    {"U16", dtypes::uint16, 2},
    {"I32", dtypes::int32, 4},
    {"U32", dtypes::uint32, 4},
    {"I64", dtypes::int64, 8},
    {"U64", dtypes::uint64, 8},
    {"F16", dtypes::float16, 2},
    {"BF16", dtypes::bfloat16, 2},
    {"F32", dtypes::float32, 4},
    {"F64", dtypes::float64, 8},
}};

const DtypeCode* find_code(std::string_view code) {
  for (const auto& c : kDtypeCodes)
    if (code == c.code) return &c;
  return nullptr;
}
const DtypeCode* find_dtype(DType dt) {
  for (const auto& c : kDtypeCodes)
    if (dt == c.dtype) return &c;
  return nullptr;
}

// Shows a user-supplied string in a message: quoted, control and non-ASCII bytes escaped, cut
// after 80 bytes.
std::string quote(std::string_view s) {
  std::string out = "\"";
  size_t n = std::min<size_t>(s.size(), 80);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  if (s.size() > n) out += "...";
  return out + "\"";
}

// ---------------------------------------------------------------------------------------------
// JSON

struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  std::string text;                               // String: the decoded value; Number: the literal
  std::optional<uint64_t> uint;                   // Number: set for a non-negative integer that fits
  std::vector<Json> items;                        // Array
  std::vector<std::pair<std::string, Json>> members;  // Object, in source order, keys unique

  const char* kind_name() const {
    switch (kind) {
      case Kind::Null: return "null";
      case Kind::Bool: return "a boolean";
      case Kind::Number: return "a number";
      case Kind::String: return "a string";
      case Kind::Array: return "an array";
      case Kind::Object: return "an object";
    }
    return "?";
  }
  const Json* find(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

// Thrown inside the parser; parse_safetensors prefixes the file name.
struct Problem {
  std::string what;
};

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 if it is not valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

class JsonReader {
 public:
  explicit JsonReader(std::string_view src) : s_(src) {}

  Json parse_document() {
    skip_ws();
    Json v = parse_value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("trailing characters after the JSON value");
    return v;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw Problem{"invalid JSON header at byte " + std::to_string(pos_) + ": " + what};
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    if (at_end()) fail(std::string("expected '") + c + "', found the end of the header");
    if (s_[pos_] != c) fail(std::string("expected '") + c + "', found " + quote(s_.substr(pos_, 1)));
    ++pos_;
  }
  void literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("unexpected " + quote(s_.substr(pos_, 1)));
    pos_ += word.size();
  }

  Json parse_value(int depth) {
    if (depth > kMaxJsonDepth) fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (at_end()) fail("unexpected end of the header");
    Json v;
    switch (s_[pos_]) {
      case '{': parse_object(v, depth); break;
      case '[': parse_array(v, depth); break;
      case '"':
        v.kind = Json::Kind::String;
        v.text = parse_string();
        break;
      case 't':
        literal("true");
        v.kind = Json::Kind::Bool, v.boolean = true;
        break;
      case 'f':
        literal("false");
        v.kind = Json::Kind::Bool;
        break;
      case 'n': literal("null"); break;
      default:
        if (s_[pos_] == '-' || (s_[pos_] >= '0' && s_[pos_] <= '9')) parse_number(v);
        else fail("unexpected " + quote(s_.substr(pos_, 1)));
    }
    return v;
  }

  void parse_object(Json& v, int depth) {
    v.kind = Json::Kind::Object;
    expect('{');
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    std::unordered_set<std::string> seen;
    for (;;) {
      skip_ws();
      if (peek() != '"') fail("expected a string key");
      size_t key_pos = pos_;
      std::string key = parse_string();
      if (!seen.insert(key).second) {
        pos_ = key_pos;
        fail("duplicate key " + quote(key));
      }
      skip_ws();
      expect(':');
      skip_ws();
      Json value = parse_value(depth + 1);
      v.members.emplace_back(std::move(key), std::move(value));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Json& v, int depth) {
    v.kind = Json::Kind::Array;
    expect('[');
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_ws();
      v.items.push_back(parse_value(depth + 1));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    uint32_t cp = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') cp |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') cp |= uint32_t(c - 'A' + 10);
      else fail("bad hex digit in \\u escape");
    }
    return cp;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("unescaped control character in a string");
      if (c == '\\') {
        ++pos_;
        if (at_end()) fail("unterminated escape");
        char e = s_[pos_++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            uint32_t cp = hex4();
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (s_.substr(pos_, 2) != "\\u") fail("high surrogate not followed by a low surrogate");
              pos_ += 2;
              uint32_t lo = hex4();
              if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate not followed by a low surrogate");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            append_utf8(out, cp);
            break;
          }
          default: --pos_; fail("unknown escape \\" + std::string(1, e));
        }
        continue;
      }
      size_t len = utf8_sequence(s_, pos_);
      if (len == 0) fail("invalid UTF-8");
      out.append(s_.substr(pos_, len));
      pos_ += len;
    }
  }

  void parse_number(Json& v) {
    v.kind = Json::Kind::Number;
    size_t start = pos_;
    bool negative = false, integral = true;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    auto digit = [&] { return !at_end() && s_[pos_] >= '0' && s_[pos_] <= '9'; };
    if (!digit()) fail("bad number");
    if (s_[pos_] == '0') {
      ++pos_;
      if (digit()) fail("leading zero in a number");
    } else {
      while (digit()) ++pos_;
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!digit()) fail("bad number");
      while (digit()) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digit()) fail("bad number");
      while (digit()) ++pos_;
    }
    v.text = std::string(s_.substr(start, pos_ - start));
    if (integral && !negative) {
      uint64_t x = 0;
      bool overflow = false;
      for (char c : v.text) {
        if (__builtin_mul_overflow(x, uint64_t(10), &x) || __builtin_add_overflow(x, uint64_t(c - '0'), &x)) {
          overflow = true;
          break;
        }
      }
      if (!overflow) v.uint = x;
    }
  }
};

// A non-negative integer field (shape dimension, offset).
uint64_t as_uint(const Json& v, const std::string& what) {
  if (v.kind != Json::Kind::Number) throw Problem{what + " must be an integer, found " + v.kind_name()};
  if (!v.uint) {
    if (v.text.find_first_of(".eE") != std::string::npos)
      throw Problem{what + " must be an integer, found " + v.text};
    if (!v.text.empty() && v.text[0] == '-') throw Problem{what + " must not be negative, found " + v.text};
    throw Problem{what + " overflows 64 bits: " + v.text};
  }
  return *v.uint;
}

SafetensorsEntry parse_entry(const std::string& name, const Json& v) {
  std::string tensor = "tensor " + quote(name);
  if (v.kind != Json::Kind::Object) throw Problem{tensor + ": expected an object, found " + v.kind_name()};
  SafetensorsEntry e;
  e.name = name;
  const Json* dt = v.find("dtype");
  const Json* shape = v.find("shape");
  const Json* offsets = v.find("data_offsets");
  if (!dt) throw Problem{tensor + ": missing \"dtype\""};
  if (!shape) throw Problem{tensor + ": missing \"shape\""};
  if (!offsets) throw Problem{tensor + ": missing \"data_offsets\""};
  // Other keys are ignored, as the reference implementation does.

  if (dt->kind != Json::Kind::String) throw Problem{tensor + ": \"dtype\" must be a string"};
  const DtypeCode* code = find_code(dt->text);
  if (!code)
    throw Problem{tensor + ": unknown dtype " + quote(dt->text) +
                  " (supported: BOOL U8 I8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64)"};
  e.dtype = code->dtype;

  if (shape->kind != Json::Kind::Array) throw Problem{tensor + ": \"shape\" must be an array"};
  uint64_t elements = 1;
  bool overflow = false;
  for (size_t i = 0; i < shape->items.size(); ++i) {
    uint64_t d = as_uint(shape->items[i], tensor + ": shape[" + std::to_string(i) + "]");
    if (d > uint64_t(INT64_MAX)) overflow = true;
    if (__builtin_mul_overflow(elements, d, &elements)) overflow = true;
    e.shape.push_back(int64_t(d & uint64_t(INT64_MAX)));
  }
  uint64_t bytes = 0;
  if (overflow || elements > uint64_t(INT64_MAX) || __builtin_mul_overflow(elements, code->itemsize, &bytes)) {
    std::string dims;
    for (const auto& d : shape->items) dims += (dims.empty() ? "" : ", ") + d.text;
    throw Problem{tensor + ": shape [" + dims + "] overflows (element count or byte size beyond 64 bits)"};
  }

  if (offsets->kind != Json::Kind::Array || offsets->items.size() != 2)
    throw Problem{tensor + ": \"data_offsets\" must be [begin, end]"};
  e.begin = as_uint(offsets->items[0], tensor + ": data_offsets[0]");
  e.end = as_uint(offsets->items[1], tensor + ": data_offsets[1]");
  if (e.begin > e.end)
    throw Problem{tensor + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                  "] is not [begin, end] with begin <= end"};
  if (e.end - e.begin != bytes)
    throw Problem{tensor + ": byte size " + std::to_string(e.end - e.begin) + " of data_offsets [" +
                  std::to_string(e.begin) + ", " + std::to_string(e.end) + "] does not match " +
                  std::to_string(elements) + " elements of " + code->code + " (" + std::to_string(bytes) + " bytes)"};
  return e;
}

uint64_t read_le64(const std::byte* p) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint64_t(p[i]);
  return n;
}

// Validates the header text given the size of the whole file.
SafetensorsFile parse_header(std::string_view header, uint64_t header_size, uint64_t file_size) {
  SafetensorsFile f;
  f.header_size = header_size;
  f.data_start = 8 + header_size;
  f.data_size = file_size - f.data_start;
  Json doc = JsonReader(header).parse_document();
  if (doc.kind != Json::Kind::Object) throw Problem{"header is " + std::string(doc.kind_name()) + ", not a JSON object"};
  for (const auto& [key, value] : doc.members) {
    if (key == "__metadata__") {
      if (value.kind == Json::Kind::Null) continue;
      if (value.kind != Json::Kind::Object) throw Problem{"\"__metadata__\" must be an object of strings"};
      for (const auto& [k, v] : value.members) {
        if (v.kind != Json::Kind::String)
          throw Problem{"\"__metadata__\" value of " + quote(k) + " must be a string, found " + v.kind_name()};
        f.metadata.emplace(k, v.text);
      }
      continue;
    }
    f.entries.push_back(parse_entry(key, value));
  }
  // Coverage: sorted by offsets, each tensor must start where the previous ended and the last one
  // must end at the end of the buffer.
  std::vector<const SafetensorsEntry*> order;
  for (const auto& e : f.entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  uint64_t at = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry* e : order) {
    if (e->end > f.data_size)
      throw Problem{"tensor " + quote(e->name) + ": data_offsets end " + std::to_string(e->end) +
                    " is beyond the data buffer of " + std::to_string(f.data_size) + " bytes"};
    if (e->begin < at)
      throw Problem{"tensor " + quote(e->name) + " [" + std::to_string(e->begin) + ", " + std::to_string(e->end) +
                    ") overlaps tensor " + quote(prev->name) + " [" + std::to_string(prev->begin) + ", " +
                    std::to_string(prev->end) + ")"};
    if (e->begin > at)
      throw Problem{"gap in the data buffer: bytes [" + std::to_string(at) + ", " + std::to_string(e->begin) +
                    ") before tensor " + quote(e->name) + " belong to no tensor"};
    at = e->end;
    prev = e;
  }
  if (at != f.data_size)
    throw Problem{"gap in the data buffer: bytes [" + std::to_string(at) + ", " + std::to_string(f.data_size) +
                  ") at its end belong to no tensor (data buffer not fully covered)"};
  return f;
}

[[noreturn]] void raise(const std::string& file, const std::string& what) {
  throw SafetensorsError("safetensors file " + file + ": " + what);
}

// Checks the 8-byte prefix; returns N.
uint64_t check_prefix(const std::byte* prefix, uint64_t file_size, const std::string& file) {
  uint64_t n = read_le64(prefix);
  if (n > kMaxHeaderSize)
    raise(file, "header size " + std::to_string(n) + " is absurd (limit " + std::to_string(kMaxHeaderSize) + " bytes)");
  if (n > file_size - 8)
    raise(file, "header size " + std::to_string(n) + " is beyond the file size (" + std::to_string(file_size) +
                    " bytes, 8 of them the size prefix)");
  return n;
}

SafetensorsFile parse_checked(std::string_view header, uint64_t n, uint64_t file_size, const std::string& file) {
  try {
    return parse_header(header, n, file_size);
  } catch (const Problem& p) {
    raise(file, p.what);
  }
}

#ifndef TG_STATE_PARSE_ONLY
std::string show_path(const std::filesystem::path& p) { return quote(p.string()); }

std::vector<std::byte> read_file(const std::filesystem::path& path, const std::string& shown,
                                 std::optional<uint64_t> limit = {}) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(shown, "cannot be opened: " + std::string(std::strerror(errno)));
  in.seekg(0, std::ios::end);
  auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  uint64_t n = limit ? std::min(*limit, size) : size;
  std::vector<std::byte> data(n);
  if (n && !in.read(reinterpret_cast<char*>(data.data()), std::streamsize(n))) raise(shown, "read failed");
  return data;
}

uint64_t file_size_of(const std::filesystem::path& path, const std::string& shown) {
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) raise(shown, "cannot be read: " + ec.message());
  return size;
}

void json_string(std::string& out, std::string_view s, const std::string& what) {
  for (size_t i = 0; i < s.size();) {
    size_t len = utf8_sequence(s, i);
    if (len == 0) throw SafetensorsError("safe_save: " + what + " " + quote(s) + " is not valid UTF-8");
    i += len;
  }
  out += '"';
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += ch;
  }
  out += '"';
}
#endif

}  // namespace

SafetensorsFile parse_safetensors(std::span<const std::byte> file, const std::string& name) {
  if (file.size() < 8)
    raise(name, "file of " + std::to_string(file.size()) + " bytes is shorter than the 8-byte header size prefix");
  uint64_t n = check_prefix(file.data(), file.size(), name);
  std::string_view header(reinterpret_cast<const char*>(file.data() + 8), size_t(n));
  return parse_checked(header, n, file.size(), name);
}

std::string safetensors_dtype_code(DType dt) {
  const DtypeCode* c = find_dtype(dt);
  if (!c) throw SafetensorsError("dtype " + dt.name() + " has no safetensors code");
  return c->code;
}

#ifndef TG_STATE_PARSE_ONLY

void safe_save(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
               const std::map<std::string, std::string>& metadata) {
  std::string shown = show_path(path);
  std::vector<std::vector<std::byte>> blobs;
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      json_string(header, k, "metadata key");
      header += ':';
      json_string(header, v, "metadata value");
    }
    header += '}';
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") throw SafetensorsError("safe_save " + shown + ": \"__metadata__\" is reserved, not a tensor name");
    std::string code = safetensors_dtype_code(t.dtype());
    blobs.push_back(t.to_bytes());
    if (header.size() > 1) header += ',';
    json_string(header, name, "tensor name");
    header += ":{\"dtype\":\"" + code + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape().size(); ++i) header += (i ? "," : "") + std::to_string(t.shape()[i]);
    uint64_t end = offset + blobs.back().size();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');

  static std::atomic<uint64_t> counter{0};
  std::filesystem::path tmp = path;  // same directory, so the rename is atomic
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw SafetensorsError("safe_save " + shown + ": cannot create " + show_path(tmp) + ": " + std::strerror(errno));
    unsigned char prefix[8];
    uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(n >> (8 * i));
    out.write(reinterpret_cast<const char*>(prefix), 8);
    out.write(header.data(), std::streamsize(header.size()));
    for (const auto& b : blobs) out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw SafetensorsError("safe_save " + shown + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw SafetensorsError("safe_save " + shown + ": cannot rename the temporary file: " + ec.message());
  }
}

std::map<std::string, Tensor> safe_load(const std::filesystem::path& path, const std::string& device) {
  std::string shown = show_path(path);
  std::vector<std::byte> data = read_file(path, shown);
  SafetensorsFile f = parse_safetensors(data, shown);
  std::map<std::string, Tensor> out;
  for (const auto& e : f.entries) {
    std::span<const std::byte> bytes(data.data() + f.data_start + e.begin, size_t(e.end - e.begin));
    out.emplace(e.name, Tensor::from_bytes(bytes, e.shape, e.dtype, device));
  }
  return out;
}

std::map<std::string, std::string> safe_load_metadata(const std::filesystem::path& path) {
  std::string shown = show_path(path);
  uint64_t size = file_size_of(path, shown);
  if (size < 8) raise(shown, "file of " + std::to_string(size) + " bytes is shorter than the 8-byte header size prefix");
  std::vector<std::byte> prefix = read_file(path, shown, 8);
  if (prefix.size() < 8) raise(shown, "file is shorter than the 8-byte header size prefix");
  uint64_t n = check_prefix(prefix.data(), size, shown);
  std::vector<std::byte> head = read_file(path, shown, 8 + n);
  if (head.size() < 8 + n) raise(shown, "file shrank while being read");
  std::string_view header(reinterpret_cast<const char*>(head.data() + 8), size_t(n));
  return parse_checked(header, n, size, shown).metadata;
}

#endif  // TG_STATE_PARSE_ONLY

}  // namespace tg
