#include "models/gpt/corpus.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace tg::models {
namespace {

std::filesystem::path cache_dir() {
  if (const char* d = std::getenv("TG_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
    return std::filesystem::path(d) / "tinygrad.cpp";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::filesystem::path(h) / ".cache" / "tinygrad.cpp";
  throw CorpusError(
      "no cache folder for the corpus: set TG_CACHE_DIR, XDG_CACHE_HOME or HOME, or pass --data");
}

} // namespace

std::string read_text(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw CorpusError(file.string() + " is not a readable file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CorpusError("cannot read " + file.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path default_corpus() {
  std::filesystem::path dir = cache_dir(), file = dir / "kjv.txt";
  std::error_code ec;
  if (std::filesystem::is_regular_file(file, ec) && std::filesystem::file_size(file, ec) > 0) return file;
  if (access("/usr/bin/bible", X_OK) != 0)
    throw CorpusError(
        "the default corpus comes from Debian's bible-kjv (`bible`), which is not installed: run "
        "scripts/bootstrap, or pass --data FILE");
  std::filesystem::create_directories(dir, ec);
  // Written to a temporary name and renamed, so a reader never sees half a file.
  std::filesystem::path tmp = dir / ("kjv.txt.tmp" + std::to_string(getpid()));
  std::string cmd = "/usr/bin/bible \"Gen1:1-Rev22:21\" > '" + tmp.string() + "'";
  if (std::system(cmd.c_str()) != 0 || std::filesystem::file_size(tmp, ec) < 1000000) {
    std::filesystem::remove(tmp, ec);
    throw CorpusError("`bible \"Gen1:1-Rev22:21\"` did not print the Bible (into " + tmp.string() + ")");
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) throw CorpusError("cannot write " + file.string() + ": " + ec.message());
  return file;
}

Corpus split_corpus(std::vector<int32_t> tokens, double val_fraction, int64_t block_size) {
  if (!(val_fraction > 0 && val_fraction < 1))
    throw CorpusError("the validation fraction must be in (0, 1), got " + std::to_string(val_fraction));
  size_t n_val = size_t(double(tokens.size()) * val_fraction);
  if (int64_t(n_val) <= block_size || int64_t(tokens.size() - n_val) <= block_size)
    throw CorpusError("the text has " + std::to_string(tokens.size()) +
                      " tokens: too few for training and validation "
                      "windows of " +
                      std::to_string(block_size + 1));
  Corpus c;
  c.val.assign(tokens.end() - long(n_val), tokens.end());
  tokens.resize(tokens.size() - n_val);
  c.train = std::move(tokens);
  return c;
}

HostBatch random_batch(const std::vector<int32_t>& tokens, int64_t bs, int64_t block, SplitMix64& rng) {
  const uint64_t offsets = tokens.size() - size_t(block);
  HostBatch b;
  b.x.reserve(size_t(bs * block));
  b.y.reserve(size_t(bs * block));
  for (int64_t r = 0; r < bs; ++r) {
    size_t at = size_t(rng.next() % offsets);
    b.x.insert(b.x.end(), tokens.begin() + long(at), tokens.begin() + long(at) + block);
    b.y.insert(b.y.end(), tokens.begin() + long(at) + 1, tokens.begin() + long(at) + block + 1);
  }
  return b;
}

} // namespace tg::models
