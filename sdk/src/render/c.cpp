// The C dialect: self-contained C99 (stdint.h, math.h, string.h) whose entry runs one work group,
// looping over its local ids (render.hpp, CKernelFn). float16/bfloat16 live as their 16-bit
// patterns in memory and are converted by helper functions emitted into the source.
#include "cstyle.hpp"

#include <cmath>

namespace tg::sdk::render {
namespace {

class CRenderer final : public CStyle {
public:
  CRenderer(const KernelIR& ir, const Options& options) : CStyle(Dialect::c, ir, options) {}

private:
  std::string type(tg_dtype dt) const override {
    switch (dt) {
    case TG_DTYPE_BOOL:
      return "_Bool";
    case TG_DTYPE_INT8:
      return "int8_t";
    case TG_DTYPE_UINT8:
      return "uint8_t";
    case TG_DTYPE_INT16:
      return "int16_t";
    case TG_DTYPE_UINT16:
      return "uint16_t";
    case TG_DTYPE_INT32:
      return "int32_t";
    case TG_DTYPE_UINT32:
      return "uint32_t";
    case TG_DTYPE_INT64:
      return "int64_t";
    case TG_DTYPE_UINT64:
      return "uint64_t";
    case TG_DTYPE_FLOAT64:
      return "double";
    default:
      return "float";
    }
  }
  std::string int_literal(int64_t v, tg_dtype dt) const override {
    if (dt == TG_DTYPE_BOOL) return v != 0 ? "1" : "0"; // C99 has no true/false without stdbool.h
    return CStyle::int_literal(v, dt);
  }
  std::string nonfinite_literal(double v, tg_dtype dt) const override {
    std::string s = std::isnan(v) ? "NAN" : v > 0 ? "INFINITY" : "(-INFINITY)";
    return dt == TG_DTYPE_FLOAT64 ? "((double)" + s + ")" : s;
  }
  std::string special(int64_t kind, int64_t axis) const override {
    static const char* group[] = {"group_x", "group_y", "group_z"};
    static const char* local[] = {"lx", "ly", "lz"};
    return kind == TG_SPECIAL_GROUP_ID ? group[axis] : local[axis];
  }
  std::string barrier() const override { return ""; }
  std::string local_array(const std::string&, tg_dtype, int64_t) const override { return ""; }
  std::string math(tg_op op, tg_dtype dt, const std::string& x) const override {
    return std::string(math_name(op)) + (dt == TG_DTYPE_FLOAT64 ? "" : "f") + "(" + x + ")";
  }
  std::string float_bits(int width, const std::string& x) const override {
    return (width == 16 ? "tg_f2h(" : width == 32 ? "tg_f32_bits(" : "tg_f64_bits(") + x + ")";
  }
  std::string bits_float(int width, const std::string& u) const override {
    return (width == 16 ? "tg_h2f(" : width == 32 ? "tg_bits_f32(" : "tg_bits_f64(") + u + ")";
  }
  void check(uint32_t i, const Instruction& ins) const override {
    CStyle::check(i, ins);
    if (ins.op == TG_OP_BARRIER)
      refuse(i, "the C dialect runs the work items of a group one after another, so it has no barrier");
    if (ins.op == TG_OP_DEFINE_LOCAL)
      refuse(i, "the C dialect has no work-group local memory (it would need a barrier to be useful)");
  }
  tg_dtype passed_as(tg_dtype dt) const override { return dt; }
  int body_depth() const override { return 2; }

  // scalars[k] holds tg_scalar_arg.value: int64 for signed and bool, uint64, or double bits.
  std::string decode_scalar(uint32_t k, tg_dtype dt) const {
    std::string slot = "scalars[" + std::to_string(k) + "]";
    if (dt == TG_DTYPE_BOOL) return "(" + slot + " != 0)";
    if (dtype_is_float(dt)) return convert(TG_DTYPE_FLOAT64, dt, "tg_bits_f64(" + slot + ")");
    if (dtype_is_signed_int(dt)) return convert(TG_DTYPE_INT64, dt, "(int64_t)" + slot);
    return convert(TG_DTYPE_UINT64, dt, slot);
  }

  std::string assemble(const std::string& body) override {
    std::string s = "#include <stdint.h>\n#include <math.h>\n#include <string.h>\n\n";
    s += "static inline uint32_t tg_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
         "static inline float tg_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
         "static inline uint64_t tg_f64_bits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }\n"
         "static inline double tg_bits_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }\n";
    HelperSpelling sp{"static inline ", "uint16_t", "uint32_t",     "float",       "(uint16_t)(",
                      "(uint32_t)(",    "(float)(", "tg_f32_bits(", "tg_bits_f32("};
    if (uses(TG_DTYPE_FLOAT16)) s += half_helpers(sp);
    if (uses(TG_DTYPE_BFLOAT16)) s += bf16_helpers(sp);
    s +=
        "\nvoid " + out_.entry +
        "(void* const* buffers, const uint64_t* scalars, int32_t group_x, int32_t group_y, int32_t group_z,\n"
        "    int32_t local_x, int32_t local_y, int32_t local_z) {\n";
    s += "  (void)buffers; (void)scalars; (void)group_x; (void)group_y; (void)group_z;\n";
    for (const auto& b : out_.buffers) {
      std::string t = memory_type(b.dtype, false);
      s += "  " + t + "* b" + std::to_string(b.index) + " = (" + t + "*)buffers[" + std::to_string(b.index) +
           "];\n";
    }
    for (const auto& p : out_.scalars)
      s += "  " + value_type(p.dtype) + " s" + std::to_string(p.index) + " = " +
           decode_scalar(p.index, p.dtype) + ";\n";
    s += "  for (int32_t lz = 0; lz < local_z; ++lz)\n"
         "  for (int32_t ly = 0; ly < local_y; ++ly)\n"
         "  for (int32_t lx = 0; lx < local_x; ++lx) {\n"
         "    (void)lx; (void)ly; (void)lz;\n";
    s += body;
    s += "  }\n}\n";
    return s;
  }
};

} // namespace

Source render_c(const KernelIR& ir, const Options& options) {
  Source s = CRenderer(ir, options).render();
  for (auto& p : s.scalars) { // one 8-byte slot per scalar
    p.offset = p.index * 8;
    p.size = 8;
  }
  return s;
}

} // namespace tg::sdk::render
