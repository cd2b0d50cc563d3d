// Winograd F(4x4, 3x3) convolution from tensor ops (winograd.hpp).
#include "kernel/tensor/winograd.hpp"

#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace tg {

namespace {

constexpr int64_t kOut = 4, kTile = 6; // F(4x4, 3x3): 4x4 outputs from a 6x6 tile

// The interpolation points 0, 1, -1, 2, -2 and infinity (Lavin and Gray's matrices).
constexpr double kBt[kTile][kTile] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                      {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr double kG[kTile][3] = {{1.0 / 4, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};
constexpr double kAt[kOut][kTile] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

// out[.., r, ..] = sum over i of m[r][i] x[.., i, ..] along `axis`: one sum of slices per row of m,
// stacked. Plain arithmetic with the matrix's entries as constants (its zeros drop out), so the
// kernel that computes it upcasts the stacked axis (heuristic.cpp: masked axes) and each lane
// keeps only its own row's terms.
template <size_t R, size_t C> Tensor combine(const Tensor& x, int64_t axis, const double (&m)[R][C]) {
  std::vector<std::pair<int64_t, int64_t>> range;
  for (int64_t e : x.shape()) range.emplace_back(0, e);
  std::vector<std::optional<Tensor>> slices(C); // each slice built once (a model builds this every run)
  std::vector<Tensor> rows;
  for (size_t r = 0; r < R; ++r) {
    std::optional<Tensor> sum;
    for (size_t i = 0; i < C; ++i) {
      if (m[r][i] == 0) continue;
      if (!slices[i]) {
        range[size_t(axis)] = {int64_t(i), int64_t(i) + 1};
        slices[i] = x.shrink(range);
      }
      const Tensor& s = *slices[i];
      Tensor term = m[r][i] == 1 ? s : m[r][i] == -1 ? -s : s * m[r][i];
      sum = sum ? *sum + term : term;
    }
    rows.push_back(*sum);
  }
  return Tensor::cat(rows, axis);
}

// The 4x4 output tiles over the batch: the products' length.
int64_t tiles(const Tensor& x, int64_t padding) {
  const int64_t oh = x.shape()[2] + 2 * padding - 2, ow = x.shape()[3] + 2 * padding - 2;
  return x.shape()[0] * ((oh + kOut - 1) / kOut) * ((ow + kOut - 1) / kOut);
}

} // namespace

bool winograd_applies(const Tensor& x, const Tensor& w, int64_t stride, int64_t padding, int64_t dilation,
                      int64_t groups) {
  const int mode = config().winograd;
  if (mode == 0 || stride != 1 || dilation != 1 || groups != 1 || w.ndim() != 4 || w.shape()[2] != 3 ||
      w.shape()[3] != 3 || x.dtype() != dtypes::float32 || w.dtype() != dtypes::float32 ||
      w.shape()[0] < 16 || w.shape()[1] < 16 || tiles(x, padding) < 16)
    return false;
  // By default only where it was measured faster: inference (a weight being trained is read
  // once per step, its transform would run every step), unless NOOPT=1, on devices that run work
  // groups as CPU tasks, and on GPU-style devices from 128 input channels (ResNet-18 at batch 64
  // on an H100: its 64-channel 56x56 layers 0.49 -> 0.60 ms, the 128-512-channel ones 0.5-1.0 ->
  // 0.24-0.36 ms; their direct kernels are staged in local memory).
  if (mode == 1) return true;
  return !w.requires_grad() && !config().noopt && (!parallel_work_groups(x.device()) || w.shape()[1] >= 128);
}

Tensor winograd_weight(const Tensor& w) {
  // G g G^T per channel pair (cout, cin, 6, 6), stored (6, 6, cin, cout) for the products
  return combine(combine(w, 2, kG), 3, kG).permute({2, 3, 1, 0}).contiguous();
}

Tensor winograd_conv2d(const Tensor& x, const Tensor& u, int64_t padding) {
  const int64_t n = x.shape()[0], cin = x.shape()[1], cout = u.shape()[3];
  const int64_t oh = x.shape()[2] + 2 * padding - 2, ow = x.shape()[3] + 2 * padding - 2;
  const int64_t th = (oh + kOut - 1) / kOut, tw = (ow + kOut - 1) / kOut, tiles = n * th * tw;
  // padded so the last tiles are whole (their extra outputs are cut at the end)
  Tensor xp =
      x.pad({{0, 0}, {0, 0}, {padding, padding + th * kOut - oh}, {padding, padding + tw * kOut - ow}});
  Tensor d = xp.pool({kTile, kTile}, {kOut, kOut}, {1, 1}); // (n, cin, th, tw, 6, 6)
  // V = B^T d B per tile in two passes: (a, n, cin, th, tw, j), each tile's row a of 6 values
  // together, then (a, b, cin, n, th, tw) for the products
  Tensor t = combine(d, 4, kBt).permute({4, 0, 1, 2, 3, 5}).contiguous();
  Tensor v = combine(t, 5, kBt).permute({0, 5, 2, 1, 3, 4}).contiguous().reshape({kTile * kTile, cin, tiles});
  // M^T = V^T U per (a, b): (36, tiles, cout), the output channels innermost (vector lanes)
  Tensor m = v.transpose(1, 2).matmul(u.reshape({kTile * kTile, cin, cout}));
  // Y = A^T M A per tile in two passes: (i, b, n, th, tw, cout), then (n, cout, th, i, tw, j)
  Tensor s = combine(m.reshape({kTile, kTile, n, th, tw, cout}), 0, kAt).contiguous();
  Tensor y =
      combine(s, 1, kAt).permute({2, 5, 3, 0, 4, 1}).contiguous().reshape({n, cout, th * kOut, tw * kOut});
  if (th * kOut == oh && tw * kOut == ow) return y;
  return y.shrink({{0, n}, {0, cout}, {0, oh}, {0, ow}});
}

} // namespace tg
