// torch.nn.functional.grid_sample built from existing tensor ops. The grid's (x, y) become source
// coordinates on the device (torch's unnormalize, then its border clip or reflection fold); each
// output point reads a few taps (1 nearest, 4 bilinear, 16 bicubic) of the input flattened over
// (H*W) through one Tensor::gather, whose out-of-range indices read 0 (zeros padding), and sums
// them with the taps' weights. Gradients, for the input and for the grid, come from composition.
#include "kernel/tensor/tensor.hpp"

#include <string>
#include <vector>

namespace tg {

namespace {

// torch's grid_sampler_unnormalize: -1 and 1 are the corner pixels' centers (align_corners) or
// their outer edges.
Tensor unnormalize(const Tensor& c, int64_t size, bool align_corners) {
  if (align_corners) return (c + 1.0) * (double(size - 1) / 2);
  return (c + 1.0) * (double(size) / 2) - 0.5;
}

// torch's reflect_coordinates: folds c into [twice_low/2, twice_high/2] by mirroring at both ends
// (a triangle wave of period 2 * span).
Tensor reflect(const Tensor& c, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return c.const_like(0);
  double low = double(twice_low) / 2, span = double(twice_high - twice_low) / 2;
  Tensor t = (c - low).abs();
  Tensor flips = (t / span).floor();
  Tensor extra = t - flips * span;
  Tensor odd = (flips - 2.0 * (flips * 0.5).floor()).eq(flips.const_like(1));
  return odd.where(span - extra + low, extra + low);
}

// torch's compute_coordinates: the padding mode applied to a source coordinate along a dim of `size`.
Tensor pad_coordinates(const Tensor& c, int64_t size, const std::string& padding_mode, bool align_corners) {
  if (padding_mode == "zeros") return c;
  double high = double(size - 1);
  if (padding_mode == "border") return c.clip(0, high);
  Tensor r = align_corners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
  return r.clip(0, high);
}

// A tap's integer index along a dim of `size` from its (whole-number) float coordinate: far-away
// coordinates are clipped to just outside the dim first (still out of range), so that the cast
// to int32 cannot overflow.
Tensor tap_index(const Tensor& whole, int64_t size) {
  return whole.clip(-1, double(size)).cast(dtypes::int32);
}

// torch's cubic convolution weights (A = -0.75) of the four taps at t - 1, t, t + 1, t + 2 around
// a source coordinate with fractional part t.
std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double A = -0.75;
  auto near = [&](const Tensor& x) { return ((A + 2) * x - (A + 3)) * x * x + 1.0; };
  auto far = [&](const Tensor& x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  return {far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)};
}

bool one_of(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (s == o) return true;
  return false;
}

} // namespace

Tensor Tensor::grid_sample(const Tensor& grid, const std::string& mode, const std::string& padding_mode,
                           bool align_corners) const {
  if (!one_of(mode, {"bilinear", "nearest", "bicubic"}))
    throw TensorError("grid_sample: mode must be \"bilinear\", \"nearest\" or \"bicubic\", got \"" + mode +
                      "\"");
  if (!one_of(padding_mode, {"zeros", "border", "reflection"}))
    throw TensorError("grid_sample: padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"" +
                      padding_mode + "\"");
  if (ndim() != 4)
    throw TensorError("grid_sample: input must be (N, C, H, W), got " + dims_str(this->shape()));
  if (grid.ndim() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != this->shape()[0])
    throw TensorError("grid_sample: grid must be (N, Ho, Wo, 2) with the input's N, got grid " +
                      dims_str(grid.shape()) + " for input " + dims_str(this->shape()));
  if (!grid.dtype().is_float())
    throw TensorError("grid_sample: grid must be a float tensor, got " + grid.dtype().name());
  if (grid.device() != device())
    throw TensorError("grid_sample: grid on " + grid.device() + ", input on " + device());
  const int64_t N = this->shape()[0], C = this->shape()[1], H = this->shape()[2], W = this->shape()[3];
  const int64_t Ho = grid.shape()[1], Wo = grid.shape()[2], P = Ho * Wo;
  if (H < 1 || W < 1)
    throw TensorError("grid_sample: input " + dims_str(this->shape()) + " has an empty spatial dim");
  const bool nearest = mode == "nearest", bicubic = mode == "bicubic";
  const DType dt = dtype().is_float() ? dtype() : dtypes::float32;
  const Dims out_shape = {N, C, Ho, Wo};
  if (N * C * P == 0) return full(out_shape, 0, nearest ? dtype() : dt, device());

  // source coordinates (N, P) in pixels
  Tensor ix = unnormalize(grid.shrink({{0, N}, {0, Ho}, {0, Wo}, {0, 1}}).reshape({N, P}), W, align_corners);
  Tensor iy = unnormalize(grid.shrink({{0, N}, {0, Ho}, {0, Wo}, {1, 2}}).reshape({N, P}), H, align_corners);

  // the taps: integer (x, y) per output point, and their weights (none for nearest)
  std::vector<Tensor> xs, ys, weights;
  if (nearest) {
    xs.push_back(tap_index(pad_coordinates(ix, W, padding_mode, align_corners).round(), W));
    ys.push_back(tap_index(pad_coordinates(iy, H, padding_mode, align_corners).round(), H));
  } else if (!bicubic) {
    Tensor px = pad_coordinates(ix, W, padding_mode, align_corners);
    Tensor py = pad_coordinates(iy, H, padding_mode, align_corners);
    Tensor x0 = px.floor(), y0 = py.floor();
    Tensor fx = px - x0, fy = py - y0;
    Tensor gx = 1.0 - fx, gy = 1.0 - fy;
    Tensor xi[2] = {tap_index(x0, W), tap_index(x0 + 1.0, W)};
    Tensor yi[2] = {tap_index(y0, H), tap_index(y0 + 1.0, H)};
    Tensor wx[2] = {gx, fx}, wy[2] = {gy, fy};
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        xs.push_back(xi[i]);
        ys.push_back(yi[j]);
        weights.push_back(wy[j] * wx[i]);
      }
  } else {
    // torch applies the padding mode to each tap's coordinate, not to the source coordinate
    Tensor x0 = ix.floor(), y0 = iy.floor();
    std::vector<Tensor> wx = cubic_weights(ix - x0), wy = cubic_weights(iy - y0);
    std::vector<Tensor> xi, yi;
    for (int k = 0; k < 4; ++k) {
      xi.push_back(tap_index(pad_coordinates(x0 + double(k - 1), W, padding_mode, align_corners), W));
      yi.push_back(tap_index(pad_coordinates(y0 + double(k - 1), H, padding_mode, align_corners), H));
    }
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        xs.push_back(xi[size_t(i)]);
        ys.push_back(yi[size_t(j)]);
        weights.push_back(wy[size_t(j)] * wx[size_t(i)]);
      }
  }

  // flat indices into (H*W), -1 (reads 0) where a tap falls outside the input
  std::vector<Tensor> flat;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Tensor &x = xs[k], &y = ys[k];
    Tensor inside = x.ge(x.const_like(0))
                        .logical_and(x.lt(x.const_like(double(W))))
                        .logical_and(y.ge(y.const_like(0)))
                        .logical_and(y.lt(y.const_like(double(H))));
    flat.push_back(inside.where(y * int64_t(W) + x, x.const_like(-1)).unsqueeze(-1));
  }
  const int64_t T = int64_t(flat.size());
  Tensor index = (T == 1 ? flat[0] : cat(flat, -1)).reshape({N, 1, P * T}).expand({N, C, P * T});
  Tensor src = nearest || dtype() == dt ? *this : cast(dt);
  Tensor picked = src.reshape({N, C, H * W}).gather(2, index).reshape({N, C, P, T});
  if (nearest) return picked.reshape(out_shape);
  Tensor w = stack(weights, -1).reshape({N, 1, P, T});
  if (w.dtype() != dt) w = w.cast(dt);
  return (picked * w).sum({-1}).reshape(out_shape);
}

} // namespace tg
