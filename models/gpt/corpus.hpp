// The byte-level training text for the GPT and its train/validation split.
#pragma once

#include "kernel/ir/errors.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tg::models {

struct CorpusError : Error {
  using Error::Error;
};

// The default corpus: the King James Bible as Debian's bible-kjv prints it
// (`bible "Gen1:1-Rev22:21"`, 4.3 MB), written once to <cache>/kjv.txt ($TG_CACHE_DIR, else
// $XDG_CACHE_HOME/tinygrad.cpp, else ~/.cache/tinygrad.cpp). CorpusError when `bible` is missing.
std::filesystem::path default_corpus();

// Token ids of a text split into training and validation parts: the last `val_fraction` is
// validation (nanoGPT's split).
struct Corpus {
  std::vector<int32_t> train, val;
};
Corpus split_corpus(std::vector<int32_t> tokens, double val_fraction, int64_t block_size);

// splitmix64: a small generator whose sequence the seed fixes on every platform and in every
// language (the PyTorch peer of `tg bench gpt` draws the same batches); std's distributions do not.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; } // [0, 1)
};

// A batch of `bs` windows of `block` tokens at random offsets: inputs x and the targets y (x
// shifted by one), row-major (bs, block). Offset r is next() % (size - block).
struct HostBatch {
  std::vector<int32_t> x, y;
};
HostBatch random_batch(const std::vector<int32_t>& tokens, int64_t bs, int64_t block, SplitMix64& rng);

std::string read_text(const std::filesystem::path& file);

} // namespace tg::models
