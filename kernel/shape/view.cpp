#include "kernel/shape/view.hpp"

#include <algorithm>

#include "kernel/ir/symbolic.hpp"

namespace tg {
namespace {

std::string pairs_str(const std::vector<std::pair<SInt, SInt>>& m) {
  std::string s = "(";
  for (std::size_t i = 0; i < m.size(); ++i)
    s += (i ? ", (" : "(") + m[i].first.str() + ", " + m[i].second.str() + ")";
  return s + ")";
}

void check_rank(const char* op, const View& v, std::size_t n) {
  if (n != v.ndim())
    throw ShapeError(std::string(op) + ": " + std::to_string(n) + " arguments for shape " +
                     shape_str(v.shape));
}

} // namespace

Shape strides_for_shape(const Shape& shape) {
  Shape strides(shape.size(), SInt(0));
  SInt acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = shape[i] == 1 ? SInt(0) : acc;
    acc = acc * shape[i];
  }
  return strides;
}

View View::create(Shape shape, std::optional<Shape> strides, SInt offset, std::optional<Mask> mask) {
  for (const auto& d : shape)
    if (d.vmin() < 0) throw ShapeError("View: negative dimension in shape " + shape_str(shape));
  Shape st = strides ? std::move(*strides) : strides_for_shape(shape);
  if (st.size() != shape.size())
    throw ShapeError("View: " + std::to_string(st.size()) + " strides for shape " + shape_str(shape));
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1) st[i] = 0;
  if (mask) {
    bool empty = false, full = true;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const auto& [b, e] = (*mask)[i];
      if (b.is_int() && e.is_int() && b.value() >= e.value()) empty = true;
      if (!(b == 0 && e == shape[i])) full = false;
    }
    if (empty) {
      // Nothing is valid: any strides will do, so use the canonical all-zero form.
      st.assign(shape.size(), SInt(0));
      offset = 0;
      mask = Mask(shape.size(), {SInt(0), SInt(0)});
    } else if (full) {
      mask.reset();
    }
  }
  View v{std::move(shape), std::move(st), std::move(offset), std::move(mask), false};
  v.contiguous = v.offset == 0 && !v.mask && v.strides == strides_for_shape(v.shape);
  return v;
}

bool View::operator==(const View& o) const {
  if (!(shape == o.shape && strides == o.strides && offset == o.offset &&
        mask.has_value() == o.mask.has_value()))
    return false;
  return !mask || *mask == *o.mask;
}

std::string View::str() const {
  return "View(shape=" + shape_str(shape) + ", strides=" + shape_str(strides) + ", offset=" + offset.str() +
         ", mask=" + (mask ? pairs_str(*mask) : "None") + ", contiguous=" + (contiguous ? "True" : "False") +
         ")";
}

View View::permute(const std::vector<std::size_t>& order) const {
  check_rank("permute", *this, order.size());
  std::vector<bool> seen(ndim(), false);
  for (auto a : order) {
    if (a >= ndim() || seen[a]) {
      std::string o;
      for (auto x : order) o += (o.empty() ? "" : ", ") + std::to_string(x);
      throw ShapeError("permute: (" + o + ") is not a permutation of the axes of " + shape_str(shape));
    }
    seen[a] = true;
  }
  Shape s, st;
  std::optional<Mask> m;
  if (mask) m.emplace();
  for (auto a : order) {
    s.push_back(shape[a]);
    st.push_back(strides[a]);
    if (mask) m->push_back((*mask)[a]);
  }
  return create(std::move(s), std::move(st), offset, std::move(m));
}

View View::expand(const Shape& new_shape) const {
  check_rank("expand", *this, new_shape.size());
  std::optional<Mask> m = mask;
  for (std::size_t i = 0; i < ndim(); ++i) {
    if (shape[i] == new_shape[i]) continue;
    if (!(shape[i] == 1))
      throw ShapeError("expand: cannot expand " + shape_str(shape) + " to " + shape_str(new_shape) +
                       " (only size-1 dims expand)");
    // a size-1 dim is either valid (0,1) or fully masked (0,0)
    if (m)
      (*m)[i] = ((*m)[i] == std::pair<SInt, SInt>{0, 1}) ? std::pair<SInt, SInt>{0, new_shape[i]}
                                                         : std::pair<SInt, SInt>{0, 0};
  }
  return create(new_shape, strides, offset, std::move(m));
}

View View::resize(const std::vector<std::pair<SInt, SInt>>& arg, std::optional<Mask> new_mask) const {
  SInt off = offset;
  for (std::size_t i = 0; i < ndim(); ++i) off = off + strides[i] * arg[i].first;
  if (mask) {
    // move the old mask into the new coordinates, intersected with the new one
    Mask moved;
    for (std::size_t i = 0; i < ndim(); ++i) {
      const auto& [mb, me] = (*mask)[i];
      const auto& [ab, ae] = arg[i];
      SInt len = ae - ab;
      moved.emplace_back(smax(0, smin(mb - ab, len)), smax(0, smin(me - ab, len)));
    }
    if (new_mask)
      for (std::size_t i = 0; i < ndim(); ++i)
        (*new_mask)[i] = {smax(moved[i].first, (*new_mask)[i].first),
                          smin(moved[i].second, (*new_mask)[i].second)};
    else
      new_mask = std::move(moved);
  }
  Shape s;
  for (const auto& [b, e] : arg) s.push_back(e - b);
  return create(std::move(s), strides, off, std::move(new_mask));
}

View View::pad(const std::vector<std::pair<SInt, SInt>>& arg) const {
  check_rank("pad", *this, arg.size());
  bool any = false;
  for (const auto& [b, e] : arg) {
    if (b.vmin() < 0 || e.vmin() < 0) throw ShapeError("pad: negative padding " + pairs_str(arg));
    any = any || !(b == 0) || !(e == 0);
  }
  if (!any) return *this;
  std::vector<std::pair<SInt, SInt>> region;
  Mask m;
  for (std::size_t i = 0; i < ndim(); ++i) {
    region.emplace_back(SInt(0) - arg[i].first, shape[i] + arg[i].second);
    m.emplace_back(arg[i].first, shape[i] + arg[i].first);
  }
  return resize(region, std::move(m));
}

View View::shrink(const std::vector<std::pair<SInt, SInt>>& arg) const {
  check_rank("shrink", *this, arg.size());
  for (std::size_t i = 0; i < ndim(); ++i) {
    const auto& [b, e] = arg[i];
    bool ok = b.vmin() >= 0 && (b.is_int() && e.is_int() ? b.value() <= e.value() : true) &&
              (e.is_int() && shape[i].is_int() ? e.value() <= shape[i].value() : true);
    if (!ok) throw ShapeError("shrink: " + pairs_str(arg) + " is outside shape " + shape_str(shape));
  }
  return resize(arg, std::nullopt);
}

View View::flip(const std::vector<bool>& axes) const {
  check_rank("flip", *this, axes.size());
  Shape st = strides;
  SInt off = offset;
  std::optional<Mask> m = mask;
  for (std::size_t i = 0; i < ndim(); ++i) {
    if (!axes[i]) continue;
    off = off + (shape[i] - 1) * strides[i];
    st[i] = SInt(0) - strides[i];
    if (m) (*m)[i] = {shape[i] - (*m)[i].second, shape[i] - (*m)[i].first};
  }
  return create(shape, std::move(st), off, std::move(m));
}

std::optional<View> View::reshape(const Shape& new_shape) const {
  if (new_shape == shape) return *this;
  for (const auto& d : new_shape)
    if (d.vmin() < 0) throw ShapeError("reshape: negative dimension in " + shape_str(new_shape));
  if (all_int(shape) && all_int(new_shape) && prod(shape).value() != prod(new_shape).value())
    throw ShapeError("reshape: size mismatch, cannot reshape " + shape_str(shape) + " to " +
                     shape_str(new_shape));
  for (const auto& d : shape)
    if (d == 0) return create(new_shape);
  // Only size-1 dims added or removed: keep strides and mask of the others.
  Shape old_big, new_big;
  for (const auto& d : shape)
    if (!(d == 1)) old_big.push_back(d);
  for (const auto& d : new_shape)
    if (!(d == 1)) new_big.push_back(d);
  if (old_big == new_big) {
    Shape st;
    std::optional<Mask> m;
    std::vector<std::size_t> big_dims;
    for (std::size_t i = 0; i < ndim(); ++i)
      if (!(shape[i] == 1)) big_dims.push_back(i);
    bool dead = false; // a removed size-1 dim that is masked out makes everything invalid
    if (mask)
      for (std::size_t i = 0; i < ndim(); ++i)
        if (shape[i] == 1 && !((*mask)[i] == std::pair<SInt, SInt>{0, 1})) dead = true;
    if (mask) m.emplace();
    std::size_t k = 0;
    for (const auto& d : new_shape) {
      if (d == 1) {
        st.push_back(0);
        if (m) m->emplace_back(0, dead ? 0 : 1);
        continue;
      }
      st.push_back(strides[big_dims[k]]);
      if (m) m->push_back(dead ? std::pair<SInt, SInt>{0, 0} : (*mask)[big_dims[k]]);
      ++k;
    }
    return create(new_shape, std::move(st), offset, std::move(m));
  }
  if (contiguous) return create(new_shape);
  if (mask || !all_int(shape) || !all_int(new_shape) || !all_int(strides)) return std::nullopt;

  // Stride-compatible regrouping of dims (numpy's no-copy reshape): each group of old dims that
  // maps onto a group of new dims must itself be laid out contiguously.
  std::vector<std::int64_t> od, os, nd;
  for (std::size_t i = 0; i < ndim(); ++i)
    if (shape[i].value() != 1) {
      od.push_back(shape[i].value());
      os.push_back(strides[i].value());
    }
  for (const auto& d : new_shape)
    if (d.value() != 1) nd.push_back(d.value());
  std::vector<std::int64_t> ns(nd.size(), 0);
  std::size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nd.size() && oi < od.size()) {
    std::int64_t np = nd[ni], op = od[oi];
    while (np != op) {
      if (np < op)
        np *= nd[nj++];
      else
        op *= od[oj++];
    }
    for (std::size_t k = oi; k + 1 < oj; ++k)
      if (os[k] != od[k + 1] * os[k + 1]) return std::nullopt;
    ns[nj - 1] = os[oj - 1];
    for (std::size_t k = nj - 1; k > ni; --k) ns[k - 1] = ns[k] * nd[k];
    ni = nj++;
    oi = oj++;
  }
  Shape st;
  std::size_t k = 0;
  for (const auto& d : new_shape) st.push_back(d.value() == 1 ? std::int64_t{0} : ns[k++]);
  return create(new_shape, std::move(st), offset, std::nullopt);
}

std::pair<UOpRef, UOpRef> View::to_index(const std::vector<UOpRef>& idxs) const {
  if (idxs.size() != ndim())
    throw ShapeError("to_index: " + std::to_string(idxs.size()) + " indices for shape " + shape_str(shape));
  // index math in the indices' dtype (codegen passes int64 so large views cannot wrap); a 0-d
  // view has no index to take it from and is just its offset, which may be past 2^31: int64
  const DType dt = idxs.empty() ? dtypes::int64 : idxs[0]->dtype();
  UOpRef idx = offset.to_uop(dt);
  UOpRef valid = UOp::constant(dtypes::bool_, true);
  for (std::size_t i = 0; i < ndim(); ++i) {
    if (!(strides[i] == 0) && !(shape[i] == 1)) idx = idx + idxs[i] * strides[i].to_uop(dt);
    if (!mask) continue;
    const auto& [b, e] = (*mask)[i];
    if (!(b == 0)) valid = valid & lt(b.to_uop(dt) - 1, idxs[i]);
    if (!(e == shape[i])) valid = valid & lt(idxs[i], e.to_uop(dt));
  }
  return {simplify(idx), simplify(valid)};
}

} // namespace tg
