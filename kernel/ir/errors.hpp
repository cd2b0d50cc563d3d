#pragma once
// Typed exceptions of the IR and shape rings; messages name the offending values.
#include <stdexcept>
#include <string>

namespace tg {

struct IRError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// graph_rewrite met a cycle of rewrites (a -> b -> a) or did not reach a fixed point.
struct RewriteLoopError : IRError {
  using IRError::IRError;
};
// A UOp was built with sources or an arg its op cannot take.
struct UOpError : IRError {
  using IRError::IRError;
};
// evaluate() met something it cannot compute (unbound variable, division by zero, ...).
struct EvalError : IRError {
  using IRError::IRError;
};
// Invalid movement-op arguments (reshape size mismatch, bad permutation, negative pad ...).
struct ShapeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

}  // namespace tg
