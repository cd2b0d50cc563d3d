// ONNX's signal ops: DFT and STFT as matmuls against cos/sin matrices computed on the host (a
// complex value is a last dim of 2: real, imaginary), the window functions and MelWeightMatrix
// (host-computed constants).
#include "kernel/onnx/ops.hpp"

#include <cmath>
#include <numbers>

namespace tg::onnx {
namespace {

constexpr double kPi = std::numbers::pi;

// cos and sin of 2*pi*j*k/n for j < rows (the signal), k < cols (the frequency), as (rows, cols)
// tensors; the product j*k is reduced mod n first so that large indices stay exact.
std::pair<Tensor, Tensor> dft_matrices(int64_t rows, int64_t cols, int64_t n, DType dt,
                                       const std::string& device) {
  std::vector<double> c(size_t(rows * cols)), s(size_t(rows * cols));
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t k = 0; k < cols; ++k) {
      double angle = 2 * kPi * double((j * k) % n) / double(n);
      c[size_t(j * cols + k)] = std::cos(angle);
      s[size_t(j * cols + k)] = std::sin(angle);
    }
  return {Tensor::from_vector(c, {rows, cols}, dt, device), Tensor::from_vector(s, {rows, cols}, dt, device)};
}

// The DFT along the last dim of re (and im, if complex), whose length is n: `bins` output bins
// (n, or n/2+1 onesided). Returns (..., bins, 2).
Tensor dft_last(const Tensor& re, const std::optional<Tensor>& im, int64_t n, int64_t bins, bool inverse) {
  auto [C, S] = dft_matrices(n, bins, n, re.dtype(), re.device());
  Tensor out_re = re.matmul(C), out_im = re.matmul(S);
  if (inverse) {
    if (im) {
      out_re = out_re - im->matmul(S);
      out_im = out_im + im->matmul(C);
    }
    out_re = out_re / double(n);
    out_im = out_im / double(n);
  } else {
    out_im = -out_im;
    if (im) {
      out_re = out_re + im->matmul(S);
      out_im = out_im + im->matmul(C);
    }
  }
  return Tensor::stack({out_re, out_im}, -1);
}

// Splits (..., 1) or (..., 2) into real and optional imaginary parts of shape (...).
std::pair<Tensor, std::optional<Tensor>> split_complex(const OpContext& ctx, const Tensor& x,
                                                       const char* name) {
  if (x.ndim() < 1 || (x.shape().back() != 1 && x.shape().back() != 2))
    ctx.fail(std::string(name) + " must end in a dim of 1 (real) or 2 (complex), got " + dims_str(x.shape()));
  if (!x.dtype().is_float()) ctx.fail(std::string(name) + " must be a float tensor");
  if (x.shape().back() == 1) return {x.squeeze(-1), std::nullopt};
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t d : x.shape()) ranges.push_back({0, d});
  ranges.back() = {0, 1};
  Tensor r = x.shrink(ranges).squeeze(-1);
  ranges.back() = {1, 2};
  return {r, x.shrink(ranges).squeeze(-1)};
}

std::vector<Value> dft(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t rank = x.ndim();
  if (rank < 3)
    ctx.fail("input must have rank >= 3 (batch, signal dims, 1 or 2), got " + dims_str(x.shape()));
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 1 || axis > rank - 2)
    ctx.fail("axis " + std::to_string(ctx.attr_int("axis", 1)) + " is not a signal dim of " +
             dims_str(x.shape()));
  bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
  auto [re, im] = split_complex(ctx, x, "input");
  if (onesided && im) ctx.fail("onesided needs a real input");
  // the transformed axis last
  Axes order;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis) order.push_back(d);
  order.push_back(axis);
  re = re.permute(order);
  if (im) im = im->permute(order);
  int64_t n = re.shape().back();
  int64_t length = ctx.has(1) ? ctx.int_scalar(1) : n;
  if (length < 1) ctx.fail("dft_length must be positive, got " + std::to_string(length));
  auto fit = [&](const Tensor& t) {
    Pads pads(size_t(t.ndim()), {0, 0});
    if (length > n) {
      pads.back() = {0, length - n};
      return t.pad(pads);
    }
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t d : t.shape()) ranges.push_back({0, d});
    ranges.back() = {0, length};
    return t.shrink(ranges);
  };
  if (length != n) {
    re = fit(re);
    if (im) im = fit(*im);
  }
  int64_t bins = onesided ? length / 2 + 1 : length;
  Tensor out = dft_last(re, im, length, bins, inverse); // (..., bins, 2), bins at rank-2
  // move the bins dim (at rank-2) back to `axis`
  Axes back;
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (d == axis) back.push_back(rank - 2);
    back.push_back(d);
  }
  if (axis == rank - 2) back.push_back(rank - 2);
  back.push_back(rank - 1);
  return {out.permute(back)};
}

std::vector<Value> stft(OpContext& ctx) {
  const Tensor& signal = ctx.tensor(0);
  if (signal.ndim() != 3) ctx.fail("signal must be (batch, length, 1 or 2), got " + dims_str(signal.shape()));
  int64_t step = ctx.int_scalar(1);
  if (step < 1) ctx.fail("frame_step must be positive, got " + std::to_string(step));
  std::optional<Tensor> window = ctx.optional_tensor(2);
  if (window && window->ndim() != 1) ctx.fail("window must have rank 1, got " + dims_str(window->shape()));
  int64_t frame = ctx.has(3) ? ctx.int_scalar(3) : window ? window->shape()[0] : -1;
  if (frame < 1) ctx.fail("needs frame_length or a window");
  if (window && window->shape()[0] != frame)
    ctx.fail("window length " + std::to_string(window->shape()[0]) + " differs from frame_length " +
             std::to_string(frame));
  int64_t length = signal.shape()[1];
  if (frame > length) ctx.fail("frame_length " + std::to_string(frame) + " exceeds the signal length");
  bool onesided = ctx.attr_int("onesided", 1) != 0;
  auto [re, im] = split_complex(ctx, signal, "signal");
  if (onesided && im) ctx.fail("onesided needs a real signal");
  auto frames = [&](const Tensor& t) { // (batch, length) -> (batch, nframes, frame)
    // a 2-d pool with a dim of 1 in front: the 1-d form (repeat, then shrink of a rank-2 view)
    // does not realize at the moment ("reshape: size mismatch")
    int64_t b = t.shape()[0];
    Tensor f = t.reshape({b, 1, length}).pool({1, frame}, {1, step}, {1, 1});
    f = f.reshape({b, -1, frame}); // (b, 1, nframes, 1, frame) -> (b, nframes, frame)
    if (window) f = f * window->cast(t.dtype());
    return f;
  };
  re = frames(re);
  if (im) im = frames(*im);
  int64_t bins = onesided ? frame / 2 + 1 : frame;
  return {dft_last(re, im, frame, bins, false)};
}

// Hann, Hamming and Blackman: sum of a_k cos(2 pi k n / N), N = size (periodic) or size - 1.
std::vector<Value> window_fn(OpContext& ctx, std::vector<double> coeffs) {
  int64_t size = ctx.int_scalar(0);
  if (size < 0) ctx.fail("size must not be negative, got " + std::to_string(size));
  bool periodic = ctx.attr_int("periodic", 1) != 0;
  DType dt = dtype_from_onnx(ctx.attr_int("output_datatype", 1), "output_datatype");
  double N = double(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    double v = 0;
    for (size_t k = 0; k < coeffs.size(); ++k)
      v += coeffs[k] * (N == 0 ? 1.0 : std::cos(2 * kPi * double(k) * double(n) / N));
    w[size_t(n)] = v;
  }
  return {Tensor::from_vector(w, {size}, dt, ctx.device())};
}

// As ONNX's reference: num_mel_bins + 2 points evenly spaced in mel (the step divides by their count),
// mapped to integer spectrogram bins, triangles with a peak of 1 between them.
std::vector<Value> mel_weight_matrix(OpContext& ctx) {
  int64_t num_mel = ctx.int_scalar(0), dft_length = ctx.int_scalar(1), sample_rate = ctx.int_scalar(2);
  double lower = ctx.double_scalar(3), upper = ctx.double_scalar(4);
  if (num_mel < 1 || dft_length < 1 || sample_rate < 1)
    ctx.fail("num_mel_bins, dft_length and sample_rate must be positive");
  DType dt = dtype_from_onnx(ctx.attr_int("output_datatype", 1), "output_datatype");
  int64_t spec_bins = dft_length / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double low_mel = mel(lower), high_mel = mel(upper);
  double mel_step = (high_mel - low_mel) / double(num_mel + 2);
  std::vector<int64_t> points(size_t(num_mel + 2));
  for (int64_t i = 0; i < num_mel + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * mel_step + low_mel) / 2595) - 1);
    points[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(sample_rate)));
  }
  std::vector<double> out(size_t(spec_bins * num_mel), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j < 0 || j >= spec_bins)
      ctx.fail("a mel band edge falls outside the spectrogram's " + std::to_string(spec_bins) + " bins");
    out[size_t(j * num_mel + i)] = v;
  };
  for (int64_t i = 0; i < num_mel; ++i) {
    int64_t lo = points[size_t(i)], center = points[size_t(i + 1)], hi = points[size_t(i + 2)];
    if (center == lo)
      set(center, i, 1);
    else
      for (int64_t j = lo; j <= center; ++j) set(j, i, double(j - lo) / double(center - lo));
    if (hi > center)
      for (int64_t j = center; j < hi; ++j) set(j, i, double(hi - j) / double(hi - center));
  }
  return {Tensor::from_vector(out, {spec_bins, num_mel}, dt, ctx.device())};
}

} // namespace

void register_signal_ops(OpTable& table) {
  table["DFT"] = dft;
  table["STFT"] = stft;
  table["HannWindow"] = [](OpContext& ctx) { return window_fn(ctx, {0.5, -0.5}); };
  table["HammingWindow"] = [](OpContext& ctx) { return window_fn(ctx, {25.0 / 46, -21.0 / 46}); };
  table["BlackmanWindow"] = [](OpContext& ctx) { return window_fn(ctx, {0.42, -0.5, 0.08}); };
  table["MelWeightMatrix"] = mel_weight_matrix;
}

} // namespace tg::onnx
