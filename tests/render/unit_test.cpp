// Scope analysis and the renderers' refusals and declarations, on small hand-made programs.
#include <tg/sdk/plugin.hpp>
#include <tg/sdk/render/render.hpp>
#include <tg/sdk/scopes.hpp>

#include <boost/test/unit_test.hpp>

namespace {

using tg::sdk::Instruction;
using tg::sdk::KernelBuilder;
using tg::sdk::KernelIR;
using tg::sdk::render::Dialect;

// %4 is made inside the RANGE and used after ENDRANGE: invalid for the validator, but renderers
// must still declare it before the loop when a transformed program does this.
KernelIR escaping_value() {
  KernelIR ir;
  ir.name = "escape";
  auto add = [&](Instruction i) { ir.instructions.push_back(std::move(i)); };
  add({TG_OP_DEFINE_GLOBAL, TG_DTYPE_INT32, TG_IR_FLAG_POINTER, 1, 0, 0, {}}); // 0
  add({TG_OP_CONST, TG_DTYPE_INT32, 0, 1, 0, 0, {}});                          // 1
  add({TG_OP_CONST, TG_DTYPE_INT32, 0, 1, 4, 0, {}});                          // 2
  add({TG_OP_RANGE, TG_DTYPE_INT32, 0, 1, 0, 0, {1, 2}});                      // 3
  add({TG_OP_ADD, TG_DTYPE_INT32, 0, 1, 0, 0, {3, 2}});                        // 4
  add({TG_OP_ENDRANGE, TG_DTYPE_VOID, 0, 1, 0, 0, {3}});                       // 5
  add({TG_OP_INDEX, TG_DTYPE_INT32, TG_IR_FLAG_POINTER, 1, 0, 0, {0, 1}});     // 6
  add({TG_OP_STORE, TG_DTYPE_VOID, 0, 1, 0, 0, {6, 4}});                       // 7
  ir.buffer_count = 1;
  ir.buffer_dtypes = {TG_DTYPE_INT32};
  return ir;
}

BOOST_AUTO_TEST_CASE(a_value_used_after_its_scope_is_marked) {
  auto marks = tg::sdk::values_used_outside_scope(escaping_value());
  BOOST_TEST(marks.size() == 8u);
  for (size_t i = 0; i < marks.size(); ++i) BOOST_TEST((marks[i] != 0) == (i == 4), "instruction " << i);
}

BOOST_AUTO_TEST_CASE(a_valid_program_has_no_marks_and_constants_are_never_marked) {
  KernelBuilder b("valid");
  auto out = b.global(0, TG_DTYPE_FLOAT32);
  auto acc = b.acc(b.f32(0));
  auto r = b.range(b.i32(0), b.i32(3));
  b.assign(acc, b.add(acc, b.f32(1)));
  b.end_range(r);
  b.store(b.index(out, b.i32(0)), acc);
  b.serialize();
  for (char m : tg::sdk::values_used_outside_scope(b.ir())) BOOST_TEST(m == 0);
}

BOOST_AUTO_TEST_CASE(an_escaping_value_is_declared_before_the_loop) {
  auto src = tg::sdk::render::render(Dialect::c, escaping_value());
  auto decl = src.text.find("int32_t v4;");
  auto loop = src.text.find("for (int32_t v3");
  BOOST_TEST_REQUIRE(decl != std::string::npos, src.text);
  BOOST_TEST(decl < loop, src.text);
  BOOST_TEST(src.text.find("v4 = ") != std::string::npos, src.text);
}

void check_refused(Dialect d, KernelBuilder& b, const std::string& needle) {
  b.serialize();
  try {
    tg::sdk::render::render(d, b.ir());
    BOOST_ERROR(std::string(tg::sdk::render::dialect_name(d)) + " rendered " + b.ir().name);
  } catch (const tg::sdk::PluginError& e) {
    BOOST_TEST(e.code() == TG_ERROR_UNIMPLEMENTED);
    BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(unsupported_ops_and_dtypes_are_refused_by_name) {
  KernelBuilder c("barrier");
  c.barrier();
  check_refused(Dialect::c, c, "instruction 0 (BARRIER");
  KernelBuilder m("double");
  auto out = m.global(0, TG_DTYPE_FLOAT64);
  m.store(m.index(out, m.i32(0)), m.const_float(TG_DTYPE_FLOAT64, 1.0));
  check_refused(Dialect::metal, m, "float64");
}

BOOST_AUTO_TEST_CASE(glsl_float64_exp2_calls_its_own_series) { // GLSL's exp2 takes 32-bit floats only
  KernelBuilder g("exp2_double");
  auto gout = g.global(0, TG_DTYPE_FLOAT64);
  g.store(g.index(gout, g.i32(0)), g.alu(TG_OP_EXP2, g.const_float(TG_DTYPE_FLOAT64, 1.0)));
  g.serialize();
  auto src = tg::sdk::render::render(Dialect::glsl, g.ir());
  BOOST_TEST(src.text.find("double tg_exp2_f64(double x)") != std::string::npos, src.text);
  BOOST_TEST(src.text.find("tg_exp2_f64(") != src.text.rfind("tg_exp2_f64("), src.text); // defined and called
}

BOOST_AUTO_TEST_CASE(glsl_reports_bindings_and_push_constant_layout) {
  KernelBuilder b("params");
  auto out = b.global(0, TG_DTYPE_FLOAT32);
  auto s0 = b.var(0, TG_DTYPE_INT8);
  auto s1 = b.var(1, TG_DTYPE_FLOAT64);
  auto s2 = b.var(2, TG_DTYPE_BOOL);
  auto v = b.add(b.cast(s0, TG_DTYPE_FLOAT32), b.cast(s1, TG_DTYPE_FLOAT32));
  b.store(b.index(out, b.i32(0)), b.alu(TG_OP_WHERE, s2, v, b.f32(0)));
  b.serialize();
  auto src = tg::sdk::render::render(Dialect::glsl, b.ir());
  BOOST_TEST(src.entry == "main");
  BOOST_TEST_REQUIRE(src.scalars.size() == 3u);
  BOOST_TEST(src.scalars[0].passed_as == TG_DTYPE_INT32);
  BOOST_TEST(src.scalars[0].offset == 0u);
  BOOST_TEST(src.scalars[1].offset == 8u); // float64 aligned to 8
  BOOST_TEST(src.scalars[2].offset == 16u);
  BOOST_TEST(src.scalars[2].passed_as == TG_DTYPE_INT32);
  BOOST_TEST(src.push_constant_bytes == 24u);
  BOOST_TEST(src.buffers.at(0).binding == 0u);
}

} // namespace
