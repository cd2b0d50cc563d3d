#pragma once
// The op table, declared once. Everything about an op (its printed name, category, arity, traits,
// ABI code) derives from the X-macro below; add an op by adding one line.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>

#include "tg/abi.h"

namespace tg {

enum class OpCategory : std::uint8_t { Unary, Binary, Ternary, Reduce, Movement, Buffer, Control, Meta };

// Trait bits.
inline constexpr unsigned kOpAlu = 1u << 0;         // elementwise math (GroupOp.ALU)
inline constexpr unsigned kOpCommutative = 1u << 1; // f(a,b) == f(b,a)
inline constexpr unsigned kOpAssociative = 1u << 2; // f(f(a,b),c) == f(a,f(b,c))
inline constexpr unsigned kOpComparison = 1u << 3;  // result is bool
inline constexpr unsigned kOpIdempotent = 1u << 4;  // f(a,a) == a
inline constexpr unsigned kOpIntOnly = 1u << 5;     // defined on integers (and bool) only
inline constexpr unsigned kOpFloatOnly = 1u << 6;   // transcendental / float division

inline constexpr int kAnyArity = -1;
inline constexpr tg_op kNoAbiOp = 0;

// X(NAME, category, arity, traits, ABI code)
#define TG_OPS(X)                                                                                            \
  /* meta: graph structure, no computation */                                                                \
  X(NOOP, Meta, kAnyArity, 0, kNoAbiOp)                                                                      \
  X(SINK, Meta, kAnyArity, 0, kNoAbiOp)                                                                      \
  X(UNIQUE, Meta, 0, 0, kNoAbiOp)                                                                            \
  X(DEVICE, Meta, 0, 0, kNoAbiOp)                                                                            \
  X(VIEW, Meta, kAnyArity, 0, kNoAbiOp)                                                                      \
  X(CONTIGUOUS, Meta, 1, 0, kNoAbiOp)                                                                        \
  X(DETACH, Meta, 1, 0, kNoAbiOp)                                                                            \
  X(COPY, Meta, kAnyArity, 0, kNoAbiOp)                                                                      \
  X(BIND, Meta, 2, 0, kNoAbiOp)                                                                              \
  X(KERNEL, Meta, kAnyArity, 0, kNoAbiOp)                                                                    \
  X(VECTORIZE, Meta, kAnyArity, 0, TG_OP_VECTORIZE)                                                          \
  X(GEP, Meta, 1, 0, TG_OP_GEP)                                                                              \
  /* buffers, definitions and memory */                                                                      \
  X(BUFFER, Buffer, kAnyArity, 0, kNoAbiOp)                                                                  \
  X(BUFFER_VIEW, Buffer, 1, 0, kNoAbiOp)                                                                     \
  X(CONST, Buffer, 0, 0, TG_OP_CONST)                                                                        \
  X(DEFINE_GLOBAL, Buffer, 0, 0, TG_OP_DEFINE_GLOBAL)                                                        \
  X(DEFINE_VAR, Buffer, 0, 0, TG_OP_DEFINE_VAR)                                                              \
  X(DEFINE_LOCAL, Buffer, 0, 0, TG_OP_DEFINE_LOCAL)                                                          \
  X(DEFINE_REG, Buffer, kAnyArity, 0, TG_OP_DEFINE_ACC)                                                      \
  X(INDEX, Buffer, kAnyArity, 0, TG_OP_INDEX)                                                                \
  X(LOAD, Buffer, kAnyArity, 0, TG_OP_LOAD)                                                                  \
  X(STORE, Buffer, kAnyArity, 0, TG_OP_STORE)                                                                \
  X(ASSIGN, Buffer, 2, 0, TG_OP_ASSIGN)                                                                      \
  /* control flow */                                                                                         \
  X(SPECIAL, Control, 1, 0, TG_OP_SPECIAL)                                                                   \
  X(RANGE, Control, 2, 0, TG_OP_RANGE)                                                                       \
  X(ENDRANGE, Control, kAnyArity, 0, TG_OP_ENDRANGE)                                                         \
  X(IF, Control, kAnyArity, 0, TG_OP_IF)                                                                     \
  X(ENDIF, Control, kAnyArity, 0, TG_OP_ENDIF)                                                               \
  X(BARRIER, Control, kAnyArity, 0, TG_OP_BARRIER)                                                           \
  /* unary */                                                                                                \
  X(CAST, Unary, 1, 0, TG_OP_CAST)                                                                           \
  X(BITCAST, Unary, 1, 0, TG_OP_BITCAST)                                                                     \
  X(NEG, Unary, 1, kOpAlu, TG_OP_NEG)                                                                        \
  X(RECIP, Unary, 1, kOpAlu | kOpFloatOnly, TG_OP_RECIP)                                                     \
  X(SQRT, Unary, 1, kOpAlu | kOpFloatOnly, TG_OP_SQRT)                                                       \
  X(EXP2, Unary, 1, kOpAlu | kOpFloatOnly, TG_OP_EXP2)                                                       \
  X(LOG2, Unary, 1, kOpAlu | kOpFloatOnly, TG_OP_LOG2)                                                       \
  X(SIN, Unary, 1, kOpAlu | kOpFloatOnly, TG_OP_SIN)                                                         \
  X(TRUNC, Unary, 1, kOpAlu, TG_OP_TRUNC)                                                                    \
  /* binary */                                                                                               \
  X(ADD, Binary, 2, kOpAlu | kOpCommutative | kOpAssociative, TG_OP_ADD)                                     \
  X(SUB, Binary, 2, kOpAlu, TG_OP_SUB)                                                                       \
  X(MUL, Binary, 2, kOpAlu | kOpCommutative | kOpAssociative, TG_OP_MUL)                                     \
  X(IDIV, Binary, 2, kOpAlu | kOpIntOnly, TG_OP_IDIV)                                                        \
  X(FDIV, Binary, 2, kOpAlu | kOpFloatOnly, TG_OP_FDIV)                                                      \
  X(MOD, Binary, 2, kOpAlu | kOpIntOnly, TG_OP_MOD)                                                          \
  X(MAX, Binary, 2, kOpAlu | kOpCommutative | kOpAssociative | kOpIdempotent, TG_OP_MAX)                     \
  X(CMPLT, Binary, 2, kOpAlu | kOpComparison, TG_OP_CMPLT)                                                   \
  X(CMPNE, Binary, 2, kOpAlu | kOpComparison | kOpCommutative, TG_OP_CMPNE)                                  \
  X(CMPEQ, Binary, 2, kOpAlu | kOpComparison | kOpCommutative, TG_OP_CMPEQ)                                  \
  X(AND, Binary, 2, kOpAlu | kOpCommutative | kOpAssociative | kOpIdempotent | kOpIntOnly, TG_OP_AND)        \
  X(OR, Binary, 2, kOpAlu | kOpCommutative | kOpAssociative | kOpIdempotent | kOpIntOnly, TG_OP_OR)          \
  X(XOR, Binary, 2, kOpAlu | kOpCommutative | kOpAssociative | kOpIntOnly, TG_OP_XOR)                        \
  X(SHL, Binary, 2, kOpAlu | kOpIntOnly, TG_OP_SHL)                                                          \
  X(SHR, Binary, 2, kOpAlu | kOpIntOnly, TG_OP_SHR)                                                          \
  /* ternary */                                                                                              \
  X(WHERE, Ternary, 3, kOpAlu, TG_OP_WHERE)                                                                  \
  X(MULACC, Ternary, 3, kOpAlu, TG_OP_MULACC)                                                                \
  /* reduce: REDUCE_AXIS carries a ReduceArg (ADD = sum, MAX = max) over tensor axes; */                     \
  /* REDUCE is the lowered form over RANGE sources */                                                        \
  X(REDUCE_AXIS, Reduce, 1, 0, kNoAbiOp)                                                                     \
  X(REDUCE, Reduce, kAnyArity, 0, kNoAbiOp)                                                                  \
  /* RUNNING(REDUCE, its RANGE [, its value]): the accumulator inside the loop, before (arg 0) or */         \
  /* after (arg 1) this step's update (codegen/online_softmax.hpp) */                                        \
  X(RUNNING, Reduce, kAnyArity, 0, kNoAbiOp)                                                                 \
  /* movement (zero-copy on ShapeTracker) */                                                                 \
  X(RESHAPE, Movement, 1, 0, kNoAbiOp)                                                                       \
  X(PERMUTE, Movement, 1, 0, kNoAbiOp)                                                                       \
  X(EXPAND, Movement, 1, 0, kNoAbiOp)                                                                        \
  X(PAD, Movement, 1, 0, kNoAbiOp)                                                                           \
  X(SHRINK, Movement, 1, 0, kNoAbiOp)                                                                        \
  X(FLIP, Movement, 1, 0, kNoAbiOp)                                                                          \
  /* kernel level, IR 1.1: a warp-wide matrix multiply-accumulate (arg = TG_WMMA_* shape) */                 \
  X(WMMA, Meta, 3, 0, TG_OP_WMMA)                                                                            \
  /* kernel level, IR 1.2: a warpgroup matrix multiply-accumulate of tiles in local memory */                \
  /* (src 0/1 = INDEXes of A and B, src 2 = C; arg = {TG_WGMMA_* shape, packed strides}) */                  \
  X(WGMMA, Meta, 3, 0, TG_OP_WGMMA)                                                                          \
  /* kernel level, IR 1.3: a matrix unit the device declares (arg = its index in the device's list) */       \
  X(MMA, Meta, 3, 0, TG_OP_MMA)

enum class Ops : std::uint8_t {
#define TG_OP_ENUM(name, cat, arity, traits, abi) name,
  TG_OPS(TG_OP_ENUM)
#undef TG_OP_ENUM
};

struct OpInfo {
  std::string_view name;
  OpCategory category;
  int arity; // kAnyArity for variadic ops
  unsigned traits;
  tg_op abi; // kNoAbiOp when the op never crosses the ABI
};

inline constexpr std::array kOpTable{
#define TG_OP_INFO(name, cat, arity, traits, abi) OpInfo{#name, OpCategory::cat, arity, traits, abi},
    TG_OPS(TG_OP_INFO)
#undef TG_OP_INFO
};
inline constexpr std::size_t kOpCount = kOpTable.size();

constexpr const OpInfo& op_info(Ops op) { return kOpTable[static_cast<std::size_t>(op)]; }
constexpr std::string_view op_name(Ops op) { return op_info(op).name; }
constexpr OpCategory op_category(Ops op) { return op_info(op).category; }
constexpr bool op_has(Ops op, unsigned trait) { return (op_info(op).traits & trait) != 0; }
constexpr bool is_alu(Ops op) { return op_has(op, kOpAlu); }
constexpr bool is_commutative(Ops op) { return op_has(op, kOpCommutative); }
constexpr bool is_comparison(Ops op) { return op_has(op, kOpComparison); }
constexpr bool is_movement(Ops op) { return op_category(op) == OpCategory::Movement; }
std::string_view category_name(OpCategory c);

// ABI code of an op, or nullopt when it never crosses the ABI.
constexpr std::optional<tg_op> to_abi(Ops op) {
  tg_op code = op_info(op).abi;
  if (code == kNoAbiOp) return std::nullopt;
  return code;
}
std::optional<Ops> op_from_abi(tg_op code);
std::optional<Ops> op_from_name(std::string_view name);
std::ostream& operator<<(std::ostream& os, Ops op); // "Ops.ADD"

} // namespace tg
