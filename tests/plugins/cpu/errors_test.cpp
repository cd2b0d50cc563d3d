// CPU-specific error details: launch errors name the offending argument, and a blob compiled for
// another CPU is refused naming both CPUs. The error codes themselves are `tg conform`'s compile/*,
// program/* and launch/* cases.
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
