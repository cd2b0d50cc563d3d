// The GLSL 450 compute dialect for Vulkan 1.1+. Buffers are std430 storage blocks in set 0
// (binding = DEFINE_GLOBAL index), scalars one push-constant block, the work-group size three
// specialization constants (ids 0..2). 8/16/64-bit types come from
// GL_EXT_shader_explicit_arithmetic_types and the 8/16-bit storage extensions; glslang declares
// only the capabilities a shader uses. GLSL has exp2/log2/sin for 32-bit floats only: float64 ones
// call the series below (exact to a few ulp for |x| < 2^20 in sin).
#include "cstyle.hpp"

#include <cmath>

namespace tg::sdk::render {
namespace {

// float64 exp2, log2 and sin: argument reduction to a small interval, then a Taylor (exp, sin,
// cos) or atanh (log) series taken far past double precision.
constexpr const char* kFloat64Math = R"(double tg_f64_nan() { return packDouble2x32(uvec2(0u, 0x7ff80000u)); }
double tg_f64_inf() { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }
double tg_exp2_f64(double x) {
  if (isnan(x)) return x;
  if (x >= 1024.0lf) return tg_f64_inf();
  if (x < -1080.0lf) return 0.0lf;
  double n = floor(x + 0.5lf);
  double f = (x - n) * 0.69314718055994530942lf;
  double term = 1.0lf, sum = 1.0lf;
  for (int k = 1; k < 20; ++k) { term *= f / double(k); sum += term; }
  int e = int(n);
  return ldexp(ldexp(sum, e / 2), e - e / 2);
}
double tg_log2_f64(double x) {
  if (isnan(x) || x < 0.0lf) return tg_f64_nan();
  if (x == 0.0lf) return -tg_f64_inf();
  if (isinf(x)) return x;
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752440lf) { m *= 2.0lf; e -= 1; }
  double s = (m - 1.0lf) / (m + 1.0lf), s2 = s * s, term = s, sum = s;
  for (int k = 3; k < 41; k += 2) { term *= s2; sum += term / double(k); }
  return double(e) + sum * 2.88539008177792681472lf;
}
double tg_sin_f64(double x) {
  if (isnan(x) || isinf(x)) return tg_f64_nan();
  double k = floor(x * 0.63661977236758134308lf + 0.5lf);
  double r = ((x - k * 1.57079632673412561417lf) - k * 6.07710050630396597660e-11lf) - k * 2.02226624871116645580e-21lf;
  double r2 = r * r, s = r, t = r, c = 1.0lf, u = 1.0lf;
  for (int i = 1; i < 13; ++i) {
    t *= -r2 / double((2 * i) * (2 * i + 1)); s += t;
    u *= -r2 / double((2 * i - 1) * (2 * i)); c += u;
  }
  int q = int(mod(k, 4.0lf));
  return q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;
}
)";

class GlslRenderer final : public CStyle {
public:
  GlslRenderer(const KernelIR& ir, const Options& options) : CStyle(Dialect::glsl, ir, options) {}

private:
  std::string type(tg_dtype dt) const override {
    static const char* names[] = {"void",      "bool",     "int8_t", "uint8_t", "int16_t",
                                  "uint16_t",  "int",      "uint",   "int64_t", "uint64_t",
                                  "float16_t", "uint16_t", "float",  "double"};
    return names[dt];
  }
  std::string memory_type(tg_dtype dt, bool local) const override {
    if (dt == TG_DTYPE_FLOAT16) return "float16_t";
    return CStyle::memory_type(dt, local);
  }
  std::string cast(tg_dtype to, const std::string& x) const override { return type(to) + "(" + x + ")"; }
  std::string suffix64(bool is_unsigned) const override { return is_unsigned ? "ul" : "l"; }
  std::string float_suffix() const override { return ""; }
  std::string double_suffix() const override { return "lf"; }
  std::string nonfinite_literal(double v, tg_dtype dt) const override {
    if (dt == TG_DTYPE_FLOAT64)
      return std::string("packDouble2x32(uvec2(0u, ") +
             (std::isnan(v) ? "0x7ff80000u"
              : v > 0       ? "0x7ff00000u"
                            : "0xfff00000u") +
             "))";
    return std::string("uintBitsToFloat(") +
           (std::isnan(v) ? "0x7fc00000u"
            : v > 0       ? "0x7f800000u"
                          : "0xff800000u") +
           ")";
  }
  std::string special(int64_t kind, int64_t axis) const override {
    static const char* xyz[] = {"x", "y", "z"};
    return std::string(kind == TG_SPECIAL_GROUP_ID ? "int(gl_WorkGroupID." : "int(gl_LocalInvocationID.") +
           xyz[axis] + ")";
  }
  std::string barrier() const override { return "barrier();"; } // also orders shared memory in Vulkan
  std::string local_array(const std::string& name, tg_dtype dt, int64_t count) const override {
    return "shared " + memory_type(dt, true) + " " + name + "[" + std::to_string(count) + "];";
  }
  // GLSL indexes arrays with 32-bit integers only.
  std::string element(const std::string& base, const std::string& idx, bool local) const override {
    return base + (local ? "[int(" : ".d[int(") + idx + ")]";
  }
  std::string load(tg_dtype dt, const std::string& base, const std::string& idx, bool local) const override {
    if (dt == TG_DTYPE_FLOAT16) return "float(" + element(base, idx, local) + ")";
    return CStyle::load(dt, base, idx, local);
  }
  std::string store(tg_dtype dt, const std::string& base, const std::string& idx, bool local,
                    const std::string& value) const override {
    if (dt == TG_DTYPE_FLOAT16) return element(base, idx, local) + " = float16_t(" + value + ");";
    return CStyle::store(dt, base, idx, local, value);
  }
  // In registers, float16 rounding is integer arithmetic: NVIDIA's driver folds the round trip
  // float(float16_t(x)) away (values one float16 ulp off; docs/vulkan.md), the integers it cannot.
  std::string round_half(const std::string& x) const override { return "tg_h2f(uint(tg_f2h(" + x + ")))"; }
  std::string float_bits(int width, const std::string& x) const override {
    if (width == 16) return "float16BitsToUint16(float16_t(" + x + "))";
    return (width == 32 ? "floatBitsToUint(" : "doubleBitsToUint64(") + x + ")";
  }
  std::string bits_float(int width, const std::string& u) const override {
    if (width == 16) return "float(uint16BitsToFloat16(uint16_t(" + u + ")))";
    return (width == 32 ? "uintBitsToFloat(" : "uint64BitsToDouble(") + u + ")";
  }
  std::string mod(tg_dtype dt, const std::string& a, const std::string& b) const override {
    // GLSL's % is undefined for negative operands (glslang emits OpSMod: sign of the divisor).
    return narrow(dt, "(" + a + " - (" + a + " / " + b + ") * " + b + ")");
  }
  bool wraps_natively() const override { return true; }
  tg_dtype passed_as(tg_dtype dt) const override {
    switch (dt) {
    case TG_DTYPE_INT8:
    case TG_DTYPE_INT16:
      return TG_DTYPE_INT32;
    case TG_DTYPE_UINT8:
    case TG_DTYPE_UINT16:
      return TG_DTYPE_UINT32;
    default:
      return CStyle::passed_as(dt);
    }
  }
  std::string scalar_name(uint32_t k) const override { return "tg_scalars.s" + std::to_string(k); }
  std::string entry_name() const override { return "main"; }
  std::string math(tg_op op, tg_dtype dt, const std::string& x) const override {
    if (dt == TG_DTYPE_FLOAT64 && (op == TG_OP_EXP2 || op == TG_OP_LOG2 || op == TG_OP_SIN))
      return std::string(op == TG_OP_EXP2   ? "tg_exp2_f64("
                         : op == TG_OP_LOG2 ? "tg_log2_f64("
                                            : "tg_sin_f64(") +
             x + ")";
    return CStyle::math(op, dt, x);
  }

  std::string assemble(const std::string& body) override {
    std::string s = "#version 450\n"
                    "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
                    "#extension GL_EXT_shader_8bit_storage : require\n"
                    "#extension GL_EXT_shader_16bit_storage : require\n";
    const auto& ls = options_.glsl_local_size;
    s += "layout(local_size_x = " + std::to_string(ls[0]) + ", local_size_y = " + std::to_string(ls[1]) +
         ", local_size_z = " + std::to_string(ls[2]) + ") in;\n";
    s += "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n";
    for (const auto& b : out_.buffers) {
      std::string k = std::to_string(b.index);
      s += "layout(std430, set = 0, binding = " + std::to_string(b.binding) + ") buffer tg_buffer" + k +
           " { " + memory_type(b.dtype, false) + " d[]; } b" + k + ";\n";
    }
    if (!out_.scalars.empty()) {
      s += "layout(push_constant, std430) uniform tg_scalar_block {";
      for (const auto& p : out_.scalars)
        s += " layout(offset = " + std::to_string(p.offset) + ") " + type(p.passed_as) + " s" +
             std::to_string(p.index) + ";";
      s += " } tg_scalars;\n";
    }
    for (const auto& l : locals_) s += l + "\n";
    HelperSpelling sp{"",       "uint16_t",         "uint",
                      "float",  "uint16_t(",        "uint(",
                      "float(", "floatBitsToUint(", "uintBitsToFloat("};
    if (uses(TG_DTYPE_FLOAT16)) s += half_helpers(sp);
    if (uses(TG_DTYPE_BFLOAT16)) s += bf16_helpers(sp);
    if (uses(TG_DTYPE_FLOAT64)) s += kFloat64Math;
    return s + "void main() {\n" + body + "}\n";
  }
};

} // namespace

Source render_glsl(const KernelIR& ir, const Options& options) {
  Source s = GlslRenderer(ir, options).render();
  uint32_t end = 0, align = 4;
  for (const auto& p : s.scalars) {
    end = std::max(end, p.offset + p.size);
    align = std::max(align, p.size);
  }
  s.push_constant_bytes = (end + align - 1) / align * align;
  return s;
}

} // namespace tg::sdk::render
