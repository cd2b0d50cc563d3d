#include <tg/sdk/kernel_ir.hpp>

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/wmma.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <sstream>

namespace tg::sdk {
namespace {

struct OpInfo {
  tg_op op;
  const char* name;
  int min_src; // -1: variadic (VECTORIZE)
  int max_src;
  bool has_value; // produces a value other instructions may use
};

constexpr std::array kOps = {
    OpInfo{TG_OP_DEFINE_GLOBAL, "DEFINE_GLOBAL", 0, 0, true},
    OpInfo{TG_OP_DEFINE_VAR, "DEFINE_VAR", 0, 0, true},
    OpInfo{TG_OP_DEFINE_LOCAL, "DEFINE_LOCAL", 0, 0, true},
    OpInfo{TG_OP_DEFINE_ACC, "DEFINE_ACC", 1, 1, true},
    OpInfo{TG_OP_SPECIAL, "SPECIAL", 0, 0, true},
    OpInfo{TG_OP_CONST, "CONST", 0, 0, true},
    OpInfo{TG_OP_RANGE, "RANGE", 2, 2, true},
    OpInfo{TG_OP_ENDRANGE, "ENDRANGE", 1, 1, false},
    OpInfo{TG_OP_IF, "IF", 1, 1, false},
    OpInfo{TG_OP_ENDIF, "ENDIF", 1, 1, false},
    OpInfo{TG_OP_BARRIER, "BARRIER", 0, 0, false},
    OpInfo{TG_OP_INDEX, "INDEX", 2, 2, true},
    OpInfo{TG_OP_LOAD, "LOAD", 1, 3, true},
    OpInfo{TG_OP_STORE, "STORE", 2, 3, false},
    OpInfo{TG_OP_ASSIGN, "ASSIGN", 2, 2, true},
    OpInfo{TG_OP_VECTORIZE, "VECTORIZE", -1, -1, true},
    OpInfo{TG_OP_GEP, "GEP", 1, 1, true},
    OpInfo{TG_OP_CAST, "CAST", 1, 1, true},
    OpInfo{TG_OP_BITCAST, "BITCAST", 1, 1, true},
    OpInfo{TG_OP_NEG, "NEG", 1, 1, true},
    OpInfo{TG_OP_RECIP, "RECIP", 1, 1, true},
    OpInfo{TG_OP_SQRT, "SQRT", 1, 1, true},
    OpInfo{TG_OP_EXP2, "EXP2", 1, 1, true},
    OpInfo{TG_OP_LOG2, "LOG2", 1, 1, true},
    OpInfo{TG_OP_SIN, "SIN", 1, 1, true},
    OpInfo{TG_OP_TRUNC, "TRUNC", 1, 1, true},
    OpInfo{TG_OP_ADD, "ADD", 2, 2, true},
    OpInfo{TG_OP_SUB, "SUB", 2, 2, true},
    OpInfo{TG_OP_MUL, "MUL", 2, 2, true},
    OpInfo{TG_OP_IDIV, "IDIV", 2, 2, true},
    OpInfo{TG_OP_FDIV, "FDIV", 2, 2, true},
    OpInfo{TG_OP_MOD, "MOD", 2, 2, true},
    OpInfo{TG_OP_MAX, "MAX", 2, 2, true},
    OpInfo{TG_OP_CMPLT, "CMPLT", 2, 2, true},
    OpInfo{TG_OP_CMPNE, "CMPNE", 2, 2, true},
    OpInfo{TG_OP_CMPEQ, "CMPEQ", 2, 2, true},
    OpInfo{TG_OP_AND, "AND", 2, 2, true},
    OpInfo{TG_OP_OR, "OR", 2, 2, true},
    OpInfo{TG_OP_XOR, "XOR", 2, 2, true},
    OpInfo{TG_OP_SHL, "SHL", 2, 2, true},
    OpInfo{TG_OP_SHR, "SHR", 2, 2, true},
    OpInfo{TG_OP_WHERE, "WHERE", 3, 3, true},
    OpInfo{TG_OP_MULACC, "MULACC", 3, 3, true},
    OpInfo{TG_OP_WMMA, "WMMA", 3, 3, true},
    OpInfo{TG_OP_WGMMA, "WGMMA", 3, 3, true},
    OpInfo{TG_OP_MMA, "MMA", 3, 3, true},
};

const OpInfo* find_op(tg_op op) {
  for (const auto& info : kOps)
    if (info.op == op) return &info;
  return nullptr;
}

constexpr std::array<const char*, TG_DTYPE_COUNT> kDtypeNames = {
    "void",   "bool",  "int8",   "uint8",   "int16",    "uint16",  "int32",
    "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"};
constexpr std::array<size_t, TG_DTYPE_COUNT> kDtypeSizes = {0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};

std::string where(size_t i, const Instruction& ins) {
  const char* name = op_name(ins.op);
  return "instruction " + std::to_string(i) + " (" + (name ? name : "op " + std::to_string(ins.op)) + ")";
}

} // namespace

double Instruction::const_float() const { return std::bit_cast<double>(arg0); }

const char* op_name(tg_op op) {
  const OpInfo* info = find_op(op);
  return info ? info->name : nullptr;
}
const char* dtype_name(tg_dtype dt) { return dt >= 0 && dt < TG_DTYPE_COUNT ? kDtypeNames[dt] : nullptr; }
size_t dtype_size(tg_dtype dt) { return dt >= 0 && dt < TG_DTYPE_COUNT ? kDtypeSizes[dt] : 0; }
bool dtype_is_float(tg_dtype dt) { return dt >= TG_DTYPE_FLOAT16 && dt <= TG_DTYPE_FLOAT64; }
bool dtype_is_signed_int(tg_dtype dt) {
  return dt == TG_DTYPE_INT8 || dt == TG_DTYPE_INT16 || dt == TG_DTYPE_INT32 || dt == TG_DTYPE_INT64;
}
bool dtype_is_unsigned_int(tg_dtype dt) {
  return dt == TG_DTYPE_BOOL || dt == TG_DTYPE_UINT8 || dt == TG_DTYPE_UINT16 || dt == TG_DTYPE_UINT32 ||
         dt == TG_DTYPE_UINT64;
}
bool uses_wmma(const KernelIR& ir) {
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_WMMA) return true;
  return false;
}

bool uses_wgmma(const KernelIR& ir) {
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_WGMMA) return true;
  return false;
}

bool uses_mma(const KernelIR& ir) {
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_MMA) return true;
  return false;
}

bool uses_lane_gates(const KernelIR& ir) {
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_LOAD && ins.src.size() == 3 && ins.src[1] < ir.instructions.size() &&
        ir.instructions[ins.src[1]].vcount > 1)
      return true;
  return false;
}

void check_mma(const KernelIR& ir, std::span<const tg_matrix_unit> units) {
  for (size_t i = 0; i < ir.instructions.size(); ++i) {
    const Instruction& ins = ir.instructions[i];
    if (ins.op != TG_OP_MMA) continue;
    const std::string at = "instruction " + std::to_string(i) + " (MMA): ";
    const int64_t index = ins.arg0 & 0xFFFFFFFF;
    if (ins.arg0 < 0 || size_t(index) >= units.size())
      throw IRError(at + "matrix unit " + std::to_string(index) + " is not declared (the target has " +
                        std::to_string(units.size()) + ")",
                    int64_t(i));
    const tg_matrix_unit& u = units[size_t(index)];
    const bool local = ir.instructions[ins.src[0]].is_pointer();
    if (local != matrix_local(u))
      throw IRError(at + "unit " + std::to_string(index) + " (" + matrix_unit_name(u) + ") reads A and B " +
                        (matrix_local(u) ? "from local memory (INDEXes), not from values"
                                         : "as values, not from local memory"),
                    int64_t(i));
    if (local) {
      for (size_t k = 0; k < 2; ++k)
        if (tg_dtype want = k ? u.b_dtype : u.a_dtype; ir.instructions[ins.src[k]].dtype != want)
          throw IRError(at + "unit " + std::to_string(index) + " (" + matrix_unit_name(u) + ") reads " +
                            "AB"[k] + " as " + dtype_name(want) + " from local memory",
                        int64_t(i));
      const MatrixStrides st = matrix_strides_unpack(ins.arg1);
      const MatrixElement ea = atom_extent(u.a_atom), eb = atom_extent(u.b_atom);
      // a stride is needed where the operand spans more than one atom along that axis
      const std::pair<int64_t, bool> need[] = {{st.a_row, int(u.m) > ea.row},
                                               {st.a_col, int(u.k) > ea.col},
                                               {st.b_row, int(u.k) > eb.row},
                                               {st.b_col, int(u.n) > eb.col}};
      const int64_t atoms[] = {int64_t(1) << u.a_atom.offset_bits, int64_t(1) << u.a_atom.offset_bits,
                               int64_t(1) << u.b_atom.offset_bits, int64_t(1) << u.b_atom.offset_bits};
      for (size_t k = 0; k < 4; ++k)
        if (need[k].second && (need[k].first == 0 || need[k].first % atoms[k] != 0))
          throw IRError(at + "unit " + std::to_string(index) + " (" + matrix_unit_name(u) +
                            "): atom stride " + std::to_string(k) + " is " + std::to_string(need[k].first) +
                            " elements, not a nonzero multiple of the atom (" + std::to_string(atoms[k]) +
                            ")",
                        int64_t(i));
    }
    const tg_matrix_layout* layouts[] = {&u.a, &u.b, &u.c};
    const tg_dtype dtypes[] = {u.a_dtype, u.b_dtype, u.c_dtype};
    for (size_t k = local ? 2 : 0; k < 3; ++k) {
      const Instruction& src = ir.instructions[ins.src[k]];
      const uint32_t lanes = 1u << layouts[k]->element_bits;
      if (src.dtype != dtypes[k] || src.vcount != lanes)
        throw IRError(at + "unit " + std::to_string(ins.arg0) + " (" + matrix_unit_name(u) + ") takes " +
                          "ABC"[k] + " as " + std::to_string(lanes) + " lanes of " + dtype_name(dtypes[k]) +
                          ", not " + std::to_string(src.vcount) + " of " +
                          (dtype_name(src.dtype) ? dtype_name(src.dtype) : "?"),
                      int64_t(i));
    }
  }
}

bool op_is_comparison(tg_op op) { return op == TG_OP_CMPLT || op == TG_OP_CMPNE || op == TG_OP_CMPEQ; }

namespace {
// A DEFINE_GLOBAL's assumed alignment in bytes (arg1; 0 means the element's).
int64_t global_alignment(const Instruction& g) { return g.arg1 != 0 ? g.arg1 : int64_t(dtype_size(g.dtype)); }

// LOAD/STORE arg0: the byte alignment of the accessed address (0 = the element's). It may not exceed
// what the buffer guarantees: the DEFINE_GLOBAL's alignment, or 16 for local memory (§5.3).
template <typename Fail>
void check_access_alignment(const Instruction& ins, const std::vector<Instruction>& list, Fail&& fail) {
  const int64_t a = ins.arg0;
  if (a == 0) return;
  if (a < 0 || (a & (a - 1)) != 0) fail("alignment " + std::to_string(a) + " is not a power of two");
  const Instruction& buffer = list[list[ins.src[0]].src[0]];
  const int64_t limit = buffer.op == TG_OP_DEFINE_GLOBAL ? global_alignment(buffer) : 16;
  if (a > limit)
    fail("alignment " + std::to_string(a) + " exceeds its buffer's " + std::to_string(limit) + " bytes");
}
} // namespace

void validate_kernel_ir(KernelIR& ir) {
  std::vector<int> globals, vars;  // buffer/scalar index -> instruction, -1 = unseen
  std::vector<size_t> open_scopes; // RANGE and IF instructions not yet closed
  std::vector<int> scope_of;       // per instruction: the innermost scope open when it was made
  std::vector<bool> closed;        // per instruction: a RANGE/IF whose scope has ended
  ir.buffer_dtypes.clear();
  ir.scalar_dtypes.clear();
  ir.buffer_alignments.clear();
  auto& ins_list = ir.instructions;
  for (size_t i = 0; i < ins_list.size(); ++i) {
    const Instruction& ins = ins_list[i];
    const OpInfo* info = find_op(ins.op);
    if (!info)
      throw IRError("instruction " + std::to_string(i) + ": unknown op code " + std::to_string(ins.op),
                    int64_t(i));
    auto fail = [&](const std::string& why) { throw IRError(where(i, ins) + ": " + why, int64_t(i)); };
    if (ins.dtype < 0 || ins.dtype >= TG_DTYPE_COUNT) fail("unknown dtype code " + std::to_string(ins.dtype));
    if (ins.vcount == 0) fail("vcount must be at least 1");
    if ((ins.flags & ~(TG_IR_FLAG_POINTER | TG_IR_FLAG_LOCAL)) != 0) fail("unknown flag bits");
    const int n = int(ins.src.size());
    if (info->min_src >= 0 && (n < info->min_src || n > info->max_src))
      fail("takes " + std::to_string(info->min_src) +
           (info->max_src != info->min_src ? ".." + std::to_string(info->max_src) : "") + " sources, got " +
           std::to_string(n));
    for (uint32_t s : ins.src) {
      if (s >= i) fail("source %" + std::to_string(s) + " is not defined before use");
      const Instruction& src = ins_list[s];
      const OpInfo* src_info = find_op(src.op);
      bool closes = (ins.op == TG_OP_ENDRANGE && src.op == TG_OP_RANGE) ||
                    (ins.op == TG_OP_ENDIF && src.op == TG_OP_IF);
      if (!src_info->has_value && !closes)
        fail("source %" + std::to_string(s) + " (" + src_info->name + ") has no value");
    }
    auto src_op = [&](int k) { return ins_list[ins.src[size_t(k)]].op; };
    auto src_dtype = [&](int k) { return ins_list[ins.src[size_t(k)]].dtype; };
    auto src_is_ptr = [&](int k) { return ins_list[ins.src[size_t(k)]].is_pointer(); };
    auto src_vcount = [&](int k) { return ins_list[ins.src[size_t(k)]].vcount; };
    if (info->has_value && ins.dtype == TG_DTYPE_VOID) fail("a value needs a dtype");
    if (!info->has_value && (ins.dtype != TG_DTYPE_VOID || ins.vcount != 1))
      fail("has no value: dtype must be void");
    bool value_op = ins.op >= TG_OP_VECTORIZE;
    if (value_op) { // WGMMA's A and B, and a local-memory MMA's, are pointers into local memory (below)
      const bool local_operands = ins.op == TG_OP_WGMMA || (ins.op == TG_OP_MMA && src_is_ptr(0));
      for (int k = local_operands ? 2 : 0; k < n; ++k)
        if (src_is_ptr(k)) fail("source " + std::to_string(k) + " is a pointer, expected a value");
    }
    // A value made inside a RANGE or IF is gone once that scope closes.
    for (uint32_t s : ins.src) {
      int scope = scope_of[s];
      bool closing_it = (ins.op == TG_OP_ENDRANGE || ins.op == TG_OP_ENDIF) && s == ins.src[0];
      if (closed[s] && !closing_it)
        fail("uses the counter of RANGE %" + std::to_string(s) + " after its ENDRANGE");
      if (scope >= 0 && closed[size_t(scope)] && !closing_it)
        fail("uses %" + std::to_string(s) + " outside the scope (%" + std::to_string(scope) +
             ") it was made in");
    }
    scope_of.push_back(open_scopes.empty() ? -1 : int(open_scopes.back()));
    closed.push_back(false);
    bool elementwise = (ins.op >= TG_OP_CAST && ins.op <= TG_OP_MULACC) || ins.op == TG_OP_ASSIGN;
    if (elementwise)
      for (int k = (ins.op == TG_OP_ASSIGN ? 1 : 0); k < n; ++k)
        if (src_vcount(k) != ins.vcount)
          fail("source " + std::to_string(k) + " has " + std::to_string(src_vcount(k)) +
               " lanes, the result " + std::to_string(ins.vcount));
    auto is_int = [](tg_dtype d) { return dtype_is_signed_int(d) || dtype_is_unsigned_int(d); };
    switch (ins.op) {
    case TG_OP_IDIV:
    case TG_OP_MOD:
    case TG_OP_SHL:
    case TG_OP_SHR:
    case TG_OP_AND:
    case TG_OP_OR:
    case TG_OP_XOR:
      if (!is_int(ins.dtype))
        fail("needs an integer or bool dtype, got " + std::string(dtype_name(ins.dtype)));
      break;
    case TG_OP_FDIV:
    case TG_OP_SQRT:
    case TG_OP_EXP2:
    case TG_OP_LOG2:
    case TG_OP_SIN:
    case TG_OP_RECIP:
    case TG_OP_TRUNC:
      if (!dtype_is_float(ins.dtype)) fail("needs a float dtype, got " + std::string(dtype_name(ins.dtype)));
      break;
    default:
      break;
    }
    switch (ins.op) {
    case TG_OP_DEFINE_GLOBAL:
    case TG_OP_DEFINE_VAR: {
      auto& seen = ins.op == TG_OP_DEFINE_GLOBAL ? globals : vars;
      if (ins.arg0 < 0 || ins.arg0 > 4096)
        fail("argument index " + std::to_string(ins.arg0) + " out of range");
      if (ins.dtype == TG_DTYPE_VOID) fail("needs a dtype");
      if (ins.op == TG_OP_DEFINE_GLOBAL && ins.flags != TG_IR_FLAG_POINTER)
        fail("DEFINE_GLOBAL carries exactly the POINTER flag");
      if (ins.vcount != 1) fail("argument definitions are scalar");
      if (ins.op == TG_OP_DEFINE_VAR && ins.flags != 0) fail("DEFINE_VAR is a value, not a pointer");
      if (ins.op == TG_OP_DEFINE_GLOBAL) { // arg1: the byte alignment the kernel assumes (0 = element)
        const int64_t a = ins.arg1, e = int64_t(dtype_size(ins.dtype));
        if (a != 0 && (a < e || a > 4096 || (a & (a - 1)) != 0))
          fail("alignment " + std::to_string(a) + " must be 0 or a power of two from the element size (" +
               std::to_string(e) + ") to 4096 bytes");
      }
      size_t idx = size_t(ins.arg0);
      if (seen.size() <= idx) seen.resize(idx + 1, -1);
      if (seen[idx] >= 0) fail("argument index " + std::to_string(idx) + " defined twice");
      seen[idx] = int(i);
      break;
    }
    case TG_OP_BARRIER: // arg0: groups of async local copies that may stay in flight (§BARRIER)
      if (ins.arg0 < 0 || ins.arg0 > 7)
        fail("BARRIER's copy groups in flight (arg0) is " + std::to_string(ins.arg0) + ", not 0 to 7");
      if (ins.arg1 != 0) fail("BARRIER's arg1 must be 0");
      break;
    case TG_OP_DEFINE_LOCAL:
      if (ins.flags != (TG_IR_FLAG_POINTER | TG_IR_FLAG_LOCAL))
        fail("DEFINE_LOCAL must carry POINTER|LOCAL flags");
      if (ins.arg0 <= 0) fail("local buffer needs a positive element count");
      break;
    case TG_OP_DEFINE_ACC:
      if (src_dtype(0) != ins.dtype || src_vcount(0) != ins.vcount)
        fail("initial value type differs from the accumulator's");
      break;
    case TG_OP_SPECIAL:
      if (ins.arg0 != TG_SPECIAL_GROUP_ID && ins.arg0 != TG_SPECIAL_LOCAL_ID) fail("unknown SPECIAL kind");
      if (ins.arg1 < 0 || ins.arg1 > 2) fail("axis must be 0, 1 or 2");
      if (ins.dtype != TG_DTYPE_INT32) fail("SPECIAL is int32");
      break;
    case TG_OP_CONST:
      if (ins.vcount != 1) fail("CONST is scalar; use VECTORIZE");
      break;
    case TG_OP_RANGE:
      if (!dtype_is_signed_int(ins.dtype) || src_dtype(0) != ins.dtype || src_dtype(1) != ins.dtype)
        fail("RANGE bounds and counter must share one signed integer dtype");
      open_scopes.push_back(i);
      break;
    case TG_OP_IF:
      if (src_dtype(0) != TG_DTYPE_BOOL) fail("condition must be bool");
      open_scopes.push_back(i);
      break;
    case TG_OP_ENDRANGE:
    case TG_OP_ENDIF: {
      tg_op want = ins.op == TG_OP_ENDRANGE ? TG_OP_RANGE : TG_OP_IF;
      if (src_op(0) != want) fail(std::string("must close a ") + op_name(want));
      if (open_scopes.empty() || open_scopes.back() != ins.src[0])
        fail("closes a scope that is not the innermost open one");
      open_scopes.pop_back();
      closed[ins.src[0]] = true;
      break;
    }
    case TG_OP_INDEX:
      if (src_op(0) != TG_OP_DEFINE_GLOBAL && src_op(0) != TG_OP_DEFINE_LOCAL)
        fail("source 0 must be a buffer definition");
      if (!dtype_is_signed_int(src_dtype(1)) && !dtype_is_unsigned_int(src_dtype(1)))
        fail("index must be an integer");
      if (ins.flags != ins_list[ins.src[0]].flags || ins.dtype != src_dtype(0))
        fail("INDEX carries its buffer's dtype and flags");
      if (ins.vcount != 1 || src_vcount(1) != 1)
        fail("INDEX is scalar; a vector LOAD/STORE reads consecutive elements");
      break;
    case TG_OP_LOAD:
      if (src_op(0) != TG_OP_INDEX) fail("source 0 must be an INDEX");
      if (n == 2) fail("a gated load needs both a gate and an alternative value");
      if (n == 3 && (src_dtype(1) != TG_DTYPE_BOOL || (src_vcount(1) != 1 && src_vcount(1) != ins.vcount)))
        fail("gate must be a scalar bool or a bool per lane");
      if (n == 3 && (src_dtype(2) != ins.dtype || src_vcount(2) != ins.vcount))
        fail("alternative value type differs from the load's");
      if (ins.dtype != ins_list[ins.src[0]].dtype) fail("loads the buffer's element dtype");
      check_access_alignment(ins, ins_list, fail);
      break;
    case TG_OP_STORE:
      if (src_op(0) != TG_OP_INDEX) fail("source 0 must be an INDEX");
      check_access_alignment(ins, ins_list, fail);
      if (src_dtype(1) != ins_list[ins.src[0]].dtype) fail("stored value dtype differs from the buffer's");
      if (n == 3 && (src_dtype(2) != TG_DTYPE_BOOL || src_vcount(2) != 1)) fail("gate must be a scalar bool");
      break;
    case TG_OP_ASSIGN:
      if (src_op(0) != TG_OP_DEFINE_ACC) fail("source 0 must be a DEFINE_ACC");
      if (src_dtype(1) != src_dtype(0)) fail("assigned value dtype differs from the accumulator's");
      break;
    case TG_OP_VECTORIZE:
      if (n != ins.vcount || n < 2) fail("needs vcount (>= 2) lanes");
      for (int k = 0; k < n; ++k)
        if (src_vcount(k) != 1 || src_dtype(k) != ins.dtype)
          fail("lanes must be scalars of the result dtype");
      break;
    case TG_OP_GEP:
      if (ins.arg0 < 0 || ins.arg0 >= ins_list[ins.src[0]].vcount) fail("lane out of range");
      if (ins.vcount != 1 || ins.dtype != src_dtype(0)) fail("GEP yields one lane of the vector's dtype");
      break;
    case TG_OP_BITCAST:
      if (dtype_size(src_dtype(0)) != dtype_size(ins.dtype))
        fail("bitcast between dtypes of different sizes");
      break;
    case TG_OP_WMMA: {
      const auto shape = wmma_shape(ins.arg0);
      if (!shape) fail("unknown WMMA shape " + std::to_string(ins.arg0));
      if (!wmma_input_dtype(ins.arg0, src_dtype(0)) || src_dtype(1) != src_dtype(0))
        fail("A and B must be float16 or both bfloat16");
      if (ins.dtype != TG_DTYPE_FLOAT32 || src_dtype(2) != TG_DTYPE_FLOAT32) fail("C and D are float32");
      if (src_vcount(0) != shape->a_lanes || src_vcount(1) != shape->b_lanes ||
          src_vcount(2) != shape->c_lanes || ins.vcount != shape->c_lanes)
        fail("fragments need " + std::to_string(shape->a_lanes) + "/" + std::to_string(shape->b_lanes) + "/" +
             std::to_string(shape->c_lanes) + " lanes (A/B/C), the result " + std::to_string(shape->c_lanes));
      break;
    }
    case TG_OP_MMA: { // the unit's lanes and dtypes are checked by the plugin that declared it (check_mma)
      const int64_t unit = ins.arg0 & 0xFFFFFFFF, flags = ins.arg0 & ~int64_t(0xFFFFFFFF);
      if (ins.arg0 < 0 || unit > INT32_MAX || (flags & ~TG_MMA_DEFER_READS) != 0)
        fail("matrix unit index " + std::to_string(unit) + " with unknown flags " +
             std::to_string(flags >> 32));
      if (src_dtype(2) != ins.dtype || src_vcount(2) != ins.vcount) fail("D has C's dtype and lanes");
      const bool local = src_is_ptr(0) || src_is_ptr(1);
      for (int k = 0; k < 2 && local; ++k)
        if (src_op(k) != TG_OP_INDEX || !ins_list[ins.src[size_t(k)]].is_local())
          fail(std::string(k == 0 ? "A" : "B") + " must be an INDEX into local memory, as the other one is");
      if (!local && (flags != 0 || ins.arg1 != 0))
        fail("flags and strides belong to a local-memory unit's MMA");
      if ((flags & TG_MMA_DEFER_READS) &&
          std::none_of(open_scopes.begin(), open_scopes.end(),
                       [&](size_t sc) { return ins_list[sc].op == TG_OP_RANGE; }))
        fail("deferred reads (TG_MMA_DEFER_READS) outside a RANGE (its reads would have no loop end to "
             "finish by)");
      break;
    }
    case TG_OP_WGMMA: {
      const auto shape = wgmma_shape(wgmma_shape_code(ins.arg0));
      if (!shape) fail("unknown WGMMA shape " + std::to_string(ins.arg0));
      if (wgmma_defers_reads(ins.arg0) && std::none_of(open_scopes.begin(), open_scopes.end(), [&](size_t s) {
            return ins_list[s].op == TG_OP_RANGE;
          }))
        fail("deferred reads (arg0 flag 0x100) outside a RANGE (its reads would have no loop end to finish "
             "by)");
      for (int k = 0; k < 2; ++k)
        if (src_op(k) != TG_OP_INDEX || !ins_list[ins.src[size_t(k)]].is_local())
          fail(std::string(k == 0 ? "A" : "B") + " must be an INDEX into local memory");
      if (!wgmma_input_dtype(wgmma_shape_code(ins.arg0), src_dtype(0)) || src_dtype(1) != src_dtype(0))
        fail("A and B must be float16 or both bfloat16");
      if (ins.dtype != TG_DTYPE_FLOAT32 || src_dtype(2) != TG_DTYPE_FLOAT32) fail("C and D are float32");
      if (src_vcount(2) != shape->c_lanes || ins.vcount != shape->c_lanes)
        fail("C and D need " + std::to_string(shape->c_lanes) + " lanes");
      const WgmmaStrides st = wgmma_unpack(ins.arg1);
      if (!wgmma_strides_valid(st))
        fail("core-matrix strides (" + std::to_string(st.a_k) + ", " + std::to_string(st.a_m) + ", " +
             std::to_string(st.b_k) + ", " + std::to_string(st.b_n) + " bytes) must be multiples of 16");
      if (wgmma_swizzled(ins.arg0)) { // 128-byte rows: chunks 16 bytes apart, 8-row groups in atoms
        const bool bn = wgmma_b_n_major(ins.arg0);
        if (st.a_k != 16 || st.a_m % 1024 != 0)
          fail("a 128-byte swizzled A needs a_k 16 and a_m a multiple of 1024 (has " +
               std::to_string(st.a_k) + ", " + std::to_string(st.a_m) + ")");
        if (bn ? st.b_k % 1024 != 0 || st.b_n % 1024 != 0 : st.b_k != 16 || st.b_n % 1024 != 0)
          fail(std::string("a 128-byte swizzled ") +
               (bn ? "n-major B needs b_k and b_n multiples of 1024"
                   : "B needs b_k 16 and b_n a multiple of 1024") +
               " (has " + std::to_string(st.b_k) + ", " + std::to_string(st.b_n) + ")");
      }
      break;
    }
    case TG_OP_WHERE:
      if (src_dtype(0) != TG_DTYPE_BOOL) fail("condition must be bool");
      if (src_dtype(1) != ins.dtype || src_dtype(2) != ins.dtype)
        fail("both branches must have the result dtype");
      break;
    default:
      if (ins.op >= TG_OP_NEG && ins.op <= TG_OP_MULACC) {
        bool cmp = op_is_comparison(ins.op);
        if (cmp && ins.dtype != TG_DTYPE_BOOL) fail("comparison result must be bool");
        tg_dtype operand = cmp ? src_dtype(0) : ins.dtype;
        for (int k = 0; k < n; ++k)
          if (src_dtype(k) != operand) fail("operand dtypes differ");
      }
      break;
    }
  }
  if (!open_scopes.empty())
    throw IRError("instruction " + std::to_string(open_scopes.back()) + " opens a scope that is never closed",
                  int64_t(open_scopes.back()));
  auto collect = [&](const std::vector<int>& seen, std::vector<tg_dtype>& dtypes, const char* what) {
    for (size_t k = 0; k < seen.size(); ++k) {
      if (seen[k] < 0)
        throw IRError(
            std::string(what) + " index " + std::to_string(k) + " is missing (indices must be dense)", -1);
      dtypes.push_back(ins_list[size_t(seen[k])].dtype);
    }
  };
  collect(globals, ir.buffer_dtypes, "buffer argument");
  for (int g : globals) ir.buffer_alignments.push_back(uint32_t(global_alignment(ins_list[size_t(g)])));
  collect(vars, ir.scalar_dtypes, "scalar argument");
  ir.buffer_count = uint32_t(ir.buffer_dtypes.size());
  ir.scalar_count = uint32_t(ir.scalar_dtypes.size());
}

KernelIR parse_kernel_ir(std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  int64_t at = -1; // the instruction being read, for the error
  KernelIR ir;
  uint16_t minor = 0;
  try {
    auto magic = r.bytes(4, "magic");
    if (std::memcmp(magic.data(), TG_IR_MAGIC, 4) != 0)
      throw IRError("not kernel IR: bad magic (expected \"TGIR\")", -1);
    auto major = r.get<uint16_t>("version");
    minor = r.get<uint16_t>("version");
    if (major != TG_IR_VERSION_MAJOR)
      throw IRError("kernel IR version " + std::to_string(major) + "." + std::to_string(minor) +
                        " is not readable by this reader (IR major " + std::to_string(TG_IR_VERSION_MAJOR) +
                        ")",
                    -1);
    auto count = r.get<uint32_t>("instruction count");
    auto name_len = r.get<uint32_t>("name length");
    if (name_len > r.remaining())
      throw IRError("kernel IR name length " + std::to_string(name_len) + " exceeds the data", -1);
    ir.name = r.str(name_len, "kernel name");
    for (uint32_t k = 0; k < (4 - name_len % 4) % 4; ++k)
      if (r.get<uint8_t>("name padding") != 0) throw IRError("kernel IR name padding is not zero", -1);
    // Each record is at least 24 bytes: reject absurd counts before allocating.
    if (uint64_t(count) * 24 > r.remaining())
      throw IRError("kernel IR claims " + std::to_string(count) + " instructions but holds only " +
                        std::to_string(r.remaining()) + " bytes",
                    -1);
    ir.instructions.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      at = i;
      Instruction ins;
      ins.op = r.get<uint16_t>("op");
      if (ins.op == TG_OP_WMMA && minor < TG_IR_VERSION_MINOR_WMMA)
        throw IRError("instruction " + std::to_string(i) + ": WMMA needs kernel IR 1.1, the header says 1." +
                          std::to_string(minor),
                      i);
      if (ins.op == TG_OP_MMA && minor < TG_IR_VERSION_MINOR_MMA)
        throw IRError("instruction " + std::to_string(i) + ": MMA needs kernel IR 1.3, the header says 1." +
                          std::to_string(minor),
                      i);
      if (ins.op == TG_OP_WGMMA && minor < TG_IR_VERSION_MINOR_WGMMA)
        throw IRError("instruction " + std::to_string(i) + ": WGMMA needs kernel IR 1.2, the header says 1." +
                          std::to_string(minor),
                      i);
      ins.dtype = r.get<uint8_t>("dtype");
      ins.flags = r.get<uint8_t>("flags");
      ins.vcount = r.get<uint16_t>("vcount");
      auto nsrc = r.get<uint16_t>("source count");
      ins.arg0 = r.get<int64_t>("arg0");
      ins.arg1 = r.get<int64_t>("arg1");
      if (size_t(nsrc) * 4 > r.remaining())
        throw IRError("kernel IR truncated in the sources of instruction " + std::to_string(i), i);
      ins.src.resize(nsrc);
      for (auto& s : ins.src) s = r.get<uint32_t>("source");
      ir.instructions.push_back(std::move(ins));
    }
    at = -1;
  } catch (const TruncatedError& e) {
    throw IRError(std::string("kernel IR ") + e.what(), at);
  }
  if (r.remaining() != 0)
    throw IRError(std::to_string(r.remaining()) + " trailing bytes after the last instruction", -1);
  validate_kernel_ir(ir);
  if (minor < TG_IR_VERSION_MINOR_LANE_GATES)
    for (size_t i = 0; i < ir.instructions.size(); ++i) {
      const Instruction& ins = ir.instructions[i];
      if (ins.op == TG_OP_LOAD && ins.src.size() == 3 && ir.instructions[ins.src[1]].vcount > 1)
        throw IRError("instruction " + std::to_string(i) +
                          ": a LOAD gated per lane needs kernel IR 1.4, the header says 1." +
                          std::to_string(minor),
                      int64_t(i));
    }
  return ir;
}

KernelIR parse_kernel_ir(const void* data, size_t size) {
  if (data == nullptr && size != 0) throw IRError("kernel IR pointer is NULL", -1);
  return parse_kernel_ir(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
}

std::vector<std::byte> serialize_kernel_ir(const KernelIR& ir) {
  ByteWriter w;
  for (int k = 0; k < 4; ++k) w.put<uint8_t>(uint8_t(TG_IR_MAGIC[k]));
  w.put<uint16_t>(TG_IR_VERSION_MAJOR);
  w.put<uint16_t>(uses_lane_gates(ir) ? TG_IR_VERSION_MINOR_LANE_GATES
                  : uses_mma(ir)      ? TG_IR_VERSION_MINOR_MMA
                  : uses_wgmma(ir)    ? TG_IR_VERSION_MINOR_WGMMA
                  : uses_wmma(ir)     ? TG_IR_VERSION_MINOR_WMMA
                                      : TG_IR_VERSION_MINOR);
  w.put<uint32_t>(uint32_t(ir.instructions.size()));
  w.put<uint32_t>(uint32_t(ir.name.size()));
  for (char c : ir.name) w.put<uint8_t>(uint8_t(c));
  for (size_t k = 0; k < (4 - ir.name.size() % 4) % 4; ++k) w.put<uint8_t>(0);
  for (const auto& ins : ir.instructions) {
    w.put<uint16_t>(uint16_t(ins.op));
    w.put<uint8_t>(uint8_t(ins.dtype));
    w.put<uint8_t>(ins.flags);
    w.put<uint16_t>(ins.vcount);
    w.put<uint16_t>(uint16_t(ins.src.size()));
    w.put<int64_t>(ins.arg0);
    w.put<int64_t>(ins.arg1);
    for (uint32_t s : ins.src) w.put<uint32_t>(s);
  }
  return std::move(w.out);
}

std::string to_string(const KernelIR& ir) {
  std::ostringstream os;
  os << "kernel " << ir.name << " (" << ir.buffer_count << " buffers, " << ir.scalar_count << " scalars)\n";
  int depth = 1;
  for (size_t i = 0; i < ir.instructions.size(); ++i) {
    const auto& ins = ir.instructions[i];
    if (ins.op == TG_OP_ENDRANGE || ins.op == TG_OP_ENDIF) --depth;
    os << std::string(size_t(depth) * 2, ' ') << '%' << i << " = "
       << (op_name(ins.op) ? op_name(ins.op) : "?") << ' '
       << (dtype_name(ins.dtype) ? dtype_name(ins.dtype) : "?");
    if (ins.vcount > 1) os << 'x' << ins.vcount;
    if (ins.is_pointer()) os << (ins.is_local() ? "*local" : "*");
    for (size_t k = 0; k < ins.src.size(); ++k) os << (k ? ", %" : " %") << ins.src[k];
    if (ins.op == TG_OP_CONST)
      dtype_is_float(ins.dtype) ? (os << " " << ins.const_float()) : (os << " " << ins.arg0);
    else if (ins.arg0 != 0 || ins.arg1 != 0)
      os << " [" << ins.arg0 << ", " << ins.arg1 << "]";
    os << '\n';
    if (ins.op == TG_OP_RANGE || ins.op == TG_OP_IF) ++depth;
  }
  return os.str();
}

// ---- builder ----

KernelBuilder::KernelBuilder(std::string name) { ir_.name = std::move(name); }

const Instruction& KernelBuilder::at(Ref ref) const {
  if (ref >= ir_.instructions.size())
    throw IRError("builder: reference %" + std::to_string(ref) + " does not exist", int64_t(ref));
  return ir_.instructions[ref];
}

KernelBuilder::Ref KernelBuilder::emit(Instruction instruction) {
  ir_.instructions.push_back(std::move(instruction));
  return Ref(ir_.instructions.size() - 1);
}

KernelBuilder::Ref KernelBuilder::global(uint32_t index, tg_dtype element, uint32_t alignment) {
  return emit({TG_OP_DEFINE_GLOBAL, element, TG_IR_FLAG_POINTER, 1, index, alignment, {}});
}
KernelBuilder::Ref KernelBuilder::var(uint32_t index, tg_dtype dtype) {
  return emit({TG_OP_DEFINE_VAR, dtype, 0, 1, index, 0, {}});
}
KernelBuilder::Ref KernelBuilder::local(int64_t count, tg_dtype element) {
  return emit({TG_OP_DEFINE_LOCAL, element, TG_IR_FLAG_POINTER | TG_IR_FLAG_LOCAL, 1, count, 0, {}});
}
KernelBuilder::Ref KernelBuilder::special(int kind, int axis) {
  return emit({TG_OP_SPECIAL, TG_DTYPE_INT32, 0, 1, kind, axis, {}});
}
KernelBuilder::Ref KernelBuilder::const_int(tg_dtype dtype, int64_t value) {
  return emit({TG_OP_CONST, dtype, 0, 1, value, 0, {}});
}
KernelBuilder::Ref KernelBuilder::const_float(tg_dtype dtype, double value) {
  return emit({TG_OP_CONST, dtype, 0, 1, std::bit_cast<int64_t>(value), 0, {}});
}
KernelBuilder::Ref KernelBuilder::range(Ref start, Ref end) {
  return emit({TG_OP_RANGE, at(start).dtype, 0, 1, 0, 0, {start, end}});
}
void KernelBuilder::end_range(Ref range) { emit({TG_OP_ENDRANGE, TG_DTYPE_VOID, 0, 1, 0, 0, {range}}); }
KernelBuilder::Ref KernelBuilder::if_(Ref condition) {
  return emit({TG_OP_IF, TG_DTYPE_VOID, 0, 1, 0, 0, {condition}});
}
void KernelBuilder::end_if(Ref if_instruction) {
  emit({TG_OP_ENDIF, TG_DTYPE_VOID, 0, 1, 0, 0, {if_instruction}});
}
void KernelBuilder::barrier() { emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, 0, 0, {}}); }
KernelBuilder::Ref KernelBuilder::index(Ref buffer, Ref element) {
  return emit({TG_OP_INDEX, at(buffer).dtype, at(buffer).flags, 1, 0, 0, {buffer, element}});
}
KernelBuilder::Ref KernelBuilder::load(Ref pointer, uint16_t vcount, uint32_t alignment) {
  return emit({TG_OP_LOAD, at(pointer).dtype, 0, vcount, alignment, 0, {pointer}});
}
KernelBuilder::Ref KernelBuilder::load_gated(Ref pointer, Ref gate, Ref alternative) {
  return emit({TG_OP_LOAD, at(pointer).dtype, 0, at(alternative).vcount, 0, 0, {pointer, gate, alternative}});
}
void KernelBuilder::store(Ref pointer, Ref value, uint32_t alignment) {
  emit({TG_OP_STORE, TG_DTYPE_VOID, 0, 1, alignment, 0, {pointer, value}});
}
void KernelBuilder::store_gated(Ref pointer, Ref value, Ref gate, uint32_t alignment) {
  emit({TG_OP_STORE, TG_DTYPE_VOID, 0, 1, alignment, 0, {pointer, value, gate}});
}
KernelBuilder::Ref KernelBuilder::acc(Ref initial) {
  return emit({TG_OP_DEFINE_ACC, at(initial).dtype, 0, at(initial).vcount, 0, 0, {initial}});
}
KernelBuilder::Ref KernelBuilder::assign(Ref accumulator, Ref value) {
  return emit({TG_OP_ASSIGN, at(accumulator).dtype, 0, at(accumulator).vcount, 0, 0, {accumulator, value}});
}
KernelBuilder::Ref KernelBuilder::alu(tg_op op, Ref a) {
  return emit({op, at(a).dtype, 0, at(a).vcount, 0, 0, {a}});
}
KernelBuilder::Ref KernelBuilder::alu(tg_op op, Ref a, Ref b) {
  tg_dtype dt = op_is_comparison(op) ? TG_DTYPE_BOOL : at(a).dtype;
  return emit({op, dt, 0, at(a).vcount, 0, 0, {a, b}});
}
KernelBuilder::Ref KernelBuilder::alu(tg_op op, Ref a, Ref b, Ref c) {
  const Instruction& typed = op == TG_OP_WHERE ? at(b) : at(a);
  return emit({op, typed.dtype, 0, typed.vcount, 0, 0, {a, b, c}});
}
KernelBuilder::Ref KernelBuilder::cast(Ref value, tg_dtype to) {
  return emit({TG_OP_CAST, to, 0, at(value).vcount, 0, 0, {value}});
}
KernelBuilder::Ref KernelBuilder::bitcast(Ref value, tg_dtype to) {
  return emit({TG_OP_BITCAST, to, 0, at(value).vcount, 0, 0, {value}});
}
KernelBuilder::Ref KernelBuilder::vectorize(std::span<const Ref> lanes) {
  if (lanes.empty()) throw IRError("builder: VECTORIZE needs lanes", -1);
  return emit(
      {TG_OP_VECTORIZE, at(lanes[0]).dtype, 0, uint16_t(lanes.size()), 0, 0, {lanes.begin(), lanes.end()}});
}
KernelBuilder::Ref KernelBuilder::wmma(Ref a, Ref b, Ref c, int64_t shape) {
  return emit({TG_OP_WMMA, at(c).dtype, 0, at(c).vcount, shape, 0, {a, b, c}});
}

KernelBuilder::Ref KernelBuilder::wgmma(Ref a, Ref b, Ref c, int64_t shape, int64_t strides) {
  return emit({TG_OP_WGMMA, at(c).dtype, 0, at(c).vcount, shape, strides, {a, b, c}});
}
KernelBuilder::Ref KernelBuilder::mma(Ref a, Ref b, Ref c, int64_t unit, int64_t strides) {
  return emit({TG_OP_MMA, at(c).dtype, 0, at(c).vcount, unit, strides, {a, b, c}});
}
KernelBuilder::Ref KernelBuilder::gep(Ref vector, uint16_t lane) {
  return emit({TG_OP_GEP, at(vector).dtype, 0, 1, lane, 0, {vector}});
}

std::vector<std::byte> KernelBuilder::serialize() {
  validate_kernel_ir(ir_);
  return serialize_kernel_ir(ir_);
}

} // namespace tg::sdk
