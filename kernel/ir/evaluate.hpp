#pragma once
// Reference evaluator: computes a UOp expression for given variable values with exactly the
// semantics of constant folding (kernel/ir/alu.hpp). Used by tests to check rewrites and index
// expressions, and by codegen tests later.
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel/ir/uop.hpp"

namespace tg {

struct Bindings {
  std::unordered_map<std::string, ConstValue> by_name; // DEFINE_VAR values, by variable name
  std::unordered_map<const UOp*, ConstValue> by_node;  // any node: RANGE, SPECIAL, LOAD ...
  Bindings& set(const std::string& name, ConstValue v) {
    by_name[name] = v;
    return *this;
  }
  Bindings& set(const UOpRef& node, ConstValue v) {
    by_node[node.get()] = v;
    return *this;
  }
};

// Compiles the expression once (topological order) and evaluates it for many bindings.
class Evaluator {
public:
  explicit Evaluator(UOpRef root);
  // Throws EvalError for an unbound or out-of-bounds variable, division by zero, or an op it
  // cannot compute. *overflowed (if given) reports whether any integer op wrapped.
  ConstValue run(const Bindings& b, bool* overflowed = nullptr) const;
  const UOpRef& root() const { return root_; }

private:
  UOpRef root_;
  std::vector<UOpRef> order_;
  std::vector<std::vector<std::uint32_t>> src_index_;
};

inline ConstValue evaluate(const UOpRef& root, const Bindings& b, bool* overflowed = nullptr) {
  return Evaluator(root).run(b, overflowed);
}

} // namespace tg
