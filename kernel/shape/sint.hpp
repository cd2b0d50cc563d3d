#pragma once
// SInt: a shape quantity that is either a plain integer or a symbolic index expression (a UOp of
// the index dtype, e.g. a variable batch size). Arithmetic folds integers and builds UOps otherwise.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kernel/ir/uop.hpp"

namespace tg {

class SInt {
public:
  SInt(std::int64_t v = 0) : value_(v) {} // NOLINT: plain ints are the common case
  SInt(int v) : value_(v) {}              // NOLINT
  SInt(UOpRef u);                         // NOLINT: a constant UOp becomes a plain int

  bool is_int() const { return !uop_; }
  std::int64_t value() const; // throws ShapeError when symbolic
  const UOpRef& uop() const { return uop_; }
  UOpRef to_uop() const; // a CONST of the index dtype for ints
  // The same in dtype dt (codegen builds index math in int64): symbolic values are cast.
  UOpRef to_uop(DType dt) const;
  std::int64_t vmin() const { return uop_ ? uop_->vmin() : value_; }
  std::int64_t vmax() const { return uop_ ? uop_->vmax() : value_; }
  std::string str() const;

  // Structural equality: equal ints, or the same (interned) expression.
  bool operator==(const SInt& o) const {
    return is_int() ? o.is_int() && value_ == o.value_ : uop_ == o.uop_;
  }
  bool operator==(std::int64_t v) const { return is_int() && value_ == v; }

  friend SInt operator+(const SInt& a, const SInt& b);
  friend SInt operator-(const SInt& a, const SInt& b);
  friend SInt operator*(const SInt& a, const SInt& b);
  friend SInt floordiv(const SInt& a, const SInt& b); // for non-negative a
  friend SInt smin(const SInt& a, const SInt& b);
  friend SInt smax(const SInt& a, const SInt& b);

private:
  std::int64_t value_ = 0;
  UOpRef uop_;
};

using Shape = std::vector<SInt>;
bool all_int(const Shape& s);
SInt prod(const Shape& s);
std::string shape_str(const Shape& s); // "(2, 3, n)"
std::ostream& operator<<(std::ostream& os, const SInt& s);

} // namespace tg
