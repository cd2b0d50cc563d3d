// Programs: OpenCL C built for one device into its CL_PROGRAM_BINARIES bytes (what the blob
// carries, so the host's disk cache can keep it), and those bytes loaded back into a kernel.
// The payload inside the blob envelope is the entry name, a NUL, then the binary.
#pragma once

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/opencl/handles.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tg::sdk::opencl {

struct BuiltProgram {
  std::vector<std::byte> payload; // entry, NUL, binary
  std::string log;                // the build log (warnings), may be empty
};

// Builds `source` for `device`. A failed build throws PluginError(INTERNAL) whose message names the
// kernel and quotes the start of the build log; the whole log travels as the error's log.
BuiltProgram build_program(cl_context context, cl_device_id device, const std::string& source,
                           const std::string& entry, const std::string& options);

// A loaded kernel. The payload must come from build_program for the same device and driver (the
// blob envelope's target checks that first); a binary the driver refuses is INVALID_ARGUMENT.
class Program final : public tg::sdk::Program {
public:
  Program(cl_context context, cl_device_id device, std::span<const std::byte> payload);
  cl_kernel kernel() const { return kernel_.get(); }
  const std::string& entry() const { return entry_; }

private:
  std::string entry_;
  ProgramHandle program_;
  Kernel kernel_;
};

// CL_PROGRAM_BUILD_LOG for `device`, "" when the driver gives none.
std::string build_log(cl_program program, cl_device_id device);

} // namespace tg::sdk::opencl
