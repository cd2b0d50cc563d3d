// Invalid launches, malformed IR, unsupported ops and corrupt blobs are clean errors, never crashes.
#include "plugin_fixture.hpp"

#include <random>

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

// out[i] = a[i] * s for a float buffer pair and one float scalar.
KernelBuilder scale_kernel() {
  KernelBuilder k("scale");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref s = k.var(0, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  k.store(k.index(out, i), k.mul(k.load(k.index(a, i)), s));
  return k;
}

bool mentions(const Status& s, const std::string& word) { return s.message.find(word) != std::string::npos; }

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_errors)

BOOST_AUTO_TEST_CASE(scalar_kernel_works) {
  Device device;
  auto k = scale_kernel();
  Program p(device, k);
  Buffer a(device, std::vector<float>{1, 2, 3}), out(device, std::vector<float>(3, 0));
  p.launch({3, 1, 1}, {1, 1, 1}, {a.arg(), out.arg()}, {scalar_f32(2.5f)});
  auto r = out.download<float>(3);
  BOOST_CHECK_EQUAL(r[0], 2.5f);
  BOOST_CHECK_EQUAL(r[2], 7.5f);
}

BOOST_AUTO_TEST_CASE(bad_launches_are_invalid_argument) {
  Device device;
  auto k = scale_kernel();
  Program p(device, k);
  Buffer a(device, std::vector<float>(8, 1.0f)), out(device, std::vector<float>(8, 0.0f));
  const auto ok_bufs = std::vector<tg_buffer_arg>{a.arg(), out.arg()};
  const auto ok_scalars = std::vector<tg_scalar_arg>{scalar_f32(2.0f)};
  auto expect_invalid = [&](const Status& s, const std::string& word) {
    BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
    BOOST_CHECK_MESSAGE(mentions(s, word), "message '" << s.message << "' should mention '" << word << "'");
  };
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, {a.arg()}, ok_scalars), "buffer_count");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, {a.arg(), out.arg(), out.arg()}, ok_scalars),
                 "buffer_count");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, ok_bufs, {}), "scalar_count");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, ok_bufs, {scalar_f32(1.0f), scalar_f32(1.0f)}),
                 "scalar_count");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, ok_bufs, {scalar_i32(2)}), "scalars[0].dtype");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, {a.arg(), {nullptr, 0}}, ok_scalars), "buffers[1]");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, {a.arg(2), out.arg()}, ok_scalars), "buffers[0].offset");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 1}, {a.arg(), out.arg(36)}, ok_scalars), "buffers[1].offset");
  expect_invalid(p.try_launch({8, 1, 1}, {0, 1, 1}, ok_bufs, ok_scalars), "local_size[0]");
  expect_invalid(p.try_launch({8, 1, 1}, {1, 1, 0}, ok_bufs, ok_scalars), "local_size[2]");
  tg_device_properties props = device.properties();
  expect_invalid(p.try_launch({8, 1, 1}, {props.max_local_threads + 1, 1, 1}, ok_bufs, ok_scalars),
                 "local_size[0]");
  expect_invalid(p.try_launch({8, 1, 1}, {64, 64, 1}, ok_bufs, ok_scalars), "limit");
  expect_invalid(p.try_launch({8, props.max_global_size[1] + 1, 1}, {1, 1, 1}, ok_bufs, ok_scalars),
                 "global_size[1]");
  // nothing ran
  for (float v : out.download<float>(8)) BOOST_REQUIRE_EQUAL(v, 0.0f);
  // a NULL program or args
  tg_launch_args args{};
  args.struct_size = sizeof(args);
  BOOST_CHECK_EQUAL(take(api().launch(&args)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().launch(nullptr)).code, TG_ERROR_INVALID_ARGUMENT);
  // and the program still works afterwards
  p.launch({8, 1, 1}, {1, 1, 1}, ok_bufs, ok_scalars);
  for (float v : out.download<float>(8)) BOOST_REQUIRE_EQUAL(v, 2.0f);
}

BOOST_AUTO_TEST_CASE(malformed_ir_is_invalid_argument_with_a_message) {
  auto k = scale_kernel();
  auto good = k.serialize();
  BOOST_REQUIRE(try_compile(good, nullptr).ok());

  auto bad_magic = good;
  bad_magic[0] = std::byte{'X'};
  Status s = try_compile(bad_magic, nullptr);
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(mentions(s, "magic"));
  BOOST_CHECK(mentions(s, "cpu.compile"));

  for (size_t cut : {size_t(0), size_t(3), size_t(10), good.size() / 2, good.size() - 1}) {
    std::vector<std::byte> truncated(good.begin(), good.begin() + long(cut));
    Status t = try_compile(truncated, nullptr);
    BOOST_CHECK_EQUAL(t.code, TG_ERROR_INVALID_ARGUMENT);
    BOOST_CHECK(!t.message.empty());
  }

  KernelBuilder fwd("forward_reference");
  Ref out = fwd.global(0, TG_DTYPE_INT32);
  Ref idx = fwd.index(out, fwd.i32(0));
  fwd.emit({TG_OP_STORE, TG_DTYPE_VOID, 0, 1, 0, 0, {idx, 99}}); // source 99 does not exist yet
  Status f = try_compile(tg::sdk::serialize_kernel_ir(fwd.ir()), nullptr);
  BOOST_CHECK_EQUAL(f.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(mentions(f, "not defined before use"));

  tg_compile_args args{sizeof(args), nullptr, 16, nullptr, 0, 2};
  tg_compile_result* result = nullptr;
  BOOST_CHECK_EQUAL(take(api().compile(&args, &result)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().compile(nullptr, &result)).code, TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_CASE(barrier_and_local_memory_are_unimplemented) {
  KernelBuilder k("with_barrier");
  Ref out = k.global(0, TG_DTYPE_FLOAT32);
  k.barrier();
  k.store(k.index(out, k.group_id(0)), k.f32(1.0f));
  Status s = try_compile(k.serialize(), nullptr);
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_UNIMPLEMENTED);
  BOOST_CHECK(mentions(s, "BARRIER"));

  KernelBuilder l("with_local");
  Ref g = l.global(0, TG_DTYPE_FLOAT32);
  Ref shared = l.local(64, TG_DTYPE_FLOAT32);
  l.store(l.index(shared, l.local_id(0)), l.f32(1.0f));
  l.store(l.index(g, l.group_id(0)), l.load(l.index(shared, l.i32(0))));
  Status t = try_compile(l.serialize(), nullptr);
  BOOST_CHECK_EQUAL(t.code, TG_ERROR_UNIMPLEMENTED);
  BOOST_CHECK(mentions(t, "DEFINE_LOCAL"));
}

BOOST_AUTO_TEST_CASE(corrupt_blobs_are_invalid_argument) {
  Device device;
  auto k = scale_kernel();
  auto blob = compile(k.serialize()).binary;
  auto load = [&](const std::vector<std::byte>& bytes) {
    tg_program* program = nullptr;
    Status s = take(api().program_load(device.get(), bytes.data(), bytes.size(), &program));
    if (program) api().program_free(program);
    return s;
  };
  BOOST_REQUIRE(load(blob).ok());

  auto flipped = blob;
  flipped[blob.size() / 2] ^= std::byte{0x5a};
  Status s = load(flipped);
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(mentions(s, "checksum"));

  for (size_t cut : {size_t(0), size_t(7), size_t(16), blob.size() / 3, blob.size() - 1})
    BOOST_CHECK_EQUAL(load(std::vector<std::byte>(blob.begin(), blob.begin() + long(cut))).code,
                      TG_ERROR_INVALID_ARGUMENT);

  std::mt19937 rng(1234);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::byte> noise(size_t(rng() % 4096));
    for (auto& b : noise) b = std::byte(rng());
    if (round % 2 == 0 && noise.size() >= 8) std::memcpy(noise.data(), "TGCPUOBJ", 8); // pass the magic check
    BOOST_CHECK_EQUAL(load(noise).code, TG_ERROR_INVALID_ARGUMENT);
  }
  BOOST_CHECK_EQUAL(load({}).code, TG_ERROR_INVALID_ARGUMENT);
  tg_program* program = nullptr;
  BOOST_CHECK_EQUAL(take(api().program_load(device.get(), nullptr, 10, &program)).code,
                    TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_CASE(blob_for_another_cpu_is_rejected) {
  Device device;
  std::string host_cpu = device.properties().arch;
  const char* other = host_cpu == "znver2" ? "skylake" : "znver2";
  auto k = scale_kernel();
  Compiled c;
  tg::sdk::KernelBuilder copy = k;
  Status s = try_compile(copy.serialize(), &c, 0, 2, other);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
  tg_program* program = nullptr;
  Status l = take(api().program_load(device.get(), c.binary.data(), c.binary.size(), &program));
  BOOST_CHECK_EQUAL(l.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(mentions(l, std::string("compiled for")));
  BOOST_CHECK(mentions(l, other));
  BOOST_CHECK(mentions(l, host_cpu));
  BOOST_CHECK_EQUAL(try_compile(copy.serialize(), nullptr, 0, 2, "not-a-cpu").code,
                    TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_SUITE_END()
