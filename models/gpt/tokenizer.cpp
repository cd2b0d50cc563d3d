#include "models/gpt/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>

namespace tg::models {
namespace {

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
// ASCII letters, and every byte of a multi-byte UTF-8 character (see the header).
bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
bool is_other(unsigned char c) { return !is_space(c) && !is_digit(c) && !is_letter(c); }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

std::vector<int32_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (unsigned char c : text) ids.push_back(int32_t(c));
  return ids;
}

std::string ByteTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  s.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id > 255)
      throw TokenizerError("byte tokenizer: id " + std::to_string(id) + " is not a byte");
    s += char(id);
  }
  return s;
}

Gpt2Tokenizer::Gpt2Tokenizer(const std::filesystem::path& vocab_json,
                             const std::filesystem::path& merges_txt) {
  // GPT-2's byte -> printable character map: printable Latin-1 bytes stand for themselves, the
  // others (controls, space, 127-160, soft hyphen) for 256, 257, ... in byte order.
  byte_to_char_.resize(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    byte_to_char_[b] = utf8(printable ? b : next++);
    char_to_byte_[byte_to_char_[b]] = uint8_t(b);
  }
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(read_file(vocab_json));
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(vocab_json.string() + ": not JSON: " + e.what());
  }
  if (!vocab.is_object() || vocab.empty())
    throw TokenizerError(vocab_json.string() + ": expected an object of token -> id");
  id_to_token_.resize(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() >= int64_t(vocab.size()))
      throw TokenizerError(vocab_json.string() + ": token '" + it.key() + "' has id " + it.value().dump() +
                           ", not one of 0.." + std::to_string(vocab.size() - 1));
    int32_t id = int32_t(it.value().get<int64_t>());
    if (!id_to_token_[size_t(id)].empty())
      throw TokenizerError(vocab_json.string() + ": id " + std::to_string(id) + " is given twice");
    id_to_token_[size_t(id)] = it.key();
    token_to_id_[it.key()] = id;
  }
  for (size_t b = 0; b < 256; ++b)
    if (!token_to_id_.count(byte_to_char_[b]))
      throw TokenizerError(vocab_json.string() + ": byte " + std::to_string(b) + " has no token");
  std::string merges = read_file(merges_txt);
  size_t pos = 0, line_no = 0;
  int32_t rank = 0;
  while (pos < merges.size()) {
    size_t end = merges.find('\n', pos);
    if (end == std::string::npos) end = merges.size();
    std::string line = merges.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string::npos)
      throw TokenizerError(merges_txt.string() + ":" + std::to_string(line_no) +
                           ": expected two tokens, got '" + line + "'");
    merge_rank_.emplace(std::pair{line.substr(0, space), line.substr(space + 1)}, rank++);
  }
}

std::vector<std::string> Gpt2Tokenizer::split_words(std::string_view text) {
  std::vector<std::string> words;
  const size_t n = text.size();
  auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  auto run = [&](size_t i, bool (*cls)(unsigned char)) {
    while (i < n && cls(at(i))) ++i;
    return i;
  };
  size_t i = 0;
  while (i < n) {
    if (at(i) == '\'') { // 's 't 're 've 'm 'll 'd
      std::string_view rest = text.substr(i + 1, 2);
      size_t len = 0;
      if (rest.size() >= 1 && (rest[0] == 's' || rest[0] == 't' || rest[0] == 'm' || rest[0] == 'd')) len = 2;
      if (rest.size() == 2 && (rest == "re" || rest == "ve" || rest == "ll")) len = 3;
      if (len) {
        words.emplace_back(text.substr(i, len));
        i += len;
        continue;
      }
    }
    size_t start = i, j = i;
    if (at(j) == ' ' && j + 1 < n && !is_space(at(j + 1))) ++j; // one leading space joins the word
    size_t end = j;
    if (!is_space(at(j))) {
      end = is_letter(at(j)) ? run(j, is_letter) : is_digit(at(j)) ? run(j, is_digit) : run(j, is_other);
    } else { // whitespace: all of it at the end of the text, else all but the last character
      size_t e = run(j, is_space);
      end = (e == n || e - j == 1) ? e : e - 1;
    }
    words.emplace_back(text.substr(start, end - start));
    i = end;
  }
  return words;
}

std::vector<int32_t> Gpt2Tokenizer::encode_word(const std::string& word) const {
  std::vector<std::string> parts;
  for (unsigned char c : word) parts.push_back(byte_to_char_[c]);
  while (parts.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max();
    size_t best_at = 0;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      auto it = merge_rank_.find({parts[k], parts[k + 1]});
      if (it != merge_rank_.end() && it->second < best) best = it->second, best_at = k;
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    // Merge every occurrence of the best pair, left to right.
    std::string a = parts[best_at], b = parts[best_at + 1];
    std::vector<std::string> merged;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k + 1 < parts.size() && parts[k] == a && parts[k + 1] == b) {
        merged.push_back(a + b);
        ++k;
      } else {
        merged.push_back(parts[k]);
      }
    }
    parts = std::move(merged);
  }
  std::vector<int32_t> ids;
  for (auto& p : parts) {
    auto it = token_to_id_.find(p);
    if (it == token_to_id_.end())
      throw TokenizerError("GPT-2 tokenizer: merged token '" + p + "' is not in the vocabulary");
    ids.push_back(it->second);
  }
  return ids;
}

std::vector<int32_t> Gpt2Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const auto& w : split_words(text)) {
    auto part = encode_word(w);
    ids.insert(ids.end(), part.begin(), part.end());
  }
  return ids;
}

std::string Gpt2Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || size_t(id) >= id_to_token_.size())
      throw TokenizerError("GPT-2 tokenizer: id " + std::to_string(id) + " is outside the vocabulary of " +
                           std::to_string(id_to_token_.size()));
    const std::string& tok = id_to_token_[size_t(id)];
    for (size_t k = 0; k < tok.size();) { // one stand-in character (1 to 3 UTF-8 bytes) per byte
      unsigned char c = static_cast<unsigned char>(tok[k]);
      size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : 3;
      auto it = char_to_byte_.find(tok.substr(k, len));
      if (it == char_to_byte_.end())
        throw TokenizerError("GPT-2 tokenizer: token " + std::to_string(id) +
                             " holds a character that stands for no byte");
      out += char(it->second);
      k += len;
    }
  }
  return out;
}

std::unique_ptr<Tokenizer> make_tokenizer(int64_t vocab_size, const std::filesystem::path& dir) {
  if (vocab_size == 256) return std::make_unique<ByteTokenizer>();
  std::filesystem::path vocab = dir / "vocab.json", merges = dir / "merges.txt";
  if (!std::filesystem::exists(vocab) || !std::filesystem::exists(merges))
    throw TokenizerError("a model of vocab " + std::to_string(vocab_size) +
                         " needs GPT-2's vocab.json and merges.txt in " +
                         (dir.empty() ? std::string("the checkpoint's folder") : dir.string()));
  auto t = std::make_unique<Gpt2Tokenizer>(vocab, merges);
  if (t->vocab_size() > vocab_size)
    throw TokenizerError(vocab.string() + " has " + std::to_string(t->vocab_size()) +
                         " tokens, more than the model's " + std::to_string(vocab_size));
  return t;
}

} // namespace tg::models
