#include "kernel/codegen/lower.hpp"

#include "kernel/ir/symbolic.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/shape/shapetracker.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tg {

namespace {

UOpRef idx_const(int64_t v) { return UOp::constant(dtypes::index, v); }

bool is_true(const UOpRef& u) {
  return u->op() == Ops::CONST && u->dtype().is_bool() && std::get<bool>(u->const_value());
}

Shape to_shape(const Dims& d) { return Shape(d.begin(), d.end()); }

// The view of movement op m's result, given the view st of its source.
ShapeTracker apply_movement(const ShapeTracker& st, const UOpRef& m) {
  switch (m->op()) {
  case Ops::RESHAPE: return st.reshape(to_shape(*m->arg_if<std::vector<int64_t>>()));
  case Ops::EXPAND: return st.expand(to_shape(*m->arg_if<std::vector<int64_t>>()));
  case Ops::PERMUTE: {
    const auto& a = *m->arg_if<std::vector<int64_t>>();
    return st.permute(std::vector<size_t>(a.begin(), a.end()));
  }
  case Ops::PAD:
  case Ops::SHRINK: {
    std::vector<std::pair<SInt, SInt>> pairs;
    for (auto [a, b] : MovementArg::pairs(m)) pairs.emplace_back(a, b);
    return m->op() == Ops::PAD ? st.pad(pairs) : st.shrink(pairs);
  }
  case Ops::FLIP: {
    std::vector<bool> axes;
    for (auto f : *m->arg_if<std::vector<int64_t>>()) axes.push_back(f != 0);
    return st.flip(axes);
  }
  default: throw UOpError("apply_movement: not a movement op: " + std::string(op_name(m->op())));
  }
}

// Ops with f(0, ..., 0) == 0: a PAD above them needs no explicit where().
bool pad_safe_op(Ops op) {
  switch (op) {
  case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::NEG: case Ops::MAX: case Ops::CAST:
  case Ops::MULACC: case Ops::SQRT: case Ops::SIN: case Ops::TRUNC: case Ops::AND: case Ops::OR:
  case Ops::XOR: case Ops::SHL: case Ops::SHR:
    return true;
  default: return false;
  }
}

bool pad_safe(const UOpRef& u) {
  if (u->op() == Ops::BUFFER) return true;
  if (u->op() == Ops::CONST) {
    auto v = u->const_value();
    return std::visit([](auto x) { return x == decltype(x){}; }, v);
  }
  if (is_movement(u->op())) return pad_safe(u->src(0));
  if (!pad_safe_op(u->op())) return false;
  return std::all_of(u->src().begin(), u->src().end(), [](const UOpRef& s) { return pad_safe(s); });
}

// Contiguous strides of a shape.
Dims strides_of(const Dims& shape) {
  Dims st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
  return st;
}

// Per-dim indices of `flat` in a contiguous `shape`.
std::vector<UOpRef> unflatten(const UOpRef& flat, const Dims& shape) {
  Dims st = strides_of(shape);
  std::vector<UOpRef> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      out.push_back(idx_const(0));
      continue;
    }
    UOpRef v = st[d] == 1 ? flat : idiv(flat, idx_const(st[d]));
    if (d > 0) v = v % idx_const(shape[d]);
    out.push_back(v);
  }
  return out;
}

UOpRef flatten(const std::vector<UOpRef>& idx, const Dims& shape) {
  Dims st = strides_of(shape);
  UOpRef flat = idx_const(0);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) flat = flat + idx[d] * idx_const(st[d]);
  return flat;
}

class Lowerer {
public:
  Lowerer(const ScheduleItem& item, const LowerOptions& options) : item_(item), options_(options) {
    for (size_t i = 0; i < item.buffers.size(); ++i) {
      const auto& b = item.buffers[i];
      global_index_[b.get()] = int64_t(i);
      globals_.push_back(UOp::make(Ops::DEFINE_GLOBAL, b->dtype().ptr_to(), {}, int64_t(i)));
    }
  }

  LoweredKernel run();

private:
  // The index space a value is evaluated in: per-dim indices `idx` of shape `base`, and the
  // movement ops between that space and the node (nearest to the base first).
  struct Frame {
    std::vector<UOpRef> idx;
    Dims base;
    std::vector<UOpRef> mops;
  };

  UOpRef value(const UOpRef& u, const Frame& f);
  UOpRef load(const UOpRef& buffer, const Frame& f);
  UOpRef reduce(const UOpRef& r, const Frame& f);
  ShapeTracker tracker(const Dims& start, const std::vector<UOpRef>& below_to_base) const;
  UOpRef range_for(const UOp* reduce_node, size_t axis, int64_t size);
  // Strides (in elements) of every buffer read under u, per dim of u's index space; a dim whose
  // stride is unknown (several stacked views, symbolic) is reported as -1.
  void leaf_strides(const UOpRef& u, const std::vector<UOpRef>& mops, const Dims& base,
                    std::vector<Dims>& out);

  const ScheduleItem& item_;
  LowerOptions options_;
  ShapeMap shapes_;
  std::unordered_map<const UOp*, int64_t> global_index_;
  std::vector<UOpRef> globals_;
  std::map<std::pair<const UOp*, size_t>, UOpRef> ranges_;
  int64_t next_range_id_ = 1;
  int64_t reduce_unroll_ = 1; // lanes over the innermost reduced axis
  std::map<std::vector<const void*>, UOpRef> memo_;
  int64_t alu_outside_ = 0, alu_inside_ = 0, reduce_size_ = 1, reduce_iters_ = 1;
  int reduce_depth_ = 0;
};

// The tracker of a node of shape `start` seen from the base, through `ops` applied bottom-up.
ShapeTracker Lowerer::tracker(const Dims& start, const std::vector<UOpRef>& ops) const {
  ShapeTracker st = ShapeTracker::from_shape(to_shape(start));
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) st = apply_movement(st, *it);
  return st;
}

UOpRef Lowerer::range_for(const UOp* reduce_node, size_t axis, int64_t size) {
  auto key = std::make_pair(reduce_node, axis);
  if (auto it = ranges_.find(key); it != ranges_.end()) return it->second;
  UOpRef r = UOp::range(size, next_range_id_++);
  ranges_.emplace(key, r);
  return r;
}

void Lowerer::leaf_strides(const UOpRef& u, const std::vector<UOpRef>& mops, const Dims& base,
                           std::vector<Dims>& out) {
  if (u->op() == Ops::BUFFER) {
    ShapeTracker st = tracker({buffer_arg(u).size()}, mops);
    Dims strides(base.size(), -1);
    if (st.views().size() == 1)
      for (size_t d = 0; d < base.size(); ++d) {
        const SInt& s = st.views()[0].strides[d];
        if (s.is_int()) strides[d] = s.value();
      }
    out.push_back(std::move(strides));
    return;
  }
  if (u->op() == Ops::REDUCE_AXIS) return; // a nested reduce has its own index space
  std::vector<UOpRef> below = mops;
  if (is_movement(u->op())) below.push_back(u);
  for (const auto& s : u->src()) leaf_strides(s, below, base, out);
}

UOpRef Lowerer::load(const UOpRef& buffer, const Frame& f) {
  ShapeTracker st = tracker({buffer_arg(buffer).size()}, f.mops);
  auto [index, valid] = st.to_index(f.idx);
  const UOpRef& global = globals_.at(size_t(global_index_.at(buffer.get())));
  UOpRef ptr = UOp::make(Ops::INDEX, global->dtype(), {global, index});
  if (is_true(valid)) return UOp::make(Ops::LOAD, buffer->dtype(), {ptr});
  UOpRef zero = UOp::constant(buffer->dtype(), buffer->dtype().is_float() ? ConstValue{0.0} : ConstValue{int64_t{0}});
  if (buffer->dtype().is_bool()) zero = UOp::constant(buffer->dtype(), false);
  return UOp::make(Ops::LOAD, buffer->dtype(), {ptr, valid, zero});
}

UOpRef Lowerer::reduce(const UOpRef& r, const Frame& f) {
  const Dims& out_shape = shapes_(r);
  const Dims& in_shape = shapes_(r->src(0));
  std::vector<UOpRef> out_idx = f.idx;
  UOpRef valid = UOp::constant(dtypes::bool_, true);
  if (!f.mops.empty() || f.base != out_shape) {
    auto [flat, v] = tracker(out_shape, f.mops).to_index(f.idx);
    out_idx = unflatten(flat, out_shape);
    valid = v;
  }
  const auto& axes = r->arg_if<ReduceArg>()->axes;
  Ops op = r->arg_if<ReduceArg>()->op;
  std::vector<UOpRef> in_idx = out_idx, ranges;
  int64_t innermost = -1;
  for (auto a : axes)
    if (in_shape[size_t(a)] > 1) innermost = std::max(innermost, a);
  int64_t lanes = 1;
  if (innermost >= 0 && reduce_unroll_ > 1 && in_shape[size_t(innermost)] % reduce_unroll_ == 0)
    lanes = reduce_unroll_;
  int64_t count = 1;
  for (auto a : axes) {
    int64_t n = in_shape[size_t(a)];
    count *= n;
    if (n == 1) {
      in_idx[size_t(a)] = idx_const(0);
      continue;
    }
    int64_t iters = a == innermost ? n / lanes : n;
    UOpRef rng = range_for(r.get(), size_t(a), iters);
    ranges.push_back(rng);
    in_idx[size_t(a)] = rng;
  }
  reduce_size_ = std::max(reduce_size_, count);
  reduce_iters_ = std::max(reduce_iters_, count / lanes);
  std::vector<UOpRef> partials;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    std::vector<UOpRef> idx = in_idx;
    if (lanes > 1) idx[size_t(innermost)] = in_idx[size_t(innermost)] * idx_const(lanes) + idx_const(lane);
    ++reduce_depth_;
    UOpRef v = value(r->src(0), Frame{idx, in_shape, {}});
    --reduce_depth_;
    if (ranges.empty()) {
      partials.push_back(v);
      continue;
    }
    std::vector<UOpRef> src{v};
    src.insert(src.end(), ranges.begin(), ranges.end());
    partials.push_back(UOp::make(Ops::REDUCE, v->dtype(), std::move(src), ReduceArg{op, {}}));
  }
  UOpRef result = partials[0];
  for (size_t k = 1; k < partials.size(); ++k)
    result = op == Ops::MAX ? maximum(result, partials[k]) : op == Ops::MUL ? result * partials[k] : result + partials[k];
  if (!is_true(valid)) result = where(valid, result, const_like(result, int64_t{0}));
  return result;
}

UOpRef Lowerer::value(const UOpRef& u, const Frame& f) {
  std::vector<const void*> key{u.get()};
  for (const auto& i : f.idx) key.push_back(i.get());
  key.push_back(nullptr);
  for (const auto& m : f.mops) key.push_back(m.get());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;

  UOpRef out;
  switch (u->op()) {
  case Ops::BUFFER: out = load(u, f); break;
  case Ops::RANGE: { // iota: the element's index along its one dim
    auto [index, valid] = tracker({u->src(1)->arg_int()}, f.mops).to_index(f.idx);
    out = is_true(valid) ? index : where(valid, index, idx_const(0));
    break;
  }
  case Ops::CONST:
  case Ops::DEFINE_VAR: out = u; break;
  case Ops::REDUCE_AXIS: out = reduce(u, f); break;
  case Ops::CONTIGUOUS:
  case Ops::DETACH: out = value(u->src(0), f); break;
  case Ops::RESHAPE: case Ops::PERMUTE: case Ops::EXPAND: case Ops::SHRINK: case Ops::FLIP: case Ops::PAD: {
    Frame below = f;
    below.mops.push_back(u);
    out = value(u->src(0), below);
    if (u->op() == Ops::PAD && !pad_safe(u->src(0))) {
      std::vector<UOpRef> ops = f.mops;
      ops.push_back(u);
      auto [index, valid] = tracker(shapes_(u->src(0)), ops).to_index(f.idx);
      (void)index;
      if (!is_true(valid)) out = where(valid, out, const_like(out, int64_t{0}));
    }
    break;
  }
  default: {
    if (!is_alu(u->op()) && u->op() != Ops::CAST && u->op() != Ops::BITCAST)
      throw UOpError("codegen: cannot lower " + std::string(op_name(u->op())) + " inside a kernel");
    std::vector<UOpRef> src;
    for (const auto& s : u->src()) src.push_back(value(s, f));
    out = UOp::make(u->op(), u->dtype(), std::move(src), u->arg());
    (reduce_depth_ ? alu_inside_ : alu_outside_) += 1;
    break;
  }
  }
  memo_.emplace(std::move(key), out);
  return out;
}

std::string join_dims(const std::string& prefix, const Dims& d) {
  std::string s = prefix;
  for (auto x : d) s += "_" + std::to_string(x);
  return s;
}

LoweredKernel Lowerer::run() {
  LoweredKernel k;
  const UOpRef& store = item_.ast->src(0);
  const UOpRef& value_root = store->src(1);
  const Dims& S = item_.shape;
  const int64_t N = dims_prod(S);
  bool has_reduce = false;
  for (const auto& n : toposort(value_root)) has_reduce |= n->op() == Ops::REDUCE_AXIS;
  const bool opt = options_.optimize;
  const int64_t ndim = int64_t(S.size());

  std::vector<UOpRef> stores;
  UOpRef out_ptr_base = globals_[0];
  auto emit_store = [&](const std::vector<UOpRef>& idx) {
    UOpRef v = value(value_root, Frame{idx, S, {}});
    UOpRef ptr = UOp::make(Ops::INDEX, out_ptr_base->dtype(), {out_ptr_base, flatten(idx, S)});
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {ptr, v}));
  };

  if (!has_reduce) {
    // Elementwise: work groups over the outer dims (and chunks of the last), a loop over the last.
    const int64_t L = ndim ? S.back() : 1, outer = ndim ? N / L : 1;
    const int64_t target_groups = int64_t(options_.compute_units) * 32;
    int64_t chunk = L;
    if (opt && outer < target_groups && L > 1024) {
      chunk = std::max<int64_t>(1024, (L * outer + target_groups - 1) / target_groups);
      chunk = (chunk + 15) / 16 * 16;
    }
    const int64_t nchunks = (L + chunk - 1) / chunk;
    const int64_t groups = outer * nchunks;
    UOpRef gid = UOp::make(Ops::SPECIAL, dtypes::index, {idx_const(groups)},
                           std::vector<int64_t>{TG_SPECIAL_GROUP_ID, 0});
    UOpRef outer_flat = nchunks == 1 ? gid : idiv(gid, idx_const(nchunks));
    UOpRef chunk_id = nchunks == 1 ? idx_const(0) : gid % idx_const(nchunks);
    std::vector<UOpRef> idx = ndim ? unflatten(outer_flat, Dims(S.begin(), S.end() - 1)) : std::vector<UOpRef>{};
    if (ndim) {
      UOpRef start = chunk_id * idx_const(chunk);
      // the last chunk may be short: end = min(chunk, L - start)
      UOpRef end = L % chunk == 0 ? idx_const(chunk) : -maximum(start - idx_const(L), idx_const(-chunk));
      UOpRef rng = UOp::range(end, next_range_id_++);
      idx.push_back(nchunks == 1 ? rng : start + rng);
    }
    emit_store(idx);
    k.global = {uint32_t(groups), 1, 1};
    k.name = join_dims("E", S);
    k.opts = "chunk=" + std::to_string(chunk) + " groups=" + std::to_string(groups);
  } else {
    // Reduce: each work group computes a tile of outputs (upcast lanes on the last two output
    // dims) with all lanes sharing one reduce loop.
    int64_t u_last = 1, u_prev = 1;
    if (opt && ndim >= 1) {
      // Look at how the inputs are laid out in the reduce's input space: upcast the last output
      // dim when an input is contiguous along it (matmul's B), else give the innermost reduced
      // dim parallel partial accumulators when an input is contiguous along that (a row sum).
      UOpRef first_reduce;
      for (const auto& n : toposort(value_root))
        if (n->op() == Ops::REDUCE_AXIS) { first_reduce = n; break; }
      const Dims& in_shape = shapes_(first_reduce->src(0));
      std::vector<Dims> strides;
      leaf_strides(first_reduce->src(0), {}, in_shape, strides);
      const auto& axes = first_reduce->arg_if<ReduceArg>()->axes;
      int64_t inner_reduce = -1;
      for (auto a : axes)
        if (in_shape[size_t(a)] > 1) inner_reduce = std::max(inner_reduce, a);
      auto contiguous_along = [&](int64_t dim) {
        for (const auto& st : strides)
          if (st[size_t(dim)] == 1) return true;
        return false;
      };
      bool last_is_output = S.back() > 1;
      if (last_is_output && contiguous_along(ndim - 1)) {
        for (int64_t u : {16, 8, 4, 2})
          if (S.back() % u == 0) { u_last = u; break; }
        if (ndim >= 2)
          for (int64_t u : {4, 2})
            if (S[size_t(ndim - 2)] % u == 0 && u * u_last <= 64) { u_prev = u; break; }
      } else if (inner_reduce >= 0 && contiguous_along(inner_reduce)) {
        reduce_unroll_ = 8;
        for (int64_t u : {4, 2}) // a few rows at once still share nothing, but amortize the loop
          if (S.back() % u == 0 && dims_prod(S) >= int64_t(options_.compute_units) * 4 * u) { u_last = u; break; }
      } else {
        for (int64_t u : {4, 2})
          if (S.back() % u == 0) { u_last = u; break; }
      }
    }
    Dims tiles = S;
    if (ndim >= 1) tiles[size_t(ndim - 1)] /= u_last;
    if (ndim >= 2) tiles[size_t(ndim - 2)] /= u_prev;
    const int64_t groups = dims_prod(tiles);
    UOpRef gid = UOp::make(Ops::SPECIAL, dtypes::index, {idx_const(groups)},
                           std::vector<int64_t>{TG_SPECIAL_GROUP_ID, 0});
    std::vector<UOpRef> tile_idx = unflatten(gid, tiles);
    for (int64_t a = 0; a < u_prev; ++a)
      for (int64_t b = 0; b < u_last; ++b) {
        std::vector<UOpRef> idx = tile_idx;
        if (ndim >= 1) idx[size_t(ndim - 1)] = tile_idx[size_t(ndim - 1)] * idx_const(u_last) + idx_const(b);
        if (ndim >= 2) idx[size_t(ndim - 2)] = tile_idx[size_t(ndim - 2)] * idx_const(u_prev) + idx_const(a);
        emit_store(idx);
      }
    k.global = {uint32_t(groups), 1, 1};
    k.compile_level = 3;
    k.name = join_dims("r", S) + "_" + std::to_string(reduce_size_);
    k.opts = "upcast=" + std::to_string(u_prev) + "x" + std::to_string(u_last) +
             " unroll=" + std::to_string(reduce_unroll_) + " groups=" + std::to_string(groups);
  }
  if (k.global[0] > options_.max_groups)
    throw UOpError("codegen: " + std::to_string(k.global[0]) + " work groups exceed the device limit " +
                   std::to_string(options_.max_groups));
  k.sink = simplify(UOp::sink(stores));
  // ALU nodes were counted once per emitted lane: per work group (elementwise: per loop step).
  k.ops = has_reduce ? int64_t(k.global[0]) * (alu_outside_ + alu_inside_ * reduce_iters_) : alu_outside_ * N;
  for (const auto& b : item_.buffers) k.bytes += buffer_arg(b).size() * b->dtype().itemsize();
  return k;
}

} // namespace

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options) {
  if (item.ast->src(0)->op() != Ops::STORE) throw UOpError("lower_kernel: not a compute kernel");
  return Lowerer(item, options).run();
}

} // namespace tg
