// The SDK's kernel IR builder, serializer and validating reader.
#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>

using namespace tg::sdk;

namespace {

// c[i] = a[i] * 2 + b[i] over a RANGE, with a scalar bound.
KernelBuilder sample_kernel() {
  KernelBuilder b("sample");
  auto a = b.global(0, TG_DTYPE_FLOAT32), bb = b.global(1, TG_DTYPE_FLOAT32),
       c = b.global(2, TG_DTYPE_FLOAT32);
  auto n = b.var(0, TG_DTYPE_INT32);
  auto i = b.range(b.i32(0), n);
  auto x = b.mul(b.load(b.index(a, i)), b.f32(2.0f));
  b.store(b.index(c, i), b.add(x, b.load(b.index(bb, i))));
  b.end_range(i);
  return b;
}

std::string error_of(std::span<const std::byte> bytes) {
  try {
    parse_kernel_ir(bytes);
  } catch (const IRError& e) {
    return e.what();
  }
  return "";
}

} // namespace

BOOST_AUTO_TEST_CASE(round_trip_preserves_every_field) {
  auto builder = sample_kernel();
  auto bytes = builder.serialize();
  KernelIR ir = parse_kernel_ir(bytes);
  BOOST_TEST(ir.name == "sample");
  BOOST_TEST(ir.buffer_count == 3u);
  BOOST_TEST(ir.scalar_count == 1u);
  BOOST_TEST(ir.scalar_dtypes.at(0) == TG_DTYPE_INT32);
  BOOST_REQUIRE(ir.instructions.size() == builder.ir().instructions.size());
  for (size_t i = 0; i < ir.instructions.size(); ++i) {
    const auto &x = ir.instructions[i], &y = builder.ir().instructions[i];
    BOOST_TEST(x.op == y.op);
    BOOST_TEST(x.dtype == y.dtype);
    BOOST_TEST(x.flags == y.flags);
    BOOST_TEST(x.vcount == y.vcount);
    BOOST_TEST(x.arg0 == y.arg0);
    BOOST_TEST(x.arg1 == y.arg1);
    BOOST_TEST(x.src == y.src);
  }
  BOOST_TEST(serialize_kernel_ir(ir) == bytes);
  // float constants keep their exact bits
  auto two = std::find_if(ir.instructions.begin(), ir.instructions.end(), [](const Instruction& x) {
    return x.op == TG_OP_CONST && x.dtype == TG_DTYPE_FLOAT32;
  });
  BOOST_REQUIRE(two != ir.instructions.end());
  BOOST_TEST(two->const_float() == 2.0);
}

BOOST_AUTO_TEST_CASE(header_layout_is_as_documented) {
  auto bytes = sample_kernel().serialize();
  BOOST_TEST(std::to_integer<char>(bytes[0]) == 'T');
  BOOST_TEST(std::to_integer<char>(bytes[3]) == 'R');
  BOOST_TEST(std::to_integer<int>(bytes[4]) == TG_IR_VERSION_MAJOR); // little-endian u16
  BOOST_TEST(std::to_integer<int>(bytes[12]) == 6);                  // name length "sample"
  // 20-byte header ("sample" padded to 8) + 24 bytes per instruction + 4 per source
  size_t expected = 16 + 8;
  const auto builder = sample_kernel();
  for (const auto& ins : builder.ir().instructions) expected += 24 + 4 * ins.src.size();
  BOOST_TEST(bytes.size() == expected);
}

BOOST_AUTO_TEST_CASE(every_truncation_is_an_error_not_a_crash) {
  auto bytes = sample_kernel().serialize();
  for (size_t n = 0; n < bytes.size(); ++n)
    BOOST_TEST(!error_of(std::span(bytes).first(n)).empty(), "prefix of " << n << " bytes accepted");
}

BOOST_AUTO_TEST_CASE(random_corruption_never_crashes) {
  auto good = sample_kernel().serialize();
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto bytes = good;
    size_t pos = rng() % bytes.size();
    bytes[pos] = std::byte(rng() & 0xff);
    if (!error_of(bytes).empty()) ++rejected; // some flips (e.g. in a float constant) stay valid
  }
  BOOST_TEST(rejected > 500);
}

BOOST_AUTO_TEST_CASE(validation_names_the_instruction_and_cause) {
  auto bad_magic = sample_kernel().serialize();
  bad_magic[0] = std::byte('X');
  BOOST_TEST(error_of(bad_magic).find("bad magic") != std::string::npos);

  {
    KernelBuilder b("fwd");
    auto g = b.global(0, TG_DTYPE_FLOAT32);
    b.emit({TG_OP_ADD, TG_DTYPE_FLOAT32, 0, 1, 0, 0, {5, 5}});
    (void)g;
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [](const IRError& e) {
      return e.instruction() == 1 &&
             std::string(e.what()).find("not defined before use") != std::string::npos;
    });
  }
  {
    KernelBuilder b("unclosed");
    b.range(b.i32(0), b.i32(4));
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [](const IRError& e) {
      return std::string(e.what()).find("never closed") != std::string::npos;
    });
  }
  {
    KernelBuilder b("sparse");
    b.global(1, TG_DTYPE_FLOAT32); // index 0 missing
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [](const IRError& e) {
      return std::string(e.what()).find("index 0 is missing") != std::string::npos;
    });
  }
  {
    KernelBuilder b("mixed");
    auto x = b.i32(1);
    auto y = b.f32(1.0f);
    b.alu(TG_OP_ADD, x, y);
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [](const IRError& e) {
      return std::string(e.what()).find("operand dtypes differ") != std::string::npos;
    });
  }
  {
    KernelBuilder b("store_to_value");
    auto g = b.global(0, TG_DTYPE_INT32);
    auto v = b.i32(3);
    b.emit({TG_OP_STORE, TG_DTYPE_VOID, 0, 1, 0, 0, {v, v}});
    (void)g;
    BOOST_CHECK_THROW(b.serialize(), IRError);
  }
  for (int64_t n : {int64_t(-1), int64_t(8)}) { // BARRIER's copy groups in flight: 0 to 7
    KernelBuilder b("barrier_groups");
    b.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, n, 0, {}});
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [&](const IRError& e) {
      return e.instruction() == 0 &&
             std::string(e.what()).find("BARRIER's copy groups in flight (arg0) is " + std::to_string(n) +
                                        ", not 0 to 7") != std::string::npos;
    });
  }
  {
    KernelBuilder b("barrier_arg1");
    b.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, 1, 3, {}});
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [](const IRError& e) {
      return std::string(e.what()).find("BARRIER's arg1 must be 0") != std::string::npos;
    });
  }
  {
    KernelBuilder b("unknown_op");
    b.emit({999, TG_DTYPE_INT32, 0, 1, 0, 0, {}});
    BOOST_CHECK_EXCEPTION(b.serialize(), IRError, [](const IRError& e) {
      return std::string(e.what()).find("unknown op code 999") != std::string::npos;
    });
  }
}

BOOST_AUTO_TEST_CASE(scopes_types_and_lanes_are_checked) {
  auto rejects = [](KernelBuilder& b, const std::string& why) {
    try {
      b.serialize();
    } catch (const IRError& e) {
      BOOST_TEST(std::string(e.what()).find(why) != std::string::npos, e.what());
      return;
    }
    BOOST_FAIL("accepted a program that should fail with: " << why);
  };
  {
    KernelBuilder b("value_escapes_loop");
    auto g = b.global(0, TG_DTYPE_FLOAT32);
    auto r = b.range(b.i32(0), b.i32(4));
    auto v = b.load(b.index(g, r));
    b.end_range(r);
    b.store(b.index(g, b.i32(0)), v);
    rejects(b, "outside the scope");
  }
  {
    KernelBuilder b("counter_after_loop");
    auto g = b.global(0, TG_DTYPE_INT32);
    auto r = b.range(b.i32(0), b.i32(4));
    b.end_range(r);
    b.store(b.index(g, r), b.i32(1));
    rejects(b, "after its ENDRANGE");
  }
  {
    KernelBuilder b("float_mod");
    b.alu(TG_OP_MOD, b.f32(1.0f), b.f32(2.0f));
    rejects(b, "needs an integer");
  }
  {
    KernelBuilder b("int_sqrt");
    b.alu(TG_OP_SQRT, b.i32(4));
    rejects(b, "needs a float");
  }
  {
    KernelBuilder b("lanes");
    KernelBuilder::Ref lanes[2] = {b.f32(1.0f), b.f32(2.0f)};
    auto v = b.vectorize(lanes);
    b.add(v, b.f32(1.0f)); // a 2-lane and a 1-lane operand
    rejects(b, "lanes");
  }
  {
    // The accumulator pattern is legal: DEFINE_ACC outside, ASSIGN inside, read after the loop.
    KernelBuilder b("acc_ok");
    auto g = b.global(0, TG_DTYPE_FLOAT32);
    auto acc = b.acc(b.f32(0.0f));
    auto r = b.range(b.i32(0), b.i32(4));
    b.assign(acc, b.add(acc, b.load(b.index(g, r))));
    b.end_range(r);
    b.store(b.index(g, b.i32(0)), acc);
    BOOST_CHECK_NO_THROW(b.serialize());
  }
}

BOOST_AUTO_TEST_CASE(printer_shows_structure) {
  std::string text = to_string(parse_kernel_ir(sample_kernel().serialize()));
  BOOST_TEST(text.find("kernel sample (3 buffers, 1 scalars)") != std::string::npos);
  BOOST_TEST(text.find("RANGE int32") != std::string::npos);
  BOOST_TEST(text.find("MUL float32") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dtype_table) {
  BOOST_TEST(dtype_size(TG_DTYPE_FLOAT16) == 2u);
  BOOST_TEST(dtype_size(TG_DTYPE_INT64) == 8u);
  BOOST_TEST(std::string(dtype_name(TG_DTYPE_BFLOAT16)) == "bfloat16");
  BOOST_TEST(dtype_name(TG_DTYPE_COUNT) == nullptr);
  BOOST_TEST(std::string(op_name(TG_OP_MULACC)) == "MULACC");
}

// The alignment contract (docs/abi.md §5.3): DEFINE_GLOBAL arg1 and LOAD/STORE arg0 survive a
// round trip and reach KernelIR::buffer_alignments; a bad value, or an access claiming more than its
// buffer, is refused naming the instruction.
BOOST_AUTO_TEST_CASE(buffer_alignment_round_trips_and_is_checked) {
  KernelBuilder b("aligned");
  auto a = b.global(0, TG_DTYPE_FLOAT32, 16), c = b.global(1, TG_DTYPE_FLOAT16);
  auto v = b.load(b.index(a, b.i32(4)), 4, 16);
  auto h = b.load(b.index(c, b.i32(0)));
  b.store(b.index(c, b.i32(1)), h);
  b.store(b.index(a, b.i32(8)), v, 16);
  KernelIR ir = parse_kernel_ir(b.serialize());
  BOOST_CHECK_EQUAL(ir.instructions[0].arg1, 16);
  BOOST_CHECK_EQUAL(ir.instructions[4].arg0, 16); // the LOAD (after CONST and INDEX)
  BOOST_REQUIRE_EQUAL(ir.buffer_alignments.size(), 2u);
  BOOST_CHECK_EQUAL(ir.buffer_alignments[0], 16u);
  BOOST_CHECK_EQUAL(ir.buffer_alignments[1], 2u); // 0 = the element's
  auto refused = [](KernelBuilder& k, const std::string& what) {
    BOOST_CHECK_EXCEPTION(k.serialize(), IRError, [&](const IRError& e) {
      bool ok = std::string(e.what()).find(what) != std::string::npos;
      if (!ok) BOOST_TEST_MESSAGE(e.what());
      return ok;
    });
  };
  {
    KernelBuilder k("odd");
    k.global(0, TG_DTYPE_FLOAT32, 12);
    refused(k, "alignment 12 must be 0 or a power of two from the element size (4) to 4096 bytes");
  }
  {
    KernelBuilder k("small");
    k.global(0, TG_DTYPE_FLOAT32, 2);
    refused(k, "alignment 2 must be 0 or a power of two");
  }
  {
    KernelBuilder k("overclaim"); // a 16-byte load from a buffer that only keeps its element's
    auto g = k.global(0, TG_DTYPE_FLOAT32);
    k.load(k.index(g, k.i32(0)), 4, 16);
    refused(k, "instruction 3 (LOAD): alignment 16 exceeds its buffer's 4 bytes");
  }
  {
    KernelBuilder k("local");
    auto l = k.local(64, TG_DTYPE_FLOAT32);
    auto x = k.load(k.index(l, k.i32(0)), 4, 16); // local memory keeps 16
    k.store(k.index(l, k.i32(4)), x, 32);
    refused(k, "alignment 32 exceeds its buffer's 16 bytes");
  }
}

// IR 1.4: a LOAD gated per lane (a bool vector gate of the load's lanes) is written as 1.4; a
// header that says less is refused naming the instruction; a gate of another width is invalid.
BOOST_AUTO_TEST_CASE(lane_gates_need_ir_1_4) {
  auto lane_gated = [](uint16_t gate_lanes) {
    KernelBuilder b("lanes");
    auto out = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, TG_DTYPE_FLOAT32);
    std::vector<KernelBuilder::Ref> gates, alts;
    for (int32_t k = 0; k < gate_lanes; ++k) gates.push_back(b.cmplt(b.i32(k), b.i32(2)));
    for (int32_t k = 0; k < 4; ++k) alts.push_back(b.f32(0.0f));
    auto v = b.load_gated(b.index(a, b.i32(0)), b.vectorize(gates), b.vectorize(alts));
    b.store(b.index(out, b.i32(0)), v);
    return b;
  };
  auto builder = lane_gated(4);
  BOOST_TEST(uses_lane_gates(builder.ir()));
  BOOST_TEST(!uses_lane_gates(sample_kernel().ir()));
  auto bytes = builder.serialize();
  BOOST_TEST(std::to_integer<int>(bytes[6]) == TG_IR_VERSION_MINOR_LANE_GATES); // little-endian u16
  BOOST_TEST(parse_kernel_ir(bytes).instructions.size() == builder.ir().instructions.size());
  bytes[6] = std::byte{TG_IR_VERSION_MINOR_MMA};
  BOOST_TEST(error_of(bytes).find("a LOAD gated per lane needs kernel IR 1.4, the header says 1.3") !=
                 std::string::npos,
             error_of(bytes));
  std::string wrong;
  try {
    lane_gated(2).serialize(); // validates first
  } catch (const IRError& e) {
    wrong = e.what();
  }
  BOOST_TEST(wrong.find("gate must be a scalar bool or a bool per lane") != std::string::npos, wrong);
}
