#pragma once
// UOp: the immutable, interned IR node (op, dtype, sources, arg). Building a node with the same
// fields twice gives the same object, so equality is pointer equality and memoizing is cheap.
// The intern table holds weak references: a node lives exactly as long as someone holds it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "kernel/ir/alu.hpp"
#include "kernel/ir/dtype.hpp"
#include "kernel/ir/errors.hpp"
#include "kernel/ir/ops.hpp"

namespace tg {

class UOp;
using UOpRef = std::shared_ptr<const UOp>;

// DEFINE_VAR's arg: a named integer with inclusive bounds.
struct VarArg {
  std::string name;
  std::int64_t min = 0, max = 0;
  bool operator==(const VarArg&) const = default;
};
// REDUCE_AXIS's arg: the combining op (ADD = sum, MAX = max) and the reduced axes.
struct ReduceArg {
  Ops op = Ops::ADD;
  std::vector<std::int64_t> axes;
  bool operator==(const ReduceArg&) const = default;
};
// Args owned by outer rings (a ShapeTracker in VIEW); the IR only hashes, compares and prints them.
class OpaqueArg {
public:
  virtual ~OpaqueArg() = default;
  virtual std::size_t hash() const = 0;
  virtual bool equals(const OpaqueArg& other) const = 0;
  virtual std::string str() const = 0;
  // Non-empty where args of this kind, on expressions of equal structure, do the same whichever
  // arg it is (kernel/schedule/structure.hpp, OpaqueKeying::Kind); empty: which arg matters.
  virtual std::string_view structural_kind() const { return {}; }
};
using OpaqueArgRef = std::shared_ptr<const OpaqueArg>;

using Arg = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                         VarArg, ReduceArg, OpaqueArgRef>;
bool arg_equal(const Arg& a, const Arg& b); // doubles compare by bits, so NaN constants intern
std::size_t arg_hash(const Arg& a);
std::string arg_str(const Arg& a); // tinygrad style: 3, 1.5, True, 'x', (0, 1), ('x', 0, 10)

class UOp {
  struct Passkey {
    explicit Passkey() = default;
  };

public:
  UOp(Passkey, Ops op, DType dtype, std::vector<UOpRef> src, Arg arg, std::size_t hash);
  ~UOp();
  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

  // The one way to build a node: returns the interned node for these fields.
  static UOpRef make(Ops op, DType dtype, std::vector<UOpRef> src = {}, Arg arg = {});
  static UOpRef constant(DType dt, ConstValue v);
  static UOpRef variable(std::string name, std::int64_t min, std::int64_t max, DType dt = dtypes::index);
  static UOpRef range(const UOpRef& end, std::int64_t id, DType dt = dtypes::index); // 0 <= r < end
  static UOpRef range(std::int64_t end, std::int64_t id, DType dt = dtypes::index);
  static UOpRef sink(std::vector<UOpRef> src) { return make(Ops::SINK, dtypes::void_, std::move(src)); }

  Ops op() const { return op_; }
  DType dtype() const { return dtype_; }
  const std::vector<UOpRef>& src() const { return src_; }
  const UOpRef& src(std::size_t i) const { return src_.at(i); }
  const Arg& arg() const { return arg_; }
  std::size_t hash() const { return hash_; }

  bool is_const() const { return op_ == Ops::CONST; }
  ConstValue const_value() const; // throws UOpError unless CONST
  std::int64_t arg_int() const;   // throws UOpError unless the arg is an int64
  const VarArg& var_arg() const;  // DEFINE_VAR's arg
  template <class T> const T* arg_if() const { return std::get_if<T>(&arg_); }

  // Inclusive value bounds from range analysis (ints and bool; floats report the int64 extremes).
  // Computed once, when the node is built, from the sources' bounds.
  std::int64_t vmin() const { return vmin_; }
  std::int64_t vmax() const { return vmax_; }

  std::string str() const;    // tinygrad's repr, repeated subtrees shared as `x0:=`
  std::string render() const; // compact infix form for messages: "((x*4)+3)"

  static std::size_t live_count(); // interned nodes alive now

  // A mark for a cache above the IR that keys its entries by node (the tensor layer's realized
  // values): set when it first keys an entry on this node, never cleared. A node never marked has
  // no entry, so a lookup answers without the cache's lock (one per operand of every tensor op).
  void mark_keyed() const { keyed_.store(true, std::memory_order_release); }
  bool keyed() const { return keyed_.load(std::memory_order_acquire); }

private:
  friend struct UOpInternals;
  Ops op_;
  DType dtype_;
  std::vector<UOpRef> src_;
  Arg arg_;
  std::size_t hash_;
  std::int64_t vmin_ = 0, vmax_ = 0;
  mutable std::atomic<bool> keyed_{false};
};

// Builds a node of the same dtype holding value v.
UOpRef const_like(const UOpRef& like, ConstValue v);
// Children-before-parents order of every node reachable from root (each once).
std::vector<UOpRef> toposort(const UOpRef& root);
// Graph exports for viewers: Graphviz DOT and a JSON node list (ids in toposort order).
std::string to_dot(const UOpRef& root);
std::string to_json(const UOpRef& root);
// The same node with some sources replaced (interned as usual).
UOpRef replace_src(const UOpRef& u, std::vector<UOpRef> new_src);
// `root` with every use of each `from` node replaced by its `to` (a replaced node's own sources are
// not visited for it).
UOpRef substitute(const UOpRef& root, const std::vector<std::pair<const UOp*, UOpRef>>& replacements);
inline UOpRef substitute(const UOpRef& root, const UOp* from, const UOpRef& to) {
  return substitute(root, {{from, to}});
}
// True when `node` is reachable from `root` (root itself included).
bool depends_on(const UOpRef& root, const UOp* node);
// Every DEFINE_VAR reachable from root.
std::vector<UOpRef> variables(const UOpRef& root);

// ---- builders: elementwise ops with tinygrad's dtype rules ----
UOpRef alu(Ops op, std::vector<UOpRef> src); // result dtype: bool for comparisons, else src[0]'s
UOpRef cast(const UOpRef& x, DType dt);
UOpRef bitcast(const UOpRef& x, DType dt);
UOpRef where(const UOpRef& cond, const UOpRef& a, const UOpRef& b);
UOpRef lt(const UOpRef& a, const UOpRef& b);
UOpRef ne(const UOpRef& a, const UOpRef& b);
UOpRef eq(const UOpRef& a, const UOpRef& b);
UOpRef maximum(const UOpRef& a, const UOpRef& b);
UOpRef idiv(const UOpRef& a, const UOpRef& b);
UOpRef logical_not(const UOpRef& x); // x != true

UOpRef operator+(const UOpRef& a, const UOpRef& b);
UOpRef operator-(const UOpRef& a, const UOpRef& b);
UOpRef operator*(const UOpRef& a, const UOpRef& b);
UOpRef operator/(const UOpRef& a, const UOpRef& b); // IDIV for ints (truncating), FDIV for floats
UOpRef operator%(const UOpRef& a, const UOpRef& b);
UOpRef operator&(const UOpRef& a, const UOpRef& b);
UOpRef operator|(const UOpRef& a, const UOpRef& b);
UOpRef operator^(const UOpRef& a, const UOpRef& b);
UOpRef operator-(const UOpRef& a);

// Mixed with plain numbers: the number becomes a constant of the node's dtype.
template <class T>
concept Number = std::is_arithmetic_v<T>;
inline ConstValue to_const_value(bool v) { return v; }
template <Number T> ConstValue to_const_value(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v;
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(v);
  else
    return static_cast<std::int64_t>(v);
}
#define TG_UOP_NUMBER_OPS(OP)                                                                                \
  template <Number T> UOpRef operator OP(const UOpRef& a, T b) {                                             \
    return a OP const_like(a, to_const_value(b));                                                            \
  }                                                                                                          \
  template <Number T> UOpRef operator OP(T a, const UOpRef& b) {                                             \
    return const_like(b, to_const_value(a)) OP b;                                                            \
  }
TG_UOP_NUMBER_OPS(+)
TG_UOP_NUMBER_OPS(-)
TG_UOP_NUMBER_OPS(*)
TG_UOP_NUMBER_OPS(/)
TG_UOP_NUMBER_OPS(%)
#undef TG_UOP_NUMBER_OPS
template <Number T> UOpRef lt(const UOpRef& a, T b) { return lt(a, const_like(a, to_const_value(b))); }
template <Number T> UOpRef ne(const UOpRef& a, T b) { return ne(a, const_like(a, to_const_value(b))); }

} // namespace tg
