// ONNX's detection ops. NonMaxSuppression runs on the host (its output size depends on the values).
// RoiAlign and MaxRoiPool read the (few) boxes back and build, on the host, per-box row and column
// sampling matrices: bilinear sampling is separable, so each box's output is Ay @ X @ Ax^T, with the
// batch folded into Ay's columns (no per-box slicing of X). MaxUnpool is a scatter.
#include "kernel/onnx/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tg::onnx {
namespace {

// A float tensor's values on the host, read as float32 (devices may lack float64).
std::vector<double> host_doubles(const Tensor& t) {
  if (t.dtype() == dtypes::float64) return t.to_vector<double>();
  std::vector<float> v = t.to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

// ---- NonMaxSuppression (onnxruntime's semantics) ----

struct Box {
  double x_min, y_min, x_max, y_max;
};

Box read_box(const std::vector<double>& data, size_t offset, bool center_point) {
  double a = data[offset], b = data[offset + 1], c = data[offset + 2], d = data[offset + 3];
  if (center_point) // x_center, y_center, width, height
    return {a - c / 2, b - d / 2, a + c / 2, b + d / 2};
  return {std::min(b, d), std::min(a, c), std::max(b, d), std::max(a, c)}; // y1, x1, y2, x2 in any order
}

bool suppressed_by_iou(const Box& a, const Box& b, double threshold) {
  double ix_min = std::max(a.x_min, b.x_min), iy_min = std::max(a.y_min, b.y_min);
  double ix_max = std::min(a.x_max, b.x_max), iy_max = std::min(a.y_max, b.y_max);
  if (ix_max <= ix_min || iy_max <= iy_min) return false;
  double inter = (ix_max - ix_min) * (iy_max - iy_min);
  double area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min),
         area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  if (area_a <= 0 || area_b <= 0) return false;
  double uni = area_a + area_b - inter;
  if (uni <= 0) return false;
  return inter / uni > threshold;
}

std::vector<Value> non_max_suppression(OpContext& ctx) {
  const Tensor& boxes_t = ctx.tensor(0);
  const Tensor& scores_t = ctx.tensor(1);
  if (boxes_t.ndim() != 3 || boxes_t.shape()[2] != 4)
    ctx.fail("boxes must be (num_batches, spatial_dimension, 4), got " + dims_str(boxes_t.shape()));
  if (scores_t.ndim() != 3 || scores_t.shape()[0] != boxes_t.shape()[0] ||
      scores_t.shape()[2] != boxes_t.shape()[1])
    ctx.fail("scores " + dims_str(scores_t.shape()) + " do not match boxes " + dims_str(boxes_t.shape()));
  const int64_t batches = boxes_t.shape()[0], num_boxes = boxes_t.shape()[1], classes = scores_t.shape()[1];
  int64_t max_out = ctx.has(2) ? ctx.int_scalar(2) : 0;
  double iou_threshold = ctx.has(3) ? ctx.double_scalar(3) : 0;
  std::optional<double> score_threshold;
  if (ctx.has(4)) score_threshold = ctx.double_scalar(4);
  if (iou_threshold < 0 || iou_threshold > 1) ctx.fail("iou_threshold must be in [0, 1]");
  const bool center_point = ctx.attr_int("center_point_box", 0) != 0;

  std::vector<int64_t> selected;
  if (max_out > 0 && num_boxes > 0) {
    std::vector<double> boxes = host_doubles(boxes_t), scores = host_doubles(scores_t);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        const double* s = scores.data() + (b * classes + c) * num_boxes;
        std::vector<int64_t> order;
        for (int64_t i = 0; i < num_boxes; ++i)
          if (!score_threshold || s[i] > *score_threshold) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
        std::vector<Box> kept;
        for (int64_t i : order) {
          if (int64_t(kept.size()) >= max_out) break;
          Box box = read_box(boxes, size_t((b * num_boxes + i) * 4), center_point);
          bool drop = std::any_of(kept.begin(), kept.end(),
                                  [&](const Box& k) { return suppressed_by_iou(k, box, iou_threshold); });
          if (drop) continue;
          kept.push_back(box);
          selected.insert(selected.end(), {b, c, i});
        }
      }
  }
  int64_t n = int64_t(selected.size() / 3);
  return {Tensor::from_vector(selected, {n, 3}, dtypes::int64, ctx.device())};
}

// ---- RoiAlign ----

// One sample coordinate of a bilinear tap along a dim of size `size` (onnxruntime's rules): the
// (index, weight) of its low and high neighbours, or nothing when the sample lies outside.
struct Taps {
  bool valid = false;
  int64_t low = 0, high = 0;
  double w_low = 0, w_high = 0;
};

Taps bilinear_taps(double v, int64_t size) {
  Taps t;
  if (v < -1.0 || v > double(size)) return t;
  t.valid = true;
  if (v <= 0) v = 0;
  t.low = int64_t(v);
  if (t.low >= size - 1) {
    t.low = t.high = size - 1;
    v = double(t.low);
  } else {
    t.high = t.low + 1;
  }
  double l = v - double(t.low);
  t.w_low = 1 - l;
  t.w_high = l;
  return t;
}

std::vector<Value> roi_align(OpContext& ctx) {
  const Tensor& X = ctx.tensor(0);
  const Tensor& rois_t = ctx.tensor(1);
  if (X.ndim() != 4) ctx.fail("X must be (N, C, H, W), got " + dims_str(X.shape()));
  if (rois_t.ndim() != 2 || rois_t.shape()[1] != 4)
    ctx.fail("rois must be (num_rois, 4), got " + dims_str(rois_t.shape()));
  const int64_t N = X.shape()[0], C = X.shape()[1], H = X.shape()[2], W = X.shape()[3], R = rois_t.shape()[0];
  std::vector<int64_t> batch = ctx.ints(2);
  if (int64_t(batch.size()) != R) ctx.fail("batch_indices must have one entry per roi");
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail("mode must be avg or max, got '" + mode + "'");
  const bool is_max = mode == "max";
  const std::string ctm = ctx.attr_string("coordinate_transformation_mode",
                                          ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    ctx.fail("coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" + ctm + "'");
  const int64_t PH = ctx.attr_int("output_height", 1), PW = ctx.attr_int("output_width", 1);
  const int64_t ratio = ctx.attr_int("sampling_ratio", 0);
  const double scale = ctx.attr_float("spatial_scale", 1.0);
  if (PH < 1 || PW < 1) ctx.fail("output_height and output_width must be positive");
  const double offset = ctm == "half_pixel" ? 0.5 : 0.0;

  std::vector<double> rois = host_doubles(rois_t);
  struct Grid {
    double start_h, start_w, bin_h, bin_w;
    int64_t gh, gw;
  };
  std::vector<Grid> grids;
  int64_t max_gh = 1, max_gw = 1;
  for (int64_t r = 0; r < R; ++r) {
    if (batch[size_t(r)] < 0 || batch[size_t(r)] >= N)
      ctx.fail("batch index " + std::to_string(batch[size_t(r)]) + " is outside the batch of " +
               std::to_string(N));
    const double* roi = rois.data() + r * 4;
    Grid g;
    g.start_w = roi[0] * scale - offset;
    g.start_h = roi[1] * scale - offset;
    double roi_w = roi[2] * scale - offset - g.start_w, roi_h = roi[3] * scale - offset - g.start_h;
    if (offset == 0) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    g.bin_h = roi_h / double(PH);
    g.bin_w = roi_w / double(PW);
    g.gh = ratio > 0 ? ratio : int64_t(std::ceil(roi_h / double(PH)));
    g.gw = ratio > 0 ? ratio : int64_t(std::ceil(roi_w / double(PW)));
    g.gh = std::max<int64_t>(g.gh, 0), g.gw = std::max<int64_t>(g.gw, 0);
    max_gh = std::max(max_gh, g.gh), max_gw = std::max(max_gw, g.gw);
    grids.push_back(g);
  }

  // avg: Ay (R, PH, N*H) and Ax (R, PW, W) hold the averaged tap weights (1/count split between them).
  // max: one row per (bin, sample, tap) with that tap's weight alone, max_g*2 rows per bin (short
  // grids repeat their first row, which leaves the max unchanged).
  const int64_t ry = is_max ? max_gh * 2 : 1, rx = is_max ? max_gw * 2 : 1;
  std::vector<double> ay(size_t(R * PH * ry * N * H), 0.0), ax(size_t(R * PW * rx * W), 0.0);
  for (int64_t r = 0; r < R; ++r) {
    const Grid& g = grids[size_t(r)];
    const int64_t b = batch[size_t(r)];
    auto fill = [&](std::vector<double>& m, int64_t bins, int64_t rows, int64_t grid, double start,
                    double bin, int64_t size, int64_t cols, int64_t col0) {
      for (int64_t p = 0; p < bins; ++p) {
        double* block = m.data() + ((r * bins + p) * rows) * cols;
        for (int64_t i = 0; i < grid; ++i) {
          Taps t = bilinear_taps(start + double(p) * bin + (double(i) + 0.5) * bin / double(grid), size);
          if (!t.valid) continue;
          if (is_max) {
            block[(2 * i) * cols + col0 + t.low] = t.w_low;
            block[(2 * i + 1) * cols + col0 + t.high] = t.w_high;
          } else {
            block[col0 + t.low] += t.w_low / double(grid);
            block[col0 + t.high] += t.w_high / double(grid);
          }
        }
        if (is_max && grid > 0)
          for (int64_t k = 2 * grid; k < rows; ++k) std::copy(block, block + cols, block + k * cols);
      }
    };
    fill(ay, PH, ry, g.gh, g.start_h, g.bin_h, H, N * H, b * H);
    fill(ax, PW, rx, g.gw, g.start_w, g.bin_w, W, W, 0);
  }
  const DType dt = X.dtype();
  Tensor Ay = Tensor::from_vector(ay, {R, 1, PH * ry, N * H}, dt, ctx.device());
  Tensor Ax = Tensor::from_vector(ax, {R, 1, PW * rx, W}, dt, ctx.device());
  Tensor Xp = X.permute({1, 0, 2, 3}).reshape({1, C, N * H, W}); // (1, C, N*H, W)
  Tensor Y = Ay.matmul(Xp).matmul(Ax.transpose(-1, -2));         // (R, C, PH*ry, PW*rx)
  if (is_max) Y = Y.reshape({R, C, PH, ry, PW, rx}).max({3, 5});
  return {Y};
}

// ---- MaxRoiPool (onnxruntime's Caffe-style rounding) ----

std::vector<Value> max_roi_pool(OpContext& ctx) {
  const Tensor& X = ctx.tensor(0);
  const Tensor& rois_t = ctx.tensor(1);
  if (X.ndim() != 4) ctx.fail("X must be (N, C, H, W), got " + dims_str(X.shape()));
  if (rois_t.ndim() != 2 || rois_t.shape()[1] != 5)
    ctx.fail("rois must be (num_rois, 5), got " + dims_str(rois_t.shape()));
  std::vector<int64_t> pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1)
    ctx.fail("pooled_shape must be two positive ints");
  const double scale = ctx.attr_float("spatial_scale", 1.0);
  const int64_t N = X.shape()[0], C = X.shape()[1], H = X.shape()[2], W = X.shape()[3], R = rois_t.shape()[0];
  const int64_t PH = pooled[0], PW = pooled[1];
  std::vector<double> rois = host_doubles(rois_t);
  // mh (R, 1, PH, N*H, 1): rows of the box's batch entry inside each bin; mw (R, 1, 1, PW, W).
  std::vector<bool> mh(size_t(R * PH * N * H), false), mw(size_t(R * PW * W), false);
  for (int64_t r = 0; r < R; ++r) {
    const double* roi = rois.data() + r * 5;
    int64_t b = int64_t(roi[0]);
    if (b < 0 || b >= N)
      ctx.fail("batch id " + std::to_string(b) + " is outside the batch of " + std::to_string(N));
    int64_t sw = int64_t(std::round(roi[1] * scale)), sh = int64_t(std::round(roi[2] * scale));
    int64_t ew = int64_t(std::round(roi[3] * scale)), eh = int64_t(std::round(roi[4] * scale));
    double bin_h = double(std::max<int64_t>(eh - sh + 1, 1)) / double(PH);
    double bin_w = double(std::max<int64_t>(ew - sw + 1, 1)) / double(PW);
    for (int64_t p = 0; p < PH; ++p) {
      int64_t lo = std::clamp(int64_t(std::floor(double(p) * bin_h)) + sh, int64_t(0), H);
      int64_t hi = std::clamp(int64_t(std::ceil(double(p + 1) * bin_h)) + sh, int64_t(0), H);
      for (int64_t h = lo; h < hi; ++h) mh[size_t((r * PH + p) * N * H + b * H + h)] = true;
    }
    for (int64_t p = 0; p < PW; ++p) {
      int64_t lo = std::clamp(int64_t(std::floor(double(p) * bin_w)) + sw, int64_t(0), W);
      int64_t hi = std::clamp(int64_t(std::ceil(double(p + 1) * bin_w)) + sw, int64_t(0), W);
      for (int64_t w = lo; w < hi; ++w) mw[size_t((r * PW + p) * W + w)] = true;
    }
  }
  const double lowest = -std::numeric_limits<double>::infinity();
  Tensor Mh = Tensor::from_vector(mh, {R, 1, PH, N * H, 1}, dtypes::bool_, ctx.device());
  Tensor Mw = Tensor::from_vector(mw, {R, 1, 1, PW, W}, dtypes::bool_, ctx.device());
  Tensor Xp = X.permute({1, 0, 2, 3}).reshape({1, C, 1, N * H, W});
  Tensor low = Tensor::scalar(lowest, X.dtype(), ctx.device());
  Tensor rows = Mh.where(Xp, low).max({3});             // (R, C, PH, W)
  Tensor Y = Mw.where(rows.unsqueeze(3), low).max({4}); // (R, C, PH, PW)
  return {Y.eq(low).where(Y.zeros_like(), Y)};          // empty bins are 0
}

// ---- MaxUnpool ----

std::vector<Value> max_unpool(OpContext& ctx) {
  const Tensor& X = ctx.tensor(0);
  const Tensor& I = ctx.tensor(1);
  if (X.shape() != I.shape())
    ctx.fail("X " + dims_str(X.shape()) + " and I " + dims_str(I.shape()) + " differ in shape");
  const int64_t spatial = X.ndim() - 2;
  if (spatial < 1) ctx.fail("X must be (N, C, D1, ...), got " + dims_str(X.shape()));
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (int64_t(kernel.size()) != spatial) ctx.fail("kernel_shape needs one entry per spatial dim");
  std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(size_t(spatial), 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * spatial), 0));
  if (int64_t(strides.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    ctx.fail("strides and pads need one (pads: two) entries per spatial dim");
  Dims inferred{X.shape()[0], X.shape()[1]};
  for (int64_t d = 0; d < spatial; ++d)
    inferred.push_back((X.shape()[size_t(d + 2)] - 1) * strides[size_t(d)] + kernel[size_t(d)] -
                       pads[size_t(d)] - pads[size_t(d + spatial)]);
  for (int64_t v : inferred)
    if (v < 1) ctx.fail("the unpooled shape " + dims_str(inferred) + " is empty");
  // The indices address the unpooled tensor of the inferred shape (the MaxPool's input); a given
  // output_shape pads (or crops) it at the end of each dim.
  Tensor flat = Tensor::zeros({dims_prod(inferred)}, X.dtype(), X.device());
  Tensor Y = flat.scatter_elements(0, I.reshape({-1}), X.reshape({-1})).reshape(inferred);
  if (ctx.has(2)) {
    std::vector<int64_t> out_shape = ctx.ints(2);
    if (int64_t(out_shape.size()) != X.ndim()) ctx.fail("output_shape must have one entry per dim of X");
    if (out_shape[0] != inferred[0] || out_shape[1] != inferred[1])
      ctx.fail("output_shape " + dims_str(Dims(out_shape.begin(), out_shape.end())) + " changes N or C");
    std::vector<std::pair<int64_t, int64_t>> keep, grow;
    for (size_t d = 0; d < inferred.size(); ++d) {
      keep.push_back({0, std::min(inferred[d], out_shape[d])});
      grow.push_back({0, std::max<int64_t>(out_shape[d] - inferred[d], 0)});
    }
    Y = Y.shrink(keep).pad(grow);
  }
  return {Y};
}

} // namespace

void register_detection_ops(OpTable& table) {
  table["NonMaxSuppression"] = non_max_suppression;
  table["RoiAlign"] = roi_align;
  table["MaxRoiPool"] = max_roi_pool;
  table["MaxUnpool"] = max_unpool;
}

} // namespace tg::onnx
