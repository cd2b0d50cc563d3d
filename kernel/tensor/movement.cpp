// Movement operations: each is one zero-copy UOp (RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP);
// slicing, cat, stack, repeat and gather are compositions of them.
#include "kernel/tensor/tensor.hpp"

#include <algorithm>

#include <numeric>

namespace tg {

namespace {
UOpRef mop(Ops op, const Tensor& t, std::vector<int64_t> arg) {
  return UOp::make(op, t.dtype(), {t.uop()}, Arg{std::move(arg)});
}
} // namespace

Tensor Tensor::reshape(Dims shape) const {
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw TensorError("reshape " + dims_str(shape) + ": only one dimension can be -1");
      infer = int64_t(i);
    } else if (shape[i] < 0) {
      throw TensorError("reshape " + dims_str(shape) + ": negative dimension");
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      throw TensorError("reshape " + dims_str(this->shape()) + " -> " + dims_str(shape) +
                        ": cannot infer the -1 dimension");
    shape[size_t(infer)] = numel() / known;
  }
  if (dims_prod(shape) != numel())
    throw TensorError("reshape " + dims_str(this->shape()) + " (" + std::to_string(numel()) +
                      " elements) -> " + dims_str(shape) + " (" + std::to_string(dims_prod(shape)) +
                      " elements): sizes differ");
  if (shape == this->shape()) return *this;
  // (chains of reshapes are not collapsed here: autograd needs every tensor's own node; the
  // ShapeTracker merges them during lowering anyway)
  return Tensor(UOp::make(Ops::RESHAPE, dtype(), {uop()}, Arg{std::vector<int64_t>(shape)}), shape,
                this->device());
}

Tensor Tensor::permute(Axes order) const {
  if (int64_t(order.size()) != ndim())
    throw TensorError("permute order has " + std::to_string(order.size()) + " axes, the tensor " +
                      dims_str(this->shape()) + " has " + std::to_string(ndim()));
  std::vector<bool> seen(order.size(), false);
  Dims shape;
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t a = axis(order[i]);
    if (seen[size_t(a)])
      throw TensorError("permute order " + dims_str(order) + " repeats axis " + std::to_string(a));
    seen[size_t(a)] = true;
    order[i] = a;
    identity &= a == int64_t(i);
    shape.push_back(this->shape()[size_t(a)]);
  }
  if (identity) return *this;
  return with(mop(Ops::PERMUTE, *this, order), shape);
}

Tensor Tensor::expand(Dims shape) const {
  if (shape.size() < this->shape().size())
    throw TensorError("expand " + dims_str(this->shape()) + " -> " + dims_str(shape) +
                      ": fewer dims than the tensor");
  Tensor t = *this;
  if (shape.size() > this->shape().size()) { // new leading dims
    Dims padded(shape.size() - this->shape().size(), 1);
    padded.insert(padded.end(), this->shape().begin(), this->shape().end());
    t = reshape(padded);
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) shape[i] = t.shape()[i];
    if (t.shape()[i] != shape[i] && t.shape()[i] != 1)
      throw TensorError("expand " + dims_str(this->shape()) + " -> " + dims_str(shape) + ": dim " +
                        std::to_string(i) + " has size " + std::to_string(t.shape()[i]) +
                        ", only size-1 dims can expand");
  }
  if (shape == t.shape()) return t;
  return t.with(mop(Ops::EXPAND, t, shape), shape);
}

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> padding, double value) const {
  if (int64_t(padding.size()) != ndim())
    throw TensorError("pad needs one (before, after) pair per dim: got " + std::to_string(padding.size()) +
                      " for shape " + dims_str(this->shape()));
  // negative padding shrinks
  std::vector<std::pair<int64_t, int64_t>> shrink_arg;
  bool any_negative = false, any_positive = false;
  for (size_t i = 0; i < padding.size(); ++i) {
    auto [b, a] = padding[i];
    if (-b - a > this->shape()[i])
      throw TensorError("pad: negative padding larger than dim " + std::to_string(i));
    shrink_arg.emplace_back(b < 0 ? -b : 0, this->shape()[i] - (a < 0 ? -a : 0));
    any_negative |= b < 0 || a < 0;
    any_positive |= b > 0 || a > 0;
  }
  Tensor t = any_negative ? shrink(shrink_arg) : *this;
  if (!any_positive) return t;
  std::vector<int64_t> flat;
  Dims shape = t.shape();
  for (size_t i = 0; i < padding.size(); ++i) {
    int64_t b = std::max<int64_t>(0, padding[i].first), a = std::max<int64_t>(0, padding[i].second);
    flat.push_back(b);
    flat.push_back(a);
    shape[i] += b + a;
  }
  Tensor padded = t.with(mop(Ops::PAD, t, flat), shape);
  if (value == 0) return padded;
  Tensor inside = t.ones_like().cast(dtypes::bool_);
  Tensor mask = inside.with(mop(Ops::PAD, inside, flat), shape);
  return mask.where(padded, padded.const_like(value));
}

Tensor Tensor::shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const {
  if (int64_t(ranges.size()) != ndim())
    throw TensorError("shrink needs one (begin, end) pair per dim: got " + std::to_string(ranges.size()) +
                      " for shape " + dims_str(this->shape()));
  std::vector<int64_t> flat;
  Dims shape;
  bool identity = true;
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto [b, e] = ranges[i];
    if (b < 0 || e < b || e > this->shape()[i])
      throw TensorError("shrink (" + std::to_string(b) + ", " + std::to_string(e) + ") is outside dim " +
                        std::to_string(i) + " of shape " + dims_str(this->shape()));
    flat.push_back(b);
    flat.push_back(e);
    shape.push_back(e - b);
    identity &= b == 0 && e == this->shape()[i];
  }
  if (identity) return *this;
  return with(mop(Ops::SHRINK, *this, flat), shape);
}

Tensor Tensor::flip(Axes axes) const {
  std::vector<int64_t> flags(this->shape().size(), 0);
  for (auto a : axes) {
    int64_t r = axis(a);
    if (flags[size_t(r)]) throw TensorError("flip: axis " + std::to_string(a) + " repeated");
    flags[size_t(r)] = 1;
  }
  bool any = false;
  for (size_t i = 0; i < flags.size(); ++i) any |= flags[i] && this->shape()[i] > 1;
  if (!any) return *this;
  return with(mop(Ops::FLIP, *this, flags), this->shape());
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  Axes order(static_cast<size_t>(ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[size_t(axis(a))], order[size_t(axis(b))]);
  return permute(order);
}

Tensor Tensor::squeeze(std::optional<int64_t> ax) const {
  Dims shape;
  if (!ax) {
    for (auto d : this->shape())
      if (d != 1) shape.push_back(d);
    return reshape(shape);
  }
  if (ndim() == 0) return *this;
  int64_t a = axis(*ax);
  if (this->shape()[size_t(a)] != 1) return *this;
  shape = this->shape();
  shape.erase(shape.begin() + a);
  return reshape(shape);
}

Tensor Tensor::unsqueeze(int64_t ax) const {
  int64_t a = axis(ax, ndim() + 1);
  Dims shape = this->shape();
  shape.insert(shape.begin() + a, 1);
  return reshape(shape);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  int64_t s = axis(start), e = axis(end);
  if (s > e)
    throw TensorError("flatten: start " + std::to_string(start) + " after end " + std::to_string(end));
  Dims shape(this->shape().begin(), this->shape().begin() + s);
  int64_t merged = 1;
  for (int64_t i = s; i <= e; ++i) merged *= this->shape()[size_t(i)];
  shape.push_back(merged);
  shape.insert(shape.end(), this->shape().begin() + e + 1, this->shape().end());
  return reshape(shape);
}

Tensor Tensor::slice(std::vector<Slice> slices) const {
  if (int64_t(slices.size()) > ndim())
    throw TensorError("too many slice dims (" + std::to_string(slices.size()) + ") for shape " +
                      dims_str(this->shape()));
  slices.resize(this->shape().size());
  Tensor t = *this;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  Axes flips;
  std::vector<int64_t> steps;
  for (size_t i = 0; i < slices.size(); ++i) {
    const int64_t n = this->shape()[i];
    const Slice& s = slices[i];
    if (s.step == 0) throw TensorError("slice step of 0 in dim " + std::to_string(i));
    if (s.index && (!s.start || *s.start < -n || *s.start >= n))
      throw TensorError("index " + (s.start ? std::to_string(*s.start) : std::string("(none)")) +
                        " is out of range for dim " + std::to_string(i) + " of size " + std::to_string(n) +
                        ", shape " + dims_str(this->shape()));
    auto clampi = [&](int64_t v, int64_t lo, int64_t hi) {
      return std::min(std::max(v < 0 ? v + n : v, lo), hi);
    };
    int64_t begin, end;
    if (s.step > 0) {
      begin = s.start ? clampi(*s.start, 0, n) : 0;
      end = s.stop ? clampi(*s.stop, 0, n) : n;
    } else { // walk from start down to stop (exclusive): take [stop+1, start+1) then flip
      int64_t hi = s.start ? clampi(*s.start, -1, n - 1) : n - 1;
      int64_t lo = s.stop ? clampi(*s.stop, -1, n - 1) : -1;
      begin = lo + 1;
      end = hi + 1;
      flips.push_back(int64_t(i));
    }
    if (end < begin) end = begin;
    ranges.emplace_back(begin, end);
    steps.push_back(s.step < 0 ? -s.step : s.step);
  }
  t = t.shrink(ranges).flip(flips);
  // strides > 1: pad each strided dim to a multiple of its step, split it, keep index 0 of the split
  for (size_t i = 0; i < steps.size(); ++i) {
    int64_t k = steps[i];
    if (k == 1) continue;
    int64_t n = t.shape()[i], out = (n + k - 1) / k;
    std::vector<std::pair<int64_t, int64_t>> padding(t.shape().size(), {0, 0});
    padding[i] = {0, out * k - n};
    Tensor p = t.pad(padding);
    Dims split = p.shape();
    split[i] = out;
    split.insert(split.begin() + int64_t(i) + 1, k);
    Tensor r = p.reshape(split);
    std::vector<std::pair<int64_t, int64_t>> keep;
    for (size_t d = 0; d < split.size(); ++d) keep.emplace_back(0, d == i + 1 ? 1 : split[d]);
    Dims shape = t.shape();
    shape[i] = out;
    t = r.shrink(keep).reshape(shape);
  }
  return t;
}

Tensor Tensor::operator[](int64_t i) const {
  if (ndim() == 0) throw TensorError("index " + std::to_string(i) + " into a 0-d tensor");
  return slice({Slice::at(i)}).squeeze(0);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t ax) {
  if (tensors.empty()) throw TensorError("cat of no tensors");
  const Tensor& first = tensors[0];
  int64_t a = first.axis(ax);
  int64_t total = 0;
  for (const auto& t : tensors) {
    if (t.ndim() != first.ndim())
      throw TensorError("cat: shapes " + dims_str(first.shape()) + " and " + dims_str(t.shape()) +
                        " differ in rank");
    for (int64_t d = 0; d < t.ndim(); ++d)
      if (d != a && t.shape()[size_t(d)] != first.shape()[size_t(d)])
        throw TensorError("cat along axis " + std::to_string(a) + ": shapes " + dims_str(first.shape()) +
                          " and " + dims_str(t.shape()) + " differ in dim " + std::to_string(d));
    total += t.shape()[size_t(a)];
  }
  DType dt = first.dtype();
  for (const auto& t : tensors) dt = least_upper_dtype(dt, t.dtype());
  // each piece padded into place; the sum of disjoint pads is the concatenation
  std::optional<Tensor> out;
  int64_t offset = 0;
  for (const auto& t : tensors) {
    std::vector<std::pair<int64_t, int64_t>> padding(size_t(t.ndim()), {0, 0});
    int64_t n = t.shape()[size_t(a)];
    padding[size_t(a)] = {offset, total - offset - n};
    offset += n;
    Tensor piece = t.cast(dt).pad(padding);
    out = out ? (dt.is_bool() ? out->logical_or(piece) : *out + piece) : piece;
  }
  return *out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t ax) {
  if (tensors.empty()) throw TensorError("stack of no tensors");
  std::vector<Tensor> expanded;
  for (const auto& t : tensors) {
    if (t.shape() != tensors[0].shape())
      throw TensorError("stack: shapes " + dims_str(tensors[0].shape()) + " and " + dims_str(t.shape()) +
                        " differ");
    expanded.push_back(t.unsqueeze(ax));
  }
  return cat(expanded, ax);
}

Tensor Tensor::repeat(Dims repeats) const {
  if (repeats.size() < this->shape().size())
    throw TensorError("repeat needs at least one count per dim of " + dims_str(this->shape()));
  Dims base(repeats.size() - this->shape().size(), 1);
  base.insert(base.end(), this->shape().begin(), this->shape().end());
  Dims interleaved, expanded, final_shape;
  for (size_t i = 0; i < base.size(); ++i) {
    if (repeats[i] < 0) throw TensorError("repeat count must be >= 0");
    interleaved.push_back(1);
    interleaved.push_back(base[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(base[i]);
    final_shape.push_back(repeats[i] * base[i]);
  }
  return reshape(interleaved).expand(expanded).reshape(final_shape);
}

Tensor Tensor::gather(int64_t ax, const Tensor& index) const {
  int64_t a = axis(ax);
  if (index.ndim() != ndim())
    throw TensorError("gather: index rank " + std::to_string(index.ndim()) + " differs from the tensor's " +
                      std::to_string(ndim()));
  if (index.dtype().is_float())
    throw TensorError("gather: index must be an integer tensor, got " + index.dtype().name());
  for (int64_t d = 0; d < ndim(); ++d)
    if (d != a && index.shape()[size_t(d)] > this->shape()[size_t(d)])
      throw TensorError("gather: index shape " + dims_str(index.shape()) + " exceeds " +
                        dims_str(this->shape()) + " in dim " + std::to_string(d));
  // one-hot over the gathered axis: out[..i..] = sum_j (index[..i..] == j ? x[..j..] : 0), selected
  // with where: multiplying by the one-hot would turn an unselected inf or NaN into NaN
  int64_t n = this->shape()[size_t(a)];
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t d = 0; d < ndim(); ++d) ranges.emplace_back(0, d == a ? n : index.shape()[size_t(d)]);
  Tensor x = shrink(ranges).unsqueeze(-1).transpose(a, -1); // gathered axis moved last, size n
  Dims arange_shape(size_t(ndim() + 1), 1);
  arange_shape.back() = n;
  Tensor ar = Tensor::arange(0, double(n), 1, index.dtype(), this->device()).reshape(arange_shape);
  Tensor onehot = index.unsqueeze(-1).eq(ar);
  Dims sel_shape = onehot.shape();
  Tensor xs = x.expand(sel_shape);
  return onehot.where(xs, xs.const_like(0)).sum({-1}).cast(dtype());
}

} // namespace tg
