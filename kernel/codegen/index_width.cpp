#include "kernel/codegen/index_width.hpp"

#include <cstdint>
#include <limits>

namespace tg {

namespace {

bool wide(DType d) { return d.scalar == Scalar::Int64 && !d.ptr; }

DType narrow_dtype(DType d) { return DType{Scalar::Int32, d.count}; }

bool fits_int32(const UOpRef& u) {
  return u->vmin() >= std::numeric_limits<int32_t>::min() && u->vmax() <= std::numeric_limits<int32_t>::max();
}

// Ops whose int32 result equals the int64 one whenever the operands and the result fit in int32.
// Not MULACC (its product may overflow while the sum fits), shifts (an int32 shift by 32..63 is
// undefined), loads, variables or accumulators (their dtype is the buffer's or the host's).
bool exact_in_int32(Ops op) {
  switch (op) {
  case Ops::CONST:
  case Ops::RANGE:
  case Ops::SPECIAL:
  case Ops::CAST:
  case Ops::ADD:
  case Ops::SUB:
  case Ops::MUL:
  case Ops::NEG:
  case Ops::IDIV:
  case Ops::MOD:
  case Ops::MAX:
  case Ops::AND:
  case Ops::OR:
  case Ops::XOR:
  case Ops::WHERE:
    return true;
  default:
    return false;
  }
}

} // namespace

UOpRef IndexNarrower::operator()(const UOpRef& u) {
  if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
  std::vector<UOpRef> src;
  bool changed = false, wide_srcs_narrowed = true;
  for (const auto& s : u->src()) {
    UOpRef n = (*this)(s);
    changed |= n != s;
    if (wide(s->dtype()) && wide(n->dtype())) wide_srcs_narrowed = false;
    src.push_back(std::move(n));
  }
  const Ops op = u->op();
  UOpRef out;
  // Vector lanes carry no bounds: a VECTORIZE of narrowed lanes (and a lane of it) is narrow too.
  const bool lanes_narrow = (op == Ops::VECTORIZE || op == Ops::GEP) && wide_srcs_narrowed && !src.empty() &&
                            !wide(src[0]->dtype());
  // A CAST to int64 narrows only from int32 (the work-group id, an index narrowed below it): from
  // a smaller type it is data, which an int32 detour would only lengthen.
  const bool cast_from_int32 = op == Ops::CAST && src[0]->dtype() == dtypes::int32;
  if (wide(u->dtype()) && wide_srcs_narrowed && (op != Ops::CAST || cast_from_int32) &&
      (lanes_narrow || (u->dtype().count == 1 && exact_in_int32(op) && fits_int32(u)))) {
    if (op == Ops::CONST)
      out = UOp::constant(dtypes::int32, u->const_value());
    else if (cast_from_int32)
      out = src[0];
    else
      out = UOp::make(op, narrow_dtype(u->dtype()), std::move(src), u->arg());
  } else if (!changed) {
    out = u;
  } else {
    // u stays as it is; operands that became int32 are widened back where u needs int64. An
    // INDEX takes any integer, a CAST converts the same value, a REDUCE names its loops, and a
    // comparison of two narrowed operands compares them in int32.
    const bool keeps_narrow =
        op == Ops::INDEX || op == Ops::CAST || (is_comparison(op) && wide_srcs_narrowed);
    for (size_t i = 0; i < src.size(); ++i) {
      const UOpRef& old = u->src(i);
      if (keeps_narrow || (op == Ops::REDUCE && i > 0) || !wide(old->dtype()) || wide(src[i]->dtype()))
        continue;
      src[i] = old->op() == Ops::CONST ? old : UOp::make(Ops::CAST, old->dtype(), {src[i]});
    }
    // a CAST of a now-narrow value to int32 (an iota's tensor dtype) is that value
    out = op == Ops::CAST && src[0]->dtype() == u->dtype()
              ? src[0]
              : UOp::make(op, u->dtype(), std::move(src), u->arg());
  }
  keep_alive_.push_back(u);
  memo_.emplace(u.get(), out);
  return out;
}

} // namespace tg
