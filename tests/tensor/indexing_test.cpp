// Indexing, sorting and scattering (kernel/tensor/indexing.cpp) against PyTorch and numpy: pad in
// every mode (with cropping), scatter_elements, gather_nd and scatter_nd (ONNX semantics, negative
// indices, every reduction), topk and stable sort (ties, NaN, inf), nonzero, tril/triu, one_hot,
// einsum; gradients of pad (reflect), scatter (add) and topk. The references are literals printed
// by tests/tensor/torch_refs_math.py (`/usr/bin/python3 tests/tensor/torch_refs_math.py`,
// sections "indexing_test.cpp"), from the deterministic inputs pat() below (the script's pat()).
#include "test_util.hpp"

#include <limits>

using namespace tt;
using tg::PadMode;
using tg::ScatterReduce;

// Everything in the suite's namespace: the suites share unity translation units, whose
// anonymous namespaces would clash (nonfinite_test.cpp's kInf, conv_test.cpp's pat).
BOOST_AUTO_TEST_SUITE(indexing)

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// pat(shape, a, b)[i] = ((i*a + b) % 13 - 6) / 4 over the flat index i (exact in float32)
NdArray pat(const ref::Dims& shape, int64_t a, int64_t b) {
  NdArray out(shape);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = double((int64_t(i) * a + b) % 13 - 6) / 4.0;
  return out;
}
Tensor tpat(const ref::Dims& shape, int64_t a, int64_t b) { return to_tensor(pat(shape, a, b)); }

Tensor ints(const ref::Dims& shape, const std::vector<int64_t>& v, DType dt = dtypes::int64) {
  std::vector<double> d(v.begin(), v.end());
  return to_tensor(NdArray(shape, d), dt);
}

struct PadCase {
  PadMode mode;
  tg::Pads pads;
  ref::Dims shape;
  std::vector<double> want;
};
// x = pat((2, 3, 4), 5, 1); constant pads with 1.5
const std::vector<PadCase> kPads = {
    {PadMode::constant,
     {{0, 0}, {1, 2}, {2, -1}},
     {2, 6, 5},
     {1.5, 1.5, 1.5, 1.5,  1.5,  1.5, 1.5, -1.25, 0,     1.25, 1.5, 1.5, 0.5,   -1.5, -0.25,
      1.5, 1.5, -1,  0.25, 1.5,  1.5, 1.5, 1.5,   1.5,   1.5,  1.5, 1.5, 1.5,   1.5,  1.5,
      1.5, 1.5, 1.5, 1.5,  1.5,  1.5, 1.5, 0.75,  -1.25, 0,    1.5, 1.5, -0.75, 0.5,  -1.5,
      1.5, 1.5, 1,   -1,   0.25, 1.5, 1.5, 1.5,   1.5,   1.5,  1.5, 1.5, 1.5,   1.5,  1.5}},
    {PadMode::reflect,
     {{1, 0}, {2, 1}, {3, 2}},
     {3, 6, 9},
     {1.5,   0.25,  -1,   1,     -1,    0.25,  1.5,   0.25,  -1,    -0.25, -1.5,  0.5,   -0.75, 0.5,   -1.5,
      -0.25, -1.5,  0.5,  1.25,  0,     -1.25, 0.75,  -1.25, 0,     1.25,  0,     -1.25, -0.25, -1.5,  0.5,
      -0.75, 0.5,   -1.5, -0.25, -1.5,  0.5,   1.5,   0.25,  -1,    1,     -1,    0.25,  1.5,   0.25,  -1,
      -0.25, -1.5,  0.5,  -0.75, 0.5,   -1.5,  -0.25, -1.5,  0.5,   -0.5,  1.5,   0.25,  -1,    0.25,  1.5,
      -0.5,  1.5,   0.25, 1,     -0.25, -1.5,  0.5,   -1.5,  -0.25, 1,     -0.25, -1.5,  -0.75, 1.25,  0,
      -1.25, 0,     1.25, -0.75, 1.25,  0,     1,     -0.25, -1.5,  0.5,   -1.5,  -0.25, 1,     -0.25, -1.5,
      -0.5,  1.5,   0.25, -1,    0.25,  1.5,   -0.5,  1.5,   0.25,  1,     -0.25, -1.5,  0.5,   -1.5,  -0.25,
      1,     -0.25, -1.5, 1.5,   0.25,  -1,    1,     -1,    0.25,  1.5,   0.25,  -1,    -0.25, -1.5,  0.5,
      -0.75, 0.5,   -1.5, -0.25, -1.5,  0.5,   1.25,  0,     -1.25, 0.75,  -1.25, 0,     1.25,  0,     -1.25,
      -0.25, -1.5,  0.5,  -0.75, 0.5,   -1.5,  -0.25, -1.5,  0.5,   1.5,   0.25,  -1,    1,     -1,    0.25,
      1.5,   0.25,  -1,   -0.25, -1.5,  0.5,   -0.75, 0.5,   -1.5,  -0.25, -1.5,  0.5}},
    {PadMode::reflect,
     {{0, 0}, {0, 0}, {5, 7}},
     {2, 3, 16},
     {0,     1.25,  -0.75, 1.25,  0,     -1.25, 0,     1.25, -0.75, 1.25,  0,     -1.25, 0,     1.25,
      -0.75, 1.25,  -1.5,  -0.25, 1,     -0.25, -1.5,  0.5,  -1.5,  -0.25, 1,     -0.25, -1.5,  0.5,
      -1.5,  -0.25, 1,     -0.25, 0.25,  1.5,   -0.5,  1.5,  0.25,  -1,    0.25,  1.5,   -0.5,  1.5,
      0.25,  -1,    0.25,  1.5,   -0.5,  1.5,   -1.25, 0,    1.25,  0,     -1.25, 0.75,  -1.25, 0,
      1.25,  0,     -1.25, 0.75,  -1.25, 0,     1.25,  0,    0.5,   -1.5,  -0.25, -1.5,  0.5,   -0.75,
      0.5,   -1.5,  -0.25, -1.5,  0.5,   -0.75, 0.5,   -1.5, -0.25, -1.5,  -1,    0.25,  1.5,   0.25,
      -1,    1,     -1,    0.25,  1.5,   0.25,  -1,    1,    -1,    0.25,  1.5,   0.25}},
    {PadMode::edge,
     {{1, 1}, {0, 2}, {3, 0}},
     {4, 5, 7},
     {-1.25, -1.25, -1.25, -1.25, 0,     1.25,  -0.75, 0.5,   0.5,   0.5,   0.5,   -1.5,  -0.25, 1,
      -1,    -1,    -1,    -1,    0.25,  1.5,   -0.5,  -1,    -1,    -1,    -1,    0.25,  1.5,   -0.5,
      -1,    -1,    -1,    -1,    0.25,  1.5,   -0.5,  -1.25, -1.25, -1.25, -1.25, 0,     1.25,  -0.75,
      0.5,   0.5,   0.5,   0.5,   -1.5,  -0.25, 1,     -1,    -1,    -1,    -1,    0.25,  1.5,   -0.5,
      -1,    -1,    -1,    -1,    0.25,  1.5,   -0.5,  -1,    -1,    -1,    -1,    0.25,  1.5,   -0.5,
      0.75,  0.75,  0.75,  0.75,  -1.25, 0,     1.25,  -0.75, -0.75, -0.75, -0.75, 0.5,   -1.5,  -0.25,
      1,     1,     1,     1,     -1,    0.25,  1.5,   1,     1,     1,     1,     -1,    0.25,  1.5,
      1,     1,     1,     1,     -1,    0.25,  1.5,   0.75,  0.75,  0.75,  0.75,  -1.25, 0,     1.25,
      -0.75, -0.75, -0.75, -0.75, 0.5,   -1.5,  -0.25, 1,     1,     1,     1,     -1,    0.25,  1.5,
      1,     1,     1,     1,     -1,    0.25,  1.5,   1,     1,     1,     1,     -1,    0.25,  1.5}},
    {PadMode::wrap,
     {{0, 1}, {2, 2}, {5, 1}},
     {3, 7, 10},
     {1,     0.5,  -1.5,  -0.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,   -0.5,  -1,    0.25,  1.5,   -0.5,
      -1,    0.25, 1.5,   -0.5,  -1,    -0.75, -1.25, 0,     1.25,  -0.75, -1.25, 0,     1.25,  -0.75, -1.25,
      1,     0.5,  -1.5,  -0.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,   -0.5,  -1,    0.25,  1.5,   -0.5,
      -1,    0.25, 1.5,   -0.5,  -1,    -0.75, -1.25, 0,     1.25,  -0.75, -1.25, 0,     1.25,  -0.75, -1.25,
      1,     0.5,  -1.5,  -0.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,   -0.25, -0.75, 0.5,   -1.5,  -0.25,
      -0.75, 0.5,  -1.5,  -0.25, -0.75, 1.5,   1,     -1,    0.25,  1.5,   1,     -1,    0.25,  1.5,   1,
      1.25,  0.75, -1.25, 0,     1.25,  0.75,  -1.25, 0,     1.25,  0.75,  -0.25, -0.75, 0.5,   -1.5,  -0.25,
      -0.75, 0.5,  -1.5,  -0.25, -0.75, 1.5,   1,     -1,    0.25,  1.5,   1,     -1,    0.25,  1.5,   1,
      1.25,  0.75, -1.25, 0,     1.25,  0.75,  -1.25, 0,     1.25,  0.75,  -0.25, -0.75, 0.5,   -1.5,  -0.25,
      -0.75, 0.5,  -1.5,  -0.25, -0.75, 1,     0.5,   -1.5,  -0.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,
      -0.5,  -1,   0.25,  1.5,   -0.5,  -1,    0.25,  1.5,   -0.5,  -1,    -0.75, -1.25, 0,     1.25,  -0.75,
      -1.25, 0,    1.25,  -0.75, -1.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,
      -0.5,  -1,   0.25,  1.5,   -0.5,  -1,    0.25,  1.5,   -0.5,  -1,    -0.75, -1.25, 0,     1.25,  -0.75,
      -1.25, 0,    1.25,  -0.75, -1.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5,   -1.5,  -0.25, 1,     0.5}},
    {PadMode::reflect,
     {{0, 0}, {-1, 1}, {2, -1}},
     {2, 3, 5},
     {-0.25, -1.5, 0.5,   -1.5, -0.25, 1.5,  0.25, -1, 0.25, 1.5,  -0.25, -1.5, 0.5,   -1.5, -0.25,
      -1.5,  0.5,  -0.75, 0.5,  -1.5,  0.25, -1,   1,  -1,   0.25, -1.5,  0.5,  -0.75, 0.5,  -1.5}},
    {PadMode::wrap, {{-1, 0}, {1, -2}, {0, 0}}, {1, 2, 4}, {0.75, -1.25, 0, 1.25, 0.75, -1.25, 0, 1.25}},
};

struct ScatterCase {
  int64_t axis;
  ref::Dims index_shape;
  std::vector<int64_t> index;
  ScatterReduce reduce;
  std::vector<double> want;
};
// data = pat((3, 4), 5, 2), src = pat(index shape, 3, 1)
const std::vector<ScatterCase> kScatter = {
    {0,
     {2, 4},
     {1, 0, 2, 2, 0, 2, 1, 0},
     ScatterReduce::none,
     {-1.5, -0.5, 1.5, 0.75, -1.25, -1.25, 0, 1.25, -0.75, -0.75, 0.25, 1}},
    {0,
     {3, 4},
     {1, 0, 2, 0, 1, 2, 1, 0, 0, 0, 1, 0},
     ScatterReduce::add,
     {0.5, -1.25, 1.5, 1.75, -2, -1.25, -0.25, 1.25, -0.75, -0.25, -1.25, -0.25}},
    {0,
     {3, 4},
     {1, 0, 2, 0, 1, 2, 1, 0, 0, 0, 1, 0},
     ScatterReduce::mul,
     {-1.5, 0.125, 1.5, -0.1875, 1.40625, -1.25, -0, 1.25, -0.75, -0.375, -0.375, -0.25}},
    {0,
     {3, 4},
     {1, 0, 2, 0, 1, 2, 1, 0, 0, 0, 1, 0},
     ScatterReduce::max,
     {1.5, 0.25, 1.5, 1, 0.75, -1.25, 0, 1.25, -0.75, 0.5, 0.25, -0.25}},
    {0,
     {3, 4},
     {1, 0, 2, 0, 1, 2, 1, 0, 0, 0, 1, 0},
     ScatterReduce::min,
     {-1, -1, 1.5, -0.5, -1.5, -1.25, -0.25, 1.25, -0.75, -0.75, -1.5, -0.25}},
    {1,
     {2, 3},
     {3, 0, 3, 1, 1, 2},
     ScatterReduce::add,
     {-1.5, 0.25, 1.5, -1.5, 0.75, -1.75, -0.75, 1.25, -0.75, 0.5, -1.5, -0.25}},
    {1,
     {2, 2},
     {3, 0, 1, 2},
     ScatterReduce::none,
     {-0.5, 0.25, 1.5, -1.25, 0.75, 0.25, 1, 1.25, -0.75, 0.5, -1.5, -0.25}},
};

struct GatherNdCase {
  int64_t batch_dims;
  ref::Dims index_shape;
  std::vector<int64_t> index;
  ref::Dims shape;
  std::vector<double> want;
};
// data = pat((2, 3, 4), 5, 1)
const std::vector<GatherNdCase> kGatherNd = {
    {0,
     {2, 2, 2},
     {1, -1, 0, 2, 1, 0, 0, 0},
     {2, 2, 4},
     {1, -1, 0.25, 1.5, -1, 0.25, 1.5, -0.5, 0.75, -1.25, 0, 1.25, -1.25, 0, 1.25, -0.75}},
    {1,
     {2, 2, 1},
     {2, 0, 1, 1},
     {2, 2, 4},
     {-1, 0.25, 1.5, -0.5, -1.25, 0, 1.25, -0.75, -0.75, 0.5, -1.5, -0.25, -0.75, 0.5, -1.5, -0.25}},
    {1, {2, 2, 2}, {2, 3, 0, -4, 1, 1, -1, 0}, {2, 2}, {-0.5, -1.25, 0.5, 1}},
};

struct ScatterNdCase {
  ref::Dims index_shape;
  std::vector<int64_t> index;
  ScatterReduce reduce;
  std::vector<double> want;
};
// data = pat((4, 3), 5, 2), updates = pat(indices.shape[:-1] + data.shape[k:], 3, 1)
const std::vector<ScatterNdCase> kScatterNd = {
    {{2, 1},
     {2, 0},
     ScatterReduce::none,
     {1, -1.5, -0.75, -0.5, 0.75, -1.25, -1.25, -0.5, 0.25, 0.5, -1.5, -0.25}},
    {{3, 1},
     {2, 0, 2},
     ScatterReduce::add,
     {0, -1.25, 0.75, -0.5, 0.75, -1.25, -1.25, 1.5, 1, 0.5, -1.5, -0.25}},
    {{3, 1},
     {2, 0, 2},
     ScatterReduce::mul,
     {-1, -0.375, -1.125, -0.5, 0.75, -1.25, -0, -0.46875, -0.28125, 0.5, -1.5, -0.25}},
    {{3, 1},
     {2, 0, 2},
     ScatterReduce::max,
     {1, 0.25, 1.5, -0.5, 0.75, -1.25, 0, 1.25, 1.5, 0.5, -1.5, -0.25}},
    {{3, 1},
     {2, 0, 2},
     ScatterReduce::min,
     {-1, -1.5, -0.75, -0.5, 0.75, -1.25, -1.25, -0.5, -0.75, 0.5, -1.5, -0.25}},
    {{3, 2},
     {1, 2, 3, -1, -4, 0},
     ScatterReduce::none,
     {0.25, 0.25, 1.5, -0.5, 0.75, -1.25, 0, 1.25, -0.75, 0.5, -1.5, -0.5}},
};

// torch.randn(3, 7) after torch.manual_seed(0)
const std::vector<double> kRandn = {
    -1.12583983, -1.1523602,   -0.250578582, -0.433878809, 0.848710358, -1.55509508,  -0.34136039,
    1.85300612,  0.468096405,  -0.157712445, 1.44366014,   0.266049415, 0.166455343,  1.58633423,
    0.946298361, -0.843676746, 0.931826591,  1.25900924,   2.00498056,  0.0537369028, 0.618056655};
struct TopkCase {
  int64_t k, axis;
  bool largest;
  std::vector<double> values;
  std::vector<int64_t> indices;
};
const std::vector<TopkCase> kTopk = {
    {3,
     -1,
     true,
     {0.848710358, -0.250578582, -0.34136039, 1.85300612, 1.58633423, 1.44366014, 2.00498056, 1.25900924,
      0.946298361},
     {4, 2, 6, 0, 6, 3, 4, 3, 0}},
    {3,
     -1,
     false,
     {-1.55509508, -1.1523602, -1.12583983, -0.157712445, 0.166455343, 0.266049415, -0.843676746,
      0.0537369028, 0.618056655},
     {5, 1, 0, 2, 5, 4, 1, 5, 6}},
    {2,
     0,
     true,
     {1.85300612, 0.468096405, 0.931826591, 1.44366014, 2.00498056, 0.166455343, 1.58633423, 0.946298361,
      -0.843676746, -0.157712445, 1.25900924, 0.848710358, 0.0537369028, 0.618056655},
     {1, 1, 2, 1, 2, 1, 1, 2, 2, 1, 2, 0, 2, 2}},
    {7,
     1,
     false,
     {-1.55509508,  -1.1523602,   -1.12583983, -0.433878809, -0.34136039, -0.250578582, 0.848710358,
      -0.157712445, 0.166455343,  0.266049415, 0.468096405,  1.44366014,  1.58633423,   1.85300612,
      -0.843676746, 0.0537369028, 0.618056655, 0.931826591,  0.946298361, 1.25900924,   2.00498056},
     {5, 1, 0, 3, 6, 2, 4, 2, 5, 4, 1, 3, 6, 0, 1, 5, 6, 2, 0, 3, 4}},
};
struct Sorted {
  std::vector<double> values;
  std::vector<int64_t> indices;
};
// kRandn sorted along dim 0, ascending then descending (stable)
const std::vector<Sorted> kSortDim0 = {
    {{-1.12583983, -1.1523602,   -0.250578582, -0.433878809, 0.266049415, -1.55509508,  -0.34136039,
      0.946298361, -0.843676746, -0.157712445, 1.25900924,   0.848710358, 0.0537369028, 0.618056655,
      1.85300612,  0.468096405,  0.931826591,  1.44366014,   2.00498056,  0.166455343,  1.58633423},
     {0, 0, 0, 0, 1, 0, 0, 2, 2, 1, 2, 0, 2, 2, 1, 1, 2, 1, 2, 1, 1}},
    {{1.85300612,  0.468096405,  0.931826591,  1.44366014,   2.00498056,  0.166455343,  1.58633423,
      0.946298361, -0.843676746, -0.157712445, 1.25900924,   0.848710358, 0.0537369028, 0.618056655,
      -1.12583983, -1.1523602,   -0.250578582, -0.433878809, 0.266049415, -1.55509508,  -0.34136039},
     {1, 1, 2, 1, 2, 1, 1, 2, 2, 1, 2, 0, 2, 2, 0, 0, 0, 0, 1, 0, 0}},
};
// kTies sorted ascending then descending (stable; NaN above everything)
const std::vector<double> kTies = {3, 1, 3, 2, 1, 3, kNan, -kInf, 0, kNan};
const std::vector<Sorted> kSortTies = {
    {{-kInf, 0, 1, 1, 2, 3, 3, 3, kNan, kNan}, {7, 8, 1, 4, 3, 0, 2, 5, 6, 9}},
    {{kNan, kNan, 3, 3, 3, 2, 1, 1, 0, -kInf}, {6, 9, 0, 2, 5, 3, 1, 4, 8, 7}},
};

struct TriCase {
  int64_t diagonal;
  std::vector<double> tril, triu;
};
// of pat((2, 3, 4), 5, 1)
const std::vector<TriCase> kTri = {
    {-1,
     {0, 0, 0, 0, 0.5, 0, 0, 0, -1, 0.25, 0, 0, 0, 0, 0, 0, -0.75, 0, 0, 0, 1, -1, 0, 0},
     {-1.25, 0,     1.25, -0.75, 0.5,   -1.5, -0.25, 1,     0, 0.25, 1.5,  -0.5,
      0.75,  -1.25, 0,    1.25,  -0.75, 0.5,  -1.5,  -0.25, 0, -1,   0.25, 1.5}},
    {0,
     {-1.25, 0, 0, 0, 0.5, -1.5, 0, 0, -1, 0.25, 1.5, 0, 0.75, 0, 0, 0, -0.75, 0.5, 0, 0, 1, -1, 0.25, 0},
     {-1.25, 0,     1.25, -0.75, 0, -1.5, -0.25, 1,     0, 0, 1.5,  -0.5,
      0.75,  -1.25, 0,    1.25,  0, 0.5,  -1.5,  -0.25, 0, 0, 0.25, 1.5}},
    {2,
     {-1.25, 0,     1.25, 0, 0.5,   -1.5, -0.25, 1,     -1, 0.25, 1.5,  -0.5,
      0.75,  -1.25, 0,    0, -0.75, 0.5,  -1.5,  -0.25, 1,  -1,   0.25, 1.5},
     {0, 0, 1.25, -0.75, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1.25, 0, 0, 0, -0.25, 0, 0, 0, 0}},
};

struct EinsumCase {
  std::string formula;
  std::vector<ref::Dims> shapes; // operand i = pat(shapes[i], 3 + 2i, 1 + i)
  ref::Dims shape;
  std::vector<double> want;
};
const std::vector<EinsumCase> kEinsum = {
    {"ij,jk->ik", {{2, 3}, {3, 4}}, {2, 4}, {0.6875, 0.4375, -2.25, -0.0625, -1.5625, 1.75, 2.625, -2.1875}},
    {"ij,jk", {{2, 3}, {3, 4}}, {2, 4}, {0.6875, 0.4375, -2.25, -0.0625, -1.5625, 1.75, 2.625, -2.1875}},
    {"ii->i", {{3, 3}}, {3}, {-1.25, -1.5, 1.5}},
    {"ii", {{3, 3}}, {}, {-1.25}},
    {"bij,bjk->bik",
     {{2, 2, 3}, {2, 3, 2}},
     {2, 2, 2},
     {0.6875, -0.375, -3.8125, 1.9375, -2.8125, 0, -0.5625, -1.5}},
    {"...ij,...jk->...ik",
     {{2, 1, 2, 3}, {4, 3, 2}},
     {2, 4, 2, 2},
     {0.6875,  -0.375, -3.8125, 1.9375, 0,       -1.875, 2.25,   0.6875,  -1.5,   0.6875,  1,
      -3.8125, 1.0625, 0,       -3.5,   2.25,    2.25,   -2.25,  1,       -0.75,  -2.8125, 0,
      -0.5625, -1.5,   -0.5625, 2.25,   -1.3125, 1,      1.6875, -2.8125, 1.1875, -0.5625}},
    {"i,j->ij",
     {{3}, {4}},
     {3, 4},
     {1.25, -0.3125, -1.875, 0.625, 0.5, -0.125, -0.75, 0.25, -0.25, 0.0625, 0.375, -0.125}},
    {"ijk->kji", {{2, 3, 4}}, {4, 3, 2}, {-1.25, 1.25, -1.5, 1,    1.5,  0.75, -0.5, -1.25,
                                          -0.75, -1.5, -1,   1.5,  0.25, -0.5, 0,    -0.75,
                                          -0.25, -1,   1,    0.25, 0.75, 0,    0.5,  -0.25}},
    {"ij->", {{3, 4}}, {}, {-1.25}},
    {"iij->j", {{3, 3, 2}}, {2}, {1.25, -3}},
    {"ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 2}}, {2, 2}, {-0.171875, -2.046875, -0.359375, 7.84375}},
    {"ba,ab", {{3, 2}, {2, 3}}, {}, {1}},
    {"...i,i", {{2, 3}, {3}}, {2}, {1.5, -2.5}},
    {"Ab,bc", {{2, 3}, {3, 4}}, {2, 4}, {0.6875, 0.4375, -2.25, -0.0625, -1.5625, 1.75, 2.625, -2.1875}},
    {"i...->...", {{3, 2, 2}}, {2, 2}, {-1.25, -2.25, 0, 2.25}},
    {"i i , i", {{2, 2}, {2}}, {}, {1.5}},
};

NdArray as_array(const std::vector<int64_t>& v, const ref::Dims& shape) {
  return NdArray(shape, std::vector<double>(v.begin(), v.end()));
}

BOOST_AUTO_TEST_CASE(pad_modes) {
  Tensor x = tpat({2, 3, 4}, 5, 1);
  for (const auto& c : kPads) {
    std::string what =
        "pad mode " + std::to_string(int(c.mode)) + " case " + std::to_string(&c - kPads.data());
    check_close(x.pad(c.pads, c.mode, 1.5), NdArray(c.shape, c.want), kExact, what);
  }
  // int and bool tensors keep their dtype
  Tensor i = ints({2, 3}, {1, 2, 3, 4, 5, 6}, dtypes::int32);
  Tensor pi = i.pad({{0, 0}, {2, 1}}, PadMode::reflect);
  BOOST_TEST(pi.dtype() == dtypes::int32);
  check_close(pi, NdArray({2, 6}, {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}), kExact, "reflect int32");
  Tensor b = to_tensor(NdArray({3}, {1, 0, 0}), dtypes::bool_).pad({{1, 2}}, PadMode::wrap);
  BOOST_TEST(b.dtype() == dtypes::bool_);
  check_close(b, NdArray({6}, {0, 1, 0, 0, 1, 0}), kExact, "wrap bool");
  check_close(i.pad({{1, 0}, {0, 1}}, PadMode::constant, -7),
              NdArray({3, 4}, {-7, -7, -7, -7, 1, 2, 3, -7, 4, 5, 6, -7}), kExact, "constant int32");
  // a dim of size 1 reflects as its edge (numpy)
  check_close(to_tensor(NdArray({1}, {2.5})).pad({{2, 1}}, PadMode::reflect),
              NdArray({4}, {2.5, 2.5, 2.5, 2.5}), kExact, "reflect size 1");
}

BOOST_AUTO_TEST_CASE(pad_reflect_gradient) {
  // torch: F.pad(x, (1, 2, 2, 1), mode="reflect"), upstream pat(y.shape, 7, 3)
  const std::vector<double> want_y = {
      -0.75, -1.5, -0.75, 0,   0.75, 0,   -0.75, -0.5, -1.25, -0.5, 0.25, 1, 0.25, -0.5,
      -0.25, -1,   -0.25, 0.5, 1.25, 0.5, -0.25, -0.5, -1.25, -0.5, 0.25, 1, 0.25, -0.5,
      -0.75, -1.5, -0.75, 0,   0.75, 0,   -0.75, -0.5, -1.25, -0.5, 0.25, 1, 0.25, -0.5};
  const std::vector<double> want_dx = {-0.5, 0.75, -0.25, 1.5,   -0.5, -4.5,
                                       1.25, -1,   2.25,  -1.75, 2.75, -0.25};
  Tensor x = tpat({1, 1, 3, 4}, 3, 2);
  x.requires_grad_();
  Tensor y = x.pad({{0, 0}, {0, 0}, {2, 1}, {1, 2}}, PadMode::reflect);
  check_close(y, NdArray({1, 1, 6, 7}, want_y), kExact, "reflect pad");
  (y * tpat(y.shape(), 7, 3)).sum().backward();
  check_close(*x.grad(), NdArray({1, 1, 3, 4}, want_dx), kArith32, "reflect pad gradient");
}

BOOST_AUTO_TEST_CASE(pad_errors) {
  Tensor x = tpat({2, 3}, 1, 0);
  check_error<tg::TensorError>([&] { (void)x.pad({{1, 1}}, PadMode::edge); }, {"pad", "edge", "(2, 3)"});
  check_error<tg::TensorError>(
      [&] {
        (void)x.pad({{0, 0}, {-2, -2}}, PadMode::reflect);
      },
      {"pad", "reflect", "crop"});
  Tensor e = Tensor::zeros({0, 2});
  check_error<tg::TensorError>(
      [&] {
        (void)e.pad({{1, 0}, {0, 0}}, PadMode::wrap);
      },
      {"pad", "wrap", "empty"});
}

BOOST_AUTO_TEST_CASE(scatter_elements_against_torch) {
  Tensor data = tpat({3, 4}, 5, 2);
  for (const auto& c : kScatter) {
    std::string what = "scatter_elements case " + std::to_string(&c - kScatter.data());
    Tensor src = tpat(c.index_shape, 3, 1);
    check_close(data.scatter_elements(c.axis, ints(c.index_shape, c.index), src, c.reduce),
                NdArray({3, 4}, c.want), kArith32, what);
    // negative indices count from the end (ONNX), int32 indices work as int64 ones
    std::vector<int64_t> neg = c.index;
    int64_t n = c.axis == 0 ? 3 : 4;
    for (size_t k = 0; k < neg.size(); k += 2) neg[k] -= n;
    check_close(data.scatter_elements(c.axis - 2, ints(c.index_shape, neg, dtypes::int32), src, c.reduce),
                NdArray({3, 4}, c.want), kArith32, what + " negative indices");
  }
}

BOOST_AUTO_TEST_CASE(scatter_elements_add_gradient) {
  // torch: d.scatter_add(0, idx, s), upstream pat((3, 4), 7, 3)
  const std::vector<double> want_ddata = {-0.75, 1, -0.5, 1.25, -0.25, 1.5, 0, -1.5, 0.25, -1.25, 0.5, -1};
  const std::vector<double> want_dsrc = {-0.25, 1, 0.5, 1.25, -0.25, -1.25, 0, 1.25, -0.75, 1, 0, 1.25};
  Tensor d = tpat({3, 4}, 5, 2), s = tpat({3, 4}, 3, 1);
  d.requires_grad_();
  s.requires_grad_();
  Tensor out =
      d.scatter_elements(0, ints({3, 4}, {1, 0, 2, 0, 1, 2, 1, 0, 0, 0, 1, 0}), s, ScatterReduce::add);
  (out * tpat({3, 4}, 7, 3)).sum().backward();
  check_close(*d.grad(), NdArray({3, 4}, want_ddata), kArith32, "d data");
  check_close(*s.grad(), NdArray({3, 4}, want_dsrc), kArith32, "d src");
}

BOOST_AUTO_TEST_CASE(scatter_elements_ints_and_errors) {
  Tensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6}, dtypes::int32);
  Tensor out = data.scatter_elements(1, ints({2, 2}, {2, 2, 0, 0}),
                                     ints({2, 2}, {10, 20, 30, 40}, dtypes::int32), ScatterReduce::add);
  BOOST_TEST(out.dtype() == dtypes::int32);
  check_close(out, NdArray({2, 3}, {1, 2, 33, 74, 5, 6}), kExact, "scatter add int32");
  check_error<tg::TensorError>(
      [&] {
        (void)data.scatter_elements(0, ints({2, 2}, {0, 0, 0, 0}), tpat({2, 3}, 1, 0));
      },
      {"scatter_elements", "(2, 2)", "(2, 3)"});
  check_error<tg::TensorError>(
      [&] {
        (void)data.scatter_elements(1, ints({3, 1}, {0, 0, 0}), tpat({3, 1}, 1, 0));
      },
      {"scatter_elements", "(3, 1)"});
  check_error<tg::TensorError>(
      [&] {
        (void)data.scatter_elements(0, tpat({1, 1}, 1, 0), tpat({1, 1}, 1, 0));
      },
      {"scatter_elements", "float"});
  check_error<tg::TensorError>(
      [&] {
        (void)data.scatter_elements(2, ints({1, 1}, {0}), tpat({1, 1}, 1, 0));
      },
      {"scatter_elements", "axis 2"});
}

BOOST_AUTO_TEST_CASE(gather_nd_onnx) {
  // the ONNX GatherND examples
  Tensor d2 = ints({2, 2}, {0, 1, 2, 3}, dtypes::int32);
  check_close(d2.gather_nd(ints({2, 2}, {0, 0, 1, 1})), NdArray({2}, {0, 3}), kExact, "example 1");
  check_close(d2.gather_nd(ints({2, 1}, {1, 0})), NdArray({2, 2}, {2, 3, 0, 1}), kExact, "example 2");
  Tensor d3 = ints({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, dtypes::int32);
  check_close(d3.gather_nd(ints({2, 2}, {0, 1, 1, 0})), NdArray({2, 2}, {2, 3, 4, 5}), kExact, "example 3");
  check_close(d3.gather_nd(ints({2, 1, 2}, {0, 1, 1, 0})), NdArray({2, 1, 2}, {2, 3, 4, 5}), kExact,
              "example 4");
  check_close(d3.gather_nd(ints({2, 1}, {1, 0}), 1), NdArray({2, 2}, {2, 3, 4, 5}), kExact, "example 5");
  BOOST_TEST(d3.gather_nd(ints({2, 1}, {1, 0}), 1).dtype() == dtypes::int32);
  Tensor data = tpat({2, 3, 4}, 5, 1);
  for (const auto& c : kGatherNd)
    check_close(data.gather_nd(ints(c.index_shape, c.index), c.batch_dims), NdArray(c.shape, c.want), kExact,
                "gather_nd case " + std::to_string(&c - kGatherNd.data()));
  check_error<tg::TensorError>(
      [&] {
        (void)d3.gather_nd(ints({1, 4}, {0, 0, 0, 0}));
      },
      {"gather_nd", "(1, 4)"});
  check_error<tg::TensorError>(
      [&] {
        (void)d3.gather_nd(ints({3, 1}, {0, 0, 0}), 1);
      },
      {"gather_nd", "batch dim 0"});
  check_error<tg::TensorError>(
      [&] {
        (void)d3.gather_nd(ints({2, 1}, {0, 0}), 2);
      },
      {"gather_nd", "batch_dims 2"});
}

BOOST_AUTO_TEST_CASE(scatter_nd_against_numpy) {
  // the ONNX ScatterND example 1
  Tensor d = ints({8}, {1, 2, 3, 4, 5, 6, 7, 8}, dtypes::int32);
  check_close(d.scatter_nd(ints({4, 1}, {4, 3, 1, 7}), ints({4}, {9, 10, 11, 12}, dtypes::int32)),
              NdArray({8}, {1, 11, 3, 10, 9, 6, 7, 12}), kExact, "example 1");
  Tensor data = tpat({4, 3}, 5, 2);
  for (const auto& c : kScatterNd) {
    int64_t k = c.index_shape.back();
    ref::Dims ushape(c.index_shape.begin(), c.index_shape.end() - 1);
    for (int64_t dim = k; dim < 2; ++dim) ushape.push_back(dim == 0 ? 4 : 3);
    check_close(data.scatter_nd(ints(c.index_shape, c.index), tpat(ushape, 3, 1), c.reduce),
                NdArray({4, 3}, c.want), kArith32,
                "scatter_nd case " + std::to_string(&c - kScatterNd.data()));
  }
  check_error<tg::TensorError>(
      [&] {
        (void)data.scatter_nd(ints({2, 1}, {0, 1}), tpat({2, 4}, 1, 0));
      },
      {"scatter_nd", "(2, 4)", "(2, 3)"});
  check_error<tg::TensorError>(
      [&] {
        (void)data.scatter_nd(ints({1, 3}, {0, 1, 0}), tpat({1}, 1, 0));
      },
      {"scatter_nd", "(1, 3)"});
}

BOOST_AUTO_TEST_CASE(topk_and_sort_against_torch, *tt::needs({dtypes::int64})) {
  Tensor x = to_tensor(NdArray({3, 7}, kRandn));
  for (const auto& c : kTopk) {
    auto [v, i] = x.topk(c.k, c.axis, c.largest);
    ref::Dims shape = c.axis == 0 ? ref::Dims{c.k, 7} : ref::Dims{3, c.k};
    std::string what = "topk k=" + std::to_string(c.k) + " axis " + std::to_string(c.axis);
    BOOST_TEST(i.dtype() == dtypes::int64);
    check_close(v, NdArray(shape, c.values), kArith32, what); // 9-digit literals of float32 values
    check_close(i, as_array(c.indices, shape), kExact, what + " indices");
  }
  for (bool desc : {false, true}) {
    auto [v, i] = x.sort(0, desc);
    check_close(v, NdArray({3, 7}, kSortDim0[desc].values), kArith32, "sort dim 0");
    check_close(i, as_array(kSortDim0[desc].indices, {3, 7}), kExact, "sort dim 0 indices");
    auto [tv, ti] = to_tensor(NdArray({10}, kTies)).sort(-1, desc);
    check_close(tv, NdArray({10}, kSortTies[desc].values), kExact, "sort ties");
    check_close(ti, as_array(kSortTies[desc].indices, {10}), kExact, "sort ties indices");
  }
  // ints, stable; topk ties keep the lower index
  Tensor n = ints({4}, {5, -2, 5, 0}, dtypes::int32);
  auto [nv, ni] = n.sort(0, true);
  BOOST_TEST(nv.dtype() == dtypes::int32);
  check_close(nv, NdArray({4}, {5, 5, 0, -2}), kExact, "sort int32 descending");
  check_close(ni, NdArray({4}, {0, 2, 3, 1}), kExact, "sort int32 descending indices");
  auto [kv, ki] = n.topk(3, 0, false);
  check_close(kv, NdArray({3}, {-2, 0, 5}), kExact, "topk smallest int32");
  check_close(ki, NdArray({3}, {1, 3, 0}), kExact, "topk smallest int32 indices");
  auto [ev, ei] = x.topk(0);
  BOOST_TEST(ev.shape() == (tg::Dims{3, 0}));
  check_error<tg::TensorError>([&] { (void)x.topk(8); }, {"topk", "k 8", "(3, 7)"});
  check_error<tg::TensorError>([&] { (void)x.sort(2); }, {"sort", "axis 2", "(3, 7)"});
}

BOOST_AUTO_TEST_CASE(topk_gradient) {
  Tensor x = to_tensor(NdArray({2, 3}, {3, 1, 2, -1, 5, 4}));
  x.requires_grad_();
  auto [v, i] = x.topk(2);
  (v * to_tensor(NdArray({2, 2}, {10, 20, 30, 40}))).sum().backward();
  check_close(*x.grad(), NdArray({2, 3}, {10, 0, 20, 0, 30, 40}), kExact, "topk gradient");
}

BOOST_AUTO_TEST_CASE(nonzero_against_torch, *tt::needs({dtypes::int64})) {
  Tensor x = to_tensor(NdArray({3, 4}, {0, 1.5, 0, 0, kNan, 0, -2, 0, 0, 0, 0, 1e-30}));
  Tensor nz = x.nonzero();
  BOOST_TEST(nz.dtype() == dtypes::int64);
  check_close(nz, NdArray({2, 4}, {0, 1, 1, 2, 1, 0, 2, 3}), kExact, "nonzero");
  check_close(ints({2, 2}, {0, 0, 0, 0}, dtypes::int32).nonzero(), NdArray({2, 0}), kExact, "nonzero none");
  check_close(to_tensor(NdArray({4}, {1, 0, 0, 1}), dtypes::bool_).nonzero(), NdArray({1, 2}, {0, 3}), kExact,
              "nonzero bool");
}

BOOST_AUTO_TEST_CASE(tril_triu_against_torch) {
  Tensor x = tpat({2, 3, 4}, 5, 1);
  for (const auto& c : kTri) {
    std::string d = " diagonal " + std::to_string(c.diagonal);
    check_close(x.tril(c.diagonal), NdArray({2, 3, 4}, c.tril), kExact, "tril" + d);
    check_close(x.triu(c.diagonal), NdArray({2, 3, 4}, c.triu), kExact, "triu" + d);
  }
  check_close(x.tril(100), pat({2, 3, 4}, 5, 1), kExact, "tril far above");
  check_close(x.triu(-100), pat({2, 3, 4}, 5, 1), kExact, "triu far below");
  check_error<tg::TensorError>([&] { (void)tpat({3}, 1, 0).tril(); }, {"tril", "(3,)"});
}

BOOST_AUTO_TEST_CASE(one_hot, *tt::needs({dtypes::int64})) {
  Tensor h = ints({5}, {0, 2, -1, 1, 5}, dtypes::int32).one_hot(3);
  BOOST_TEST(h.dtype() == dtypes::int64);
  // -1 counts from the end (ONNX OneHot); 5 is outside: a zero row
  check_close(h, NdArray({5, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0}), kExact, "one_hot");
  check_close(ints({2, 1}, {1, 0}).one_hot(2), NdArray({2, 1, 2}, {0, 1, 1, 0}), kExact, "one_hot 2-d");
  check_error<tg::TensorError>([&] { (void)tpat({2}, 1, 0).one_hot(3); }, {"one_hot", "float"});
  check_error<tg::TensorError>([&] { (void)ints({2}, {0, 1}).one_hot(-1); }, {"one_hot", "-1"});
}

BOOST_AUTO_TEST_CASE(einsum_against_torch) {
  for (const auto& c : kEinsum) {
    std::vector<Tensor> ops;
    for (size_t i = 0; i < c.shapes.size(); ++i)
      ops.push_back(tpat(c.shapes[i], 3 + 2 * int64_t(i), 1 + int64_t(i)));
    check_close(Tensor::einsum(c.formula, ops), NdArray(c.shape, c.want), kReduce32, "einsum " + c.formula);
  }
  Tensor a = tpat({2, 3}, 1, 0), b = tpat({3, 4}, 1, 0);
  check_error<tg::TensorError>(
      [&] {
        (void)Tensor::einsum("ij,jk,kl", {a, b});
      },
      {"einsum", "3 terms", "2 operands"});
  check_error<tg::TensorError>([&] { (void)Tensor::einsum("ij,kl->iz", {a, b}); }, {"einsum", "'z'"});
  check_error<tg::TensorError>([&] { (void)Tensor::einsum("ij,jk", {a, a}); }, {"einsum", "3", "2"});
  check_error<tg::TensorError>([&] { (void)Tensor::einsum("i#,jk", {a, b}); }, {"einsum", "'#'"});
  check_error<tg::TensorError>([&] { (void)Tensor::einsum("ijk,jk", {a, b}); }, {"einsum", "ijk", "(2, 3)"});
}

BOOST_AUTO_TEST_CASE(einsum_gradient) {
  // d/dA sum(A @ B * G) = G @ B^T, d/dB = A^T @ G
  NdArray an = pat({2, 3}, 3, 1), bn = pat({3, 4}, 5, 2), gn = pat({2, 4}, 7, 3);
  Tensor a = to_tensor(an), b = to_tensor(bn);
  a.requires_grad_();
  b.requires_grad_();
  (Tensor::einsum("ij,jk->ik", {a, b}) * to_tensor(gn)).sum().backward();
  check_close(*a.grad(), ref::matmul(gn, ref::permute(bn, {1, 0})), kReduce32, "einsum d a");
  check_close(*b.grad(), ref::matmul(ref::permute(an, {1, 0}), gn), kReduce32, "einsum d b");
}

BOOST_AUTO_TEST_SUITE_END()
