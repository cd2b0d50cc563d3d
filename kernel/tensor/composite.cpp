// Composites built only from primitives: matmul is broadcast-multiply then sum; convolution and
// pooling gather windows with movement ops only (no im2col copy), then reduce.
#include "kernel/tensor/tensor.hpp"

#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/tensor/matmul_pack.hpp"
#include "kernel/tensor/winograd.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace tg {

namespace {

// a (..., n, 1, k) * b^T (..., 1, m, k) summed over k: the product as primitives.
Tensor product_value(const Tensor& a, const Tensor& b) {
  return (a.unsqueeze(-2) * b.transpose(-1, -2).unsqueeze(-3)).sum({-1});
}

// Where the matrix units read the weight-style gradient a^T @ g: a (rows, k) read transposed is
// m-major, which a unit copies element by element through registers; stored transposed first
// (one copy of a, against a product n times its size) it is read in 16-byte rows along the sum.
// Only for 16-bit operands on a device with units for them, b 2-D (a's leading dims flattened
// into the sum) or b's batch dims a's own, and n >= 128 (the copy is then under 1% of the work).
bool transposes_for_units(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.dtype().itemsize() != 2 || !a.dtype().is_float() || b.shape().back() < 128)
    return false;
  if (b.ndim() != 2 &&
      (a.ndim() != b.ndim() || !std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin())))
    return false;
  return has_matrix_units(a.device(), a.dtype());
}

} // namespace

Tensor matmul_with_transposed_gradient(const Tensor& a_, const Tensor& b_) {
  // the nodes in tensors of their own: the gradients hold this closure (conv2d's reason)
  Tensor a = a_.with(a_.uop(), a_.shape()), b = b_.with(b_.uop(), b_.shape());
  return Tensor::with_custom_gradient(
      product_value(a, b),
      [a, b](const Tensor& g) {
        // dA = g @ b^T: b^T read along its rows is the unit's usual layout (k-contiguous)
        Tensor da = product_value(g, b.transpose(-1, -2));
        // dB = a^T @ g, summed over a's leading dims as one product over all rows where b is 2-D
        const int64_t k = a.shape().back(), n = b.shape().back();
        Tensor db = b.ndim() == 2 ? product_value(a.reshape({a.numel() / k, k}).transpose(0, 1).contiguous(),
                                                  g.reshape({g.numel() / n, n}))
                                  : product_value(a.transpose(-1, -2).contiguous(), g);
        return std::vector<std::pair<Tensor, Tensor>>{{a, da.cast(a.dtype())}, {b, db.cast(b.dtype())}};
      },
      "matmul_transposed");
}

Tensor Tensor::matmul(const Tensor& other) const {
  if (ndim() == 0 || other.ndim() == 0)
    throw TensorError("matmul needs tensors of at least 1 dim, got " + dims_str(this->shape()) + " and " +
                      dims_str(other.shape()));
  Tensor a = ndim() == 1 ? unsqueeze(0) : *this;
  Tensor b = other.ndim() == 1 ? other.unsqueeze(-1) : other;
  int64_t k = a.shape().back(), kb = b.shape()[size_t(b.ndim() - 2)];
  if (k != kb)
    throw TensorError("matmul shapes " + dims_str(this->shape()) + " and " + dims_str(other.shape()) +
                      ": inner dims " + std::to_string(k) + " and " + std::to_string(kb) + " differ");
  if (other.ndim() == 2 && ndim() >= 2)
    if (auto packed = packed_matmul(a, b)) return *packed;
  Tensor out = ndim() >= 2 && other.ndim() >= 2 && transposes_for_units(a, b)
                   ? matmul_with_transposed_gradient(a, b)
                   : product_value(a, b);
  if (ndim() == 1) out = out.squeeze(-2);
  if (other.ndim() == 1) out = out.squeeze(-1);
  return out;
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  Tensor out = matmul(weight.T());
  return bias ? out + *bias : out;
}

// Windows of the last len(kernel) dims: (..., o1, o2, k1, k2) with o = (n - d*(k-1) - 1)/s + 1.
// Each dim is repeated, shrunk and reshaped so element (j, r) lands on x[j*s + r*d] — a view.
Tensor Tensor::pool(const Dims& kernel, const Dims& stride, const Dims& dilation) const {
  size_t nk = kernel.size();
  if (stride.size() != nk || dilation.size() != nk)
    throw TensorError("pool: kernel " + dims_str(kernel) + ", stride " + dims_str(stride) + " and dilation " +
                      dims_str(dilation) + " need one entry per pooled dim");
  for (size_t i = 0; i < nk; ++i) // a zero would divide by zero below
    if (kernel[i] < 1 || stride[i] < 1 || dilation[i] < 1)
      throw TensorError("pool: kernel " + dims_str(kernel) + ", stride " + dims_str(stride) +
                        " and dilation " + dims_str(dilation) + " must all be >= 1");
  if (size_t(ndim()) < nk)
    throw TensorError("pool: tensor " + dims_str(this->shape()) + " has fewer dims than the kernel");
  Dims lead(this->shape().begin(), this->shape().end() - int64_t(nk)),
      spatial(this->shape().end() - int64_t(nk), this->shape().end());
  Dims out_size;
  for (size_t i = 0; i < nk; ++i) {
    // the window must fit before dividing: C++ division truncates, so (-1) / 3 + 1 would be 1
    int64_t span = 0, rows = 0; // rows: the k*(n+d) elements the repeat below lays out
    bool overflow = __builtin_mul_overflow(dilation[i], kernel[i] - 1, &span) ||
                    __builtin_add_overflow(span, 1, &span) ||
                    __builtin_mul_overflow(kernel[i], spatial[i] + dilation[i], &rows);
    int64_t o = overflow || spatial[i] < span ? 0 : (spatial[i] - span) / stride[i] + 1;
    if (o <= 0)
      throw TensorError("pool: kernel " + std::to_string(kernel[i]) + " (dilation " +
                        std::to_string(dilation[i]) + ") does not fit input size " +
                        std::to_string(spatial[i]));
    out_size.push_back(o);
  }
  size_t L = lead.size();
  bool tiles = true; // non-overlapping windows that tile the input: a plain reshape
  for (size_t i = 0; i < nk; ++i)
    tiles &= stride[i] == kernel[i] && dilation[i] == 1 && spatial[i] % kernel[i] == 0;
  if (tiles) {
    Dims split = lead;
    for (size_t i = 0; i < nk; ++i) {
      split.push_back(out_size[i]);
      split.push_back(kernel[i]);
    }
    Axes order;
    for (size_t i = 0; i < L; ++i) order.push_back(int64_t(i));
    for (size_t i = 0; i < nk; ++i) order.push_back(int64_t(L + 2 * i));
    for (size_t i = 0; i < nk; ++i) order.push_back(int64_t(L + 2 * i + 1));
    return reshape(split).permute(order);
  }
  Tensor x = *this;
  // repeat so that k rows of length (n + d) fit, then take row r, columns j*s
  Dims reps(lead.size(), 1);
  for (size_t i = 0; i < nk; ++i)
    reps.push_back((kernel[i] * (spatial[i] + dilation[i]) + spatial[i] - 1) / spatial[i]);
  x = x.repeat(reps);
  // shrink each spatial dim to k*(n+d) and split it into (k, n+d)
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t i = 0; i < L; ++i) ranges.emplace_back(0, lead[i]);
  for (size_t i = 0; i < nk; ++i) ranges.emplace_back(0, kernel[i] * (spatial[i] + dilation[i]));
  x = x.shrink(ranges);
  Dims split = lead;
  for (size_t i = 0; i < nk; ++i) {
    split.push_back(kernel[i]);
    split.push_back(spatial[i] + dilation[i]);
  }
  x = x.reshape(split);
  // columns: keep o*s, split into (o, s), keep s-index 0
  ranges.clear();
  for (size_t i = 0; i < L; ++i) ranges.emplace_back(0, lead[i]);
  for (size_t i = 0; i < nk; ++i) {
    ranges.emplace_back(0, kernel[i]);
    ranges.emplace_back(0, out_size[i] * stride[i]);
  }
  x = x.shrink(ranges);
  Dims split2 = lead;
  for (size_t i = 0; i < nk; ++i) {
    split2.push_back(kernel[i]);
    split2.push_back(out_size[i]);
    split2.push_back(stride[i]);
  }
  x = x.reshape(split2);
  ranges.clear();
  for (size_t i = 0; i < L; ++i) ranges.emplace_back(0, lead[i]);
  for (size_t i = 0; i < nk; ++i) {
    ranges.emplace_back(0, kernel[i]);
    ranges.emplace_back(0, out_size[i]);
    ranges.emplace_back(0, 1);
  }
  x = x.shrink(ranges);
  Dims shape_ko = lead;
  for (size_t i = 0; i < nk; ++i) {
    shape_ko.push_back(kernel[i]);
    shape_ko.push_back(out_size[i]);
  }
  x = x.reshape(shape_ko);
  // (..., k1, o1, k2, o2) -> (..., o1, o2, k1, k2)
  Axes order;
  for (size_t i = 0; i < L; ++i) order.push_back(int64_t(i));
  for (size_t i = 0; i < nk; ++i) order.push_back(int64_t(L + 2 * i + 1));
  for (size_t i = 0; i < nk; ++i) order.push_back(int64_t(L + 2 * i));
  return x.permute(order);
}

namespace {

// conv2d's weight panels on CPU-style devices: the widest register tile (heuristic.cpp
// cpu_conv_tile), from the channel count where the rows of a channel-minor weight lie far apart.
constexpr int64_t kConvPanel = 32, kMinPanelChannels = 64;

// conv2d's value, with no custom gradient (checked by Tensor::conv2d). `channel_minor`: the weight
// is already stored output-channel-minor (a copy kept by its caller), so no layout copy is made.
Tensor conv2d_value(const Tensor& input, const Tensor& weight, int64_t stride, int64_t padding,
                    int64_t dilation, int64_t groups, bool channel_minor = false) {
  int64_t N = input.shape()[0], cout = weight.shape()[0], cin = weight.shape()[1];
  int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  Tensor x = padding ? input.pad({{0, 0}, {0, 0}, {padding, padding}, {padding, padding}}) : input;
  Tensor win = x.pool({kh, kw}, {stride, stride}, {dilation, dilation}); // (N, C, oh, ow, kh, kw)
  int64_t oh = win.shape()[2], ow = win.shape()[3], g = groups, rcout = cout / groups;
  // (N, g, 1, cin, oh, ow, kh, kw) * (1, g, rcout, cin, 1, 1, kh, kw) -> sum over cin, kh, kw
  Tensor xw = win.reshape({N, g, 1, cin, oh, ow, kh, kw});
  // The weight is read stored output-channel-minor, so a tile of output channels loads one
  // contiguous vector instead of a strided gather (codegen's vector lanes; a small copy, made
  // once per weight value: Tensor::layout).
  if (!channel_minor && g == 1 && cout >= kMinPanelChannels && cout % kConvPanel == 0 &&
      weight.dtype() == dtypes::float32 && packs_on(weight.device())) {
    // On a CPU the tile reads kConvPanel channels per reduce step; stored (cout, ...) channel-minor
    // those rows are cout apart (2 KiB at 512 channels), so one tile's weight spans the whole
    // weight's pages (TLB misses, no prefetch across pages). Stored as (cout/P, cin, kh, kw, P),
    // each tile's weight is one contiguous run (ResNet-18's 512-channel layers: 2x faster; from 64
    // channels, rows 256 B apart: MobileNetV2's 576 -> 96 projection at batch 32 4.4 -> 3.7 ms).
    int64_t panels = cout / kConvPanel;
    Tensor wp = weight.layout({0, 2, 3, 4, 1}, {panels, kConvPanel, cin, kh, kw});
    Tensor prod = xw * wp.reshape({1, panels, kConvPanel, cin, 1, 1, kh, kw});
    return prod.sum({3, 6, 7}).reshape({N, cout, oh, ow});
  }
  Tensor wt = channel_minor ? weight : weight.layout({1, 2, 3, 0});
  Tensor ww = wt.reshape({1, g, rcout, cin, 1, 1, kh, kw});
  return (xw * ww).sum({3, 6, 7}).reshape({N, cout, oh, ow});
}

// A stride-2 convolution over a few input channels with a wide window (ResNet's 7x7 stem over
// RGB) as a stride-1 one over the input's 2x2 space-to-depth rearrangement: 4x the channels, a
// ceil(k/2)-wide window (the weight zero-padded to an even size: 64 taps per channel for 49).
// Its reads are then contiguous rows a GPU stages in local memory like any stride-1 convolution
// (a stride-2 window's footprint is not staged: lower_stage.cpp); the rearranged input is one
// copy, the rearranged weight is made once per weight value (keep_copy). By default inference
// (weight not requiring grad) on GPU-style devices, not under NOOPT; S2D=1 always, S2D=0 never.
bool space_to_depth_applies(const Tensor& x, const Tensor& w, int64_t stride, int64_t dilation,
                            int64_t groups) {
  const int mode = config().space_to_depth;
  if (mode == 0 || stride != 2 || dilation != 1 || groups != 1 || w.shape()[1] > 4 || w.shape()[2] < 5 ||
      w.shape()[3] < 5 || !x.dtype().is_float() || x.dtype() != w.dtype())
    return false;
  if (mode == 1) return true;
  return !w.requires_grad() && !config().noopt && parallel_work_groups(x.device());
}

// (cout, cin, kh, kw) -> stored (4 cin, ceil(kh/2), ceil(kw/2), cout), output-channel-minor as
// conv2d_value reads a weight: tap (2a + dy, 2b + dx) of channel c becomes tap (a, b) of channel
// 4c + 2dy + dx, the taps past the window zero.
Tensor space_to_depth_weight(const Tensor& w) {
  const int64_t cout = w.shape()[0], cin = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t h2 = (kh + 1) / 2, w2 = (kw + 1) / 2;
  return w.pad({{0, 0}, {0, 0}, {0, 2 * h2 - kh}, {0, 2 * w2 - kw}})
      .reshape({cout, cin, h2, 2, w2, 2})
      .permute({1, 3, 5, 2, 4, 0})
      .reshape({4 * cin, h2, w2, cout})
      .contiguous();
}

Tensor space_to_depth_conv2d(const Tensor& x, const Tensor& ws, int64_t kh, int64_t kw, int64_t padding) {
  const int64_t n = x.shape()[0], cin = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oh = (h + 2 * padding - kh) / 2 + 1, ow = (w + 2 * padding - kw) / 2 + 1;
  const int64_t c4 = ws.shape()[0], h2 = ws.shape()[1], w2 = ws.shape()[2];
  // the padded input's rows 0 .. 2 (oh + h2 - 1): past its end zeros, beyond what the taps read cut
  const int64_t rows = 2 * (oh + h2 - 1), cols = 2 * (ow + w2 - 1);
  Tensor xp = x.pad({{0, 0},
                     {0, 0},
                     {padding, std::max<int64_t>(0, rows - h - padding)},
                     {padding, std::max<int64_t>(0, cols - w - padding)}})
                  .shrink({{0, n}, {0, cin}, {0, rows}, {0, cols}});
  Tensor xs = xp.reshape({n, cin, rows / 2, 2, cols / 2, 2})
                  .permute({0, 1, 3, 5, 2, 4})
                  .reshape({n, c4, rows / 2, cols / 2})
                  .contiguous();
  return conv2d_value(xs, ws.permute({3, 0, 1, 2}), 1, 0, 1, 1, true);
}

} // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups) const {
  if (ndim() != 4 || weight.ndim() != 4)
    throw TensorError("conv2d needs input (N, C, H, W) and weight (Cout, Cin/groups, kh, kw), got " +
                      dims_str(this->shape()) + " and " + dims_str(weight.shape()));
  if (stride < 1 || dilation < 1 || padding < 0 || groups < 1)
    throw TensorError("conv2d: stride and dilation must be >= 1, padding >= 0, groups >= 1");
  int64_t C = this->shape()[1], cout = weight.shape()[0], cin = weight.shape()[1];
  int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  if (C != cin * groups || cout % groups != 0)
    throw TensorError("conv2d: input has " + std::to_string(C) + " channels, weight " +
                      dims_str(weight.shape()) + " with groups=" + std::to_string(groups) + " expects " +
                      std::to_string(cin * groups));
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != cout))
    throw TensorError("conv2d: bias shape " + dims_str(bias->shape()) + " does not match " +
                      std::to_string(cout) + " output channels");
  Tensor out =
      winograd_applies(*this, weight, stride, padding, dilation, groups)
          ? winograd_conv2d(*this, weight.keep_copy("winograd", [&] { return winograd_weight(weight); }),
                            padding)
      : space_to_depth_applies(*this, weight, stride, dilation, groups)
          ? space_to_depth_conv2d(
                *this, weight.keep_copy("space-to-depth", [&] { return space_to_depth_weight(weight); }), kh,
                kw, padding)
          : conv2d_value(*this, weight, stride, padding, dilation, groups);
  if (stride == 1 && dilation == 1 && groups == 1 && dtype().is_float()) {
    // Differentiating the window view scatters through a 25x larger tensor; the classic
    // identities are convolutions again: dX = full conv of g with the flipped, transposed
    // weight; dW = conv of the input (batch as channels) with g as the kernel.
    // The closure holds the input's and the weight's nodes in tensors of their own, not the
    // tensors themselves: the weight's gradient holds this closure (through its expression), and
    // holding the weight's own state there would make weight -> gradient -> closure -> weight, a
    // cycle that keeps a model alive after it dies.
    Tensor input = with(uop(), shape()), w = weight.with(weight.uop(), weight.shape());
    int64_t pad_ = padding;
    out = with_custom_gradient(
        out,
        [input, w, pad_, kh, kw](const Tensor& gy) {
          // g is stored once in its own layout (it is often a long elementwise chain, e.g. a
          // BatchNorm backward), then copied padded and channel-minor for the two convolutions.
          Tensor gc = gy.contiguous();
          // stored padded, so the convolution's inner loop reads without bounds checks
          Tensor gp = gc.pad({{0, 0}, {0, 0}, {kh - 1, kh - 1}, {kw - 1, kw - 1}}).contiguous();
          // (no custom gradient of its own: the gradient graph then holds no function, and the
          // gradient cache can rebuild it; a second derivative takes the generic rules)
          Tensor dxp = conv2d_value(gp, w.flip({2, 3}).transpose(0, 1), 1, 0, 1, 1);
          Tensor dx = pad_ ? dxp.shrink({{0, dxp.shape()[0]},
                                         {0, dxp.shape()[1]},
                                         {pad_, dxp.shape()[2] - pad_},
                                         {pad_, dxp.shape()[3] - pad_}})
                           : dxp;
          // dW[co, ci, i, j] = sum over (n, y, x) of g[n, co, y, x] * window[n, ci, y, x, i, j]
          Tensor xp = pad_ ? input.pad({{0, 0}, {0, 0}, {pad_, pad_}, {pad_, pad_}}) : input;
          Tensor windows = xp.pool({kh, kw}, {1, 1}, {1, 1});
          int64_t n = windows.shape()[0], ci = windows.shape()[1], oh_ = windows.shape()[2],
                  ow_ = windows.shape()[3];
          int64_t co = gy.shape()[1];
          // g stored channel-minor for the same reason as the weight above
          Tensor gt = gc.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
          // The sum over the batch runs in chunks of images whose data fits in cache: each tile
          // of dW re-reads one chunk from cache instead of streaming the whole batch from memory
          // (contiguous: keeps the two sums from merging back into one). 512 KiB, half a core's L2
          // on Zen 4/5, beside the tile's other data: beautiful_mnist's 3x3 weight gradients took
          // 20-35% less time than with 1 MiB chunks, 2 MiB was slower still (Zen 5, BEAM=2;
          // docs/architecture.md, "The CPU training step").
          int64_t per_image = (ci * xp.shape()[2] * xp.shape()[3] + co * oh_ * ow_) * gy.dtype().itemsize();
          int64_t chunk = 1;
          for (int64_t c = 1; c <= n; ++c)
            if (n % c == 0 && c * per_image <= (int64_t(1) << 19)) chunk = c;
          Tensor prod = windows.reshape({n / chunk, chunk, 1, ci, oh_, ow_, kh, kw}) *
                        gt.reshape({n / chunk, chunk, co, 1, oh_, ow_, 1, 1});
          Tensor dw = chunk == n ? prod.sum({0, 1, 4, 5}) : prod.sum({1, 4, 5}).contiguous().sum({0});
          return std::vector<std::pair<Tensor, Tensor>>{{input, dx.cast(input.dtype())},
                                                        {w, dw.cast(w.dtype())}};
        },
        // it reads only gy, the input's and weight's nodes (both in the forward graph) and the
        // padding, which the kind names: the gradient cache may rebuild it by structure
        "conv2d padding=" + std::to_string(pad_));
  }
  return bias ? out + bias->reshape({1, cout, 1, 1}) : out;
}

namespace {

// torch's rules: every size positive, and padding at most half the (dilated) window, so no
// window lies wholly in the padding.
void check_pool_args(const char* name, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  std::string args = std::string(name) + "(kernel " + std::to_string(kernel) + ", stride " +
                     std::to_string(stride) + ", padding " + std::to_string(padding) + ", dilation " +
                     std::to_string(dilation) + ")";
  if (kernel < 1 || stride < 1 || dilation < 1)
    throw TensorError(args + ": kernel, stride and dilation must be >= 1");
  int64_t span = 0; // a window too large to count cannot fit: pool() says so
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
    span = std::numeric_limits<int64_t>::max();
  if (padding < 0 || padding > span / 2)
    throw TensorError(args + ": padding must be between 0 and half the window (" + std::to_string(span / 2) +
                      ")");
}

} // namespace

Tensor Tensor::max_pool2d(int64_t kernel, std::optional<int64_t> stride, int64_t padding,
                          int64_t dilation) const {
  if (ndim() < 2) throw TensorError("max_pool2d needs at least 2 dims, got " + dims_str(this->shape()));
  int64_t s = stride.value_or(kernel);
  check_pool_args("max_pool2d", kernel, s, padding, dilation);
  Tensor x = *this;
  if (padding) {
    std::vector<std::pair<int64_t, int64_t>> p(size_t(ndim()), {0, 0});
    p[size_t(ndim() - 2)] = p[size_t(ndim() - 1)] = {padding, padding};
    x = x.pad(p, dtype().is_float() ? -std::numeric_limits<double>::infinity() : double(dtype().int_min()));
  }
  return x.pool({kernel, kernel}, {s, s}, {dilation, dilation}).max({-2, -1});
}

Tensor Tensor::avg_pool2d(int64_t kernel, std::optional<int64_t> stride, int64_t padding) const {
  if (ndim() < 2) throw TensorError("avg_pool2d needs at least 2 dims, got " + dims_str(this->shape()));
  int64_t s = stride.value_or(kernel);
  check_pool_args("avg_pool2d", kernel, s, padding, 1);
  Tensor x = *this;
  if (padding) {
    std::vector<std::pair<int64_t, int64_t>> p(size_t(ndim()), {0, 0});
    p[size_t(ndim() - 2)] = p[size_t(ndim() - 1)] = {padding, padding};
    x = x.pad(p);
  }
  return x.pool({kernel, kernel}, {s, s}, {1, 1}).mean({-2, -1});
}

} // namespace tg
