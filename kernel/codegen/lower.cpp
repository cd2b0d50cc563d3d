#include "kernel/codegen/lower.hpp"

#include "kernel/codegen/index_width.hpp"
#include "kernel/codegen/vectorize.hpp"
#include "kernel/ir/evaluate.hpp"
#include "kernel/ir/symbolic.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/shape/shapetracker.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

namespace tg {

namespace {

// Index math is built in int64, so no address, loop or grid index wraps however large a buffer,
// view or loop is; IndexNarrower then turns every value that fits back into int32.
constexpr DType kIndex = dtypes::int64;

UOpRef idx_const(int64_t v) { return UOp::constant(kIndex, v); }

// The work-group id as an index: the ABI's SPECIAL is int32 (so groups <= INT32_MAX).
UOpRef group_id(int64_t groups) {
  UOpRef id = UOp::make(Ops::SPECIAL, dtypes::int32, {UOp::constant(dtypes::int32, groups)},
                        std::vector<int64_t>{TG_SPECIAL_GROUP_ID, 0});
  return cast(id, kIndex);
}

bool is_true(const UOpRef& u) {
  return u->op() == Ops::CONST && u->dtype().is_bool() && std::get<bool>(u->const_value());
}

Shape to_shape(const Dims& d) { return Shape(d.begin(), d.end()); }

// The view of movement op m's result, given the view st of its source.
ShapeTracker apply_movement(const ShapeTracker& st, const UOpRef& m) {
  switch (m->op()) {
  case Ops::RESHAPE:
    return st.reshape(to_shape(*m->arg_if<std::vector<int64_t>>()));
  case Ops::EXPAND:
    return st.expand(to_shape(*m->arg_if<std::vector<int64_t>>()));
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
  default:
    throw UOpError("apply_movement: not a movement op: " + std::string(op_name(m->op())));
  }
}

// Ops with f(0, ..., 0) == 0: a PAD above them needs no explicit where().
bool pad_safe_op(Ops op) {
  switch (op) {
  case Ops::ADD:
  case Ops::SUB:
  case Ops::MUL:
  case Ops::NEG:
  case Ops::MAX:
  case Ops::CAST:
  case Ops::MULACC:
  case Ops::SQRT:
  case Ops::SIN:
  case Ops::TRUNC:
  case Ops::AND:
  case Ops::OR:
  case Ops::XOR:
  case Ops::SHL:
  case Ops::SHR:
    return true;
  default:
    return false;
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

// The reduce over `ranges` of a value that none of them changes (a sum of ones), without the
// loop: c * trips for a sum (float32 adding 1 stops counting at 2^24), c for a max; nullptr when
// v varies, for a product, or for an empty loop.
UOpRef reduce_invariant(Ops op, const UOpRef& v, const std::vector<UOpRef>& ranges) {
  if (v->dtype().count != 1 || (op == Ops::MUL && !v->dtype().is_bool())) return nullptr;
  for (const auto& n : toposort(v))
    if (n->op() == Ops::RANGE && std::find(ranges.begin(), ranges.end(), n) != ranges.end()) return nullptr;
  if (op != Ops::ADD || v->dtype().is_bool()) return v; // max, or bool or/and
  int64_t trips = 1;
  for (const auto& r : ranges) trips *= r->src(1)->arg_int(); // <= the input's numel
  if (trips == 0) return nullptr; // an empty loop reads nothing and gives the identity
  // an int sum wraps like the loop would: c * trips in v's dtype equals trips additions of c
  return v * (v->dtype().is_float() ? const_like(v, double(trips)) : const_like(v, trips));
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
  int64_t vector_lanes_ = 1;  // lanes of the leading upcast bundled into one vector
  std::map<std::vector<const void*>, UOpRef> memo_;
  std::vector<UOpRef> keep_alive_;
  std::set<std::vector<const void*>> strides_seen_;
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
  UOpRef r = UOp::range(size, next_range_id_++, kIndex);
  ranges_.emplace(key, r);
  return r;
}

void Lowerer::leaf_strides(const UOpRef& u, const std::vector<UOpRef>& mops, const Dims& base,
                           std::vector<Dims>& out) {
  // a DAG (threefry reuses its values in every round): visit each (node, view path) once
  std::vector<const void*> key{u.get()};
  for (const auto& m : mops) key.push_back(m.get());
  if (!strides_seen_.insert(std::move(key)).second) return;
  if (u->op() == Ops::BUFFER) {
    ShapeTracker st = tracker({buffer_arg(u).size()}, mops);
    // A stride of 0 in the top view means the load ignores that index whatever lies below;
    // other strides are exact when there is a single view. Through stacked views, measure the
    // step of the index expression along each dim at two points (origin and middle).
    Dims strides(base.size(), -1);
    const View& top = st.views().back();
    for (size_t d = 0; d < base.size(); ++d) {
      const SInt& s = top.strides[d];
      if (s.is_int() && (s.value() == 0 || st.views().size() == 1)) strides[d] = s.value();
    }
    if (st.views().size() > 1 && all_int(st.shape())) {
      std::vector<UOpRef> vars; // int64, like the kernel's index math, so a large view cannot wrap
      for (size_t k = 0; k < st.ndim(); ++k)
        vars.push_back(UOp::variable("ridx" + std::to_string(k), 0,
                                     std::max<int64_t>(0, st.shape()[k].vmax() - 1), kIndex));
      auto [index, valid] = st.to_index(vars);
      (void)valid;
      try {
        Evaluator eval(index);
        for (size_t d = 0; d < base.size(); ++d) {
          if (strides[d] == 0 || base[d] < 2) continue;
          int64_t step = 0;
          bool same = true;
          for (int point = 0; point < 2 && same; ++point) {
            Bindings b0, b1;
            for (size_t k = 0; k < vars.size(); ++k) {
              int64_t v = point == 0 ? 0 : (base[k] - 1) / 2;
              if (k == d) v = std::min(v, base[k] - 2);
              b0.set(vars[k], v);
              b1.set(vars[k], k == d ? v + 1 : v);
            }
            int64_t diff = const_as_int(eval.run(b1)) - const_as_int(eval.run(b0));
            same = point == 0 || diff == step;
            step = diff;
          }
          if (same) strides[d] = step;
        }
      } catch (const IRError&) { // an expression the evaluator cannot compute: leave unknown
      }
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
  UOpRef zero =
      UOp::constant(buffer->dtype(), buffer->dtype().is_float() ? ConstValue{0.0} : ConstValue{int64_t{0}});
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
    if (iters == 1) { // fully unrolled: no loop
      in_idx[size_t(a)] = idx_const(0);
      continue;
    }
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
    if (UOpRef folded = reduce_invariant(op, v, ranges)) {
      partials.push_back(folded);
      continue;
    }
    std::vector<UOpRef> src{v};
    src.insert(src.end(), ranges.begin(), ranges.end());
    partials.push_back(UOp::make(Ops::REDUCE, v->dtype(), std::move(src), ReduceArg{op, {}}));
    ++alu_inside_; // the accumulate (a MULACC counts as multiply + add, as tinygrad counts)
  }
  UOpRef result = partials[0];
  for (size_t k = 1; k < partials.size(); ++k)
    result = op == Ops::MAX   ? maximum(result, partials[k])
             : op == Ops::MUL ? result * partials[k]
                              : result + partials[k];
  if (!is_true(valid)) result = where(valid, result, const_like(result, int64_t{0}));
  return result;
}

UOpRef Lowerer::value(const UOpRef& u, const Frame& f) {
  std::vector<const void*> key{u.get()};
  for (const auto& i : f.idx) key.push_back(i.get());
  key.push_back(nullptr);
  for (const auto& m : f.mops) key.push_back(m.get());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  // the key holds raw pointers: keep its index nodes alive so no address is ever reused
  keep_alive_.insert(keep_alive_.end(), f.idx.begin(), f.idx.end());

  UOpRef out;
  switch (u->op()) {
  case Ops::BUFFER:
    out = load(u, f);
    break;
  case Ops::RANGE: { // iota: the element's index along its one dim
    auto [index, valid] = tracker({u->src(1)->arg_int()}, f.mops).to_index(f.idx);
    out = is_true(valid) ? index : where(valid, index, idx_const(0));
    if (out->dtype() != u->dtype()) out = cast(out, u->dtype()); // the tensor's dtype, not the index's
    break;
  }
  case Ops::CONST:
  case Ops::DEFINE_VAR:
    out = u;
    break;
  case Ops::REDUCE_AXIS:
    out = reduce(u, f);
    break;
  case Ops::CONTIGUOUS:
  case Ops::NOOP: // carries a custom gradient; the value is its source's
  case Ops::DETACH:
    out = value(u->src(0), f);
    break;
  case Ops::RESHAPE:
  case Ops::PERMUTE:
  case Ops::EXPAND:
  case Ops::SHRINK:
  case Ops::FLIP:
  case Ops::PAD: {
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
  const int64_t max_groups = std::clamp<int64_t>(options_.max_groups, 1, INT32_MAX); // SPECIAL is int32
  IndexNarrower narrow;
  int64_t tiles_total = 1; // reduce: output tiles (work groups, unless groups loop over tiles)

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
    int64_t groups = outer * nchunks;
    // the last chunk of a dim of length `len` may be short: end = min(chunk, len - start)
    auto chunk_loop = [&](const UOpRef& start, int64_t len) {
      UOpRef end = len % chunk == 0 ? idx_const(chunk) : -maximum(start - idx_const(len), idx_const(-chunk));
      return UOp::range(end, next_range_id_++, kIndex);
    };
    std::vector<UOpRef> idx;
    if (groups <= max_groups) {
      UOpRef gid = group_id(groups);
      UOpRef outer_flat = nchunks == 1 ? gid : idiv(gid, idx_const(nchunks));
      UOpRef chunk_id = nchunks == 1 ? idx_const(0) : gid % idx_const(nchunks);
      if (ndim) {
        idx = unflatten(outer_flat, Dims(S.begin(), S.end() - 1));
        UOpRef start = chunk_id * idx_const(chunk);
        UOpRef rng = chunk_loop(start, L);
        idx.push_back(nchunks == 1 ? rng : start + rng);
      }
    } else {
      // More rows than the device has work groups (a long, thin shape): each work group takes
      // a chunk of the flat index instead, and unflattens it.
      chunk = std::max<int64_t>((N + max_groups - 1) / max_groups, 4096);
      chunk = (chunk + 15) / 16 * 16;
      groups = (N + chunk - 1) / chunk;
      UOpRef start = group_id(groups) * idx_const(chunk);
      idx = unflatten(start + chunk_loop(start, N), S);
    }
    emit_store(idx);
    k.global = {uint32_t(groups), 1, 1};
    k.name = join_dims("E", S);
    k.opts = "chunk=" + std::to_string(chunk) + " groups=" + std::to_string(groups);
  } else {
    // Reduce: each work group computes a tile of outputs (upcast lanes on the last two output
    // dims) with all lanes sharing one reduce loop.
    // Upcast: each work group computes a tile of outputs, with every lane sharing one reduce
    // loop. Dims along which some input does not vary (stride 0) are upcast first, since their
    // loads are reused by every lane (matmul: A along j, B along i); a dim along which an input
    // is contiguous gets the wide factor, so its lanes load consecutive elements.
    std::vector<std::pair<int64_t, int64_t>> upcasts; // (output dim, factor)
    if (opt) {
      UOpRef first_reduce;
      for (const auto& n : toposort(value_root))
        if (n->op() == Ops::REDUCE_AXIS) {
          first_reduce = n;
          break;
        }
      const Dims& in_shape = shapes_(first_reduce->src(0));
      std::vector<Dims> strides;
      leaf_strides(first_reduce->src(0), {}, in_shape, strides);
      const auto& axes = first_reduce->arg_if<ReduceArg>()->axes;
      auto stride_count = [&](int64_t dim, int64_t value) {
        int64_t c = 0;
        for (const auto& st : strides) c += st[size_t(dim)] == value;
        return c;
      };
      // Output dims map to the reduce's kept input dims in order of their non-1 sizes (the
      // usual case: the output is the reduce seen through elementwise ops and squeezes).
      std::vector<int64_t> out_dims, in_dims;
      for (int64_t d = 0; d < ndim; ++d)
        if (S[size_t(d)] > 1) out_dims.push_back(d);
      for (int64_t d = 0; d < int64_t(in_shape.size()); ++d)
        if (in_shape[size_t(d)] > 1 && std::find(axes.begin(), axes.end(), d) == axes.end())
          in_dims.push_back(d);
      bool mapped = out_dims.size() == in_dims.size();
      for (size_t i = 0; mapped && i < out_dims.size(); ++i)
        mapped = S[size_t(out_dims[i])] == in_shape[size_t(in_dims[i])];
      struct Candidate {
        int64_t dim, reuse;
        bool contiguous;
        int64_t best;
      };
      std::vector<Candidate> cands;
      for (size_t i = 0; mapped && i < out_dims.size(); ++i) {
        int64_t reuse = stride_count(in_dims[i], 0);
        bool contiguous = stride_count(in_dims[i], 1) > 0;
        int64_t best = 1; // the largest divisor up to 16 (contiguous lanes) or 8
        for (int64_t u = contiguous ? 16 : 8; u >= 2; --u)
          if (S[size_t(out_dims[i])] % u == 0) {
            best = u;
            break;
          }
        if (reuse > 0 && best > 1) cands.push_back({out_dims[i], reuse, contiguous, best});
      }
      // Vector-width lanes (8 or 16) first — LLVM's SLP vectorizer turns them into vector FMAs,
      // contiguous ones into vector loads too; then the most reuse, then the widest factor.
      auto vector_width = [](const Candidate& c) { return c.best == 8 || c.best == 16; };
      std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
        if (vector_width(a) != vector_width(b)) return vector_width(a);
        if (a.contiguous != b.contiguous) return a.contiguous;
        if (a.reuse != b.reuse) return a.reuse > b.reuse;
        if (a.best != b.best) return a.best > b.best;
        return a.dim > b.dim;
      });
      int64_t lanes = 1;
      for (const auto& c : cands) {
        if (upcasts.size() == 2) break;
        for (int64_t u = c.best; u >= 2; --u)
          if (S[size_t(c.dim)] % u == 0 && lanes * u <= 64 &&
              dims_prod(S) / (lanes * u) >= options_.compute_units) {
            upcasts.emplace_back(c.dim, u);
            lanes *= u;
            break;
          }
      }
      // Vector lanes: the leading upcast, when it is contiguous, in vectors of up to two whole
      // registers (16 floats on AVX2 are two 8-wide registers; LLVM splits them). A wider upcast
      // is several vectors: the largest multiple of 4 that divides it and fits.
      const int64_t width = options_.vector_bytes / std::max(1, value_root->dtype().itemsize());
      if (!upcasts.empty() && width >= 2 && !cands.empty() && cands.front().contiguous &&
          upcasts.front().first == cands.front().dim)
        for (int64_t v = std::min(upcasts.front().second, 2 * width); v >= 4; --v)
          if (v % 4 == 0 && upcasts.front().second % v == 0) {
            vector_lanes_ = v;
            break;
          }
      int64_t inner_reduce = -1;
      for (auto a : axes)
        if (in_shape[size_t(a)] > 1) inner_reduce = std::max(inner_reduce, a);
      // no reuse to exploit: give a contiguous reduction parallel partial sums instead
      if (upcasts.empty() && inner_reduce >= 0 && stride_count(inner_reduce, 1) > 0) reduce_unroll_ = 8;
    }
    Dims tiles = S;
    for (auto [d, u] : upcasts) tiles[size_t(d)] /= u;
    const int64_t tile_count = dims_prod(tiles);
    tiles_total = tile_count;
    // More tiles than the device has work groups: each work group loops over `per` tiles; the
    // last group's surplus steps are clamped to the final tile, which it recomputes and stores
    // again with the same value (one work group runs in order, so this is no race).
    const int64_t per = (tile_count + max_groups - 1) / max_groups;
    const int64_t groups = (tile_count + per - 1) / per;
    UOpRef tile_flat = group_id(groups);
    if (per > 1) {
      UOpRef step = tile_flat * idx_const(per) + UOp::range(per, next_range_id_++, kIndex);
      tile_flat = -maximum(-step, idx_const(-(tile_count - 1)));
    }
    std::vector<UOpRef> tile_idx = unflatten(tile_flat, tiles);
    int64_t total_lanes = 1;
    for (auto [d, u] : upcasts) total_lanes *= u;
    LaneVectorizer vectorizer;
    for (int64_t lane = 0; lane < total_lanes; lane += vector_lanes_) {
      std::vector<UOpRef> values, ptrs;
      for (int64_t v = 0; v < vector_lanes_; ++v) {
        std::vector<UOpRef> idx = tile_idx;
        int64_t rest = lane + v;
        // the first upcast varies fastest, so a run of vector_lanes_ lanes is consecutive along it
        for (auto [d, u] : upcasts) {
          idx[size_t(d)] = tile_idx[size_t(d)] * idx_const(u) + idx_const(rest % u);
          rest /= u;
        }
        if (vector_lanes_ == 1) {
          emit_store(idx);
          continue;
        }
        // lanes in their final index width, so the vectors bundled from them are too
        values.push_back(narrow(value(value_root, Frame{idx, S, {}})));
        ptrs.push_back(narrow(UOp::make(Ops::INDEX, out_ptr_base->dtype(), {out_ptr_base, flatten(idx, S)})));
      }
      if (vector_lanes_ > 1)
        for (auto& st : vectorizer.store(ptrs, vectorizer.bundle(values))) stores.push_back(st);
    }
    k.global = {uint32_t(groups), 1, 1};
    k.compile_level = 3;
    k.name = join_dims("r", S) + "_" + std::to_string(reduce_size_);
    std::string up;
    for (auto [d, u] : upcasts) up += (up.empty() ? "" : ",") + std::to_string(d) + ":" + std::to_string(u);
    k.opts = "upcast=" + (up.empty() ? std::string("none") : up) +
             (vector_lanes_ > 1 ? " vector=" + std::to_string(vector_lanes_) : std::string()) +
             " unroll=" + std::to_string(reduce_unroll_) + " groups=" + std::to_string(groups) +
             (per > 1 ? " tiles/group=" + std::to_string(per) : std::string());
  }
  if (k.global[0] > options_.max_groups)
    throw UOpError("codegen: " + std::to_string(k.global[0]) + " work groups exceed the device limit " +
                   std::to_string(options_.max_groups));
  // every buffer is an argument even if simplification removed all its loads (x * 0)
  std::vector<UOpRef> sink_src = stores;
  sink_src.insert(sink_src.end(), globals_.begin(), globals_.end());
  k.sink = narrow(simplify(UOp::sink(sink_src)));
  // ALU nodes were counted once per emitted lane: per tile (elementwise: per loop step).
  k.ops = has_reduce ? tiles_total * (alu_outside_ + alu_inside_ * reduce_iters_) : alu_outside_ * N;
  for (const auto& b : item_.buffers) k.bytes += buffer_arg(b).size() * b->dtype().itemsize();
  return k;
}

} // namespace

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options) {
  if (item.ast->src(0)->op() != Ops::STORE) throw UOpError("lower_kernel: not a compute kernel");
  return Lowerer(item, options).run();
}

} // namespace tg
