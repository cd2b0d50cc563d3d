// The Metal plugin's plain C++ (plugins/metal: payload.cpp, launch_plan.cpp, compiler.cpp), which
// runs here although the Objective-C++ device cannot: the payload round trip, the [[buffer(n)]]
// slot of every argument checked against the rendered MSL text, scalar bytes in the type each
// `constant T&` declares, and the dispatch sizes.
#include "compiler.hpp"
#include "launch_plan.hpp"
#include "payload.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <regex>

namespace {

using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;
using namespace tg::metal;

// out[i] = where(flag, a[i] * h, float(k)): buffers of two dtypes, scalars BOOL, FLOAT16, INT64.
tg::sdk::KernelIR mixed_kernel() {
  KernelBuilder b("mixed");
  Ref out = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, TG_DTYPE_FLOAT16);
  Ref flag = b.var(0, TG_DTYPE_BOOL), h = b.var(1, TG_DTYPE_FLOAT16), k = b.var(2, TG_DTYPE_INT64);
  Ref i = b.add(b.mul(b.group_id(0), b.i32(32)), b.local_id(0));
  Ref scaled = b.cast(b.mul(b.load(b.index(a, i)), h), TG_DTYPE_FLOAT32);
  b.store(b.index(out, i), b.alu(TG_OP_WHERE, flag, scaled, b.cast(k, TG_DTYPE_FLOAT32)));
  return tg::sdk::parse_kernel_ir(b.serialize());
}

Payload compile_mixed(std::string* source = nullptr) {
  const tg::sdk::KernelIR ir = mixed_kernel();
  Compiler compiler;
  tg::sdk::CompileOutput out = compiler.compile({ir, "", true, 2});
  BOOST_TEST(out.target == "metal");
  if (source) *source = out.source;
  return decode(out.payload);
}

struct FakeBuffer final : tg::sdk::Buffer {
  void copy_from_host(uint64_t, const void*, uint64_t) override {}
  void copy_to_host(uint64_t, void*, uint64_t) override {}
  void copy_from(uint64_t, tg::sdk::Buffer&, uint64_t, uint64_t) override {}
};

} // namespace

BOOST_AUTO_TEST_CASE(payload_round_trips_and_refuses_garbage) {
  Payload p;
  p.entry = "k";
  p.source = "kernel void k() {}";
  p.buffer_slots = {0, 1};
  p.scalars = {{2, TG_DTYPE_INT32}, {3, TG_DTYPE_FLOAT32}};
  p.uses_barrier = true;
  const std::vector<std::byte> bytes = encode(p);
  const Payload q = decode(bytes);
  BOOST_TEST(q.entry == p.entry);
  BOOST_TEST(q.source == p.source);
  BOOST_TEST(q.buffer_slots == p.buffer_slots, boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(q.scalars.size(), 2u);
  BOOST_TEST(q.scalars[1].slot == 3u);
  BOOST_TEST(q.scalars[1].passed_as == TG_DTYPE_FLOAT32);
  BOOST_TEST(q.uses_barrier);
  BOOST_TEST(!q.uses_local_memory);
  auto refuses = [](std::span<const std::byte> b) {
    try {
      decode(b);
    } catch (const tg::sdk::PluginError& e) {
      return e.code() == TG_ERROR_INVALID_ARGUMENT;
    }
    return false;
  };
  BOOST_TEST(refuses(std::span(bytes).first(bytes.size() - 3)), "truncated");
  std::vector<std::byte> other = bytes;
  other[0] = std::byte{'X'};
  BOOST_TEST(refuses(other), "not a Metal payload");
}

BOOST_AUTO_TEST_CASE(slots_and_types_match_the_rendered_source) {
  std::string source;
  const Payload p = compile_mixed(&source);
  BOOST_TEST(source.find("kernel void " + p.entry + "(") != std::string::npos, "the entry point " << p.entry);
  BOOST_TEST(p.source == source);
  BOOST_REQUIRE_EQUAL(p.buffer_slots.size(), 2u);
  BOOST_REQUIRE_EQUAL(p.scalars.size(), 3u);
  // Each parameter's slot, read from the MSL text: `... b<k> [[buffer(n)]]`, `constant T& s<k>
  // [[buffer(n)]]`.
  for (size_t k = 0; k < 2; ++k) {
    std::smatch m;
    BOOST_REQUIRE(std::regex_search(
        source, m, std::regex("device [^*]+\\* b" + std::to_string(k) + R"( \[\[buffer\((\d+)\)\]\])")));
    BOOST_TEST(std::stoul(m[1]) == p.buffer_slots[k], "buffer " << k);
  }
  const char* types[3] = {"int", "float", "long"}; // BOOL and FLOAT16 travel as int and float
  const tg_dtype passed[3] = {TG_DTYPE_INT32, TG_DTYPE_FLOAT32, TG_DTYPE_INT64};
  for (size_t k = 0; k < 3; ++k) {
    std::smatch m;
    BOOST_REQUIRE_MESSAGE(
        std::regex_search(
            source, m, std::regex("constant (\\w+)& s" + std::to_string(k) + R"( \[\[buffer\((\d+)\)\]\])")),
        "scalar " << k << " in\n"
                  << source);
    BOOST_TEST(m[1] == types[k], "scalar " << k);
    BOOST_TEST(std::stoul(m[2]) == p.scalars[k].slot, "scalar " << k);
    BOOST_TEST(p.scalars[k].passed_as == passed[k], "scalar " << k);
  }
}

BOOST_AUTO_TEST_CASE(arguments_carry_buffers_and_scalar_bytes) {
  const Payload p = compile_mixed();
  FakeBuffer out, a;
  const tg::sdk::BufferArg buffers[2] = {{&out, 0}, {&a, 64}};
  tg_scalar_arg scalars[3] = {};
  scalars[0].dtype = TG_DTYPE_BOOL, scalars[0].value.i = 1;
  scalars[1].dtype = TG_DTYPE_FLOAT16, scalars[1].value.f = 1.5;
  scalars[2].dtype = TG_DTYPE_INT64, scalars[2].value.i = -(int64_t(1) << 40);
  const std::vector<EncodedArg> args = encode_arguments(p, buffers, scalars);
  BOOST_REQUIRE_EQUAL(args.size(), 5u);
  BOOST_TEST(args[1].buffer == &a);
  BOOST_TEST(args[1].offset == 64u);
  BOOST_TEST(args[1].slot == p.buffer_slots[1]);
  int32_t flag = 0;
  float half_as_float = 0;
  int64_t k = 0;
  BOOST_REQUIRE_EQUAL(args[2].bytes.size, 4u);
  std::memcpy(&flag, args[2].bytes.bytes, 4);
  BOOST_TEST(flag == 1);
  BOOST_REQUIRE_EQUAL(args[3].bytes.size, 4u);
  std::memcpy(&half_as_float, args[3].bytes.bytes, 4);
  BOOST_TEST(half_as_float == 1.5f);
  BOOST_REQUIRE_EQUAL(args[4].bytes.size, 8u);
  std::memcpy(&k, args[4].bytes.bytes, 8);
  BOOST_TEST(k == -(int64_t(1) << 40));
  BOOST_TEST(args[4].slot == p.scalars[2].slot);
  BOOST_CHECK_THROW(encode_arguments(p, std::span(buffers).first(1), scalars), tg::sdk::PluginError);
}

BOOST_AUTO_TEST_CASE(dispatch_is_threadgroups_by_threads_and_respects_the_pipeline) {
  const Dispatch d = plan_dispatch({7, 3, 2}, {32, 4, 1}, 1024);
  BOOST_TEST((d.threadgroups == std::array<uint64_t, 3>{7, 3, 2}));
  BOOST_TEST((d.threads_per_threadgroup == std::array<uint64_t, 3>{32, 4, 1}));
  BOOST_CHECK_THROW(plan_dispatch({1, 1, 1}, {32, 32, 2}, 1024), tg::sdk::PluginError);
}
