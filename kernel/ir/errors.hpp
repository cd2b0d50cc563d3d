#pragma once
// Typed exceptions of the IR and shape rings; messages name the offending values.
#include <stdexcept>
#include <string>

namespace tg {

// Root of every error tinygrad.cpp throws; outer rings derive their own (see runtime/errors.hpp).
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct IRError : Error {
  using Error::Error;
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
struct ShapeError : Error {
  using Error::Error;
};
// A dtype that an operation cannot take (e.g. a bitwise op on floats), or an unknown dtype code.
struct DTypeError : Error {
  using Error::Error;
};

} // namespace tg
