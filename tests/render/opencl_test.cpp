// OpenCL C: every kernel is rendered (without and with cl_khr_fp16 spelling where the device has
// it) and built by the first OpenCL device (PoCL here) with clBuildProgram; the build log is in
// the failure message. No device: the suite is skipped.
#include "render_test_util.hpp"

#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

namespace {

struct ClDevice {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  bool fp16 = false;
  ClDevice() {
    cl_uint platforms = 0;
    if (clGetPlatformIDs(0, nullptr, &platforms) != CL_SUCCESS || platforms == 0)
      tgtest::skip_suite("no OpenCL platform (install pocl-opencl-icd)");
    std::vector<cl_platform_id> ids(platforms);
    clGetPlatformIDs(platforms, ids.data(), nullptr);
    for (auto p : ids)
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) break;
    if (device == nullptr) tgtest::skip_suite("no OpenCL device");
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) tgtest::skip_suite("clCreateContext failed: " + std::to_string(err));
    size_t n = 0;
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &n);
    std::string ext(n, '\0');
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, n, ext.data(), nullptr);
    fp16 = ext.find("cl_khr_fp16") != std::string::npos;
  }
  ~ClDevice() {
    if (context) clReleaseContext(context);
  }
  ClDevice(const ClDevice&) = delete;
  ClDevice& operator=(const ClDevice&) = delete;

  // Empty string on success, else the error code and build log.
  std::string build(const std::string& source) const {
    const char* text = source.c_str();
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
    if (err != CL_SUCCESS) return "clCreateProgramWithSource: " + std::to_string(err);
    err = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
    std::string result;
    if (err != CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      result = "clBuildProgram: " + std::to_string(err) + "\n" + log;
    }
    clReleaseProgram(program);
    return result;
  }
};

BOOST_AUTO_TEST_CASE(every_kernel_builds_with_clBuildProgram) {
  ClDevice cl;
  int built = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      tg::sdk::KernelIR ir = tgtest::parse(k);
      for (bool fp16 : {false, true}) {
        if (fp16 && !cl.fp16) continue;
        tg::sdk::render::Options options;
        options.opencl_fp16 = fp16;
        auto src = tg::sdk::render::render(tg::sdk::render::Dialect::opencl, ir, options);
        std::string error = cl.build(src.text);
        BOOST_CHECK_MESSAGE(error.empty(), error + "\n" + src.text);
        ++built;
      }
    }
  }
  BOOST_TEST_MESSAGE("OpenCL C: " << built << " programs built"
                                  << (cl.fp16 ? "" : " (device has no cl_khr_fp16)"));
  BOOST_TEST(built > 40);
}

} // namespace
