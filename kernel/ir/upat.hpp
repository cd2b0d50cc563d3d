#pragma once
// UPat: a pattern over UOps. Matches by op set, dtype, arg, predicate and source patterns (fixed
// order, any order for commutative ops, or one pattern repeated for every source), capturing
// nodes by name. A name used twice must bind the same node (so `x - x` matches only a node minus
// itself).
#include <bitset>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/ir/uop.hpp"

namespace tg {

using OpSet = std::bitset<kOpCount>;
OpSet op_set(std::initializer_list<Ops> ops);
OpSet alu_ops(); // every op with the kOpAlu trait

// The nodes a pattern bound, by name, plus the caller's context pointer from graph_rewrite.
class Captures {
public:
  const UOpRef& operator[](std::string_view name) const; // throws std::out_of_range naming it
  const UOpRef* find(std::string_view name) const;
  void* ctx = nullptr;

  // Used by the matcher.
  std::size_t size() const { return items_.size(); }
  void truncate(std::size_t n) { items_.resize(n); }
  void push(const std::string* name, const UOpRef& u) { items_.emplace_back(name, u); }

private:
  std::vector<std::pair<const std::string*, UOpRef>> items_;
};

class UPat {
public:
  enum class SrcMode : std::uint8_t { Any, Fixed, AnyOrder, Repeat };

  UPat() = default;
  // Matches a node whose op is in `ops` (empty set = any op).
  explicit UPat(OpSet ops, std::string name = {});
  UPat(Ops op, std::vector<UPat> src, std::string name = {});

  static UPat any(std::string name = {}) { return UPat(OpSet{}, std::move(name)); }
  static UPat var(std::string name = {}, std::optional<DType> dt = std::nullopt);
  static UPat cvar(std::string name = {}, std::optional<DType> dt = std::nullopt); // a CONST
  static UPat constant(ConstValue v, std::optional<DType> dt = std::nullopt);      // CONST with this value
  static UPat op(Ops op, std::string name = {}) { return UPat(op_set({op}), std::move(name)); }

  // Chainable refinements (each returns a modified copy).
  UPat named(std::string name) const;
  UPat dtype(DType dt) const;                // exact dtype
  UPat dtypes(std::vector<DType> dts) const; // any of these
  UPat int_like() const;                     // ints and bool
  UPat arg(Arg a) const;
  UPat where(std::function<bool(const UOpRef&)> pred) const;
  UPat src(std::vector<UPat> s) const;           // fixed order
  UPat src_any_order(std::vector<UPat> s) const; // any permutation
  UPat src_repeat(UPat each) const;              // every source matches `each`
  UPat allow_any_len() const;                    // fixed sources are a prefix

  const OpSet& ops() const { return ops_; }
  bool matches_any_op() const { return ops_.none(); }
  const std::string& name() const { return name_; }

  // Calls `found` for each way the pattern matches u (captures extended) until it returns true.
  bool match(const UOpRef& u, Captures& caps, const std::function<bool()>& found) const;

private:
  template <class K> bool match_impl(const UOpRef& u, Captures& caps, const K& found) const;

  OpSet ops_;
  std::vector<DType> dtypes_;
  std::optional<Arg> arg_;
  std::function<bool(const UOpRef&)> pred_;
  std::string name_;
  SrcMode mode_ = SrcMode::Any;
  bool allow_any_len_ = false;
  std::vector<UPat> src_;
};

// Pattern arithmetic mirrors UOp arithmetic; commutative ops match their sources in any order.
UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator%(const UPat& a, const UPat& b);
UPat idiv(const UPat& a, const UPat& b);
UPat lt(const UPat& a, const UPat& b);
UPat ne(const UPat& a, const UPat& b);
UPat maximum(const UPat& a, const UPat& b);
UPat where(const UPat& c, const UPat& a, const UPat& b);
UPat alu(Ops op, std::vector<UPat> src);

} // namespace tg
