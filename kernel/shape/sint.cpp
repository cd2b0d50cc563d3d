#include "kernel/shape/sint.hpp"

#include <ostream>

#include "kernel/ir/symbolic.hpp"

namespace tg {

SInt::SInt(UOpRef u) {
  if (u && u->is_const()) {
    value_ = const_as_int(u->const_value());
    return;
  }
  uop_ = std::move(u);
}

std::int64_t SInt::value() const {
  if (uop_) throw ShapeError("symbolic dimension " + uop_->render() + " used where an integer is required");
  return value_;
}

UOpRef SInt::to_uop() const { return uop_ ? uop_ : index_const(value_); }

UOpRef SInt::to_uop(DType dt) const {
  if (!uop_) {
    // A constant that dt cannot hold would wrap (an offset past 2^31 in int32): refuse it loudly.
    if (dt.is_int() && dt.scalar != Scalar::UInt64 && (value_ < dt.int_min() || value_ > dt.int_max()))
      throw ShapeError("index constant " + std::to_string(value_) + " does not fit " + dt.name());
    return UOp::constant(dt, value_);
  }
  return uop_->dtype() == dt ? uop_ : UOp::make(Ops::CAST, dt, {uop_});
}

std::string SInt::str() const { return uop_ ? uop_->render() : std::to_string(value_); }

SInt operator+(const SInt& a, const SInt& b) {
  if (a.is_int() && b.is_int()) return a.value_ + b.value_;
  if (a == 0) return b;
  if (b == 0) return a;
  return SInt(simplify(a.to_uop() + b.to_uop()));
}
SInt operator-(const SInt& a, const SInt& b) {
  if (a.is_int() && b.is_int()) return a.value_ - b.value_;
  if (b == 0) return a;
  return SInt(simplify(a.to_uop() - b.to_uop()));
}
SInt operator*(const SInt& a, const SInt& b) {
  if (a.is_int() && b.is_int()) return a.value_ * b.value_;
  if (a == 1) return b;
  if (b == 1) return a;
  if (a == 0 || b == 0) return 0;
  return SInt(simplify(a.to_uop() * b.to_uop()));
}
SInt floordiv(const SInt& a, const SInt& b) {
  if (a.is_int() && b.is_int()) {
    if (b.value_ == 0) throw ShapeError("division of a shape by zero");
    std::int64_t q = a.value_ / b.value_;
    return (a.value_ % b.value_ != 0 && ((a.value_ < 0) != (b.value_ < 0))) ? q - 1 : q;
  }
  if (b == 1) return a;
  return SInt(simplify(idiv(a.to_uop(), b.to_uop())));
}
SInt smin(const SInt& a, const SInt& b) {
  if (a.vmax() <= b.vmin()) return a;
  if (b.vmax() <= a.vmin()) return b;
  return SInt(simplify(-maximum(-a.to_uop(), -b.to_uop())));
}
SInt smax(const SInt& a, const SInt& b) {
  if (a.vmin() >= b.vmax()) return a;
  if (b.vmin() >= a.vmax()) return b;
  return SInt(simplify(maximum(a.to_uop(), b.to_uop())));
}

bool all_int(const Shape& s) {
  for (const auto& d : s)
    if (!d.is_int()) return false;
  return true;
}

SInt prod(const Shape& s) {
  SInt p = 1;
  for (const auto& d : s) p = p * d;
  return p;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].str();
  return out + (s.size() == 1 ? ",)" : ")");
}

std::ostream& operator<<(std::ostream& os, const SInt& s) { return os << s.str(); }

} // namespace tg
