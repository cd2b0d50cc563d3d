#include "kernel/ir/ops.hpp"

#include <ostream>

namespace tg {

std::string_view category_name(OpCategory c) {
  switch (c) {
  case OpCategory::Unary:
    return "unary";
  case OpCategory::Binary:
    return "binary";
  case OpCategory::Ternary:
    return "ternary";
  case OpCategory::Reduce:
    return "reduce";
  case OpCategory::Movement:
    return "movement";
  case OpCategory::Buffer:
    return "buffer";
  case OpCategory::Control:
    return "control";
  case OpCategory::Meta:
    return "meta";
  }
  return "?";
}

std::optional<Ops> op_from_abi(tg_op code) {
  if (code == kNoAbiOp) return std::nullopt;
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (kOpTable[i].abi == code) return static_cast<Ops>(i);
  return std::nullopt;
}

std::optional<Ops> op_from_name(std::string_view name) {
  if (name.starts_with("Ops.")) name.remove_prefix(4);
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (kOpTable[i].name == name) return static_cast<Ops>(i);
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, Ops op) { return os << "Ops." << op_name(op); }

} // namespace tg
