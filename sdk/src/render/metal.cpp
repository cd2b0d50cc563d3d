// The Metal Shading Language dialect (MSL 2.x). Nothing on our machines compiles Metal, so its
// output is checked against golden text only (tests/data/render/metal). float64 does not exist
// in Metal and is refused; bfloat16 is stored as ushort and converted by integer helpers.
#include "cstyle.hpp"

#include <cmath>

namespace tg::sdk::render {
namespace {

class MetalRenderer final : public CStyle {
public:
  MetalRenderer(const KernelIR& ir, const Options& options) : CStyle(Dialect::metal, ir, options) {}

private:
  std::string type(tg_dtype dt) const override {
    static const char* names[] = {"void", "bool", "char",  "uchar", "short",  "ushort", "int",
                                  "uint", "long", "ulong", "half",  "ushort", "float",  "double"};
    return names[dt];
  }
  std::string memory_type(tg_dtype dt, bool local) const override {
    if (dt == TG_DTYPE_FLOAT16) return "half";
    return CStyle::memory_type(dt, local);
  }
  std::string suffix64(bool is_unsigned) const override { return is_unsigned ? "UL" : "L"; }
  std::string nonfinite_literal(double v, tg_dtype) const override {
    return std::isnan(v) ? "NAN" : v > 0 ? "INFINITY" : "(-INFINITY)";
  }
  std::string special(int64_t kind, int64_t axis) const override {
    static const char* xyz[] = {"x", "y", "z"};
    return std::string(kind == TG_SPECIAL_GROUP_ID ? "((int)tg_group." : "((int)tg_local.") + xyz[axis] + ")";
  }
  std::string barrier() const override { return "threadgroup_barrier(mem_flags::mem_threadgroup);"; }
  std::string local_array(const std::string& name, tg_dtype dt, int64_t count) const override {
    return "threadgroup " + memory_type(dt, true) + " " + name + "[" + std::to_string(count) + "];";
  }
  std::string load(tg_dtype dt, const std::string& base, const std::string& idx, bool local) const override {
    if (dt == TG_DTYPE_FLOAT16) return "float(" + element(base, idx, local) + ")";
    return CStyle::load(dt, base, idx, local);
  }
  std::string store(tg_dtype dt, const std::string& base, const std::string& idx, bool local,
                    const std::string& value) const override {
    if (dt == TG_DTYPE_FLOAT16) return element(base, idx, local) + " = half(" + value + ");";
    return CStyle::store(dt, base, idx, local, value);
  }
  std::string round_half(const std::string& x) const override { return "float(half(" + x + "))"; }
  std::string float_bits(int width, const std::string& x) const override {
    return width == 16 ? "as_type<ushort>(half(" + x + "))" : "as_type<uint>(" + x + ")";
  }
  std::string bits_float(int width, const std::string& u) const override {
    return width == 16 ? "float(as_type<half>(ushort(" + u + ")))" : "as_type<float>(" + u + ")";
  }
  void check(uint32_t i, const Instruction& ins) const override {
    CStyle::check(i, ins);
    if (ins.dtype == TG_DTYPE_FLOAT64) refuse(i, "Metal has no float64");
    for (uint32_t s : ins.src)
      if (ir_.instructions[s].dtype == TG_DTYPE_FLOAT64) refuse(i, "Metal has no float64");
  }

  std::string assemble(const std::string& body) override {
    std::string s = "#include <metal_stdlib>\nusing namespace metal;\n";
    HelperSpelling sp{"static inline ", "ushort", "uint",           "float",          "ushort(",
                      "uint(",          "float(", "as_type<uint>(", "as_type<float>("};
    if (uses(TG_DTYPE_BFLOAT16)) s += bf16_helpers(sp);
    s += "kernel void " + out_.entry + "(";
    uint32_t slot = 0;
    for (const auto& b : out_.buffers)
      s += "device " + memory_type(b.dtype, false) + "* b" + std::to_string(b.index) + " [[buffer(" +
           std::to_string(slot++) + ")]], ";
    for (const auto& p : out_.scalars)
      s += "constant " + type(p.passed_as) + "& s" + std::to_string(p.index) + " [[buffer(" +
           std::to_string(slot++) + ")]], ";
    s += "uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local "
         "[[thread_position_in_threadgroup]]) {\n";
    for (const auto& l : locals_) s += "  " + l + "\n";
    return s + body + "}\n";
  }
};

} // namespace

Source render_metal(const KernelIR& ir, const Options& options) {
  Source s = MetalRenderer(ir, options).render();
  for (auto& p : s.scalars) p.offset = 0; // each scalar is its own constant buffer
  return s;
}

} // namespace tg::sdk::render
