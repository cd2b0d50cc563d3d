// Text to token ids and back: bytes (vocab 256, the tiny and char configs), or GPT-2's byte-level
// BPE from its vocab.json and merges.txt.
#pragma once

#include "kernel/ir/errors.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tg::models {

// Unreadable or malformed tokenizer files, or ids the vocabulary does not have.
struct TokenizerError : Error {
  using Error::Error;
};

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int64_t vocab_size() const = 0;
};

// One token per byte.
class ByteTokenizer : public Tokenizer {
public:
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int64_t vocab_size() const override { return 256; }
};

// GPT-2's tokenizer: text is split into words (contractions, letter runs, digit runs, other
// symbols, whitespace, each with at most one leading space), each word's bytes are mapped to
// printable characters and merged pairwise by rank from merges.txt. The word split treats every
// non-ASCII character as a letter (GPT-2 uses Unicode's letter and number classes), so text
// outside ASCII may split differently from Hugging Face's; decode(encode(s)) == s always holds.
class Gpt2Tokenizer : public Tokenizer {
public:
  Gpt2Tokenizer(const std::filesystem::path& vocab_json, const std::filesystem::path& merges_txt);
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int64_t vocab_size() const override { return int64_t(id_to_token_.size()); }
  // GPT-2's split of text into words (public for tests).
  static std::vector<std::string> split_words(std::string_view text);

private:
  std::vector<int32_t> encode_word(const std::string& word) const;
  std::unordered_map<std::string, int32_t> token_to_id_;
  std::vector<std::string> id_to_token_;
  std::map<std::pair<std::string, std::string>, int32_t> merge_rank_;
  std::vector<std::string> byte_to_char_; // byte -> UTF-8 of its printable stand-in
  std::unordered_map<std::string, uint8_t> char_to_byte_;
};

// The tokenizer for a model of `vocab_size`: bytes for 256; GPT-2's BPE from the vocab.json and
// merges.txt in `dir` otherwise (TokenizerError when they are missing or do not match the size).
std::unique_ptr<Tokenizer> make_tokenizer(int64_t vocab_size, const std::filesystem::path& dir);

} // namespace tg::models
