// safetensors reader/writer (see state.hpp); the header is parsed with nlohmann::json's SAX
// interface plus safetensors' own checks. Built with -DTG_STATE_PARSE_ONLY (the fuzzer, tools/fuzz)
// only the parsing half is compiled, so it needs no other object of the core.
#include "kernel/tensor/state.hpp"

#include <nlohmann/json.hpp>
#include <tg/sdk/bytes.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
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
// JSON header
//
// nlohmann::json's SAX interface reads the header straight into SafetensorsFile: values nobody
// asks for (unknown fields) are checked by the parser and dropped, so memory stays proportional to
// what is kept. The parser checks the syntax (strings, UTF-8, escapes, numbers, trailing text);
// HeaderReader adds what safetensors needs on top: unique keys, the shape of each entry, integer
// fields that fit 64 bits, and a nesting limit.

// Thrown inside the reader; parse_safetensors prefixes the file name.
struct Problem {
  std::string what;
};

// What a JSON value is ("a string", ...), for messages.
enum class Kind { Null, Boolean, Number, String, Object, Array };
const char* kind_name(Kind k) {
  switch (k) {
  case Kind::Null:
    return "null";
  case Kind::Boolean:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Object:
    return "an object";
  case Kind::Array:
    return "an array";
  }
  return "a value";
}

// nlohmann's syntax messages in this file's words (the tests and users grep for these); the first
// fragment found wins, anything else keeps nlohmann's own text.
constexpr std::array<std::pair<const char*, const char*>, 9> kSyntaxWords{{
    {"'\\u' must be followed by 4 hex digits", "bad hex digit in \\u escape"},
    {"must be followed by U+DC00..U+DFFF", "high surrogate not followed by a low surrogate"},
    {"must follow U+D800..U+DBFF", "lone low surrogate in \\u escape"},
    {"control character", "unescaped control character in a string"},
    {"ill-formed UTF-8 byte", "invalid UTF-8"},
    {"missing closing quote", "unterminated string"},
    {"invalid number", "bad number"},
    {"; expected end of input", "trailing characters after the JSON value"},
    {"parsing object key", "expected a string key"},
}};

std::string syntax_message(std::string_view header, size_t position, const std::string& detail) {
  // nlohmann reports position as characters read; the offending byte is the last one.
  size_t at = position ? position - 1 : 0;
  std::string head = "invalid JSON header at byte " + std::to_string(at) + ": ";
  if (detail.find("forbidden character after backslash") != std::string::npos && at < header.size())
    return head + "unknown escape \\" + std::string(1, header[at]);
  for (const auto& [theirs, ours] : kSyntaxWords)
    if (detail.find(theirs) != std::string::npos) return head + ours;
  if (detail.find("invalid literal") != std::string::npos)
    return head + "unexpected " + (at < header.size() ? quote(header.substr(at, 1)) : "end of the header") +
           " (not a value, nor true, false or null)";
  // "[01]" lexes as 0 then 1: a number right after a lone 0 is a leading zero.
  if (detail.find("unexpected number literal") != std::string::npos && at < header.size()) {
    size_t start = at + 1; // the unexpected number ends at `at`; find where it starts
    while (start > 0 && header[start - 1] >= '0' && header[start - 1] <= '9') --start;
    if (start < at + 1 && start + 1 < header.size() && header[start] == '0' &&
        (start == 0 || header[start - 1] < '0' || header[start - 1] > '9'))
      return head + "leading zero in a number";
  }
  // Keep nlohmann's "unexpected ...; expected ..." part, in this file's terms.
  std::string text = detail;
  if (auto dash = text.find(" - "); dash != std::string::npos) text = text.substr(dash + 3);
  for (size_t p; (p = text.find("end of input")) != std::string::npos;)
    text.replace(p, 12, "end of the header");
  return head + text;
}

class HeaderReader {
public:
  explicit HeaderReader(std::string_view header, SafetensorsFile& out) : header_(header), f_(out) {}

  // Call after the parse: throws unless the header was an object.
  void finish() const {
    if (top_kind_) throw Problem{"header is " + std::string(kind_name(*top_kind_)) + ", not a JSON object"};
  }

  // nlohmann SAX events. Each returns true (keep going) or throws Problem.
  bool null() { return scalar(Kind::Null); }
  bool boolean(bool) { return scalar(Kind::Boolean); }
  bool number_integer(int64_t v) { // only literals with a leading '-' arrive here
    return number(v == 0 ? "-0" : std::to_string(v), std::nullopt);
  }
  bool number_unsigned(uint64_t v) { return number(std::to_string(v), v); }
  bool number_float(double, const std::string& text) { return number(text, std::nullopt); }
  bool string(std::string& s) {
    Frame* f = top();
    if (f && f->role == Role::Entry && key_ == "dtype") {
      entry_.dtype_code = std::move(s);
      return true;
    }
    if (f && f->role == Role::Metadata) {
      f_.metadata.emplace(key_, std::move(s));
      return true;
    }
    return scalar(Kind::String);
  }
  bool binary(std::vector<uint8_t>&) { return scalar(Kind::String); } // not produced by JSON input
  bool key(std::string& k) {
    Frame* f = top();
    if (!f->keys.insert(k).second) throw Problem{"duplicate key " + quote(k)};
    key_ = std::move(k);
    return true;
  }
  bool start_object(size_t) { return open(Kind::Object); }
  bool start_array(size_t) { return open(Kind::Array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& e) {
    throw Problem{syntax_message(header_, position, e.what())};
  }

private:
  // What a container is, for the events inside it.
  enum class Role { Top, Metadata, Entry, Shape, Offsets, Skip };
  struct Frame {
    Role role;
    std::unordered_set<std::string> keys; // objects: the keys seen so far
    size_t items = 0;                     // arrays: items seen so far
  };
  // The entry being read: raw fields, checked when its object closes.
  struct PendingEntry {
    std::string name;
    std::optional<std::string> dtype_code;
    std::optional<std::vector<uint64_t>> shape, offsets;
  };

  std::string_view header_;
  SafetensorsFile& f_;
  std::vector<Frame> stack_;
  std::string key_; // the last key of the innermost object
  PendingEntry entry_;
  std::optional<Kind> top_kind_; // set when the header is not an object

  Frame* top() { return stack_.empty() ? nullptr : &stack_.back(); }
  std::string tensor() const { return "tensor " + quote(entry_.name); }

  // Which role a value of `kind` takes here; throws if it does not belong.
  Role place(Kind kind) {
    Frame* f = top();
    if (!f) {
      if (kind == Kind::Object) return Role::Top;
      top_kind_ = kind; // reported after the parse, so a syntax error inside is reported as such
      return Role::Skip;
    }
    switch (f->role) {
    case Role::Top:
      if (key_ == "__metadata__") {
        if (kind == Kind::Null) return Role::Skip;
        if (kind != Kind::Object)
          throw Problem{"\"__metadata__\" must be an object of strings, found " +
                        std::string(kind_name(kind))};
        return Role::Metadata;
      }
      entry_ = PendingEntry{key_, std::nullopt, std::nullopt, std::nullopt};
      if (kind != Kind::Object) throw Problem{tensor() + ": expected an object, found " + kind_name(kind)};
      return Role::Entry;
    case Role::Metadata:
      throw Problem{"\"__metadata__\" value of " + quote(key_) + " must be a string, found " +
                    kind_name(kind)};
    case Role::Entry:
      if (key_ == "dtype") throw Problem{tensor() + ": \"dtype\" must be a string, found " + kind_name(kind)};
      if (key_ == "shape") {
        if (kind != Kind::Array)
          throw Problem{tensor() + ": \"shape\" must be an array, found " + kind_name(kind)};
        entry_.shape.emplace();
        return Role::Shape;
      }
      if (key_ == "data_offsets") {
        if (kind != Kind::Array) throw Problem{tensor() + ": \"data_offsets\" must be [begin, end]"};
        entry_.offsets.emplace();
        return Role::Offsets;
      }
      return Role::Skip; // other keys are ignored, as the reference implementation does
    case Role::Shape:
    case Role::Offsets:
      throw Problem{item_name(*f) + " must be an integer, found " + kind_name(kind)};
    case Role::Skip:
      return Role::Skip;
    }
    return Role::Skip;
  }

  std::string item_name(const Frame& f) const {
    return tensor() + (f.role == Role::Shape ? ": shape[" : ": data_offsets[") + std::to_string(f.items) +
           "]";
  }

  bool scalar(Kind kind) {
    (void)place(kind);
    return true;
  }

  bool open(Kind kind) {
    Role role = place(kind);
    if (stack_.size() > size_t(kMaxJsonDepth))
      throw Problem{"invalid JSON header: nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    stack_.push_back(Frame{role, {}, 0});
    return true;
  }

  bool close() {
    Role role = stack_.back().role;
    size_t items = stack_.back().items;
    stack_.pop_back();
    if (role == Role::Offsets && items != 2)
      throw Problem{tensor() + ": \"data_offsets\" must be [begin, end]"};
    if (role == Role::Entry) f_.entries.push_back(finish_entry());
    return true;
  }

  // A shape dimension or an offset: a non-negative integer that fits 64 bits.
  bool number(const std::string& text, std::optional<uint64_t> value) {
    Frame* f = top();
    if (!f || (f->role != Role::Shape && f->role != Role::Offsets)) return scalar(Kind::Number);
    if (f->role == Role::Offsets && f->items >= 2)
      throw Problem{tensor() + ": \"data_offsets\" must be [begin, end]"};
    std::string what = item_name(*f);
    std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
    if (!value) {
      if (text.find_first_of(".eE") != std::string::npos)
        throw Problem{what + " must be an integer, found " + shown};
      if (text[0] == '-') throw Problem{what + " must not be negative, found " + shown};
      throw Problem{what + " overflows 64 bits: " + shown};
    }
    (f->role == Role::Shape ? *entry_.shape : *entry_.offsets).push_back(*value);
    ++f->items;
    return true;
  }

  SafetensorsEntry finish_entry() {
    const std::string tensor = this->tensor();
    if (!entry_.dtype_code) throw Problem{tensor + ": missing \"dtype\""};
    if (!entry_.shape) throw Problem{tensor + ": missing \"shape\""};
    if (!entry_.offsets) throw Problem{tensor + ": missing \"data_offsets\""};
    const DtypeCode* code = find_code(*entry_.dtype_code);
    if (!code)
      throw Problem{tensor + ": unknown dtype " + quote(*entry_.dtype_code) +
                    " (supported: BOOL U8 I8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64)"};
    SafetensorsEntry e;
    e.name = entry_.name;
    e.dtype = code->dtype;
    const std::vector<uint64_t>& shape = *entry_.shape;
    uint64_t elements = 1;
    bool overflow = false;
    for (uint64_t d : shape) {
      if (d > uint64_t(INT64_MAX)) overflow = true;
      if (__builtin_mul_overflow(elements, d, &elements)) overflow = true;
    }
    uint64_t bytes = 0;
    if (overflow || elements > uint64_t(INT64_MAX) ||
        __builtin_mul_overflow(elements, code->itemsize, &bytes)) {
      std::string dims;
      for (size_t i = 0; i < shape.size() && i < 16; ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
      if (shape.size() > 16) dims += ", ...";
      throw Problem{tensor + ": shape [" + dims + "] overflows (element count or byte size beyond 64 bits)"};
    }
    e.shape.assign(shape.begin(), shape.end());
    e.begin = (*entry_.offsets)[0];
    e.end = (*entry_.offsets)[1];
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
};

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
  HeaderReader reader(header, f);
  nlohmann::json::sax_parse(header.begin(), header.end(), &reader);
  reader.finish();
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

// The whole file, or its first `limit` bytes; directories and other non-regular files are refused
// before anything is allocated.
std::vector<std::byte> read_file(const std::filesystem::path& path, const std::string& shown,
                                 uint64_t limit = std::numeric_limits<uint64_t>::max()) {
  try {
    return sdk::read_file(path, limit);
  } catch (const sdk::FileError& e) {
    raise(shown, e.what());
  }
}

uint64_t file_size_of(const std::filesystem::path& path, const std::string& shown) {
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) raise(shown, "cannot be read: " + ec.message());
  return size;
}

// A JSON string literal; nlohmann refuses text that is not valid UTF-8.
void json_string(std::string& out, const std::string& s, const std::string& what) {
  try {
    out += nlohmann::json(s).dump();
  } catch (const nlohmann::json::type_error&) {
    throw SafetensorsError("safe_save: " + what + " " + quote(s) + " is not valid UTF-8");
  }
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

  std::byte prefix[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) prefix[i] = std::byte(uint8_t(n >> (8 * i)));
  std::vector<std::span<const std::byte>> parts{prefix, std::as_bytes(std::span(header))};
  for (const auto& b : blobs) parts.emplace_back(b);
  try {
    sdk::write_file_durably(path, parts);
  } catch (const sdk::FileError& e) {
    throw SafetensorsError("safe_save " + shown + ": " + e.what());
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
  std::vector<std::byte> prefix = read_file(path, shown, 8); // refuses what is not a regular file
  uint64_t size = file_size_of(path, shown);
  if (prefix.size() < 8 || size < 8)
    raise(shown, "file of " + std::to_string(size) + " bytes is shorter than the 8-byte header size prefix");
  uint64_t n = check_prefix(prefix.data(), size, shown);
  std::vector<std::byte> head = read_file(path, shown, 8 + n);
  if (head.size() < 8 + n) raise(shown, "file shrank while being read");
  std::string_view header(reinterpret_cast<const char*>(head.data() + 8), size_t(n));
  return parse_checked(header, n, size, shown).metadata;
}

#endif // TG_STATE_PARSE_ONLY

} // namespace tg
