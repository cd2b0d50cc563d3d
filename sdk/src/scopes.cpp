#include <tg/sdk/scopes.hpp>

namespace tg::sdk {

std::vector<char> values_used_outside_scope(const KernelIR& ir) {
  const auto& ins_list = ir.instructions;
  // Scope 0 is the kernel body; every RANGE/IF opens a new scope whose parent is the open one.
  std::vector<int> scope_of(ins_list.size(), 0);
  std::vector<int> parent{-1};
  std::vector<int> open{0};
  for (size_t i = 0; i < ins_list.size(); ++i) {
    tg_op op = ins_list[i].op;
    if ((op == TG_OP_ENDRANGE || op == TG_OP_ENDIF) && open.size() > 1) open.pop_back();
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
  std::vector<char> outside(ins_list.size(), 0);
  for (size_t j = 0; j < ins_list.size(); ++j) {
    const auto& ins = ins_list[j];
    if (ins.op == TG_OP_ENDRANGE || ins.op == TG_OP_ENDIF) continue; // naming the scope is no use
    for (uint32_t s : ins.src) {
      tg_op sop = ins_list[s].op;
      if (sop == TG_OP_CONST || sop == TG_OP_DEFINE_GLOBAL || sop == TG_OP_DEFINE_VAR ||
          sop == TG_OP_SPECIAL || sop == TG_OP_DEFINE_ACC || sop == TG_OP_ASSIGN)
        continue;
      if (!encloses(scope_of[s], scope_of[j])) outside[s] = 1;
    }
  }
  return outside;
}

} // namespace tg::sdk
