#include "cstyle.hpp"

#include <tg/sdk/plugin.hpp>
#include <tg/sdk/scopes.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tg::sdk::render {

const char* dialect_name(Dialect dialect) {
  switch (dialect) {
  case Dialect::c:
    return "c";
  case Dialect::opencl:
    return "opencl";
  case Dialect::cuda:
    return "cuda";
  case Dialect::metal:
    return "metal";
  case Dialect::glsl:
    return "glsl";
  }
  return "?";
}

namespace {

tg_dtype unsigned_of_size(size_t bytes) {
  return bytes == 1   ? TG_DTYPE_UINT8
         : bytes == 2 ? TG_DTYPE_UINT16
         : bytes == 4 ? TG_DTYPE_UINT32
                      : TG_DTYPE_UINT64;
}
std::string paren(const std::string& s) { return "(" + s + ")"; }

// Rounds v to the nearest value with `mantissa` fraction bits and minimum normal exponent
// `min_exp` (ties to even), or to +-inf above `max_finite`: the float16/bfloat16 grids.
double round_to_grid(double v, int mantissa, int min_exp, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  int e = 0;
  std::frexp(v, &e); // v = f * 2^e, 0.5 <= |f| < 1
  double ulp = std::ldexp(1.0, std::max(e - 1, min_exp) - mantissa);
  double r = std::nearbyint(v / ulp) * ulp; // exact scaling by a power of two; rounds to even
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

} // namespace

double round_to_half(double v) { return round_to_grid(v, 10, -14, 65504.0); }
// bfloat16 constants go through float first, as the CPU plugin rounds them.
double round_to_bf16(double v) { return round_to_grid(double(float(v)), 7, -126, 3.3895313892515355e38); }

CStyle::CStyle(Dialect dialect, const KernelIR& ir, const Options& options)
    : dialect_(dialect), ir_(ir), options_(options) {}

// ---- defaults shared by the C-like dialects ----

std::string CStyle::memory_type(tg_dtype dt, bool) const {
  if (dt == TG_DTYPE_BOOL) return type(TG_DTYPE_UINT8);
  if (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16) return type(TG_DTYPE_UINT16);
  return type(dt);
}

std::string CStyle::int_literal(int64_t v, tg_dtype dt) const {
  switch (dt) {
  case TG_DTYPE_BOOL:
    return v != 0 ? "true" : "false";
  case TG_DTYPE_INT32:
    return v == std::numeric_limits<int32_t>::min() ? "(-2147483647 - 1)"
           : v < 0                                  ? paren(std::to_string(v))
                                                    : std::to_string(v);
  case TG_DTYPE_UINT32:
    return std::to_string(uint32_t(v)) + "u";
  case TG_DTYPE_INT64:
    if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807" + suffix64(false) + " - 1)";
    return v < 0 ? paren(std::to_string(v) + suffix64(false)) : std::to_string(v) + suffix64(false);
  case TG_DTYPE_UINT64:
    return std::to_string(uint64_t(v)) + suffix64(true);
  default: // 8- and 16-bit integers: a converted int literal
    return cast(dt, dtype_is_unsigned_int(dt) ? std::to_string(v & (dtype_size(dt) == 1 ? 0xff : 0xffff))
                                              : std::to_string(v));
  }
}

std::string CStyle::float_literal(double v, tg_dtype dt) const {
  if (!std::isfinite(v)) return nonfinite_literal(v, dt);
  char buf[64];
  std::snprintf(buf, sizeof buf, dt == TG_DTYPE_FLOAT64 ? "%.17g" : "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += dt == TG_DTYPE_FLOAT64 ? double_suffix() : float_suffix();
  return std::signbit(v) ? paren(s) : s;
}

const char* CStyle::math_name(tg_op op) {
  return op == TG_OP_SQRT   ? "sqrt"
         : op == TG_OP_EXP2 ? "exp2"
         : op == TG_OP_LOG2 ? "log2"
         : op == TG_OP_SIN  ? "sin"
                            : "trunc";
}

std::string CStyle::math(tg_op op, tg_dtype, const std::string& x) const {
  return std::string(math_name(op)) + "(" + x + ")";
}

std::string CStyle::element(const std::string& base, const std::string& idx, bool) const {
  return base + "[" + idx + "]";
}

std::string CStyle::load(tg_dtype dt, const std::string& base, const std::string& idx, bool local) const {
  std::string e = element(base, idx, local);
  if (dt == TG_DTYPE_BOOL) return paren(e + " != " + int_literal(0, TG_DTYPE_UINT8));
  if (dt == TG_DTYPE_FLOAT16) return bits_float(16, e);
  if (dt == TG_DTYPE_BFLOAT16) return bits_bf16(e);
  return e;
}

std::string CStyle::store(tg_dtype dt, const std::string& base, const std::string& idx, bool local,
                          const std::string& value) const {
  std::string v = value;
  if (dt == TG_DTYPE_BOOL)
    v = paren(value + " ? " + int_literal(1, TG_DTYPE_UINT8) + " : " + int_literal(0, TG_DTYPE_UINT8));
  else if (dt == TG_DTYPE_FLOAT16)
    v = float_bits(16, value);
  else if (dt == TG_DTYPE_BFLOAT16)
    v = bf16_bits(value);
  return element(base, idx, local) + " = " + v + ";";
}

std::string CStyle::mod(tg_dtype dt, const std::string& a, const std::string& b) const {
  return narrow(dt, paren(a + " % " + b));
}

void CStyle::check(uint32_t i, const Instruction& ins) const {
  if (ins.op == TG_OP_RANGE && ins.vcount != 1) refuse(i, "a vector RANGE counter is not supported");
  if (ins.op == TG_OP_IF && ir_.instructions[ins.src[0]].vcount != 1)
    refuse(i, "IF needs a scalar condition");
  if ((ins.op == TG_OP_SHL || ins.op == TG_OP_SHR) && ins.dtype == TG_DTYPE_BOOL)
    refuse(i, "shifts of bool are not supported");
  if (ins.op == TG_OP_SPECIAL && (ins.arg1 < 0 || ins.arg1 > 2)) refuse(i, "SPECIAL axis must be 0..2");
  if (ins.op == TG_OP_WMMA && !has_wmma()) refuse(i, "this dialect has no matrix multiply-accumulate (WMMA)");
  if (ins.op == TG_OP_MMA && !options_.mma)
    refuse(i, "the plugin gave the renderer no statement for matrix unit " + std::to_string(ins.arg0) +
                  " (render::Options::mma)");
  if (ins.op == TG_OP_WGMMA && !has_wgmma())
    refuse(i, "this dialect has no warpgroup matrix multiply-accumulate (WGMMA)");
}

tg_dtype CStyle::passed_as(tg_dtype dt) const {
  if (dt == TG_DTYPE_BOOL) return TG_DTYPE_INT32;
  if (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16) return TG_DTYPE_FLOAT32;
  return dt;
}

std::string CStyle::scalar_value(uint32_t k, tg_dtype dt) const {
  std::string name = scalar_name(k);
  tg_dtype p = passed_as(dt);
  if (p == dt) return name;
  if (dt == TG_DTYPE_BOOL) return paren(name + " != " + int_literal(0, p));
  return convert(p, dt, name);
}

// ---- helpers ----

void CStyle::refuse(uint32_t i, const std::string& why) const {
  const Instruction& ins = ir_.instructions[i];
  const char* op = op_name(ins.op);
  const char* dt = dtype_name(ins.dtype);
  throw PluginError(TG_ERROR_UNIMPLEMENTED, std::string("render.") + dialect_name(dialect_) + ": kernel '" +
                                                ir_.name + "' instruction " + std::to_string(i) + " (" +
                                                (op ? op : "?") + " " + (dt ? dt : "?") + "): " + why);
}

std::string CStyle::sanitized_name() const {
  std::string s;
  for (char c : ir_.name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

bool CStyle::uses(tg_dtype dt) const {
  for (const auto& ins : ir_.instructions)
    if (ins.dtype == dt) return true;
  for (tg_dtype b : ir_.buffer_dtypes)
    if (b == dt) return true;
  for (tg_dtype s : ir_.scalar_dtypes)
    if (s == dt) return true;
  return false;
}

tg_dtype CStyle::value_dtype(tg_dtype dt) {
  return dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16 ? TG_DTYPE_FLOAT32 : dt;
}

std::string CStyle::narrow(tg_dtype dt, const std::string& x) const {
  return dtype_size(dt) < 4 ? cast(dt, x) : x; // C promotes narrow integers to int
}

std::string CStyle::rounded(tg_dtype dt, const std::string& x) const {
  if (dt == TG_DTYPE_FLOAT16) return round_half(x);
  if (dt == TG_DTYPE_BFLOAT16) return round_bf16(x);
  return x;
}

std::string CStyle::literal(double v, tg_dtype dt) const {
  switch (dt) {
  case TG_DTYPE_FLOAT16:
    return float_literal(round_to_half(v), TG_DTYPE_FLOAT32);
  case TG_DTYPE_BFLOAT16:
    return float_literal(round_to_bf16(v), TG_DTYPE_FLOAT32);
  case TG_DTYPE_FLOAT32:
    return float_literal(double(float(v)), TG_DTYPE_FLOAT32);
  case TG_DTYPE_FLOAT64:
    return float_literal(v, TG_DTYPE_FLOAT64);
  default:
    return int_literal(int64_t(v), dt);
  }
}

std::string CStyle::convert(tg_dtype from, tg_dtype to, const std::string& x) const {
  if (from == to) return x;
  if (to == TG_DTYPE_BOOL) return paren(x + " != " + literal(0, from)); // NaN converts to true
  if (from == TG_DTYPE_BOOL) return paren(x + " ? " + literal(1, to) + " : " + literal(0, to));
  tg_dtype vf = value_dtype(from), vt = value_dtype(to);
  return rounded(to, vf == vt ? x : cast(vt, x)); // float -> int truncates toward zero
}

std::string CStyle::bitcast(tg_dtype from, tg_dtype to, const std::string& x) const {
  const tg_dtype u = unsigned_of_size(dtype_size(from));
  std::string bits;
  switch (from) {
  case TG_DTYPE_BOOL:
    bits = paren(x + " ? " + int_literal(1, u) + " : " + int_literal(0, u));
    break;
  case TG_DTYPE_FLOAT16:
    bits = float_bits(16, x);
    break;
  case TG_DTYPE_BFLOAT16:
    bits = bf16_bits(x);
    break;
  case TG_DTYPE_FLOAT32:
    bits = float_bits(32, x);
    break;
  case TG_DTYPE_FLOAT64:
    bits = float_bits(64, x);
    break;
  default:
    bits = from == u ? x : cast(u, x);
  }
  switch (to) {
  case TG_DTYPE_BOOL:
    return paren(bits + " != " + int_literal(0, u));
  case TG_DTYPE_FLOAT16:
    return bits_float(16, bits);
  case TG_DTYPE_BFLOAT16:
    return bits_bf16(bits);
  case TG_DTYPE_FLOAT32:
    return bits_float(32, bits);
  case TG_DTYPE_FLOAT64:
    return bits_float(64, bits);
  default:
    return to == u ? bits : cast(to, bits);
  }
}

std::string CStyle::int_arith(tg_dtype dt, const char* op, const std::string& a, const std::string& b) const {
  if (wraps_natively()) return narrow(dt, paren(a + " " + op + " " + b));
  // Signed overflow is undefined in C: compute in the unsigned type (at least 32 bits wide, so
  // narrow operands are not promoted to signed int) and convert back, which wraps.
  tg_dtype u = dtype_size(dt) == 8 ? TG_DTYPE_UINT64 : TG_DTYPE_UINT32;
  if (dt == u) return paren(a + " " + op + " " + b);
  return cast(dt, paren(cast(u, a) + " " + op + " " + cast(u, b)));
}

// ---- the walk ----

std::string CStyle::lane_name(uint32_t i, unsigned k) const {
  return "v" + std::to_string(i) + (ir_.instructions[i].vcount > 1 ? "_" + std::to_string(k) : "");
}

std::string CStyle::lane(uint32_t s, unsigned k) const {
  const auto& l = lanes_[s];
  return l.size() == 1 ? l[0] : l.at(k);
}

void CStyle::line(const std::string& text) { body_.push_back(std::string(size_t(depth_) * 2, ' ') + text); }

void CStyle::define(uint32_t i, unsigned k, const std::string& type_name, const std::string& expr) {
  std::string name = lane_name(i, k);
  if (hoisted_[i]) {
    decls_.push_back(type_name + " " + name + ";");
    line(name + " = " + expr + ";");
  } else {
    line(type_name + " " + name + " = " + expr + ";");
  }
  lanes_[i].resize(ir_.instructions[i].vcount);
  lanes_[i][k] = name;
}

std::string CStyle::element_index(uint32_t index_ins, unsigned k) const {
  std::string idx = lanes_[index_ins][0];
  if (k == 0) return idx;
  return paren(idx + " + " + int_literal(int64_t(k), index_dtype_[index_ins]));
}

std::string CStyle::bool_alu(uint32_t i, tg_op op, const std::vector<std::string>& a) const {
  switch (op) {
  case TG_OP_NEG:
    return paren("!" + a[0]);
  case TG_OP_ADD:
  case TG_OP_OR:
  case TG_OP_MAX:
    return paren(a[0] + " || " + a[1]);
  case TG_OP_MUL:
  case TG_OP_AND:
    return paren(a[0] + " && " + a[1]);
  case TG_OP_SUB:
  case TG_OP_XOR:
  case TG_OP_CMPNE:
    return paren(a[0] + " != " + a[1]);
  case TG_OP_CMPEQ:
    return paren(a[0] + " == " + a[1]);
  case TG_OP_CMPLT:
    return paren("!" + a[0] + " && " + a[1]);
  case TG_OP_IDIV:
    return a[0];
  case TG_OP_MOD:
    return int_literal(0, TG_DTYPE_BOOL);
  case TG_OP_MULACC:
    return paren(paren(a[0] + " && " + a[1]) + " || " + a[2]);
  default:
    refuse(i, "not defined for bool");
  }
}

std::string CStyle::alu(uint32_t i, unsigned k) const {
  const Instruction& ins = ir_.instructions[i];
  const tg_op op = ins.op;
  const tg_dtype dt = op == TG_OP_WHERE ? ins.dtype : ir_.instructions[ins.src[0]].dtype;
  std::vector<std::string> a;
  for (uint32_t s : ins.src) a.push_back(lane(s, k));
  if (dt == TG_DTYPE_BOOL && op != TG_OP_WHERE) return bool_alu(i, op, a);
  const bool fl = dtype_is_float(dt);
  auto binary = [&](const char* o) { return paren(a[0] + " " + o + " " + a[1]); };
  switch (op) {
  case TG_OP_NEG:
    return fl ? paren("-" + a[0]) : int_arith(dt, "-", int_literal(0, dt), a[0]);
  case TG_OP_RECIP:
    return rounded(dt, paren(literal(1.0, dt) + " / " + a[0]));
  case TG_OP_SQRT:
  case TG_OP_EXP2:
  case TG_OP_LOG2:
  case TG_OP_SIN:
    return rounded(dt, math(op, value_dtype(dt), a[0]));
  case TG_OP_TRUNC:
    return fl ? rounded(dt, math(op, value_dtype(dt), a[0])) : a[0];
  case TG_OP_ADD:
    return fl ? rounded(dt, binary("+")) : int_arith(dt, "+", a[0], a[1]);
  case TG_OP_SUB:
    return fl ? rounded(dt, binary("-")) : int_arith(dt, "-", a[0], a[1]);
  case TG_OP_MUL:
    return fl ? rounded(dt, binary("*")) : int_arith(dt, "*", a[0], a[1]);
  case TG_OP_IDIV:
    return narrow(dt, binary("/"));
  case TG_OP_MOD:
    return mod(dt, a[0], a[1]);
  case TG_OP_FDIV:
    return rounded(dt, binary("/"));
  case TG_OP_MAX: {
    std::string pick = paren(a[0] + " > " + a[1] + " ? " + a[0] + " : " + a[1]);
    // The languages' max/fmax return the other operand for NaN; the IR's MAX returns NaN.
    return fl ? paren(a[0] + " != " + a[0] + " ? " + a[0] + " : " + pick) : pick;
  }
  case TG_OP_CMPLT:
    return binary("<");
  case TG_OP_CMPNE:
    return binary("!=");
  case TG_OP_CMPEQ:
    return binary("==");
  case TG_OP_AND:
    return narrow(dt, binary("&"));
  case TG_OP_OR:
    return narrow(dt, binary("|"));
  case TG_OP_XOR:
    return narrow(dt, binary("^"));
  case TG_OP_SHL:
  case TG_OP_SHR: {
    // Masked like the CPU plugin: a shift by >= the bit width is undefined in every language here.
    std::string amount = paren(a[1] + " & " + int_literal(int64_t(dtype_size(dt) * 8 - 1), dt));
    if (op == TG_OP_SHL) return int_arith(dt, "<<", a[0], amount);
    return narrow(dt, paren(a[0] + " >> " + amount));
  }
  case TG_OP_WHERE:
    return paren(a[0] + " ? " + a[1] + " : " + a[2]);
  case TG_OP_MULACC:
    if (fl) return rounded(dt, paren(a[0] + " * " + a[1] + " + " + a[2]));
    return int_arith(dt, "+", int_arith(dt, "*", a[0], a[1]), a[2]);
  default:
    refuse(i, "not a supported op");
  }
}

// The instruction and lane that lane k of instruction i renames (through VECTORIZE and GEP).
std::pair<uint32_t, unsigned> CStyle::origin(uint32_t i, unsigned k) const {
  for (;;) {
    const Instruction& ins = ir_.instructions[i];
    if (ins.op == TG_OP_VECTORIZE) {
      i = ins.src[k];
      k = 0;
    } else if (ins.op == TG_OP_GEP) {
      k = unsigned(ins.arg0);
      i = ins.src[0];
    } else {
      return {i, k};
    }
  }
}

// Per lane pair (2j, 2j+1) of a WMMA fragment: the 2-lane local vector variable holding exactly
// that pair in its order, else "" (see wmma in cstyle.hpp).
std::vector<std::string> CStyle::words(uint32_t fragment) const {
  std::vector<std::string> out;
  for (unsigned k = 0; k + 1 < ir_.instructions[fragment].vcount; k += 2) {
    const auto lo = origin(fragment, k), hi = origin(fragment, k + 1);
    const auto it = pair_loads_.find(lo.first);
    const bool pair = it != pair_loads_.end() && lo.first == hi.first && lo.second == 0 && hi.second == 1;
    out.push_back(pair ? it->second : "");
  }
  return out;
}

// The instructions that read value v.
std::vector<uint32_t> CStyle::users(uint32_t v) const {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < ir_.instructions.size(); ++j)
    if (std::count(ir_.instructions[j].src.begin(), ir_.instructions[j].src.end(), v) > 0) out.push_back(j);
  return out;
}

// WGMMA i's C is an accumulator (DEFINE_ACC), each D of the chain from i on is read only as the
// next WGMMA's C, the last D is ASSIGNed to that accumulator, and nothing between i and the
// ASSIGN reads the accumulator.
bool CStyle::wgmma_chain_into_accumulator(uint32_t i) const {
  const uint32_t acc = ir_.instructions[i].src[2];
  if (ir_.instructions[acc].op != TG_OP_DEFINE_ACC) return false;
  for (uint32_t v = i;;) {
    const std::vector<uint32_t> u = users(v);
    if (u.size() != 1) return false;
    const Instruction& next = ir_.instructions[u[0]];
    if (next.op == TG_OP_WGMMA && next.src[2] == v) {
      v = u[0];
      continue;
    }
    if (next.op != TG_OP_ASSIGN || next.src[0] != acc || next.src[1] != v) return false;
    for (uint32_t j : users(acc))
      if (j > i && j < u[0]) return false;
    return true;
  }
}

// Between two WGMMAs of one run only index arithmetic may stand (constants, INDEX, integer ALU):
// anything else may read a result, so the run ends before it.
bool CStyle::wgmma_run_ends(uint32_t i) const {
  const auto& list = ir_.instructions;
  for (uint32_t j = i + 1; j < list.size(); ++j) {
    const Instruction& ins = list[j];
    if (ins.op == TG_OP_WGMMA) return false;
    const bool int_alu = ins.op >= TG_OP_NEG && ins.op <= TG_OP_MULACC && !dtype_is_float(ins.dtype);
    if (ins.op != TG_OP_CONST && ins.op != TG_OP_INDEX && !int_alu) return true;
  }
  return true;
}

void CStyle::emit(uint32_t i) {
  const Instruction& ins = ir_.instructions[i];
  const unsigned vc = ins.vcount;
  auto src = [&](size_t k) -> const Instruction& { return ir_.instructions[ins.src[k]]; };
  // GEP/VECTORIZE only rename lanes; a lane of an accumulator is copied so that it keeps the
  // value it had here even if an ASSIGN follows before its use.
  auto snapshot = [&](size_t k, unsigned src_lane, unsigned lane_out) {
    uint32_t s = ins.src[k];
    tg_op sop = ir_.instructions[s].op;
    if (sop == TG_OP_DEFINE_ACC || sop == TG_OP_ASSIGN) {
      define(i, lane_out, value_type(ins.dtype), lane(s, src_lane));
      return;
    }
    lanes_[i].resize(vc);
    lanes_[i][lane_out] = lane(s, src_lane);
  };
  switch (ins.op) {
  case TG_OP_DEFINE_GLOBAL:
    lanes_[i] = {"b" + std::to_string(ins.arg0)};
    return;
  case TG_OP_DEFINE_VAR:
    lanes_[i] = {scalar_value(uint32_t(ins.arg0), ins.dtype)};
    return;
  case TG_OP_DEFINE_LOCAL: {
    std::string name = "l" + std::to_string(i);
    locals_.push_back(local_array(name, ins.dtype, ins.arg0));
    lanes_[i] = {name};
    return;
  }
  case TG_OP_SPECIAL:
    lanes_[i] = {special(ins.arg0, ins.arg1)};
    return;
  case TG_OP_CONST:
    lanes_[i] = {dtype_is_float(ins.dtype) ? literal(ins.const_float(), ins.dtype)
                                           : int_literal(ins.arg0, ins.dtype)};
    return;
  case TG_OP_DEFINE_ACC:
    for (unsigned k = 0; k < vc; ++k) define(i, k, value_type(ins.dtype), lane(ins.src[0], k));
    return;
  case TG_OP_ASSIGN:
    for (unsigned k = 0; k < vc; ++k)
      if (lane(ins.src[0], k) != lane(ins.src[1], k)) // (a WGMMA chain updated it in place)
        line(lane(ins.src[0], k) + " = " + lane(ins.src[1], k) + ";");
    lanes_[i] = lanes_[ins.src[0]]; // reading an ASSIGN reads the accumulator
    return;
  case TG_OP_RANGE: {
    std::string name = lane_name(i, 0);
    if (std::string pragma = loop_pragma(i); !pragma.empty()) line(pragma);
    line("for (" + value_type(ins.dtype) + " " + name + " = " + lane(ins.src[0], 0) + "; " + name + " < " +
         lane(ins.src[1], 0) + "; " + name + "++) {");
    ++depth_;
    lanes_[i] = {name};
    return;
  }
  case TG_OP_IF:
    line("if (" + lane(ins.src[0], 0) + ") {");
    ++depth_;
    return;
  case TG_OP_ENDRANGE:
  case TG_OP_ENDIF:
    --depth_;
    line("}");
    if (ins.op == TG_OP_ENDRANGE)
      if (std::string after = loop_end(ins.src[0]); !after.empty()) line(after);
    return;
  case TG_OP_BARRIER:
    line(ins.arg0 > 0 ? barrier_in_flight(ins.arg0) : barrier());
    return;
  case TG_OP_INDEX: {
    tg_dtype d = src(1).dtype;
    std::string idx = lane(ins.src[1], 0);
    if (d == TG_DTYPE_BOOL) {
      idx = convert(d, TG_DTYPE_INT32, idx);
      d = TG_DTYPE_INT32;
    }
    index_dtype_[i] = d;
    define(i, 0, value_type(d), idx);
    return;
  }
  case TG_OP_LOAD: {
    if (async_copy_loads_[i]) return; // its STORE moves it (find_async_copies)
    const uint32_t p = ins.src[0];
    const Instruction& pi = ir_.instructions[p];
    const std::string& base = lanes_[pi.src[0]][0];
    if (std::string vt = local_vector_type(ins.dtype, vc);
        ins.src.size() == 1 && vc > 1 && pi.is_local() && !vt.empty()) {
      const std::string name = "v" + std::to_string(i);
      line(vt + " " + name + " = *((" + vt + "*)&" + element(base, element_index(p, 0), true) + ");");
      lanes_[i].resize(vc);
      for (unsigned k = 0; k < vc; ++k) lanes_[i][k] = local_vector_lane(ins.dtype, name, k);
      if (vc == 2) pair_loads_[i] = name;
      return;
    }
    if (std::string vt = aligned_vector_type(ins.dtype, vc);
        ins.src.size() == 1 && vc > 1 && !vt.empty() && ins.arg0 >= int64_t(vc * dtype_size(ins.dtype))) {
      const std::string name = "v" + std::to_string(i);
      line("const " + vt + " " + name + " = *((const " + vt + "*)&" +
           element(base, element_index(p, 0), pi.is_local()) + ");");
      lanes_[i].resize(vc);
      for (unsigned k = 0; k < vc; ++k) lanes_[i][k] = aligned_vector_lane(ins.dtype, name, k);
      return;
    }
    for (unsigned k = 0; k < vc; ++k) {
      std::string e = load(ins.dtype, base, element_index(p, k), pi.is_local());
      if (ins.src.size() == 1) {
        define(i, k, value_type(ins.dtype), e);
      } else { // a false gate reads no memory
        define(i, k, value_type(ins.dtype), lane(ins.src[2], k));
        const unsigned g = ir_.instructions[ins.src[1]].vcount > 1 ? k : 0; // gated per lane (IR 1.4)
        line("if (" + lane(ins.src[1], g) + ") " + lane_name(i, k) + " = " + e + ";");
      }
    }
    return;
  }
  case TG_OP_STORE: {
    const uint32_t p = ins.src[0];
    const Instruction& pi = ir_.instructions[p];
    const std::string& base = lanes_[pi.src[0]][0];
    const unsigned n = src(1).vcount;
    std::string gate = ins.src.size() == 3 ? "if (" + lane(ins.src[2], 0) + ") " : "";
    if (async_copy_loads_[ins.src[1]]) {
      const uint32_t g = src(1).src[0];
      line(gate +
           async_copy("&" + element(base, element_index(p, 0), true),
                      "&" + element(lanes_[ir_.instructions[g].src[0]][0], element_index(g, 0), false)));
      return;
    }
    // a gated one too: the last round of a staged tile's 16-byte copies (lower_stage.cpp)
    if (std::string vt = aligned_vector_type(pi.dtype, n);
        n > 1 && !vt.empty() && ins.arg0 >= int64_t(n * dtype_size(pi.dtype))) {
      std::vector<std::string> values;
      for (unsigned k = 0; k < n; ++k) values.push_back(lane(ins.src[1], k));
      line(gate + "*((" + vt + "*)&" + element(base, element_index(p, 0), pi.is_local()) +
           ") = " + aligned_vector_make(pi.dtype, values) + ";");
      return;
    }
    for (unsigned k = 0; k < src(1).vcount; ++k)
      line(gate + store(pi.dtype, base, element_index(p, k), pi.is_local(), lane(ins.src[1], k)));
    return;
  }
  case TG_OP_VECTORIZE:
    for (unsigned k = 0; k < vc; ++k) snapshot(k, 0, k);
    return;
  case TG_OP_GEP:
    snapshot(0, unsigned(ins.arg0), 0);
    return;
  case TG_OP_CAST:
    for (unsigned k = 0; k < vc; ++k)
      define(i, k, value_type(ins.dtype), convert(src(0).dtype, ins.dtype, lane(ins.src[0], k)));
    return;
  case TG_OP_BITCAST:
    for (unsigned k = 0; k < vc; ++k)
      define(i, k, value_type(ins.dtype), bitcast(src(0).dtype, ins.dtype, lane(ins.src[0], k)));
    return;
  case TG_OP_WMMA: { // D starts as a copy of C, which the dialect's statement updates in place
    std::vector<std::string> a, b, d;
    for (unsigned k = 0; k < src(0).vcount; ++k) a.push_back(lane(ins.src[0], k));
    for (unsigned k = 0; k < src(1).vcount; ++k) b.push_back(lane(ins.src[1], k));
    for (unsigned k = 0; k < vc; ++k) {
      define(i, k, value_type(ins.dtype), lane(ins.src[2], k));
      d.push_back(lane_name(i, k));
    }
    line(wmma(ins.arg0, src(0).dtype, a, b, d, words(ins.src[0]), words(ins.src[1])));
    return;
  }
  case TG_OP_MMA: { // D starts as a copy of C, which the plugin's statement updates in place
    MmaStatement st;
    st.unit = ins.arg0;
    st.a_dtype = src(0).dtype;
    st.b_dtype = src(1).dtype;
    st.c_dtype = ins.dtype;
    for (unsigned k = 0; k < src(0).vcount; ++k) st.a.push_back(lane(ins.src[0], k));
    for (unsigned k = 0; k < src(1).vcount; ++k) st.b.push_back(lane(ins.src[1], k));
    for (unsigned k = 0; k < vc; ++k) {
      define(i, k, value_type(ins.dtype), lane(ins.src[2], k));
      st.d.push_back(lane_name(i, k));
    }
    st.a_words = words(ins.src[0]);
    st.b_words = words(ins.src[1]);
    line(options_.mma(st));
    return;
  }
  case TG_OP_WGMMA: { // D starts as a copy of C; A and B are tiles in local memory
    // Within a run, a C that is the previous WGMMA's D and read by nothing else is updated in place:
    // D takes its variables. (A copy between two wgmmas of one run, with 4 ops per run, makes ptxas
    // serialize them: "wgmma.mma_async instructions are serialized due to non wgmma instructions
    // reading accumulator registers", C7514.)
    // Likewise the first of a chain whose C is an accumulator that the chain's last D is assigned
    // back to, with nothing else reading the accumulator in between: D takes the accumulator's
    // variables (the ASSIGN is then a self-assignment, not emitted), so no copy reads a wgmma's
    // registers after its run's wait_group 1.
    std::vector<std::string> d;
    const bool in_place = !hoisted_[i] && ((wgmma_open_ && src(2).op == TG_OP_WGMMA &&
                                            !hoisted_[ins.src[2]] && users(ins.src[2]).size() == 1) ||
                                           (!wgmma_open_ && wgmma_chain_into_accumulator(i)));
    if (in_place) {
      lanes_[i] = lanes_[ins.src[2]];
      d = lanes_[i];
    } else {
      for (unsigned k = 0; k < vc; ++k) {
        define(i, k, value_type(ins.dtype), lane(ins.src[2], k));
        d.push_back(lane_name(i, k));
      }
    }
    auto address = [&](size_t k) {
      const Instruction& index = src(k);
      return "&" + element(lane(index.src[0], 0), lane(ins.src[k], 0), true);
    };
    const bool first = !wgmma_open_, last = wgmma_run_ends(i);
    const std::string text = wgmma(ins.arg0, src(0).dtype, address(0), address(1), ins.arg1, d, first, last);
    for (size_t at = 0; at <= text.size();) { // one statement per line
      const size_t end = std::min(text.find('\n', at), text.size());
      line(text.substr(at, end - at));
      at = end + 1;
    }
    wgmma_open_ = !last;
    return;
  }
  default:
    if (ins.op >= TG_OP_NEG && ins.op <= TG_OP_MULACC) {
      for (unsigned k = 0; k < vc; ++k) define(i, k, value_type(ins.dtype), alu(i, k));
      return;
    }
    refuse(i, "not a supported op");
  }
}

// The STORE/LOAD pairs async_copy moves (see there): a 16-byte STORE (gated or not) into local
// memory whose value is a 16-byte LOAD (both aligned to 16) from a global buffer no STORE writes,
// used only there, with no scope opening or closing between the LOAD's INDEX and the STORE.
void CStyle::find_async_copies() {
  const auto& list = ir_.instructions;
  async_copy_loads_.assign(list.size(), 0);
  if (async_copy("l", "g").empty()) return;
  std::vector<uint32_t> uses(list.size(), 0);
  std::vector<char> written(list.size(), 0); // DEFINE_GLOBALs some STORE writes
  for (const auto& ins : list) {
    for (uint32_t s : ins.src) ++uses[s];
    if (ins.op == TG_OP_STORE) written[list[ins.src[0]].src[0]] = 1;
  }
  for (uint32_t i = 0; i < list.size(); ++i) {
    const Instruction& st = list[i];
    if (st.op != TG_OP_STORE || st.src.size() < 2 || !list[st.src[0]].is_local() || st.arg0 < 16) continue;
    const uint32_t v = st.src[1];
    const Instruction& ld = list[v];
    if (ld.op != TG_OP_LOAD || ld.src.size() != 1 || uses[v] != 1 || ld.arg0 < 16 ||
        int64_t(ld.vcount) * dtype_size(ld.dtype) != 16)
      continue;
    const uint32_t gi = ld.src[0];
    const Instruction& g = list[gi];
    if (g.op != TG_OP_INDEX || list[g.src[0]].op != TG_OP_DEFINE_GLOBAL || written[g.src[0]]) continue;
    bool same_scope = true;
    for (uint32_t j = gi; j < i && same_scope; ++j)
      same_scope = list[j].op != TG_OP_RANGE && list[j].op != TG_OP_ENDRANGE && list[j].op != TG_OP_IF &&
                   list[j].op != TG_OP_ENDIF;
    if (!same_scope) continue;
    async_copy_loads_[v] = 1;
    async_copies_ = true;
  }
}

Source CStyle::render() {
  const auto& list = ir_.instructions;
  for (uint32_t i = 0; i < list.size(); ++i) check(i, list[i]);
  out_.dialect = dialect_;
  out_.entry = entry_name();
  for (uint32_t k = 0; k < ir_.buffer_dtypes.size(); ++k)
    out_.buffers.push_back({k, ir_.buffer_dtypes[k], k});
  uint32_t offset = 0;
  for (uint32_t k = 0; k < ir_.scalar_dtypes.size(); ++k) {
    tg_dtype p = passed_as(ir_.scalar_dtypes[k]);
    uint32_t size = uint32_t(dtype_size(p));
    offset = (offset + size - 1) / size * size; // natural alignment (std430 for scalars)
    out_.scalars.push_back({k, ir_.scalar_dtypes[k], p, offset, size});
    offset += size;
  }
  for (const auto& ins : list) {
    out_.uses_local_memory |= ins.op == TG_OP_DEFINE_LOCAL;
    out_.uses_barrier |= ins.op == TG_OP_BARRIER;
  }

  hoisted_ = values_used_outside_scope(ir_);
  for (uint32_t i = 0; i < list.size(); ++i)
    if (list[i].op == TG_OP_DEFINE_ACC) hoisted_[i] = 1; // registers live for the whole kernel
  lanes_.assign(list.size(), {});
  index_dtype_.assign(list.size(), TG_DTYPE_INT32);
  find_async_copies();
  depth_ = body_depth();
  for (uint32_t i = 0; i < list.size(); ++i) emit(i);

  std::string body;
  const std::string indent(size_t(body_depth()) * 2, ' ');
  for (const auto& d : decls_) body += indent + d + "\n";
  for (const auto& l : body_) body += l + "\n";
  out_.text = assemble(body);
  return std::move(out_);
}

// ---- float16/bfloat16 helpers, in integer code every dialect can compile ----

namespace {

std::string spell(std::string text, const HelperSpelling& s) {
  const std::pair<const char*, const std::string*> tokens[] = {{"CAST_U16(", &s.cast_u16},
                                                               {"CAST_U32(", &s.cast_u32},
                                                               {"CAST_F32(", &s.cast_f32},
                                                               {"AS_U32(", &s.as_u32},
                                                               {"AS_F32(", &s.as_f32},
                                                               {"FN ", &s.fn},
                                                               {"U16", &s.u16},
                                                               {"U32", &s.u32},
                                                               {"F32", &s.f32}};
  for (const auto& [token, with] : tokens) {
    const std::string t = token;
    for (size_t at = text.find(t); at != std::string::npos; at = text.find(t, at + with->size()))
      text.replace(at, t.size(), *with);
  }
  return text;
}

} // namespace

std::string half_helpers(const HelperSpelling& s) {
  // float -> float16 bits, round to nearest even; NaN stays NaN, overflow becomes inf.
  return spell(R"(FN U16 tg_f2h(F32 f) {
  U32 x = AS_U32(f);
  U32 sign = (x >> 16) & 0x8000u;
  U32 e = (x >> 23) & 0xffu;
  U32 m = x & 0x7fffffu;
  if (e == 0xffu) return CAST_U16(sign | 0x7c00u | (m != 0u ? 0x200u | (m >> 13) : 0u));
  if (e > 142u) return CAST_U16(sign | 0x7c00u);
  if (e < 101u) return CAST_U16(sign);
  U32 h;
  U32 rest;
  U32 half_ulp;
  if (e >= 113u) {
    h = ((e - 112u) << 10) | (m >> 13);
    rest = m & 0x1fffu;
    half_ulp = 0x1000u;
  } else {
    U32 shift = 126u - e;
    U32 mm = m | 0x800000u;
    h = mm >> shift;
    rest = mm & ((1u << shift) - 1u);
    half_ulp = 1u << (shift - 1u);
  }
  if (rest > half_ulp || (rest == half_ulp && (h & 1u) != 0u)) h += 1u;
  return CAST_U16(sign | h);
}
FN F32 tg_h2f(U32 h) {
  U32 sign = (h & 0x8000u) << 16;
  U32 e = (h >> 10) & 0x1fu;
  U32 m = h & 0x3ffu;
  if (e == 0x1fu) return AS_F32(sign | 0x7f800000u | (m << 13));
  if (e != 0u) return AS_F32(sign | ((e + 112u) << 23) | (m << 13));
  F32 r = CAST_F32(m) * AS_F32(0x33800000u);
  return sign != 0u ? -r : r;
}
)",
               s);
}

std::string bf16_helpers(const HelperSpelling& s) {
  // float -> bfloat16 bits, round to nearest even; NaN stays a (quiet) NaN.
  return spell(R"(FN U16 tg_f2bf(F32 f) {
  U32 b = AS_U32(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return CAST_U16((b >> 16) | 0x40u);
  return CAST_U16((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
FN F32 tg_bf2f(U32 b) { return AS_F32(b << 16); }
)",
               s);
}

} // namespace tg::sdk::render
