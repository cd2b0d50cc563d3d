#include "kernel/ir/upat.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace tg {
namespace {

// A non-owning reference to a `bool()` callable: continuations live on the caller's stack, so
// matching allocates nothing.
class Cont {
public:
  template <class F>
  Cont(const F& f) : obj_(&f), call_([](const void* o) { return (*static_cast<const F*>(o))(); }) {} // NOLINT
  bool operator()() const { return call_(obj_); }

private:
  const void* obj_;
  bool (*call_)(const void*);
};

} // namespace

OpSet op_set(std::initializer_list<Ops> ops) {
  OpSet s;
  for (Ops o : ops) s.set(static_cast<std::size_t>(o));
  return s;
}

OpSet alu_ops() {
  OpSet s;
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (kOpTable[i].traits & kOpAlu) s.set(i);
  return s;
}

const UOpRef* Captures::find(std::string_view name) const {
  for (const auto& [n, u] : items_)
    if (*n == name) return &u;
  return nullptr;
}

const UOpRef& Captures::operator[](std::string_view name) const {
  if (const UOpRef* u = find(name)) return *u;
  throw std::out_of_range("pattern captured no node named '" + std::string(name) + "'");
}

UPat::UPat(OpSet ops, std::string name) : ops_(ops), name_(std::move(name)) {}
UPat::UPat(Ops op, std::vector<UPat> src, std::string name)
    : ops_(op_set({op})), name_(std::move(name)), mode_(SrcMode::Fixed), src_(std::move(src)) {}

UPat UPat::var(std::string name, std::optional<DType> dt) {
  UPat p = any(std::move(name));
  if (dt) p.dtypes_ = {*dt};
  return p;
}
UPat UPat::cvar(std::string name, std::optional<DType> dt) {
  UPat p = op(Ops::CONST, std::move(name));
  if (dt) p.dtypes_ = {*dt};
  return p;
}
UPat UPat::constant(ConstValue v, std::optional<DType> dt) {
  UPat p = op(Ops::CONST);
  if (dt) p.dtypes_ = {*dt};
  // Compares by value whatever the constant's dtype: ints against ints, floats against floats.
  p.pred_ = [v](const UOpRef& u) {
    ConstValue c = u->const_value();
    if (u->dtype().is_float()) return const_as_double(u->dtype(), c) == const_as_double(dtypes::float64, v);
    return const_as_int(c) == const_as_int(v);
  };
  return p;
}

UPat UPat::named(std::string name) const {
  UPat p = *this;
  p.name_ = std::move(name);
  return p;
}
UPat UPat::dtype(DType dt) const { return dtypes({dt}); }
UPat UPat::dtypes(std::vector<DType> dts) const {
  UPat p = *this;
  p.dtypes_ = std::move(dts);
  return p;
}
UPat UPat::int_like() const {
  return dtypes({dtypes::bool_, dtypes::int8, dtypes::uint8, dtypes::int16, dtypes::uint16, dtypes::int32,
                 dtypes::uint32, dtypes::int64, dtypes::uint64});
}
UPat UPat::arg(Arg a) const {
  UPat p = *this;
  p.arg_ = std::move(a);
  return p;
}
UPat UPat::where(std::function<bool(const UOpRef&)> pred) const {
  UPat p = *this;
  if (p.pred_) {
    auto prev = p.pred_;
    p.pred_ = [prev, pred](const UOpRef& u) { return prev(u) && pred(u); };
  } else {
    p.pred_ = std::move(pred);
  }
  return p;
}
UPat UPat::src(std::vector<UPat> s) const {
  UPat p = *this;
  p.mode_ = SrcMode::Fixed;
  p.src_ = std::move(s);
  return p;
}
UPat UPat::src_any_order(std::vector<UPat> s) const {
  UPat p = *this;
  p.mode_ = SrcMode::AnyOrder;
  p.src_ = std::move(s);
  return p;
}
UPat UPat::src_repeat(UPat each) const {
  UPat p = *this;
  p.mode_ = SrcMode::Repeat;
  p.src_ = {std::move(each)};
  return p;
}
UPat UPat::allow_any_len() const {
  UPat p = *this;
  p.allow_any_len_ = true;
  return p;
}

template <class K> bool UPat::match_impl(const UOpRef& u, Captures& caps, const K& found) const {
  if (ops_.any() && !ops_.test(static_cast<std::size_t>(u->op()))) return false;
  if (!dtypes_.empty() && std::find(dtypes_.begin(), dtypes_.end(), u->dtype()) == dtypes_.end())
    return false;
  if (arg_ && !arg_equal(*arg_, u->arg())) return false;
  const std::size_t mark = caps.size();
  if (!name_.empty()) {
    if (const UOpRef* prev = caps.find(name_)) {
      if (prev->get() != u.get()) return false;
    } else {
      caps.push(&name_, u);
    }
  }
  if (pred_ && !pred_(u)) {
    caps.truncate(mark);
    return false;
  }
  const auto& us = u->src();
  bool ok = false;
  switch (mode_) {
  case SrcMode::Any:
    ok = found();
    break;
  case SrcMode::Fixed: {
    if (us.size() < src_.size() || (!allow_any_len_ && us.size() != src_.size())) break;
    auto seq = [&](auto& self, std::size_t i) -> bool {
      if (i == src_.size()) return found();
      auto next = [&] { return self(self, i + 1); };
      return src_[i].match_impl(us[i], caps, Cont(next));
    };
    ok = seq(seq, 0);
    break;
  }
  case SrcMode::AnyOrder: {
    if (us.size() != src_.size()) break;
    std::vector<std::size_t> perm(us.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      auto seq = [&](auto& self, std::size_t i) -> bool {
        if (i == src_.size()) return found();
        auto next = [&] { return self(self, i + 1); };
        return src_[i].match_impl(us[perm[i]], caps, Cont(next));
      };
      ok = seq(seq, 0);
    } while (!ok && std::next_permutation(perm.begin(), perm.end()));
    break;
  }
  case SrcMode::Repeat: {
    auto seq = [&](auto& self, std::size_t i) -> bool {
      if (i == us.size()) return found();
      auto next = [&] { return self(self, i + 1); };
      return src_[0].match_impl(us[i], caps, Cont(next));
    };
    ok = seq(seq, 0);
    break;
  }
  }
  if (!ok) caps.truncate(mark);
  return ok;
}

bool UPat::match(const UOpRef& u, Captures& caps, const std::function<bool()>& found) const {
  auto k = [&] { return found(); };
  return match_impl(u, caps, Cont(k));
}

UPat alu(Ops op, std::vector<UPat> src) {
  UPat p = UPat::op(op);
  return is_commutative(op) ? p.src_any_order(std::move(src)) : p.src(std::move(src));
}
UPat operator+(const UPat& a, const UPat& b) { return alu(Ops::ADD, {a, b}); }
UPat operator-(const UPat& a, const UPat& b) { return alu(Ops::SUB, {a, b}); }
UPat operator*(const UPat& a, const UPat& b) { return alu(Ops::MUL, {a, b}); }
UPat operator%(const UPat& a, const UPat& b) { return alu(Ops::MOD, {a, b}); }
UPat idiv(const UPat& a, const UPat& b) { return alu(Ops::IDIV, {a, b}); }
UPat lt(const UPat& a, const UPat& b) { return alu(Ops::CMPLT, {a, b}); }
UPat ne(const UPat& a, const UPat& b) { return alu(Ops::CMPNE, {a, b}); }
UPat maximum(const UPat& a, const UPat& b) { return alu(Ops::MAX, {a, b}); }
UPat where(const UPat& c, const UPat& a, const UPat& b) { return alu(Ops::WHERE, {c, a, b}); }

} // namespace tg
