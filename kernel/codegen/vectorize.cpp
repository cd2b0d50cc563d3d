#include "kernel/codegen/vectorize.hpp"

#include "kernel/ir/symbolic.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <optional>

namespace tg {

namespace {

// b - a for two index trees alike but for integer constants, where every path to a difference
// is ADDs and MULs by a shared constant (an unsimplified index and its neighbour lane's); else
// nullopt. A tile's stores compare lanes x vectors such pairs: this spares a simplify each.
std::optional<int64_t> linear_difference(const UOpRef& a, const UOpRef& b) {
  if (a == b) return int64_t{0};
  if (a->op() != b->op() || a->dtype() != b->dtype() || a->src().size() != b->src().size())
    return std::nullopt;
  if (a->op() == Ops::CONST) {
    const ConstValue ca = a->const_value(), cb = b->const_value();
    const auto *x = std::get_if<int64_t>(&ca), *y = std::get_if<int64_t>(&cb);
    if (x && y) return *y - *x;
    return std::nullopt;
  }
  if (a->op() == Ops::ADD) {
    const auto l = linear_difference(a->src(0), b->src(0));
    const auto r = l ? linear_difference(a->src(1), b->src(1)) : std::nullopt;
    if (l && r) return *l + *r;
    return std::nullopt;
  }
  if (a->op() == Ops::MUL)
    for (int s : {0, 1})
      if (a->src(size_t(s)) == b->src(size_t(s)) && a->src(size_t(s))->op() == Ops::CONST) {
        const ConstValue c = a->src(size_t(s))->const_value();
        const auto* m = std::get_if<int64_t>(&c);
        const auto d = m ? linear_difference(a->src(size_t(1 - s)), b->src(size_t(1 - s))) : std::nullopt;
        if (d) return *d * *m;
        return std::nullopt;
      }
  return std::nullopt;
}

// Elements from a's to b's (INDEX nodes into one buffer), when the index difference simplifies
// to a constant; else nullopt (a gather). Lanes narrowed to different index widths (near 2^31)
// are not compared.
std::optional<int64_t> distance(const UOpRef& a, const UOpRef& b) {
  if (a->op() != Ops::INDEX || b->op() != Ops::INDEX || a->src(0) != b->src(0)) return std::nullopt;
  if (a->src(1)->dtype() != b->src(1)->dtype()) return std::nullopt;
  if (const std::optional<int64_t> d = linear_difference(a->src(1), b->src(1))) return d;
  UOpRef diff = simplify(b->src(1) - a->src(1));
  if (diff->op() != Ops::CONST) return std::nullopt;
  return std::get<int64_t>(diff->const_value());
}

// True when ptrs (INDEX nodes) address consecutive elements of one buffer, in order.
bool consecutive(const std::vector<UOpRef>& ptrs) {
  for (size_t k = 1; k < ptrs.size(); ++k)
    if (distance(ptrs[0], ptrs[k]) != int64_t(k)) return false;
  return !ptrs.empty() && ptrs[0]->op() == Ops::INDEX;
}

// A load lane's gate, or null when it has none.
UOpRef gate_of(const UOpRef& load) { return load->src().size() == 3 ? load->src(1) : UOpRef(); }

// A lane `c ? x : a` whose x loads an element without a gate (lowering loads an index that is in
// bounds everywhere so) reads like the gated load of x: the form its neighbours' loads take.
UOpRef as_gated_load(const UOpRef& l) {
  if (l->op() != Ops::WHERE || l->src(1)->op() != Ops::LOAD || l->src(1)->src().size() != 1) return l;
  return UOp::make(Ops::LOAD, l->dtype(), {l->src(1)->src(0), l->src(0), l->src(2)});
}

// The conjuncts of a bool (its AND chain's leaves), each once.
void conjuncts(const UOpRef& g, std::vector<UOpRef>& out) {
  if (g->op() == Ops::AND && g->dtype() == dtypes::bool_) {
    conjuncts(g->src(0), out);
    conjuncts(g->src(1), out);
  } else if (std::find(out.begin(), out.end(), g) == out.end()) {
    out.push_back(g);
  }
}

// The conjuncts that every gate has (a null gate has none).
std::vector<UOpRef> shared_conjuncts(const std::vector<std::vector<UOpRef>>& terms) {
  std::vector<UOpRef> common;
  for (const auto& t : terms[0]) {
    bool everywhere = true;
    for (size_t k = 1; k < terms.size(); ++k)
      everywhere &= std::find(terms[k].begin(), terms[k].end(), t) != terms[k].end();
    if (everywhere) common.push_back(t);
  }
  return common;
}

std::vector<std::vector<UOpRef>> conjuncts_of(const std::vector<UOpRef>& gates) {
  std::vector<std::vector<UOpRef>> terms(gates.size());
  for (size_t k = 0; k < gates.size(); ++k)
    if (gates[k]) conjuncts(gates[k], terms[k]);
  return terms;
}

} // namespace

UOpRef LaneVectorizer::broadcast(const UOpRef& scalar, size_t n) {
  return UOp::make(Ops::VECTORIZE, scalar->dtype().vec(uint16_t(n)), std::vector<UOpRef>(n, scalar));
}

UOpRef LaneVectorizer::pack(const std::vector<UOpRef>& lanes) {
  return UOp::make(Ops::VECTORIZE, lanes[0]->dtype().vec(uint16_t(lanes.size())), lanes);
}

UOpRef LaneVectorizer::bundle(const std::vector<UOpRef>& lanes) {
  const size_t n = lanes.size();
  std::vector<const UOp*> key;
  for (const auto& l : lanes) key.push_back(l.get());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  keep_alive_.insert(keep_alive_.end(), lanes.begin(), lanes.end());

  const UOpRef& first = lanes[0];
  bool same = true, alike = true;
  for (const auto& l : lanes) {
    same &= l == first;
    alike &= l->op() == first->op() && l->dtype() == first->dtype() &&
             l->src().size() == first->src().size() && l->arg() == first->arg();
  }
  UOpRef out;
  const Ops op = first->op();
  // loads, some of them maybe `c ? load : a` (as_gated_load)
  bool all_loads = first->dtype().count == 1, some_load = false;
  for (const auto& l : lanes) {
    all_loads &= l->dtype() == first->dtype() &&
                 (l->op() == Ops::LOAD || (l->op() == Ops::WHERE && l->src(1)->op() == Ops::LOAD));
    some_load |= l->op() == Ops::LOAD;
  }
  std::vector<UOpRef> as_loads;
  if (all_loads && some_load)
    for (const auto& l : lanes) as_loads.push_back(as_gated_load(l));
  if (same) {
    out = broadcast(first, n);
  } else if (all_loads && some_load) {
    out = loads(as_loads); // gated and ungated lanes may share a vector
  } else if (first->dtype() == dtypes::bool_ && !alike && !shared_conjuncts(conjuncts_of(lanes)).empty()) {
    out = lane_gate(lanes);
  } else if (std::vector<UOpRef> selected = selected_everywhere(lanes); !selected.empty()) {
    out = bundle(selected);
  } else if (!alike || first->dtype().count != 1) {
    out = pack(lanes);
  } else if (op == Ops::REDUCE) {
    // one accumulator per lane, all over the same loops: a vector accumulator
    bool same_loops = true;
    for (const auto& l : lanes)
      for (size_t s = 1; s < l->src().size(); ++s) same_loops &= l->src(s) == first->src(s);
    if (!same_loops) {
      out = pack(lanes);
    } else {
      std::vector<UOpRef> values;
      for (const auto& l : lanes) values.push_back(l->src(0));
      std::vector<UOpRef> src{bundle(values)};
      src.insert(src.end(), first->src().begin() + 1, first->src().end());
      out = UOp::make(Ops::REDUCE, first->dtype().vec(uint16_t(n)), std::move(src), first->arg());
    }
  } else if (is_alu(op) || op == Ops::CAST || op == Ops::BITCAST) {
    std::vector<UOpRef> src;
    for (size_t s = 0; s < first->src().size(); ++s) {
      std::vector<UOpRef> operand;
      for (const auto& l : lanes) operand.push_back(l->src(s));
      src.push_back(bundle(operand));
    }
    out = UOp::make(op, first->dtype().vec(uint16_t(n)), std::move(src), first->arg());
  } else {
    out = pack(lanes);
  }
  memo_.emplace(std::move(key), out);
  return out;
}

// Lanes load one element each. Each maximal run of lanes that read consecutive elements under the
// same gate (or none) becomes one vector load: a convolution's padded rows gate only their edge
// lanes (x - 1 >= 0 on the first, x + 1 < W on the last), so the lanes between them still load as
// one vector under the row's gate. On a device that gates lanes one by one (lane_gates), lanes
// k elements apart (k <= kMaxStride: a stride-2 convolution's) load as one wider vector of the
// elements from the first lane's to the last's under a gate per element, and take every k-th.
UOpRef LaneVectorizer::loads(const std::vector<UOpRef>& lanes) {
  constexpr int64_t kMaxStride = 2;
  const size_t n = lanes.size();
  auto gate = [&](size_t k) { return gate_of(lanes[k]); };
  auto lanes_apart = [&](size_t a, size_t b) { return distance(lanes[a]->src(0), lanes[b]->src(0)); };
  auto load_run = [&](size_t start, size_t count) {
    std::vector<UOpRef> src{lanes[start]->src(0)};
    if (gate(start)) {
      std::vector<UOpRef> alts;
      for (size_t k = start; k < start + count; ++k) alts.push_back(lanes[k]->src(2));
      src.push_back(lanes[start]->src(1));
      src.push_back(bundle(alts));
    }
    return UOp::make(Ops::LOAD, lanes[0]->dtype().vec(uint16_t(count)), std::move(src));
  };
  std::vector<std::pair<size_t, size_t>> runs; // (first lane, lanes)
  for (size_t k = 0; k < n; ++k) {
    if (!runs.empty() && gate(k) == gate(runs.back().first) &&
        lanes_apart(runs.back().first, k) == int64_t(k - runs.back().first))
      ++runs.back().second;
    else
      runs.emplace_back(k, 1);
  }
  // (a width that is not a power of two, 14 columns of a 28-wide map: one masked load of 16 where
  // LLVM split 14 into loads of 8, 4 and 2 and inserts)
  if (runs.size() == 1)
    return lane_gates_ && n > 2 && !std::has_single_bit(n) ? strided_load(lanes, 1) : load_run(0, n);
  if (lane_gates_) {
    const std::optional<int64_t> stride = lanes_apart(0, 1);
    bool strided = stride && *stride >= 1 && *stride <= kMaxStride;
    for (size_t k = 2; k < n && strided; ++k) strided = lanes_apart(0, k) == *stride * int64_t(k);
    if (strided) return strided_load(lanes, size_t(*stride));
  }
  if (runs.size() == n) return pack(lanes);
  std::vector<UOpRef> out;
  for (auto [start, count] : runs) {
    if (count == 1) {
      out.push_back(lanes[start]);
      continue;
    }
    UOpRef vector = load_run(start, count);
    for (size_t k = 0; k < count; ++k)
      out.push_back(UOp::make(Ops::GEP, vector->dtype().base(), {vector}, Arg{int64_t(k)}));
  }
  return pack(out);
}

// Lane k reads the element stride * k after lane 0's: one load of every element in between, the
// one between lanes k and k + 1 under both their gates (both in bounds: so is it), then every
// stride-th lane of it. The load's width is a power of two, its elements past the last lane's
// under a false gate: 8 lanes 2 apart as 16 elements (one masked vector and one permute on
// AVX-512) where 15 took LLVM ~10 inserts and shuffles per vector (a stride-2 depthwise 3x3: 2x
// the time).
UOpRef LaneVectorizer::strided_load(const std::vector<UOpRef>& lanes, size_t stride) {
  const size_t n = lanes.size(), last = stride * (n - 1), wide = std::bit_ceil(last + 1);
  auto gate = [&](size_t k) { return gate_of(lanes[k]); };
  auto both = [](const UOpRef& a, const UOpRef& b) {
    if (!a || a == b) return b;
    if (!b) return a;
    return UOp::make(Ops::AND, dtypes::bool_, {a, b});
  };
  const UOpRef zero = UOp::constant(lanes[0]->dtype(), ConstValue{int64_t{0}});
  std::vector<UOpRef> gates(wide), alts(wide, zero);
  const UOpRef never = UOp::constant(dtypes::bool_, ConstValue{false});
  for (size_t j = 0; j < wide; ++j) {
    const size_t k = j / stride;
    // (past the last lane: its gate and false, so a row gate the lanes share stays shared)
    gates[j] = j > last ? both(gate(n - 1), never) : j % stride == 0 ? gate(k) : both(gate(k), gate(k + 1));
    if (j <= last && j % stride == 0 && gate(k)) alts[j] = lanes[k]->src(2);
  }
  const DType dt = lanes[0]->dtype().vec(uint16_t(wide));
  UOpRef ptr = lanes[0]->src(0), vector;
  if (std::all_of(gates.begin(), gates.end(), [&](const UOpRef& g) { return g == gates[0]; }))
    vector =
        gates[0] ? UOp::make(Ops::LOAD, dt, {ptr, gates[0], bundle(alts)}) : UOp::make(Ops::LOAD, dt, {ptr});
  else
    vector = UOp::make(Ops::LOAD, dt, {ptr, lane_gate(gates), bundle(alts)});
  if (stride == 1 && wide == n) return vector;
  std::vector<UOpRef> out;
  for (size_t k = 0; k < n; ++k)
    out.push_back(UOp::make(Ops::GEP, dt.base(), {vector}, Arg{int64_t(k * stride)}));
  return pack(out);
}

// Lanes where some are `c ? x : z` (z a constant) and the others are like those x: a padded
// view's edge lanes select, the lanes inside it compute x alone. The others become `true ? x : z`
// so all bundle as one select. Empty when the lanes are not of that form.
std::vector<UOpRef> LaneVectorizer::selected_everywhere(const std::vector<UOpRef>& lanes) {
  const UOp* select = nullptr;
  for (const auto& l : lanes)
    if (l->op() == Ops::WHERE && l->src(2)->op() == Ops::CONST) select = l.get();
  if (select == nullptr) return {};
  const UOpRef& x = select->src(1);
  std::vector<UOpRef> out;
  bool changed = false;
  for (const auto& l : lanes) {
    if (l->op() == Ops::WHERE && l->src(2) == select->src(2)) {
      out.push_back(l);
      continue;
    }
    if (l->op() != x->op() || l->dtype() != x->dtype() || l->src().size() != x->src().size() ||
        l->arg() != x->arg())
      return {};
    out.push_back(UOp::make(Ops::WHERE, l->dtype(),
                            {UOp::constant(dtypes::bool_, ConstValue{true}), l, select->src(2)}));
    changed = true;
  }
  if (!changed) return {};
  return out;
}

// Gates per lane (null: the lane is not gated) as one bool vector: the conjuncts every lane's gate
// shares (a convolution's row bounds) broadcast, AND the rest per lane (the column bounds of the
// edge lanes; true elsewhere), so the shared part stays one scalar compare.
UOpRef LaneVectorizer::lane_gate(const std::vector<UOpRef>& gates) {
  const size_t n = gates.size();
  const std::vector<std::vector<UOpRef>> terms = conjuncts_of(gates);
  const std::vector<UOpRef> common = shared_conjuncts(terms);
  auto all_of = [](const std::vector<UOpRef>& ts) {
    UOpRef g = ts.empty() ? UOp::constant(dtypes::bool_, ConstValue{true}) : ts[0];
    for (size_t k = 1; k < ts.size(); ++k) g = UOp::make(Ops::AND, dtypes::bool_, {g, ts[k]});
    return g;
  };
  std::vector<UOpRef> rest;
  for (size_t k = 0; k < n; ++k) {
    std::vector<UOpRef> own;
    for (const auto& t : terms[k])
      if (std::find(common.begin(), common.end(), t) == common.end()) own.push_back(t);
    rest.push_back(all_of(own));
  }
  UOpRef per_lane = bundle(rest);
  if (common.empty()) return per_lane;
  return UOp::make(Ops::AND, dtypes::bool_.vec(uint16_t(n)), {broadcast(all_of(common), n), per_lane});
}

std::vector<UOpRef> LaneVectorizer::store(const std::vector<UOpRef>& ptrs, const UOpRef& vector) {
  if (consecutive(ptrs)) return {UOp::make(Ops::STORE, dtypes::void_, {ptrs[0], vector})};
  std::vector<UOpRef> out;
  for (size_t k = 0; k < ptrs.size(); ++k) {
    UOpRef lane = UOp::make(Ops::GEP, vector->dtype().base(), {vector}, Arg{int64_t(k)});
    out.push_back(UOp::make(Ops::STORE, dtypes::void_, {ptrs[k], lane}));
  }
  return out;
}

std::vector<UOpRef> LaneVectorizer::store_tile(const std::vector<std::vector<UOpRef>>& ptrs,
                                               const std::vector<UOpRef>& vectors) {
  const size_t groups = vectors.size();
  std::vector<UOpRef> out;
  auto plain = [&] {
    for (size_t g = 0; g < groups; ++g)
      for (auto& st : store(ptrs[g], vectors[g])) out.push_back(st);
    return out;
  };
  if (!lane_gates_ || groups < 4 ||
      std::any_of(ptrs.begin(), ptrs.end(), [](const auto& p) { return consecutive(p); }))
    return plain();
  const size_t lanes = ptrs[0].size();
  // runs of vectors along which every lane's pointer steps by one element (the same runs for all)
  std::vector<std::pair<size_t, size_t>> runs; // (first vector, count)
  for (size_t g = 0; g < groups; ++g) {
    bool continues = !runs.empty();
    for (size_t k = 0; k < lanes && continues; ++k) continues = distance(ptrs[g - 1][k], ptrs[g][k]) == 1;
    if (continues)
      ++runs.back().second;
    else
      runs.emplace_back(g, 1);
  }
  if (std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.second < 4; })) return plain();
  for (auto [first, count] : runs)
    for (size_t k = 0; k < lanes; ++k) {
      std::vector<UOpRef> values;
      for (size_t g = first; g < first + count; ++g)
        values.push_back(UOp::make(Ops::GEP, vectors[g]->dtype().base(), {vectors[g]}, Arg{int64_t(k)}));
      const DType dt = values[0]->dtype().vec(uint16_t(count));
      UOpRef row = UOp::make(Ops::VECTORIZE, dt, std::move(values));
      out.push_back(UOp::make(Ops::STORE, dtypes::void_, {ptrs[first][k], row}));
    }
  return out;
}

} // namespace tg
