// Scope analysis (see tg/sdk/scopes.hpp).
#include <tg/sdk/scopes.hpp>

namespace tg::sdk {
namespace {

bool valid_everywhere(tg_op op) {
  switch (op) {
  case TG_OP_CONST:
  case TG_OP_DEFINE_GLOBAL:
  case TG_OP_DEFINE_VAR:
  case TG_OP_DEFINE_LOCAL:
  case TG_OP_SPECIAL:
  case TG_OP_DEFINE_ACC:
  case TG_OP_ASSIGN:
    return true;
  default:
    return false;
  }
}

} // namespace

std::vector<char> values_used_outside_scope(const KernelIR& ir) {
  const auto& list = ir.instructions;
  // Scopes form a tree: scope 0 is the kernel body, each RANGE/IF opens a child of the open one.
  std::vector<int> scope_of(list.size(), 0);
  std::vector<int> parent{-1};
  std::vector<int> open{0};
  for (size_t i = 0; i < list.size(); ++i) {
    tg_op op = list[i].op;
    if (op == TG_OP_ENDRANGE || op == TG_OP_ENDIF) open.pop_back();
    if (op == TG_OP_RANGE || op == TG_OP_IF) {
      parent.push_back(open.back());
      open.push_back(int(parent.size()) - 1);
    }
    scope_of[i] = open.back();
  }
  auto encloses = [&](int outer, int inner) {
    for (int s = inner; s >= 0; s = parent[size_t(s)])
      if (s == outer) return true;
    return false;
  };
  std::vector<char> outside(list.size(), 0);
  for (size_t j = 0; j < list.size(); ++j) {
    if (list[j].op == TG_OP_ENDRANGE || list[j].op == TG_OP_ENDIF) continue;
    for (uint32_t s : list[j].src)
      if (!valid_everywhere(list[s].op) && !encloses(scope_of[s], scope_of[j])) outside[s] = 1;
  }
  return outside;
}

} // namespace tg::sdk
