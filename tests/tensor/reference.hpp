// Naive host-side reference implementations of the Tensor ops: an n-d array of doubles (shape +
// row-major data) and plain loops. Deliberately simple and independent of the library (nothing
// here includes kernel/ headers), so a test compares two unrelated implementations.
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ref {

using Dims = std::vector<int64_t>;

inline int64_t prod(const Dims& d) {
  int64_t n = 1;
  for (auto x : d) n *= x;
  return n;
}

inline std::string str(const Dims& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + (d.size() == 1 ? ",)" : ")");
}

struct NdArray {
  Dims shape;
  std::vector<double> data;

  NdArray() = default;
  explicit NdArray(Dims s, double fill = 0) : shape(std::move(s)), data(size_t(prod(shape)), fill) {}
  NdArray(Dims s, std::vector<double> d) : shape(std::move(s)), data(std::move(d)) {
    if (int64_t(data.size()) != prod(shape))
      throw std::logic_error("NdArray: data does not fill " + str(shape));
  }
  int64_t numel() const { return int64_t(data.size()); }
  int64_t ndim() const { return int64_t(shape.size()); }
  int64_t offset(const Dims& idx) const {
    int64_t o = 0;
    for (size_t i = 0; i < shape.size(); ++i) o = o * shape[i] + idx[i];
    return o;
  }
  double& at(const Dims& idx) { return data[size_t(offset(idx))]; }
  double at(const Dims& idx) const { return data[size_t(offset(idx))]; }
};

// Calls f(idx) for every multi-index of `shape`, in row-major order.
template <class F> void for_each_index(const Dims& shape, F&& f) {
  if (prod(shape) == 0) return;
  Dims idx(shape.size(), 0);
  while (true) {
    f(const_cast<const Dims&>(idx));
    int64_t d = int64_t(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[size_t(d)] < shape[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
    if (d < 0) return;
  }
}

inline int64_t norm_axis(int64_t a, int64_t n) { return a < 0 ? a + n : a; }

// ---------------------------------------------------------------- elementwise
inline Dims broadcast_shape(const Dims& a, const Dims& b) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) throw std::logic_error("ref: cannot broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Element of `a` seen at index `idx` of a broadcast shape (numpy rules).
inline double bget(const NdArray& a, const Dims& idx) {
  int64_t o = 0;
  size_t lead = idx.size() - a.shape.size();
  for (size_t i = 0; i < a.shape.size(); ++i) o = o * a.shape[i] + (a.shape[i] == 1 ? 0 : idx[lead + i]);
  return a.data[size_t(o)];
}

template <class F> NdArray map(const NdArray& a, F&& f) {
  NdArray out(a.shape);
  for (size_t i = 0; i < a.data.size(); ++i) out.data[i] = f(a.data[i]);
  return out;
}

template <class F> NdArray zip(const NdArray& a, const NdArray& b, F&& f) {
  NdArray out(broadcast_shape(a.shape, b.shape));
  for_each_index(out.shape, [&](const Dims& idx) { out.at(idx) = f(bget(a, idx), bget(b, idx)); });
  return out;
}

inline NdArray where(const NdArray& c, const NdArray& t, const NdArray& f) {
  NdArray out(broadcast_shape(broadcast_shape(c.shape, t.shape), f.shape));
  for_each_index(out.shape,
                 [&](const Dims& idx) { out.at(idx) = bget(c, idx) != 0 ? bget(t, idx) : bget(f, idx); });
  return out;
}

// ---------------------------------------------------------------- reductions
// Axes normalized (negative allowed); empty = all axes.
inline std::vector<bool> axis_mask(const std::vector<int64_t>& axes, int64_t nd) {
  std::vector<bool> m(size_t(nd), axes.empty());
  for (auto a : axes) m[size_t(norm_axis(a, nd))] = true;
  return m;
}

// Generic reduction: folds f(acc, x) from init over the reduced axes.
template <class F>
NdArray reduce(const NdArray& a, const std::vector<int64_t>& axes, bool keepdim, double init, F&& f) {
  auto m = axis_mask(axes, a.ndim());
  Dims kept = a.shape, dropped;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i])
      kept[i] = 1;
    else
      dropped.push_back(a.shape[i]);
  }
  NdArray out(kept, init);
  for_each_index(a.shape, [&](const Dims& idx) {
    Dims o = idx;
    for (size_t i = 0; i < m.size(); ++i)
      if (m[i]) o[i] = 0;
    double& acc = out.at(o);
    acc = f(acc, a.at(idx));
  });
  if (!keepdim) out.shape = dropped;
  return out;
}

inline int64_t reduced_count(const NdArray& a, const std::vector<int64_t>& axes) {
  auto m = axis_mask(axes, a.ndim());
  int64_t n = 1;
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i]) n *= a.shape[i];
  return n;
}

inline NdArray sum(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
  return reduce(a, axes, keepdim, 0.0, [](double acc, double x) { return acc + x; });
}
inline NdArray prod(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
  return reduce(a, axes, keepdim, 1.0, [](double acc, double x) { return acc * x; });
}
inline NdArray max(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
  return reduce(a, axes, keepdim, -std::numeric_limits<double>::infinity(),
                [](double acc, double x) { return std::isnan(x) || x > acc ? x : acc; });
}
inline NdArray min(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
  return reduce(a, axes, keepdim, std::numeric_limits<double>::infinity(),
                [](double acc, double x) { return std::isnan(x) || x < acc ? x : acc; });
}
inline NdArray mean(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
  double n = double(reduced_count(a, axes));
  return map(sum(a, axes, keepdim), [n](double s) { return s / n; });
}
inline NdArray var(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false,
                   double correction = 1) {
  NdArray m = mean(a, axes, true);
  NdArray d2 = zip(a, m, [](double x, double mu) { return (x - mu) * (x - mu); });
  double n = std::max(0.0, double(reduced_count(a, axes)) - correction);
  return map(sum(d2, axes, keepdim), [n](double s) { return s / n; });
}
inline NdArray std_(const NdArray& a, const std::vector<int64_t>& axes = {}, bool keepdim = false,
                    double correction = 1) {
  return map(var(a, axes, keepdim, correction), [](double v) { return std::sqrt(v); });
}

// First index of the max (argmax) or min (argmin); axis nullopt = over the flattened array.
inline NdArray arg_best(const NdArray& a, std::optional<int64_t> axis, bool keepdim, bool want_max) {
  if (!axis) {
    NdArray flat(Dims{a.numel()}, a.data);
    NdArray r = arg_best(flat, 0, false, want_max);
    r.shape = keepdim ? Dims(a.shape.size(), 1) : Dims{};
    return r;
  }
  int64_t ax = norm_axis(*axis, a.ndim());
  Dims kept = a.shape;
  kept[size_t(ax)] = 1;
  NdArray best(kept, 0), idxs(kept, 0);
  std::vector<bool> seen(size_t(prod(kept)), false);
  for_each_index(a.shape, [&](const Dims& idx) {
    Dims o = idx;
    o[size_t(ax)] = 0;
    int64_t off = best.offset(o);
    double x = a.at(idx);
    bool better = want_max ? x > best.data[size_t(off)] : x < best.data[size_t(off)];
    if (!seen[size_t(off)] || better) {
      seen[size_t(off)] = true;
      best.data[size_t(off)] = x;
      idxs.data[size_t(off)] = double(idx[size_t(ax)]);
    }
  });
  if (!keepdim) idxs.shape.erase(idxs.shape.begin() + ax);
  return idxs;
}
inline NdArray argmax(const NdArray& a, std::optional<int64_t> axis = {}, bool keepdim = false) {
  return arg_best(a, axis, keepdim, true);
}
inline NdArray argmin(const NdArray& a, std::optional<int64_t> axis = {}, bool keepdim = false) {
  return arg_best(a, axis, keepdim, false);
}

inline NdArray logsumexp(const NdArray& a, int64_t axis, bool keepdim = false) {
  NdArray m = max(a, {axis}, true);
  NdArray e = zip(a, m, [](double x, double mu) { return std::exp(x - mu); });
  NdArray s = zip(sum(e, {axis}, true), m, [](double v, double mu) { return std::log(v) + mu; });
  if (!keepdim) s.shape.erase(s.shape.begin() + norm_axis(axis, a.ndim()));
  return s;
}
inline NdArray softmax(const NdArray& a, int64_t axis) {
  NdArray m = max(a, {axis}, true);
  NdArray e = zip(a, m, [](double x, double mu) { return std::exp(x - mu); });
  return zip(e, sum(e, {axis}, true), [](double x, double s) { return x / s; });
}
inline NdArray log_softmax(const NdArray& a, int64_t axis) {
  return zip(a, logsumexp(a, axis, true), [](double x, double l) { return x - l; });
}

inline NdArray cumsum(const NdArray& a, int64_t axis) {
  int64_t ax = norm_axis(axis, a.ndim());
  NdArray out(a.shape);
  for_each_index(a.shape, [&](const Dims& idx) {
    double s = 0;
    Dims j = idx;
    for (int64_t k = 0; k <= idx[size_t(ax)]; ++k) {
      j[size_t(ax)] = k;
      s += a.at(j);
    }
    out.at(idx) = s;
  });
  return out;
}

// ---------------------------------------------------------------- movement
inline NdArray reshape(const NdArray& a, Dims shape) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1)
      infer = int64_t(i);
    else
      known *= shape[i];
  }
  if (infer >= 0) shape[size_t(infer)] = a.numel() / known;
  return NdArray(shape, a.data);
}

inline NdArray permute(const NdArray& a, const std::vector<int64_t>& order) {
  Dims shape;
  for (auto o : order) shape.push_back(a.shape[size_t(norm_axis(o, a.ndim()))]);
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) {
    Dims src(a.shape.size());
    for (size_t i = 0; i < order.size(); ++i) src[size_t(norm_axis(order[i], a.ndim()))] = idx[i];
    out.at(idx) = a.at(src);
  });
  return out;
}

inline NdArray transpose(const NdArray& a, int64_t x, int64_t y) {
  std::vector<int64_t> order(a.shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[size_t(norm_axis(x, a.ndim()))], order[size_t(norm_axis(y, a.ndim()))]);
  return permute(a, order);
}

inline NdArray expand(const NdArray& a, const Dims& shape) {
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) { out.at(idx) = bget(a, idx); });
  return out;
}

// Padding may be negative (crops), like Tensor::pad.
inline NdArray pad(const NdArray& a, const std::vector<std::pair<int64_t, int64_t>>& p, double value = 0) {
  Dims shape = a.shape;
  for (size_t i = 0; i < shape.size(); ++i) shape[i] += p[i].first + p[i].second;
  NdArray out(shape, value);
  for_each_index(shape, [&](const Dims& idx) {
    Dims src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      src[i] = idx[i] - p[i].first;
      if (src[i] < 0 || src[i] >= a.shape[i]) return;
    }
    out.at(idx) = a.at(src);
  });
  return out;
}

inline NdArray shrink(const NdArray& a, const std::vector<std::pair<int64_t, int64_t>>& r) {
  Dims shape;
  for (auto [b, e] : r) shape.push_back(e - b);
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) {
    Dims src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) src[i] = idx[i] + r[i].first;
    out.at(idx) = a.at(src);
  });
  return out;
}

inline NdArray flip(const NdArray& a, const std::vector<int64_t>& axes) {
  auto m = std::vector<bool>(a.shape.size(), false);
  for (auto x : axes) m[size_t(norm_axis(x, a.ndim()))] = true;
  NdArray out(a.shape);
  for_each_index(a.shape, [&](const Dims& idx) {
    Dims src = idx;
    for (size_t i = 0; i < idx.size(); ++i)
      if (m[i]) src[i] = a.shape[i] - 1 - idx[i];
    out.at(idx) = a.at(src);
  });
  return out;
}

// Python slice semantics (CPython's PySlice_AdjustIndices), one spec per leading dim.
struct SliceSpec {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
inline std::vector<int64_t> slice_indices(int64_t n, const SliceSpec& s) {
  int64_t start, stop, step = s.step;
  if (step > 0) {
    start = s.start ? *s.start : 0;
    stop = s.stop ? *s.stop : n;
    if (start < 0) start = std::max<int64_t>(start + n, 0);
    if (stop < 0) stop = std::max<int64_t>(stop + n, 0);
    start = std::min(start, n);
    stop = std::min(stop, n);
  } else {
    start = s.start ? *s.start : n - 1;
    stop = s.stop ? *s.stop : -1 - n; // "before the beginning"
    if (start < 0)
      start = std::max<int64_t>(start + n, -1);
    else
      start = std::min(start, n - 1);
    if (s.stop) {
      if (stop < 0)
        stop = std::max<int64_t>(stop + n, -1);
      else
        stop = std::min(stop, n - 1);
    } else {
      stop = -1;
    }
  }
  std::vector<int64_t> out;
  if (step > 0)
    for (int64_t i = start; i < stop; i += step) out.push_back(i);
  else
    for (int64_t i = start; i > stop; i += step) out.push_back(i);
  return out;
}
inline NdArray slice(const NdArray& a, std::vector<SliceSpec> specs) {
  specs.resize(a.shape.size());
  std::vector<std::vector<int64_t>> pick;
  Dims shape;
  for (size_t i = 0; i < specs.size(); ++i) {
    pick.push_back(slice_indices(a.shape[i], specs[i]));
    shape.push_back(int64_t(pick.back().size()));
  }
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) {
    Dims src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) src[i] = pick[i][size_t(idx[i])];
    out.at(idx) = a.at(src);
  });
  return out;
}

inline NdArray cat(const std::vector<NdArray>& xs, int64_t axis) {
  int64_t ax = norm_axis(axis, xs[0].ndim());
  Dims shape = xs[0].shape;
  shape[size_t(ax)] = 0;
  for (const auto& x : xs) shape[size_t(ax)] += x.shape[size_t(ax)];
  NdArray out(shape);
  int64_t off = 0;
  for (const auto& x : xs) {
    for_each_index(x.shape, [&](const Dims& idx) {
      Dims o = idx;
      o[size_t(ax)] += off;
      out.at(o) = x.at(idx);
    });
    off += x.shape[size_t(ax)];
  }
  return out;
}

inline NdArray stack(const std::vector<NdArray>& xs, int64_t axis) {
  int64_t ax = norm_axis(axis, xs[0].ndim() + 1);
  std::vector<NdArray> u;
  for (auto x : xs) {
    x.shape.insert(x.shape.begin() + ax, 1);
    u.push_back(x);
  }
  return cat(u, ax);
}

// numpy.tile / torch.repeat: more repeats than dims prepends size-1 dims.
inline NdArray repeat(const NdArray& a, const Dims& reps) {
  Dims base(reps.size() - a.shape.size(), 1);
  base.insert(base.end(), a.shape.begin(), a.shape.end());
  NdArray b(base, a.data);
  Dims shape;
  for (size_t i = 0; i < reps.size(); ++i) shape.push_back(base[i] * reps[i]);
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) {
    Dims src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) src[i] = idx[i] % base[i];
    out.at(idx) = b.at(src);
  });
  return out;
}

// torch.gather: out[i][j][k] = a[index[i][j][k]][j][k] (for axis 0), out has index's shape.
inline NdArray gather(const NdArray& a, int64_t axis, const NdArray& index) {
  int64_t ax = norm_axis(axis, a.ndim());
  NdArray out(index.shape);
  for_each_index(index.shape, [&](const Dims& idx) {
    Dims src = idx;
    src[size_t(ax)] = int64_t(index.at(idx));
    out.at(idx) = a.at(src);
  });
  return out;
}

// ---------------------------------------------------------------- composites
// numpy matmul: 1-D operands are promoted and the added dim removed; batch dims broadcast.
inline NdArray matmul(const NdArray& x, const NdArray& y) {
  NdArray a = x, b = y;
  if (a.ndim() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.ndim() == 1) b.shape.push_back(1);
  int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
  Dims ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Dims batch = broadcast_shape(ba, bb);
  Dims shape = batch;
  shape.push_back(n);
  shape.push_back(m);
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) {
    Dims bidx(idx.begin(), idx.end() - 2);
    Dims ia(a.shape.size()), ib(b.shape.size());
    size_t la = bidx.size() - ba.size(), lb = bidx.size() - bb.size();
    for (size_t i = 0; i < ba.size(); ++i) ia[i] = ba[i] == 1 ? 0 : bidx[la + i];
    for (size_t i = 0; i < bb.size(); ++i) ib[i] = bb[i] == 1 ? 0 : bidx[lb + i];
    double s = 0;
    for (int64_t t = 0; t < k; ++t) {
      ia[ia.size() - 2] = idx[idx.size() - 2];
      ia.back() = t;
      ib[ib.size() - 2] = t;
      ib.back() = idx.back();
      s += a.at(ia) * b.at(ib);
    }
    out.at(idx) = s;
  });
  if (x.ndim() == 1) out.shape.erase(out.shape.end() - 2);
  if (y.ndim() == 1) out.shape.pop_back();
  return out;
}

// x (N, C, H, W), w (Cout, C/groups, kh, kw), optional bias (Cout).
inline NdArray conv2d(const NdArray& x, const NdArray& w, const NdArray* bias, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups) {
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t Co = w.shape[0], Ci = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = (H + 2 * padding - dilation * (kh - 1) - 1) / stride + 1;
  int64_t ow = (W + 2 * padding - dilation * (kw - 1) - 1) / stride + 1;
  int64_t per_group = Co / groups;
  (void)C;
  NdArray out({N, Co, oh, ow});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Co; ++co)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t g = co / per_group;
          double s = bias ? bias->data[size_t(co)] : 0.0;
          for (int64_t ci = 0; ci < Ci; ++ci)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                int64_t y = i * stride + p * dilation - padding, z = j * stride + q * dilation - padding;
                if (y < 0 || y >= H || z < 0 || z >= W) continue;
                s += x.at({n, g * Ci + ci, y, z}) * w.at({co, ci, p, q});
              }
          out.at({n, co, i, j}) = s;
        }
  return out;
}

// The gradients of sum(conv2d(x, w) * g) with respect to x and w: each product of the forward
// sum scattered back to the two elements it read (no convolution identities).
inline std::pair<NdArray, NdArray> conv2d_grads(const NdArray& x, const NdArray& w, const NdArray& g,
                                                int64_t stride, int64_t padding, int64_t dilation,
                                                int64_t groups) {
  const int64_t H = x.shape[2], W = x.shape[3], Ci = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t per_group = w.shape[0] / groups;
  NdArray dx(x.shape), dw(w.shape);
  for_each_index(g.shape, [&](const Dims& o) { // o = (n, co, i, j)
    const double go = g.at(o);
    const int64_t grp = o[1] / per_group;
    for (int64_t ci = 0; ci < Ci; ++ci)
      for (int64_t p = 0; p < kh; ++p)
        for (int64_t q = 0; q < kw; ++q) {
          int64_t y = o[2] * stride + p * dilation - padding, z = o[3] * stride + q * dilation - padding;
          if (y < 0 || y >= H || z < 0 || z >= W) continue;
          dx.at({o[0], grp * Ci + ci, y, z}) += go * w.at({o[1], ci, p, q});
          dw.at({o[1], ci, p, q}) += go * x.at({o[0], grp * Ci + ci, y, z});
        }
  });
  return {dx, dw};
}

// Pooling over the last two dims. avg counts padded cells (count_include_pad, tinygrad's default).
inline NdArray pool2d(const NdArray& x, int64_t k, int64_t stride, int64_t padding, int64_t dilation,
                      bool is_max) {
  Dims lead(x.shape.begin(), x.shape.end() - 2);
  int64_t H = x.shape[x.shape.size() - 2], W = x.shape.back();
  int64_t oh = (H + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  int64_t ow = (W + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  Dims shape = lead;
  shape.push_back(oh);
  shape.push_back(ow);
  NdArray out(shape);
  for_each_index(shape, [&](const Dims& idx) {
    int64_t i = idx[idx.size() - 2], j = idx.back();
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    Dims src = idx;
    for (int64_t p = 0; p < k; ++p)
      for (int64_t q = 0; q < k; ++q) {
        int64_t y = i * stride + p * dilation - padding, z = j * stride + q * dilation - padding;
        double v = 0; // padding value for avg
        if (y >= 0 && y < H && z >= 0 && z < W) {
          src[src.size() - 2] = y;
          src.back() = z;
          v = x.at(src);
        } else if (is_max) {
          continue;
        }
        acc = is_max ? std::max(acc, v) : acc + v;
      }
    out.at(idx) = is_max ? acc : acc / double(k * k);
  });
  return out;
}
inline NdArray max_pool2d(const NdArray& x, int64_t k, std::optional<int64_t> stride = {},
                          int64_t padding = 0, int64_t dilation = 1) {
  return pool2d(x, k, stride.value_or(k), padding, dilation, true);
}
inline NdArray avg_pool2d(const NdArray& x, int64_t k, std::optional<int64_t> stride = {},
                          int64_t padding = 0) {
  return pool2d(x, k, stride.value_or(k), padding, 1, false);
}

} // namespace ref
