// clBuildProgram from source (compile) and from binary (load).
#include <tg/sdk/opencl/error.hpp>
#include <tg/sdk/opencl/program.hpp>

#include <cstring>

namespace tg::sdk::opencl {

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS)
    return {};
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

BuiltProgram build_program(cl_context context, cl_device_id device, const std::string& source,
                           const std::string& entry, const std::string& options) {
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ProgramHandle program(clCreateProgramWithSource(context, 1, &text, &length, &status));
  check(status, "clCreateProgramWithSource for kernel " + entry);
  status = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
  std::string log = build_log(program.get(), device);
  if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS)
    throw PluginError(TG_ERROR_INTERNAL,
                      "OpenCL C of kernel " + entry + " failed to build (" + status_name(status) +
                          "); build log: " + (log.empty() ? "(empty)" : log.substr(0, 2000)),
                      log);
  check(status, "clBuildProgram for kernel " + entry);

  size_t size = 0;
  check(clGetProgramInfo(program.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  if (size == 0)
    throw PluginError(TG_ERROR_INTERNAL, "the OpenCL driver gave no program binary for kernel " + entry);
  BuiltProgram built;
  built.payload.resize(entry.size() + 1 + size);
  std::memcpy(built.payload.data(), entry.data(), entry.size());
  unsigned char* binary = reinterpret_cast<unsigned char*>(built.payload.data() + entry.size() + 1);
  check(clGetProgramInfo(program.get(), CL_PROGRAM_BINARIES, sizeof binary, &binary, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  built.log = std::move(log);
  return built;
}

Program::Program(cl_context context, cl_device_id device, std::span<const std::byte> payload) {
  const char* begin = reinterpret_cast<const char*>(payload.data());
  const void* nul = std::memchr(begin, 0, payload.size());
  if (!nul || nul == begin)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "OpenCL program payload has no entry name");
  entry_.assign(begin, static_cast<const char*>(nul));
  const auto* binary = reinterpret_cast<const unsigned char*>(nul) + 1;
  const size_t size = payload.size() - entry_.size() - 1;
  if (size == 0) throw PluginError(TG_ERROR_INVALID_ARGUMENT, "OpenCL program " + entry_ + " has no binary");

  cl_int status = CL_SUCCESS;
  cl_int binary_status = CL_SUCCESS;
  program_ =
      ProgramHandle(clCreateProgramWithBinary(context, 1, &device, &size, &binary, &binary_status, &status));
  if (status == CL_INVALID_BINARY || binary_status == CL_INVALID_BINARY)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                      "the OpenCL driver refuses the binary of program " + entry_ +
                          " (CL_INVALID_BINARY): it was built for another device or driver");
  check(status, "clCreateProgramWithBinary for kernel " + entry_);
  status = clBuildProgram(program_.get(), 1, &device, "", nullptr, nullptr);
  if (status != CL_SUCCESS)
    throw PluginError(status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BINARY
                          ? TG_ERROR_INVALID_ARGUMENT
                          : error_code_for(status),
                      "loading the binary of program " + entry_ + " failed (" + status_name(status) + ")",
                      build_log(program_.get(), device));
  kernel_ = Kernel(clCreateKernel(program_.get(), entry_.c_str(), &status));
  if (status == CL_INVALID_KERNEL_NAME)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "OpenCL program binary has no kernel " + entry_);
  check(status, "clCreateKernel(" + entry_ + ")");
}

} // namespace tg::sdk::opencl
