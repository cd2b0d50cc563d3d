#pragma once
// Symbolic simplification as PatternMatchers: constant folding (C semantics for ints, IEEE for
// floats), algebraic identities, constant combining, and the range-analysis (vmin/vmax) driven
// div/mod/comparison folding that index arithmetic needs.
//
// Contract: integer rules assume index arithmetic does not overflow (as tinygrad does). Rules that
// only reassociate + - * are exact under wrapping too; division, modulo and comparison folds rely
// on the absence of overflow in the original expression.
#include "kernel/ir/rewrite.hpp"

namespace tg {

// Constant folding and identities only: never changes the shape of an expression much.
const PatternMatcher& symbolic_simple();
// Everything: symbolic_simple() plus canonical forms, term combining, div/mod and comparison folds.
const PatternMatcher& symbolic();

// graph_rewrite(u, symbolic()).
UOpRef simplify(const UOpRef& u);

// Helpers for index arithmetic: a constant of the index dtype, and shape-style floor division
// (C truncation equals floor when the dividend is non-negative, as indices are).
UOpRef index_const(std::int64_t v);

} // namespace tg
