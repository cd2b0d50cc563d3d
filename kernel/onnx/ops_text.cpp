// Text ops: TfIdfVectorizer. The n-grams are counted on the host (the input is read back); the
// counts go to the device as float32. String pools and inputs are not supported.
#include "kernel/onnx/ops.hpp"

#include <algorithm>
#include <map>

namespace tg::onnx {
namespace {

// Counts the pool's n-grams in each row of X ([C] or [N, C]). The n-grams of length n with skip s
// take the items i, i + (s + 1), ..., i + (n - 1)(s + 1); every skip from 0 to max_skip_count counts
// (unigrams once). Y[ngram_indexes[k]] is the count of the pool's k-th n-gram, weighted per mode.
std::vector<Value> tfidf_vectorizer(OpContext& ctx) {
  if (ctx.has_attr("pool_strings")) ctx.unsupported("string pools (pool_strings) are not supported");
  if (!ctx.has_attr("pool_int64s")) ctx.fail("needs pool_int64s or pool_strings");
  int64_t min_n = ctx.required_int("min_gram_length"), max_n = ctx.required_int("max_gram_length");
  int64_t max_skip = ctx.required_int("max_skip_count");
  std::string mode = ctx.attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    ctx.fail("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  if (min_n < 1 || max_n < min_n) ctx.fail("needs 1 <= min_gram_length <= max_gram_length");
  if (max_skip < 0) ctx.fail("max_skip_count must not be negative");
  auto pool = ctx.attr_ints("pool_int64s");
  auto counts = ctx.attr_ints("ngram_counts");
  auto indexes = ctx.attr_ints("ngram_indexes");
  auto weights = ctx.attr_floats("weights");
  if (indexes.empty()) ctx.fail("ngram_indexes must not be empty");

  // The pool: n-gram -> its number k (the k-th n-gram of the pool, across all levels).
  std::map<std::vector<int64_t>, size_t> ngrams;
  size_t k = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    int64_t n = int64_t(level) + 1;
    int64_t begin = counts[level];
    int64_t end = level + 1 < counts.size() ? counts[level + 1] : int64_t(pool.size());
    if (begin < 0 || end < begin || end > int64_t(pool.size()))
      ctx.fail("ngram_counts do not fit pool_int64s");
    if ((end - begin) % n != 0)
      ctx.fail("the pool's " + std::to_string(n) + "-grams take " + std::to_string(end - begin) + " items");
    for (int64_t p = begin; p < end; p += n, ++k)
      ngrams.emplace(std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n), k);
  }
  if (k != indexes.size())
    ctx.fail("the pool holds " + std::to_string(k) + " n-grams, ngram_indexes " +
             std::to_string(indexes.size()));
  if (!weights.empty() && weights.size() != indexes.size()) ctx.fail("weights must parallel ngram_indexes");
  for (auto i : indexes)
    if (i < 0) ctx.fail("ngram_indexes must not be negative");
  int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;

  const Tensor& x = ctx.tensor(0);
  if (!x.dtype().is_int()) ctx.fail("input of dtype " + x.dtype().name() + ", expects int32 or int64");
  if (x.ndim() != 1 && x.ndim() != 2) ctx.fail("input must be 1-D or 2-D");
  int64_t rows = x.ndim() == 2 ? x.shape()[0] : 1, cols = x.shape().back();
  std::vector<int64_t> data = ctx.ints(0);
  std::vector<float> y(size_t(rows * width), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = data.data() + r * cols;
    std::vector<int64_t> found(indexes.size(), 0);
    std::vector<int64_t> gram;
    for (int64_t n = min_n; n <= max_n && n <= int64_t(counts.size()); ++n)
      for (int64_t s = 0; s <= (n == 1 ? 0 : max_skip); ++s)
        for (int64_t i = 0; i + (n - 1) * (s + 1) < cols; ++i) {
          gram.clear();
          for (int64_t j = 0; j < n; ++j) gram.push_back(row[i + j * (s + 1)]);
          if (auto it = ngrams.find(gram); it != ngrams.end()) ++found[it->second];
        }
    float* out = y.data() + r * width;
    for (size_t g = 0; g < found.size(); ++g) {
      if (found[g] == 0) continue;
      double w = weights.empty() ? 1.0 : weights[g];
      double v = mode == "TF" ? double(found[g]) : mode == "IDF" ? w : double(found[g]) * w;
      out[indexes[g]] = float(v);
    }
  }
  Dims shape = x.ndim() == 2 ? Dims{rows, width} : Dims{width};
  return {Tensor::from_vector(y, shape, dtypes::float32, ctx.device())};
}

} // namespace

void register_text_ops(OpTable& table) { table["TfIdfVectorizer"] = tfidf_vectorizer; }

} // namespace tg::onnx
