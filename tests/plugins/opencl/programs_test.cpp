// Programs on the OpenCL plugin: the blob is the driver's program binary and loads back; a blob for
// another device or driver is refused; a build failure carries the build log; work groups larger
// than one with buffer offsets; the float16 path the device supports; timing.
#include "opencl_fixture.hpp"

#include <tg/sdk/blob.hpp>
#include <tg/sdk/opencl/error.hpp>
#include <tg/sdk/opencl/program.hpp>

#include <CL/cl.h>

#include <cmath>
#include <cstring>

using namespace tgtest;

namespace {

std::vector<float> ramp(size_t n, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i) * step;
  return v;
}

// Runs add on 64 elements in work groups of 16 and checks out = a + b.
void expect_add_works(const Device& device, const std::vector<std::byte>& blob) {
  Program program(device, blob);
  Buffer a(device, ramp(64, 1.0f)), b(device, ramp(64, 0.5f)), out(device, std::vector<float>(64, 0.0f));
  program.launch({4, 1, 1}, {16, 1, 1}, {out.arg(), a.arg(), b.arg()}, {scalar_i32(16)});
  std::vector<float> got = out.download<float>(64);
  for (size_t i = 0; i < 64; ++i) BOOST_REQUIRE_EQUAL(got[i], float(i) * 1.5f);
}

} // namespace

BOOST_AUTO_TEST_SUITE(opencl_programs)

BOOST_AUTO_TEST_CASE(the_blob_is_a_program_binary_that_loads_back) {
  Device device;
  auto k = add_kernel();
  Compiled compiled = compile(k.serialize(), TG_COMPILE_WANT_SOURCE);
  BOOST_TEST(mentions(compiled.source, "__kernel void"), compiled.source);
  tg::sdk::Blob blob = tg::sdk::open_blob(compiled.binary, "opencl", device.properties().arch);
  BOOST_TEST(blob.payload.size() > 4u);
  expect_add_works(device, compiled.binary);
  // The same bytes load a second time (what the host's disk cache does in a later process).
  expect_add_works(device, compiled.binary);
}

BOOST_AUTO_TEST_CASE(a_blob_for_another_device_or_driver_is_refused) {
  Device device;
  auto k = add_kernel();
  Compiled compiled = compile(k.serialize());
  tg::sdk::Blob blob = tg::sdk::open_blob(compiled.binary, "opencl", device.properties().arch);

  tg::sdk::Blob other = blob;
  other.target = "Some GPU (driver 1.0) #0123456789ab";
  std::vector<std::byte> sealed = tg::sdk::seal_blob(other);
  tg_program* program = nullptr;
  Status s = take(api().program_load(device.get(), sealed.data(), sealed.size(), &program));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(mentions(s.message, "Some GPU"), s.message);

  // The right target but bytes the driver does not take as a binary.
  tg::sdk::Blob garbage = blob;
  const char text[] = "add\0not a program binary";
  garbage.payload.assign(reinterpret_cast<const std::byte*>(text),
                         reinterpret_cast<const std::byte*>(text) + sizeof text);
  sealed = tg::sdk::seal_blob(garbage);
  s = take(api().program_load(device.get(), sealed.data(), sealed.size(), &program));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(mentions(s.message, "binary"), s.message);
}

BOOST_AUTO_TEST_CASE(an_unknown_target_is_refused_by_compile) {
  auto k = add_kernel();
  Status s = try_compile(k.serialize(), nullptr, 0, 2, "no such device");
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(mentions(s.message, "no such device"), s.message);
}

BOOST_AUTO_TEST_CASE(a_failed_build_carries_the_build_log) {
  // White-box: the component the plugin builds with, given OpenCL C that cannot compile.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  BOOST_REQUIRE_EQUAL(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
  BOOST_REQUIRE_EQUAL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), CL_SUCCESS);
  cl_int status = CL_SUCCESS;
  tg::sdk::opencl::Context context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status));
  BOOST_REQUIRE_EQUAL(status, CL_SUCCESS);
  const std::string source = "__kernel void broken(__global float* x) { x[0] = undeclared_name_42; }\n";
  try {
    tg::sdk::opencl::build_program(context.get(), device, source, "broken", "");
    BOOST_FAIL("the build should fail");
  } catch (const tg::sdk::PluginError& e) {
    BOOST_TEST(e.code() == TG_ERROR_INTERNAL);
    BOOST_TEST(mentions(e.what(), "broken"), e.what());
    BOOST_TEST(mentions(e.what(), "undeclared_name_42"), e.what()); // the log is in the message
    BOOST_TEST(mentions(e.log(), "undeclared_name_42"), e.log());
  }
}

BOOST_AUTO_TEST_CASE(out_of_memory_codes_are_resource_exhausted) {
  using tg::sdk::opencl::error_code_for;
  BOOST_TEST(error_code_for(CL_MEM_OBJECT_ALLOCATION_FAILURE) == TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_TEST(error_code_for(CL_OUT_OF_RESOURCES) == TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_TEST(error_code_for(CL_OUT_OF_HOST_MEMORY) == TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_TEST(error_code_for(CL_INVALID_VALUE) == TG_ERROR_INTERNAL);
  BOOST_TEST(std::string(tg::sdk::opencl::status_name(CL_OUT_OF_RESOURCES)) == "CL_OUT_OF_RESOURCES");
}

BOOST_AUTO_TEST_CASE(buffer_offsets_reach_the_kernel) {
  Device device;
  auto k = add_kernel();
  Program program(device, k);
  // a and b start 1 and 3 elements into their buffers, out 2 elements in: offsets no sub-buffer could take.
  Buffer a(device, ramp(40, 1.0f)), b(device, ramp(40, 2.0f)), out(device, std::vector<float>(40, -1.0f));
  program.launch({4, 1, 1}, {8, 1, 1}, {out.arg(8), a.arg(4), b.arg(12)}, {scalar_i32(8)});
  std::vector<float> got = out.download<float>(40);
  BOOST_TEST(got[0] == -1.0f);
  BOOST_TEST(got[1] == -1.0f);
  for (size_t i = 0; i < 32; ++i) BOOST_REQUIRE_EQUAL(got[i + 2], float(i + 1) + 2.0f * float(i + 3));
  BOOST_TEST(got[34] == -1.0f);
}

BOOST_AUTO_TEST_CASE(float16_is_native_or_goes_through_vload_half) {
  Device device;
  const bool native = device.properties().features & TG_FEATURE_FP16_MATH;
  auto k = add_kernel(TG_DTYPE_FLOAT16);
  Compiled compiled = compile(k.serialize(), TG_COMPILE_WANT_SOURCE);
  BOOST_TEST(mentions(compiled.source, "vload_half") == !native, compiled.source);
  BOOST_TEST(mentions(compiled.source, "cl_khr_fp16") == native, compiled.source);
  // 1.5 + 2.25 = 3.75 (0x4380); 0.1 + 0.2 as halves (0x2E66 + 0x3266) is 0.2999267578125, halfway
  // between two halves: ties to even, 0x34CC (hand-rounded).
  std::vector<uint16_t> a{0x3E00, 0x2E66}, b{0x4080, 0x3266};
  Buffer ba(device, a), bb(device, b), out(device, std::vector<uint16_t>(2, 0));
  Program program(device, compiled.binary);
  program.launch({1, 1, 1}, {2, 1, 1}, {out.arg(), ba.arg(), bb.arg()}, {scalar_i32(2)});
  std::vector<uint16_t> got = out.download<uint16_t>(2);
  BOOST_TEST(got[0] == 0x4380);
  BOOST_TEST(got[1] == 0x34CC);
}

BOOST_AUTO_TEST_CASE(a_timed_launch_reports_its_time) {
  Device device;
  auto k = add_kernel();
  Program program(device, k);
  Buffer a(device, ramp(64, 1.0f)), b(device, ramp(64, 1.0f)), out(device, std::vector<float>(64, 0.0f));
  uint64_t elapsed = 0;
  Status s =
      program.try_launch({4, 1, 1}, {16, 1, 1}, {out.arg(), a.arg(), b.arg()}, {scalar_i32(16)}, &elapsed);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
  BOOST_TEST(out.download<float>(64)[63] == 126.0f); // finished when launch returned
}

BOOST_AUTO_TEST_SUITE_END()
