// NVRTC for the tests that check CUDA C (render_cuda_test, tensor_core_test): compile one source
// for one architecture and keep what the checks read. Only where the build found NVRTC
// (TG_HAVE_NVRTC, with TG_CUDA_INCLUDE_DIR for cuda_fp16.h and friends).
#pragma once

#ifdef TG_HAVE_NVRTC
#include <nvrtc.h>

#include <string>

namespace tgtest {

struct NvrtcOutput {
  bool ok = false;
  std::string error;      // nvrtcGetErrorString of the compile
  std::string log;        // the compiler's log (warnings, errors)
  std::string ptx;        // empty unless ok
  size_t cubin_bytes = 0; // 0 unless ok and `arch` is a real sm_XY
};

// arch: "compute_XY" (PTX only) or "sm_XY" (a cubin, and its PTX). extra: one more option, e.g.
// "--ptxas-options=-v" (ptxas's notes, such as wgmma serialization, then land in the log).
inline NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, const std::string& arch,
                                 const std::string& extra = "") {
  NvrtcOutput out;
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    out.error = "nvrtcCreateProgram failed";
    return out;
  }
  const std::string gpu = "--gpu-architecture=" + arch,
                    include = std::string("--include-path=") + TG_CUDA_INCLUDE_DIR;
  const char* opts[] = {gpu.c_str(), include.c_str(), extra.c_str()};
  const nvrtcResult rc = nvrtcCompileProgram(prog, extra.empty() ? 2 : 3, opts);
  out.ok = rc == NVRTC_SUCCESS;
  out.error = nvrtcGetErrorString(rc);
  size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  out.log.assign(size, '\0');
  nvrtcGetProgramLog(prog, out.log.data());
  if (out.ok && nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS) {
    out.ptx.assign(size, '\0');
    nvrtcGetPTX(prog, out.ptx.data());
  }
  if (out.ok && arch.rfind("sm_", 0) == 0) nvrtcGetCUBINSize(prog, &out.cubin_bytes);
  nvrtcDestroyProgram(&prog);
  return out;
}

} // namespace tgtest
#endif
