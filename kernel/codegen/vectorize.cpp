#include "kernel/codegen/vectorize.hpp"

#include "kernel/ir/symbolic.hpp"

namespace tg {

namespace {

// True when ptrs (INDEX nodes) address consecutive elements of one buffer, in order.
bool consecutive(const std::vector<UOpRef>& ptrs) {
  if (ptrs.empty() || ptrs[0]->op() != Ops::INDEX) return false;
  const UOpRef& base = ptrs[0];
  for (size_t k = 1; k < ptrs.size(); ++k) {
    const UOpRef& p = ptrs[k];
    if (p->op() != Ops::INDEX || p->src(0) != base->src(0)) return false;
    // lanes narrowed to different index widths (near 2^31) are not compared: stored per lane
    if (p->src(1)->dtype() != base->src(1)->dtype()) return false;
    // exact: the index difference must simplify to the constant k (else treat as a gather)
    UOpRef diff = simplify(p->src(1) - base->src(1));
    if (diff->op() != Ops::CONST || std::get<int64_t>(diff->const_value()) != int64_t(k)) return false;
  }
  return true;
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
  if (same) {
    out = broadcast(first, n);
  } else if (!alike || first->dtype().count != 1) {
    out = pack(lanes);
  } else if (op == Ops::LOAD && first->src().size() == 1) {
    std::vector<UOpRef> ptrs;
    for (const auto& l : lanes) ptrs.push_back(l->src(0));
    out = consecutive(ptrs) ? UOp::make(Ops::LOAD, first->dtype().vec(uint16_t(n)), {ptrs[0]}) : pack(lanes);
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

std::vector<UOpRef> LaneVectorizer::store(const std::vector<UOpRef>& ptrs, const UOpRef& vector) {
  if (consecutive(ptrs)) return {UOp::make(Ops::STORE, dtypes::void_, {ptrs[0], vector})};
  std::vector<UOpRef> out;
  for (size_t k = 0; k < ptrs.size(); ++k) {
    UOpRef lane = UOp::make(Ops::GEP, vector->dtype().base(), {vector}, Arg{int64_t(k)});
    out.push_back(UOp::make(Ops::STORE, dtypes::void_, {ptrs[k], lane}));
  }
  return out;
}

} // namespace tg
