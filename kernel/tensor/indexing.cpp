// Indexing, sorting and scattering, composed only from Tensor ops. Like gather (movement.cpp),
// everything that indexes by a tensor's values compares the index against an arange (a one-hot
// mask) and reduces, so it also runs where memory cannot be indexed: scatter and gather_nd cost
// (elements) x (length of the indexed axis). Sorting counts, for each element, the
// elements that sort before it (its rank), then selects by rank: O(n^2) per row of n, which suits
// the short rows of models (top-k of logits, NMS candidates), not bulk sorting.
#include "kernel/tensor/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tg {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

// t.axis(ax), its error naming the op
int64_t op_axis(const Tensor& t, int64_t ax, const std::string& op) {
  if (ax < -t.ndim() || ax >= t.ndim())
    throw TensorError(op + ": axis " + num(ax) + " is out of range for shape " + dims_str(t.shape()));
  return t.axis(ax);
}

// `t` with axis a moved to the end (the other axes keep their order), and back.
Tensor axis_last(const Tensor& t, int64_t a) {
  Axes order;
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (d != a) order.push_back(d);
  order.push_back(a);
  return t.permute(order);
}
Tensor axis_back(const Tensor& t, int64_t a) {
  int64_t nd = t.ndim();
  Axes order;
  for (int64_t d = 0; d < nd; ++d) order.push_back(d < a ? d : d == a ? nd - 1 : d - 1);
  return t.permute(order);
}

Tensor iota(int64_t n, DType dt, const std::string& device) {
  return Tensor::arange(0, double(n), 1, dt, device);
}

// An integer index tensor in a dtype wide enough for its values (int32, or int64 for 64-bit and
// uint32 indices); throws for float and bool indices.
Tensor index_values(const Tensor& index, const std::string& op) {
  DType dt = index.dtype();
  if (!dt.is_int()) throw TensorError(op + ": indices must be an integer tensor, got " + dt.name());
  bool wide = dt == dtypes::int64 || dt == dtypes::uint64 || dt == dtypes::uint32;
  return index.cast(wide ? dtypes::int64 : dtypes::int32);
}

// Negative indices count from the end of a dim of size n (ONNX).
Tensor wrap_negative(const Tensor& idx, int64_t n) { return idx.lt(idx.const_like(0)).where(idx + n, idx); }

// The linear offset into dims `dims` of each row of `idx` (..., k), -1 where any index is outside
// its dim after wrapping negatives (such a row selects nothing).
Tensor linear_index(const Tensor& idx, const Dims& dims) {
  int64_t k = int64_t(dims.size());
  Dims lead(idx.shape().begin(), idx.shape().end() - 1);
  Tensor lin = Tensor::zeros(lead, idx.dtype(), idx.device());
  Tensor valid = Tensor::full(lead, 1, dtypes::bool_, idx.device());
  for (int64_t i = 0; i < k; ++i) {
    Pads r;
    for (auto d : lead) r.emplace_back(0, d);
    r.emplace_back(i, i + 1);
    Tensor c = wrap_negative(idx.shrink(r).reshape(lead), dims[size_t(i)]);
    valid = valid.logical_and(c.ge(c.const_like(0))).logical_and(c.lt(c.const_like(double(dims[size_t(i)]))));
    lin = lin * dims[size_t(i)] + c;
  }
  return valid.where(lin, lin.const_like(-1));
}

// The scatter itself. data (..., n); match (..., n, m): whether update j lands on element i;
// src (..., 1, m): the updates. Returns data with the updates combined in, in data's dtype.
Tensor scatter_combine(const Tensor& data, const Tensor& match, const Tensor& src, ScatterReduce reduce) {
  Dims full = broadcast_shape(broadcast_shape(match.shape(), src.shape()), data.unsqueeze(-1).shape());
  int64_t m = full.back();
  Tensor mt = match.expand(full), s = src.cast(data.dtype()).expand(full);
  Tensor out = data;
  switch (reduce) {
  case ScatterReduce::none: { // the last of repeated indices wins
    Tensor pos = iota(m, dtypes::int32, data.device()) + 1;
    Tensor last = mt.where(pos, pos.const_like(0)).max({-1}, true);
    Tensor sel = mt.logical_and(pos.eq(last));
    Tensor value = sel.where(s, s.const_like(0)).sum({-1}).cast(data.dtype());
    out = mt.max({-1}).where(value, data);
    break;
  }
  case ScatterReduce::add:
    out = data + mt.where(s, s.const_like(0)).sum({-1});
    break;
  case ScatterReduce::mul:
    out = data * mt.where(s, s.const_like(1)).prod({-1});
    break;
  case ScatterReduce::max: // data stands in for the updates that miss: no sentinel value needed
    out = data.maximum(mt.where(s, data.unsqueeze(-1).expand(full)).max({-1}));
    break;
  case ScatterReduce::min:
    out = data.minimum(mt.where(s, data.unsqueeze(-1).expand(full)).min({-1}));
    break;
  }
  return out.cast(data.dtype());
}

// Whether a sorts before b when sorting descending: greater, NaN above everything (torch).
Tensor sorts_above(const Tensor& a, const Tensor& b) {
  Tensor gt = a.gt(b);
  if (!a.dtype().is_float()) return gt;
  return gt.logical_or(a.isnan().logical_and(b.isnan().logical_not()));
}
Tensor sorts_equal(const Tensor& a, const Tensor& b) {
  Tensor eq = a.eq(b);
  if (!a.dtype().is_float()) return eq;
  return eq.logical_or(a.isnan().logical_and(b.isnan()));
}

// The first k elements along axis a in sorted order (stable: ties keep the lower index first),
// as (values, int64 indices). Rank counting: O(n^2) per row.
std::pair<Tensor, Tensor> rank_select(const Tensor& x, int64_t a, int64_t k, bool descending) {
  int64_t n = x.shape()[size_t(a)];
  Tensor xt = axis_last(x, a); // (..., n)
  Tensor key = xt.dtype().is_bool() ? xt.cast(dtypes::int32) : xt;
  Tensor xi = key.unsqueeze(-1), xj = key.unsqueeze(-2); // (..., n, 1) element i, (..., 1, n) element j
  Tensor beats = descending ? sorts_above(xj, xi) : sorts_above(xi, xj);
  Tensor ii = iota(n, dtypes::int32, x.device()).reshape({n, 1}), jj = ii.reshape({1, n});
  Tensor before = beats.logical_or(sorts_equal(xj, xi).logical_and(jj.lt(ii)));
  Tensor rank = before.sum({-1}).cast(dtypes::int32); // (..., n): a permutation of 0..n-1
  Tensor pick = rank.unsqueeze(-2).eq(iota(k, dtypes::int32, x.device()).reshape({k, 1})); // (..., k, n)
  Tensor xs = xt.unsqueeze(-2).expand(pick.shape());
  Tensor values = pick.where(xs, xs.const_like(0)).sum({-1}).cast(x.dtype());
  Tensor pos = jj.expand(pick.shape());
  Tensor indices = pick.where(pos, pos.const_like(0)).sum({-1}).cast(dtypes::int64);
  return {axis_back(values, a), axis_back(indices, a)};
}

// The source index of each output position of a dim of size n padded by (before, after).
std::vector<int64_t> pad_sources(int64_t n, int64_t before, int64_t after, PadMode mode) {
  std::vector<int64_t> src;
  for (int64_t o = -before; o < n + after; ++o) {
    int64_t s = o;
    if (mode == PadMode::edge || (mode == PadMode::reflect && n == 1)) {
      s = std::clamp<int64_t>(o, 0, n - 1);
    } else if (mode == PadMode::reflect) { // mirror without repeating the edge, period 2(n - 1)
      int64_t p = 2 * (n - 1), r = ((o % p) + p) % p;
      s = r < n ? r : p - r;
    } else if (mode == PadMode::wrap) {
      s = ((o % n) + n) % n;
    }
    src.push_back(s);
  }
  return src;
}

// x with dim d rebuilt from source indices: runs of consecutive (ascending or descending) or equal
// indices become slices, flipped slices or expanded single elements, then one cat.
Tensor take_runs(const Tensor& x, int64_t d, const std::vector<int64_t>& src) {
  std::vector<Tensor> pieces;
  Pads whole;
  for (int64_t i = 0; i < x.ndim(); ++i) whole.emplace_back(0, x.shape()[size_t(i)]);
  size_t i = 0;
  while (i < src.size()) {
    size_t j = i + 1;
    int64_t step = 0;
    if (j < src.size() && src[j] - src[i] >= -1 && src[j] - src[i] <= 1) { // else a jump: a run of one
      step = src[j] - src[i];
      while (j < src.size() && src[j] - src[j - 1] == step) ++j;
    }
    int64_t len = int64_t(j - i), lo = std::min(src[i], src[j - 1]), hi = std::max(src[i], src[j - 1]);
    Pads r = whole;
    r[size_t(d)] = {lo, hi + 1};
    Tensor piece = x.shrink(r);
    if (step == -1) piece = piece.flip({d});
    if (step == 0 && len > 1) {
      Dims shape = piece.shape();
      shape[size_t(d)] = len;
      piece = piece.expand(shape);
    }
    pieces.push_back(piece);
    i = j;
  }
  return pieces.size() == 1 ? pieces[0] : Tensor::cat(pieces, d);
}

const char* mode_name(PadMode mode) {
  switch (mode) {
  case PadMode::constant:
    return "constant";
  case PadMode::reflect:
    return "reflect";
  case PadMode::edge:
    return "edge";
  case PadMode::wrap:
    return "wrap";
  }
  return "?";
}

std::string pads_str(const Pads& p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", (" : "(") + num(p[i].first) + ", " + num(p[i].second) + ")";
  return s + "]";
}

} // namespace

Tensor Tensor::pad(const Pads& padding, PadMode mode, double value) const {
  if (int64_t(padding.size()) != ndim())
    throw TensorError(std::string("pad (") + mode_name(mode) + "): " + num(int64_t(padding.size())) +
                      " (before, after) pairs " + pads_str(padding) + " for shape " + dims_str(shape()) +
                      ", need one per dim");
  for (size_t i = 0; i < padding.size(); ++i)
    if (-std::min<int64_t>(padding[i].first, 0) - std::min<int64_t>(padding[i].second, 0) > shape()[i])
      throw TensorError(std::string("pad (") + mode_name(mode) + "): cropping " + pads_str(padding) +
                        " removes more than dim " + num(int64_t(i)) + " of shape " + dims_str(shape()));
  if (mode == PadMode::constant) return pad(std::vector<std::pair<int64_t, int64_t>>(padding), value);
  Pads crop;
  for (size_t i = 0; i < padding.size(); ++i)
    crop.emplace_back(std::max<int64_t>(0, -padding[i].first),
                      shape()[i] - std::max<int64_t>(0, -padding[i].second));
  Tensor x = shrink(crop);
  for (int64_t d = 0; d < ndim(); ++d) {
    int64_t b = std::max<int64_t>(0, padding[size_t(d)].first),
            a = std::max<int64_t>(0, padding[size_t(d)].second);
    if (b == 0 && a == 0) continue;
    int64_t n = x.shape()[size_t(d)];
    if (n == 0)
      throw TensorError(std::string("pad (") + mode_name(mode) + ") " + pads_str(padding) + ": dim " +
                        num(d) + " of shape " + dims_str(x.shape()) +
                        " is empty, there is nothing to repeat");
    x = take_runs(x, d, pad_sources(n, b, a, mode));
  }
  return x;
}

Tensor Tensor::scatter_elements(int64_t ax, const Tensor& index, const Tensor& src,
                                ScatterReduce reduce) const {
  if (ndim() == 0) throw TensorError("scatter_elements into a 0-d tensor");
  int64_t a = op_axis(*this, ax, "scatter_elements");
  if (index.ndim() != ndim() || index.shape() != src.shape())
    throw TensorError("scatter_elements: index " + dims_str(index.shape()) + " and updates " +
                      dims_str(src.shape()) + " must have one shape, of the rank of the data " +
                      dims_str(shape()));
  for (int64_t d = 0; d < ndim(); ++d)
    if (d != a && index.shape()[size_t(d)] > shape()[size_t(d)])
      throw TensorError("scatter_elements: index shape " + dims_str(index.shape()) + " exceeds the data's " +
                        dims_str(shape()) + " in dim " + num(d));
  if (src.device() != device())
    throw TensorError("scatter_elements: updates on " + src.device() + ", data on " + device());
  Tensor idx = index_values(index, "scatter_elements");
  if (index.numel() == 0) return *this;
  int64_t n = shape()[size_t(a)];
  idx = wrap_negative(idx, n);
  // index and updates fill the data's shape in the other dims; -1 matches nothing
  Pads fill;
  for (int64_t d = 0; d < ndim(); ++d)
    fill.emplace_back(0, d == a ? 0 : shape()[size_t(d)] - index.shape()[size_t(d)]);
  Tensor it = axis_last(idx.pad(fill, PadMode::constant, -1), a);                     // (..., m)
  Tensor st = axis_last(src.cast(dtype()).pad(fill, PadMode::constant, 0), a);        // (..., m)
  Tensor match = it.unsqueeze(-2).eq(iota(n, idx.dtype(), device()).reshape({n, 1})); // (..., n, m)
  return axis_back(scatter_combine(axis_last(*this, a), match, st.unsqueeze(-2), reduce), a);
}

Tensor Tensor::gather_nd(const Tensor& indices, int64_t batch_dims) const {
  int64_t r = ndim(), q = indices.ndim(), b = batch_dims;
  if (q < 1 || r < 1 || b < 0 || b >= std::min(q, r))
    throw TensorError("gather_nd: data " + dims_str(shape()) + ", indices " + dims_str(indices.shape()) +
                      ", batch_dims " + num(b) + ": need ranks >= 1 and batch_dims below both");
  int64_t k = indices.shape().back();
  if (k < 1 || k > r - b)
    throw TensorError("gather_nd: indices " + dims_str(indices.shape()) + " index " + num(k) +
                      " dims of data " + dims_str(shape()) + " with batch_dims " + num(b) + " (at most " +
                      num(r - b) + ", at least 1)");
  for (int64_t d = 0; d < b; ++d)
    if (shape()[size_t(d)] != indices.shape()[size_t(d)])
      throw TensorError("gather_nd: batch dim " + num(d) + " differs: data " + dims_str(shape()) +
                        ", indices " + dims_str(indices.shape()));
  Tensor idx = index_values(indices, "gather_nd");
  Dims batch(shape().begin(), shape().begin() + b), indexed(shape().begin() + b, shape().begin() + b + k),
      rest(shape().begin() + b + k, shape().end()),
      rows(indices.shape().begin() + b, indices.shape().end() - 1);
  int64_t B = dims_prod(batch), N = dims_prod(indexed), R = dims_prod(rest), M = dims_prod(rows);
  if (N > INT32_MAX) idx = idx.cast(dtypes::int64);
  Tensor lin = linear_index(idx.reshape({B, M, k}), indexed); // (B, M)
  Tensor onehot = lin.reshape({B, M, 1, 1}).eq(iota(N, lin.dtype(), device()).reshape({N, 1}));
  Tensor xs = reshape({B, 1, N, R}).expand({B, M, N, R});
  Tensor picked = onehot.expand({B, M, N, R}).where(xs, xs.const_like(0)).sum({2}).cast(dtype());
  Dims out(indices.shape().begin(), indices.shape().end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return picked.reshape(out);
}

Tensor Tensor::scatter_nd(const Tensor& indices, const Tensor& updates, ScatterReduce reduce) const {
  int64_t r = ndim(), q = indices.ndim();
  if (q < 1 || r < 1)
    throw TensorError("scatter_nd: data " + dims_str(shape()) + " and indices " + dims_str(indices.shape()) +
                      " need rank >= 1");
  int64_t k = indices.shape().back();
  Dims want(indices.shape().begin(), indices.shape().end() - 1);
  if (k <= r) want.insert(want.end(), shape().begin() + k, shape().end());
  if (k > r || updates.shape() != want)
    throw TensorError(
        "scatter_nd: data " + dims_str(shape()) + ", indices " + dims_str(indices.shape()) +
        (k > r ? ": rows index " + num(k) + " dims of a rank-" + num(r) + " tensor"
               : ": updates have shape " + dims_str(updates.shape()) + ", need " + dims_str(want)));
  if (updates.device() != device())
    throw TensorError("scatter_nd: updates on " + updates.device() + ", data on " + device());
  Tensor idx = index_values(indices, "scatter_nd");
  Dims indexed(shape().begin(), shape().begin() + k), rest(shape().begin() + k, shape().end());
  int64_t N = dims_prod(indexed), R = dims_prod(rest);
  int64_t M = dims_prod(Dims(indices.shape().begin(), indices.shape().end() - 1));
  if (N > INT32_MAX) idx = idx.cast(dtypes::int64);
  if (M == 0) return *this;
  Tensor lin =
      k == 0 ? Tensor::zeros({M}, idx.dtype(), device()) : linear_index(idx.reshape({M, k}), indexed);
  Tensor match = lin.reshape({1, 1, M}).eq(iota(N, lin.dtype(), device()).reshape({1, N, 1})); // (1, N, M)
  Tensor src = updates.reshape({M, R}).permute({1, 0}).unsqueeze(1);                           // (R, 1, M)
  Tensor out = scatter_combine(reshape({N, R}).permute({1, 0}), match, src, reduce);           // (R, N)
  return out.permute({1, 0}).reshape(shape());
}

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t ax, bool largest) const {
  if (ndim() == 0) { // a 0-d tensor is one row of one element
    auto [v, i] = reshape({1}).topk(k, 0, largest);
    return k == 1 ? std::pair<Tensor, Tensor>{v.reshape({}), i.reshape({})} : std::pair<Tensor, Tensor>{v, i};
  }
  int64_t a = op_axis(*this, ax, "topk"), n = shape()[size_t(a)];
  if (k < 0 || k > n)
    throw TensorError("topk: k " + num(k) + " is outside [0, " + num(n) + "] for axis " + num(ax) +
                      " of shape " + dims_str(shape()));
  return rank_select(*this, a, k, largest);
}

std::pair<Tensor, Tensor> Tensor::sort(int64_t ax, bool descending) const {
  if (ndim() == 0) {
    auto [v, i] = reshape({1}).sort(0, descending);
    return {v.reshape({}), i.reshape({})};
  }
  int64_t a = op_axis(*this, ax, "sort");
  return rank_select(*this, a, shape()[size_t(a)], descending);
}

Tensor Tensor::nonzero() const {
  Tensor mask = dtype().is_bool() ? *this : ne(const_like(0));
  std::vector<bool> hit = mask.to_vector<bool>();
  std::vector<int64_t> coords_rows; // (count, ndim), row-major positions
  int64_t count = 0, nd = ndim();
  Dims idx(size_t(nd), 0);
  for (size_t i = 0; i < hit.size(); ++i) {
    if (hit[i]) {
      coords_rows.insert(coords_rows.end(), idx.begin(), idx.end());
      ++count;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < shape()[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  std::vector<int64_t> out(size_t(nd * count));
  for (int64_t c = 0; c < count; ++c)
    for (int64_t d = 0; d < nd; ++d) out[size_t(d * count + c)] = coords_rows[size_t(c * nd + d)];
  return from_vector<int64_t>(out, {nd, count}, dtypes::int64, device());
}

namespace {
Tensor triangle(const Tensor& x, int64_t diagonal, bool lower) {
  if (x.ndim() < 2)
    throw TensorError(std::string(lower ? "tril" : "triu") + " needs at least 2 dims, got " +
                      dims_str(x.shape()));
  int64_t r = x.shape()[size_t(x.ndim() - 2)], c = x.shape()[size_t(x.ndim() - 1)];
  diagonal = std::clamp<int64_t>(diagonal, -r - 1, c + 1); // the same mask, no int32 overflow
  Tensor rows = iota(r, dtypes::int32, x.device()).reshape({r, 1}) + diagonal;
  Tensor cols = iota(c, dtypes::int32, x.device()).reshape({1, c});
  Tensor keep = lower ? cols.le(rows) : cols.ge(rows); // col - row <= diagonal, or >=
  return keep.where(x, x.const_like(0));
}
} // namespace

Tensor Tensor::tril(int64_t diagonal) const { return triangle(*this, diagonal, true); }
Tensor Tensor::triu(int64_t diagonal) const { return triangle(*this, diagonal, false); }

Tensor Tensor::one_hot(int64_t num_classes) const {
  if (num_classes < 0) throw TensorError("one_hot: num_classes " + num(num_classes) + " is negative");
  // negative indices count from the end (ONNX OneHot); others outside [0, num_classes) give a zero row
  Tensor idx = wrap_negative(index_values(*this, "one_hot"), num_classes);
  Dims ar(size_t(ndim() + 1), 1);
  ar.back() = num_classes;
  return idx.unsqueeze(-1).eq(iota(num_classes, idx.dtype(), device()).reshape(ar)).cast(dtypes::int64);
}

namespace {

// A label of an einsum operand: letters A-Z are 0-25, a-z 26-51 (ASCII order, the implicit
// output's order), the dims under "..." 52 and up.
constexpr int kEllipsisBase = 52;

struct Term {
  Tensor t;
  std::vector<int> labels; // one per dim of t
};

std::vector<int> parse_labels(const std::string& term, const std::string& formula, bool& ellipsis,
                              int& letters) {
  std::vector<int> out;
  ellipsis = false;
  letters = 0;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (ch == '.') {
      if (ellipsis || term.compare(i, 3, "...") != 0)
        throw TensorError("einsum '" + formula + "': a term has a stray '.' or more than one '...'");
      ellipsis = true;
      out.push_back(-1);
      i += 2;
    } else if (ch >= 'A' && ch <= 'Z') {
      out.push_back(ch - 'A');
      ++letters;
    } else if (ch >= 'a' && ch <= 'z') {
      out.push_back(ch - 'a' + 26);
      ++letters;
    } else {
      throw TensorError("einsum '" + formula + "': invalid subscript '" + std::string(1, ch) + "'");
    }
  }
  return out;
}

// t with the dims of labels `from` (a subset of `to`, no repeats) laid out in `to`'s order,
// size 1 where a label is missing.
Tensor align(const Term& term, const std::vector<int>& to) {
  Axes order;
  Dims shape;
  for (int l : to) {
    auto it = std::find(term.labels.begin(), term.labels.end(), l);
    if (it == term.labels.end()) {
      shape.push_back(1);
    } else {
      order.push_back(int64_t(it - term.labels.begin()));
      shape.push_back(term.t.shape()[size_t(it - term.labels.begin())]);
    }
  }
  return term.t.permute(order).reshape(shape);
}

// Sums the labels of `term` for which keep(label) is false.
template <class Keep> Term sum_out(Term term, Keep keep) {
  Axes axes;
  std::vector<int> left;
  for (size_t i = 0; i < term.labels.size(); ++i) {
    if (keep(term.labels[i]))
      left.push_back(term.labels[i]);
    else
      axes.push_back(int64_t(i));
  }
  if (!axes.empty()) term = {term.t.sum(axes), left};
  return term;
}

// The diagonal of the two dims of label `l` (a repeated subscript): the last dim of the result.
Term diagonal(const Term& term, int l) {
  std::vector<size_t> at;
  for (size_t i = 0; i < term.labels.size(); ++i)
    if (term.labels[i] == l) at.push_back(i);
  Axes order;
  std::vector<int> labels;
  for (size_t i = 0; i < term.labels.size(); ++i)
    if (i != at[0] && i != at[1]) {
      order.push_back(int64_t(i));
      labels.push_back(term.labels[i]);
    }
  order.push_back(int64_t(at[0]));
  order.push_back(int64_t(at[1]));
  labels.push_back(l);
  Tensor t = term.t.permute(order); // (..., n, n)
  int64_t n = t.shape().back();
  Dims lead(t.shape().begin(), t.shape().end() - 2);
  // elements 0, n + 1, 2(n + 1), ...: flatten the pair, pad by n, split rows of n + 1, keep column 0
  Dims flat = lead, split = lead, keep = lead;
  flat.push_back(n * n);
  split.insert(split.end(), {n, n + 1});
  keep.push_back(n);
  Pads p(lead.size() + 1, {0, 0});
  p.back() = {0, n};
  Tensor rows = t.reshape(flat).pad(p).reshape(split);
  Pads r;
  for (auto d : lead) r.emplace_back(0, d);
  r.emplace_back(0, n);
  r.emplace_back(0, 1);
  return {rows.shrink(r).reshape(keep), labels};
}

} // namespace

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& operands) {
  std::string formula;
  for (char c : formula_in)
    if (c != ' ') formula += c;
  if (operands.empty()) throw TensorError("einsum '" + formula + "' of no operands");
  size_t arrow = formula.find("->");
  std::string lhs = formula.substr(0, arrow);
  std::vector<std::string> terms_str;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms_str.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms_str.size() != operands.size())
    throw TensorError("einsum '" + formula + "': " + num(int64_t(terms_str.size())) + " terms for " +
                      num(int64_t(operands.size())) + " operands");
  // each operand's labels, "..." expanded right-aligned across operands (numpy broadcasting)
  std::vector<std::vector<int>> raw(operands.size());
  std::vector<int64_t> ell(operands.size(), 0);
  int64_t E = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    bool has = false;
    int letters = 0;
    raw[i] = parse_labels(terms_str[i], formula, has, letters);
    int64_t nd = operands[i].ndim();
    if (has ? nd < letters : nd != letters)
      throw TensorError("einsum '" + formula + "': term '" + terms_str[i] + "' does not fit operand " +
                        num(int64_t(i)) + " of shape " + dims_str(operands[i].shape()));
    ell[i] = nd - letters;
    E = std::max(E, ell[i]);
  }
  std::vector<Term> terms;
  std::vector<int> count(size_t(kEllipsisBase + E), 0);
  for (size_t i = 0; i < operands.size(); ++i) {
    Term term{operands[i], {}};
    for (int l : raw[i]) {
      if (l >= 0) {
        term.labels.push_back(l);
      } else {
        for (int64_t e = E - ell[i]; e < E; ++e) term.labels.push_back(kEllipsisBase + int(e));
      }
    }
    for (int l : term.labels) ++count[size_t(l)];
    terms.push_back(term);
  }
  std::vector<int> output;
  if (arrow == std::string::npos) {
    for (int64_t e = 0; e < E; ++e) output.push_back(kEllipsisBase + int(e));
    for (int l = 0; l < kEllipsisBase; ++l)
      if (count[size_t(l)] == 1) output.push_back(l);
  } else {
    bool has = false;
    int letters = 0;
    for (int l : parse_labels(formula.substr(arrow + 2), formula, has, letters)) {
      if (l < 0) {
        for (int64_t e = 0; e < E; ++e) output.push_back(kEllipsisBase + int(e));
        continue;
      }
      if (count[size_t(l)] == 0)
        throw TensorError("einsum '" + formula + "': output subscript '" +
                          std::string(1, char(l < 26 ? 'A' + l : 'a' + l - 26)) + "' is in no input");
      if (std::find(output.begin(), output.end(), l) != output.end())
        throw TensorError("einsum '" + formula + "': output subscript repeated");
      output.push_back(l);
    }
  }
  // repeated subscripts within one operand: its diagonal
  for (auto& term : terms)
    for (bool again = true; again;) {
      again = false;
      for (size_t i = 0; i < term.labels.size() && !again; ++i)
        for (size_t j = i + 1; j < term.labels.size() && !again; ++j)
          if (term.labels[i] == term.labels[j]) {
            if (term.t.shape()[i] != term.t.shape()[j])
              throw TensorError("einsum '" + formula + "': a repeated subscript has sizes " +
                                num(term.t.shape()[i]) + " and " + num(term.t.shape()[j]) + " in shape " +
                                dims_str(term.t.shape()));
            term = diagonal(term, term.labels[i]);
            again = true;
          }
    }
  // every label has one size (size 1 broadcasts)
  std::vector<int64_t> size(count.size(), 1);
  for (const auto& term : terms)
    for (size_t i = 0; i < term.labels.size(); ++i) {
      int64_t& s = size[size_t(term.labels[i])];
      int64_t d = term.t.shape()[i];
      if (d != 1 && s != 1 && d != s)
        throw TensorError("einsum '" + formula + "': subscript sizes " + num(s) + " and " + num(d) +
                          " differ (operand shape " + dims_str(term.t.shape()) + ")");
      if (d != 1) s = d;
    }
  // contract left to right, summing each label as soon as no later operand nor the output has it
  auto needed_after = [&](size_t i) {
    std::vector<bool> need(count.size(), false);
    for (int l : output) need[size_t(l)] = true;
    for (size_t j = i + 1; j < terms.size(); ++j)
      for (int l : terms[j].labels) need[size_t(l)] = true;
    return need;
  };
  Term cur = terms[0];
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<bool> need = needed_after(i);
    if (i > 0) {
      std::vector<int> in_cur(count.size(), 0);
      for (int l : cur.labels) in_cur[size_t(l)] = 1;
      Term next = sum_out(terms[i], [&](int l) { return need[size_t(l)] || in_cur[size_t(l)]; });
      std::vector<int> all = cur.labels;
      for (int l : next.labels)
        if (!in_cur[size_t(l)]) all.push_back(l);
      cur = {align(cur, all) * align(next, all), all};
    }
    cur = sum_out(cur, [&](int l) { return bool(need[size_t(l)]); });
  }
  Dims out_shape;
  for (int l : output) out_shape.push_back(size[size_t(l)]);
  return align(cur, output).expand(out_shape);
}

} // namespace tg
