#include "kernel/ir/evaluate.hpp"

#include "kernel/ir/alu.hpp"

namespace tg {

Evaluator::Evaluator(UOpRef root) : root_(std::move(root)), order_(toposort(root_)) {
  std::unordered_map<const UOp*, std::uint32_t> pos;
  for (std::uint32_t i = 0; i < order_.size(); ++i) pos[order_[i].get()] = i;
  src_index_.resize(order_.size());
  for (std::uint32_t i = 0; i < order_.size(); ++i)
    for (const auto& s : order_[i]->src()) src_index_[i].push_back(pos.at(s.get()));
}

ConstValue Evaluator::run(const Bindings& b, bool* overflowed) const {
  std::vector<ConstValue> val(order_.size());
  bool any_overflow = false;
  std::vector<ConstValue> args;
  for (std::size_t i = 0; i < order_.size(); ++i) {
    const UOp& u = *order_[i];
    if (auto it = b.by_node.find(&u); it != b.by_node.end()) {
      val[i] = normalize_const(u.dtype(), it->second);
      continue;
    }
    switch (u.op()) {
    case Ops::CONST:
      val[i] = u.const_value();
      continue;
    case Ops::DEFINE_VAR: {
      const VarArg& v = u.var_arg();
      auto it = b.by_name.find(v.name);
      if (it == b.by_name.end()) throw EvalError("evaluate: variable '" + v.name + "' is not bound");
      std::int64_t x = const_as_int(it->second);
      if (x < v.min || x > v.max)
        throw EvalError("evaluate: variable '" + v.name + "' = " + std::to_string(x) + " is outside [" +
                        std::to_string(v.min) + ", " + std::to_string(v.max) + "]");
      val[i] = normalize_const(u.dtype(), it->second);
      continue;
    }
    case Ops::BIND:
      val[i] = val[src_index_[i].at(1)];
      continue;
    case Ops::NOOP:
    case Ops::CONTIGUOUS:
    case Ops::DETACH:
      val[i] = val[src_index_[i].at(0)];
      continue;
    case Ops::SINK:
      val[i] = std::int64_t{0};
      continue;
    default:
      break;
    }
    if (!is_alu(u.op()) && u.op() != Ops::CAST && u.op() != Ops::BITCAST)
      throw EvalError("evaluate: cannot compute " + std::string(op_name(u.op())) + " (bind it by node)");
    args.clear();
    for (auto s : src_index_[i]) args.push_back(val[s]);
    DType in = u.op() == Ops::WHERE ? u.src(1)->dtype() : u.src(0)->dtype();
    auto r = exec_alu(u.op(), u.dtype(), in, args);
    if (!r)
      throw EvalError("evaluate: " + std::string(op_name(u.op())) + " is undefined here: " + u.render());
    any_overflow |= r->overflowed;
    val[i] = r->value;
  }
  if (overflowed) *overflowed = any_overflow;
  return val.back();
}

} // namespace tg
