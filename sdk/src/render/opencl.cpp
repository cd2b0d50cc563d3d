// The OpenCL C 1.2 dialect. float16 buffers without cl_khr_fp16 are read and written with
// vload_half/vstore_half (allowed on every device) and rounded in registers by integer helpers;
// with Options::opencl_fp16 the half type is used directly. float64 enables cl_khr_fp64.
#include "cstyle.hpp"

#include <cmath>

namespace tg::sdk::render {
namespace {

class OpenCLRenderer final : public CStyle {
public:
  OpenCLRenderer(const KernelIR& ir, const Options& options) : CStyle(Dialect::opencl, ir, options) {}

private:
  bool fp16() const { return options_.opencl_fp16; }
  std::string type(tg_dtype dt) const override {
    static const char* names[] = {"void", "bool", "char",  "uchar", "short",  "ushort", "int",
                                  "uint", "long", "ulong", "half",  "ushort", "float",  "double"};
    return names[dt];
  }
  std::string memory_type(tg_dtype dt, bool local) const override {
    // Without cl_khr_fp16 only pointers to half exist: a local array of half holds its
    // (already rounded) values as float.
    if (dt == TG_DTYPE_FLOAT16) return fp16() || !local ? "half" : "float";
    return CStyle::memory_type(dt, local);
  }
  std::string suffix64(bool is_unsigned) const override { return is_unsigned ? "UL" : "L"; }
  std::string nonfinite_literal(double v, tg_dtype dt) const override {
    std::string s = std::isnan(v) ? "NAN" : v > 0 ? "INFINITY" : "(-INFINITY)";
    return dt == TG_DTYPE_FLOAT64 ? "((double)" + s + ")" : s;
  }
  std::string special(int64_t kind, int64_t axis) const override {
    return std::string(kind == TG_SPECIAL_GROUP_ID ? "((int)get_group_id(" : "((int)get_local_id(") +
           std::to_string(axis) + "))";
  }
  std::string barrier() const override { return "barrier(CLK_LOCAL_MEM_FENCE);"; }
  std::string local_array(const std::string& name, tg_dtype dt, int64_t count) const override {
    return "__local " + memory_type(dt, true) + " " + name + "[" + std::to_string(count) + "];";
  }
  std::string load(tg_dtype dt, const std::string& base, const std::string& idx, bool local) const override {
    if (dt != TG_DTYPE_FLOAT16) return CStyle::load(dt, base, idx, local);
    if (fp16()) return "((float)" + element(base, idx, local) + ")";
    return local ? element(base, idx, local) : "vload_half(" + idx + ", " + base + ")";
  }
  std::string store(tg_dtype dt, const std::string& base, const std::string& idx, bool local,
                    const std::string& value) const override {
    if (dt != TG_DTYPE_FLOAT16) return CStyle::store(dt, base, idx, local, value);
    if (fp16()) return element(base, idx, local) + " = (half)(" + value + ");";
    if (local) return element(base, idx, local) + " = " + value + ";";
    return "vstore_half(" + value + ", " + idx + ", " + base + ");"; // rounds to nearest even
  }
  std::string round_half(const std::string& x) const override {
    return fp16() ? "((float)(half)(" + x + "))" : CStyle::round_half(x);
  }
  std::string float_bits(int width, const std::string& x) const override {
    if (width == 16) return fp16() ? "as_ushort((half)(" + x + "))" : "tg_f2h(" + x + ")";
    return (width == 32 ? "as_uint(" : "as_ulong(") + x + ")";
  }
  std::string bits_float(int width, const std::string& u) const override {
    if (width == 16) return fp16() ? "((float)as_half((ushort)(" + u + ")))" : "tg_h2f(" + u + ")";
    return (width == 32 ? "as_float(" : "as_double(") + u + ")";
  }

  std::string assemble(const std::string& body) override {
    std::string s;
    if (uses(TG_DTYPE_FLOAT64)) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    if (fp16() && uses(TG_DTYPE_FLOAT16)) s += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
    HelperSpelling sp{"",        "ushort",   "uint",     "float",    "(ushort)(",
                      "(uint)(", "(float)(", "as_uint(", "as_float("};
    if (!fp16() && uses(TG_DTYPE_FLOAT16)) s += half_helpers(sp);
    if (uses(TG_DTYPE_BFLOAT16)) s += bf16_helpers(sp);
    s += "__kernel void " + out_.entry + "(";
    std::string sep;
    for (const auto& b : out_.buffers) {
      s += sep + "__global " + memory_type(b.dtype, false) + "* b" + std::to_string(b.index);
      sep = ", ";
    }
    for (const auto& p : out_.scalars) {
      s += sep + type(p.passed_as) + " s" + std::to_string(p.index);
      sep = ", ";
    }
    s += ") {\n";
    for (const auto& l : locals_) s += "  " + l + "\n";
    return s + body + "}\n";
  }
};

} // namespace

Source render_opencl(const KernelIR& ir, const Options& options) {
  return OpenCLRenderer(ir, options).render();
}

} // namespace tg::sdk::render
