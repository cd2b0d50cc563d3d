// Kernel IR -> the OpenCL C the plugins build: the SDK renderer's opencl dialect, with one change.
// OpenCL cannot pass a pointer into the middle of a buffer, so every buffer parameter `bK` becomes
// two arguments, the cl_mem `bK_base` and a ulong byte offset `bK_offset`, and the kernel starts by
// forming bK from them. Launch arguments are therefore: 2 per buffer (in DEFINE_GLOBAL order),
// then one per scalar (in the renderer's passed_as type).
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <string>

namespace tg::sdk::opencl {

struct KernelSource {
  std::string text;
  std::string entry;
};

// native_half: the device has cl_khr_fp16 (render::Options::opencl_fp16).
KernelSource render_kernel(const KernelIR& ir, bool native_half);

} // namespace tg::sdk::opencl
