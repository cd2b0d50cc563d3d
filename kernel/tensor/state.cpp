// safetensors reader/writer with a small, strict JSON reader for the header (see state.hpp).
// Built with -DTG_STATE_PARSE_ONLY (the fuzzer, tools/fuzz) only the parsing half is compiled, so it
// needs no other object of the core.
#include "kernel/tensor/state.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>

namespace tg {
namespace {

constexpr uint64_t kMaxHeaderSize = 100'000'000; // the reference implementation's limit
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
[[maybe_unused]] const DtypeCode* find_dtype(DType dt) {
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
//
// A strict streaming reader: the header is read straight into SafetensorsFile; values nobody asks
// for (unknown fields) are validated and skipped without being stored, so memory stays
// proportional to what is kept, whatever the header holds.

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
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

struct Number {
  std::string text;             // the literal
  std::optional<uint64_t> uint; // set for a non-negative integer that fits 64 bits
};

class JsonReader {
public:
  explicit JsonReader(std::string_view src) : s_(src) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Problem{"invalid JSON header at byte " + std::to_string(pos_) + ": " + what};
  }
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  // What the next value is ("a string", ...), for messages; reading it later reports bad syntax.
  const char* next_kind() const {
    switch (peek()) {
    case '{':
      return "an object";
    case '[':
      return "an array";
    case '"':
      return "a string";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    case '\0':
      return "nothing";
    default:
      return (peek() == '-' || (peek() >= '0' && peek() <= '9')) ? "a number" : "an invalid value";
    }
  }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void finish() {
    skip_ws();
    if (!at_end()) fail("trailing characters after the JSON value");
  }

  // Reads an object; on_member(key) must read the member's value. Keys must be unique.
  template <class F> void object(int depth, F&& on_member) {
    check_depth(depth);
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
      std::string key = string();
      if (!seen.insert(key).second) {
        pos_ = key_pos;
        fail("duplicate key " + quote(key));
      }
      skip_ws();
      expect(':');
      skip_ws();
      on_member(std::move(key));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  // Reads an array; on_item(index) must read the item.
  template <class F> void array(int depth, F&& on_item) {
    check_depth(depth);
    expect('[');
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (size_t i = 0;; ++i) {
      skip_ws();
      on_item(i);
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  // Validates and discards any value.
  void skip(int depth) {
    check_depth(depth);
    if (at_end()) fail("unexpected end of the header");
    switch (s_[pos_]) {
    case '{':
      object(depth, [&](std::string) { skip(depth + 1); });
      break;
    case '[':
      array(depth, [&](size_t) { skip(depth + 1); });
      break;
    case '"':
      (void)string();
      break;
    case 't':
      literal("true");
      break;
    case 'f':
      literal("false");
      break;
    case 'n':
      literal("null");
      break;
    default:
      if (s_[pos_] == '-' || (s_[pos_] >= '0' && s_[pos_] <= '9'))
        (void)number();
      else
        fail("unexpected " + quote(s_.substr(pos_, 1)));
    }
  }

  std::string string() {
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
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
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
        default:
          --pos_;
          fail("unknown escape \\" + std::string(1, e));
        }
        continue;
      }
      size_t len = utf8_sequence(s_, pos_);
      if (len == 0) fail("invalid UTF-8");
      out.append(s_.substr(pos_, len));
      pos_ += len;
    }
  }

  Number number() {
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
    Number n{std::string(s_.substr(start, std::min<size_t>(pos_ - start, 40))), std::nullopt};
    if (pos_ - start > 40) n.text += "...";
    if (integral && !negative) {
      uint64_t x = 0;
      bool overflow = false;
      for (size_t i = start; i < pos_ && !overflow; ++i)
        overflow = __builtin_mul_overflow(x, uint64_t(10), &x) ||
                   __builtin_add_overflow(x, uint64_t(s_[i] - '0'), &x);
      if (!overflow) n.uint = x;
    }
    return n;
  }

private:
  std::string_view s_;
  size_t pos_ = 0;

  bool at_end() const { return pos_ >= s_.size(); }
  void check_depth(int depth) const {
    if (depth > kMaxJsonDepth) fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
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
  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    uint32_t cp = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        cp |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        cp |= uint32_t(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return cp;
  }
};

// A non-negative integer field (shape dimension, offset).
uint64_t read_uint(JsonReader& r, const std::string& what) {
  const char* kind = r.next_kind();
  if (std::string_view(kind) != "a number") {
    if (std::string_view(kind) == "an invalid value" || std::string_view(kind) == "nothing")
      r.skip(0); // reports it
    throw Problem{what + " must be an integer, found " + kind};
  }
  Number n = r.number();
  if (!n.uint) {
    if (n.text.find_first_of(".eE") != std::string::npos)
      throw Problem{what + " must be an integer, found " + n.text};
    if (n.text[0] == '-') throw Problem{what + " must not be negative, found " + n.text};
    throw Problem{what + " overflows 64 bits: " + n.text};
  }
  return *n.uint;
}

// Reads a tensor's object (the reader is at its value).
SafetensorsEntry read_entry(JsonReader& r, const std::string& name) {
  std::string tensor = "tensor " + quote(name);
  if (r.peek() != '{') {
    const char* kind = r.next_kind();
    r.skip(1);
    throw Problem{tensor + ": expected an object, found " + kind};
  }
  SafetensorsEntry e;
  e.name = name;
  std::optional<std::string> dt;
  std::optional<std::vector<uint64_t>> shape;
  std::optional<std::vector<uint64_t>> offsets;
  r.object(1, [&](std::string key) {
    if (key == "dtype") {
      if (r.peek() != '"') throw Problem{tensor + ": \"dtype\" must be a string, found " + r.next_kind()};
      dt = r.string();
    } else if (key == "shape") {
      if (r.peek() != '[') throw Problem{tensor + ": \"shape\" must be an array, found " + r.next_kind()};
      shape.emplace();
      r.array(2, [&](size_t i) {
        shape->push_back(read_uint(r, tensor + ": shape[" + std::to_string(i) + "]"));
      });
    } else if (key == "data_offsets") {
      std::string bad = tensor + ": \"data_offsets\" must be [begin, end]";
      if (r.peek() != '[') throw Problem{bad};
      offsets.emplace();
      r.array(2, [&](size_t i) {
        if (i >= 2) throw Problem{bad};
        offsets->push_back(read_uint(r, tensor + ": data_offsets[" + std::to_string(i) + "]"));
      });
      if (offsets->size() != 2) throw Problem{bad};
    } else {
      r.skip(2); // other keys are ignored, as the reference implementation does
    }
  });
  if (!dt) throw Problem{tensor + ": missing \"dtype\""};
  if (!shape) throw Problem{tensor + ": missing \"shape\""};
  if (!offsets) throw Problem{tensor + ": missing \"data_offsets\""};

  const DtypeCode* code = find_code(*dt);
  if (!code)
    throw Problem{tensor + ": unknown dtype " + quote(*dt) +
                  " (supported: BOOL U8 I8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64)"};
  e.dtype = code->dtype;

  uint64_t elements = 1;
  bool overflow = false;
  for (uint64_t d : *shape) {
    if (d > uint64_t(INT64_MAX)) overflow = true;
    if (__builtin_mul_overflow(elements, d, &elements)) overflow = true;
  }
  uint64_t bytes = 0;
  if (overflow || elements > uint64_t(INT64_MAX) ||
      __builtin_mul_overflow(elements, code->itemsize, &bytes)) {
    std::string dims;
    for (size_t i = 0; i < shape->size() && i < 16; ++i)
      dims += (i ? ", " : "") + std::to_string((*shape)[i]);
    if (shape->size() > 16) dims += ", ...";
    throw Problem{tensor + ": shape [" + dims + "] overflows (element count or byte size beyond 64 bits)"};
  }
  e.shape.assign(shape->begin(), shape->end());

  e.begin = (*offsets)[0];
  e.end = (*offsets)[1];
  if (e.begin > e.end)
    throw Problem{tensor + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                  "] is not [begin, end] with begin <= end"};
  if (e.end - e.begin != bytes)
    throw Problem{tensor + ": byte size " + std::to_string(e.end - e.begin) + " of data_offsets [" +
                  std::to_string(e.begin) + ", " + std::to_string(e.end) + "] does not match " +
                  std::to_string(elements) + " elements of " + code->code + " (" + std::to_string(bytes) +
                  " bytes)"};
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
  JsonReader r(header);
  r.skip_ws();
  if (r.peek() != '{') {
    const char* kind = r.next_kind();
    r.skip(0); // a syntax error is reported as such
    throw Problem{"header is " + std::string(kind) + ", not a JSON object"};
  }
  r.object(0, [&](std::string key) {
    if (key != "__metadata__") {
      f.entries.push_back(read_entry(r, key));
      return;
    }
    if (r.peek() == 'n') {
      r.skip(1);
      return;
    }
    if (r.peek() != '{')
      throw Problem{"\"__metadata__\" must be an object of strings, found " + std::string(r.next_kind())};
    r.object(1, [&](std::string k) {
      if (r.peek() != '"')
        throw Problem{"\"__metadata__\" value of " + quote(k) + " must be a string, found " + r.next_kind()};
      f.metadata.emplace(std::move(k), r.string());
    });
  });
  r.finish();
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
      throw Problem{"tensor " + quote(e->name) + " [" + std::to_string(e->begin) + ", " +
                    std::to_string(e->end) + ") overlaps tensor " + quote(prev->name) + " [" +
                    std::to_string(prev->begin) + ", " + std::to_string(prev->end) + ")"};
    if (e->begin > at)
      throw Problem{"gap in the data buffer: bytes [" + std::to_string(at) + ", " + std::to_string(e->begin) +
                    ") before tensor " + quote(e->name) + " belong to no tensor"};
    at = e->end;
    prev = e;
  }
  if (at != f.data_size)
    throw Problem{"gap in the data buffer: bytes [" + std::to_string(at) + ", " +
                  std::to_string(f.data_size) +
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
    raise(file, "header size " + std::to_string(n) + " is absurd (limit " + std::to_string(kMaxHeaderSize) +
                    " bytes)");
  if (n > file_size - 8)
    raise(file, "header size " + std::to_string(n) + " is beyond the file size (" +
                    std::to_string(file_size) + " bytes, 8 of them the size prefix)");
  return n;
}

SafetensorsFile parse_checked(std::string_view header, uint64_t n, uint64_t file_size,
                              const std::string& file) {
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
    if (c == '"')
      out += "\\\"";
    else if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += ch;
  }
  out += '"';
}
#endif

} // namespace

SafetensorsFile parse_safetensors(std::span<const std::byte> file, const std::string& name) {
  if (file.size() < 8)
    raise(name,
          "file of " + std::to_string(file.size()) + " bytes is shorter than the 8-byte header size prefix");
  uint64_t n = check_prefix(file.data(), file.size(), name);
  std::string_view header(reinterpret_cast<const char*>(file.data() + 8), size_t(n));
  return parse_checked(header, n, file.size(), name);
}

#ifndef TG_STATE_PARSE_ONLY

std::string safetensors_dtype_code(DType dt) {
  const DtypeCode* c = find_dtype(dt);
  if (!c) throw SafetensorsError("dtype " + dt.name() + " has no safetensors code");
  return c->code;
}

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
    if (name == "__metadata__")
      throw SafetensorsError("safe_save " + shown + ": \"__metadata__\" is reserved, not a tensor name");
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
  std::filesystem::path tmp = path; // same directory, so the rename is atomic
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw SafetensorsError("safe_save " + shown + ": cannot create " + show_path(tmp) + ": " +
                             std::strerror(errno));
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
  if (size < 8)
    raise(shown, "file of " + std::to_string(size) + " bytes is shorter than the 8-byte header size prefix");
  std::vector<std::byte> prefix = read_file(path, shown, 8);
  if (prefix.size() < 8) raise(shown, "file is shorter than the 8-byte header size prefix");
  uint64_t n = check_prefix(prefix.data(), size, shown);
  std::vector<std::byte> head = read_file(path, shown, 8 + n);
  if (head.size() < 8 + n) raise(shown, "file shrank while being read");
  std::string_view header(reinterpret_cast<const char*>(head.data() + 8), size_t(n));
  return parse_checked(header, n, size, shown).metadata;
}

#endif // TG_STATE_PARSE_ONLY

} // namespace tg
