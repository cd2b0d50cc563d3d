#include "compiler.hpp"
#include "driver.hpp"
#include "matrix_units.hpp"

#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/render/render.hpp>
#include <tg/sdk/wmma.hpp>

#include <nvrtc.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace tg::cuda {
namespace {

void check_nvrtc(nvrtcResult r, const std::string& what) {
  if (r != NVRTC_SUCCESS)
    throw sdk::PluginError(r == NVRTC_ERROR_OUT_OF_MEMORY ? TG_ERROR_RESOURCE_EXHAUSTED : TG_ERROR_INTERNAL,
                           what + " failed: " + nvrtcGetErrorString(r));
}

// The architectures NVRTC can emit machine code for (e.g. 75 .. 121), read once.
const std::vector<int>& supported_archs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    std::vector<int> out;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return out;
    out.resize(size_t(count));
    if (nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    std::sort(out.begin(), out.end());
    return out;
  }();
  return archs;
}

// "--gpu-architecture=..." for `arch`: sm_XY (cubin) when NVRTC knows it, else compute_<newest
// known below it> (PTX the driver finishes).
struct ArchChoice {
  bool cubin;
  int arch;
};
ArchChoice choose(int arch) {
  const std::vector<int>& known = supported_archs();
  if (std::find(known.begin(), known.end(), arch) != known.end()) return {true, arch};
  int best = 0;
  for (int a : known)
    if (a <= arch) best = a;
  if (best == 0)
    throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                           "NVRTC cannot build for sm_" + std::to_string(arch) + " (oldest supported: sm_" +
                               std::to_string(known.empty() ? 0 : known.front()) + ")");
  return {false, best};
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

// Where cuda_fp16.h / cuda_bf16.h live: TG_CUDA_INCLUDE, else the toolkit's include directory
// seen at configure time, else /usr/local/cuda/include.
std::vector<std::string> include_options() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("TG_CUDA_INCLUDE"); env && *env) out.push_back(std::string("-I") + env);
  out.push_back("-I" TG_CUDA_TOOLKIT_INCLUDE);
  out.push_back("-I/usr/local/cuda/include");
  return out;
}

// Each MMA of a wgmma unit (the local form: A and B are INDEXes into shared memory) as the IR 1.2
// WGMMA it is: the units' tiles are WGMMA's, so the renderer's wgmma path (descriptors, fences,
// commit/wait, 1024-byte alignment of swizzled tiles) renders it unchanged. Units checked by
// check_mma.
sdk::KernelIR local_mma_as_wgmma(const sdk::KernelIR& ir, std::span<const tg_matrix_unit> units) {
  sdk::KernelIR out = ir;
  bool changed = false;
  for (size_t i = 0; i < out.instructions.size(); ++i) {
    sdk::Instruction& ins = out.instructions[i];
    if (ins.op != TG_OP_MMA || !out.instructions[ins.src[0]].is_pointer()) continue;
    changed = true;
    const tg_matrix_unit& unit = units[size_t(ins.arg0 & 0xFFFFFFFF)];
    const int64_t flags = sdk::wgmma_unit_flags(unit);
    const sdk::MatrixStrides s = sdk::matrix_strides_unpack(ins.arg1);
    const std::string at = "kernel " + ir.name + ", instruction " + std::to_string(i) + " (MMA on " +
                           sdk::matrix_unit_name(unit) + "): ";
    if (flags < 0) throw sdk::PluginError(TG_ERROR_INTERNAL, at + "not a wgmma unit");
    const bool sw = (flags & sdk::kWgmmaSwizzle128) != 0, k_major_b = (flags & sdk::kWgmmaBNMajor) == 0;
    for (int64_t v : {s.a_row, sw ? 0 : s.a_col, sw && k_major_b ? 0 : s.b_row, s.b_col}) // 16-bit bytes
      if (2 * v > 0xFFFF)
        throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, at + "atom stride of " + std::to_string(v) +
                                                           " elements; wgmma takes at most 32767");
    ins.op = TG_OP_WGMMA;
    ins.arg0 =
        sdk::wgmma_code(int(unit.n)) | flags | ((ins.arg0 & TG_MMA_DEFER_READS) ? sdk::kWgmmaDeferReads : 0);
    ins.arg1 = sdk::wgmma_strides(flags, s);
  }
  if (!changed) return out;
  try { // what WGMMA asks beyond check_mma (e.g. a swizzled layout's unused strides)
    sdk::validate_kernel_ir(out);
  } catch (const sdk::IRError& e) {
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "kernel " + ir.name + ": a wgmma unit's MMA as WGMMA: " + e.what());
  }
  return out;
}

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using ProgramHandle = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

} // namespace

std::vector<std::byte> pack_image(const std::string& entry, uint32_t dynamic_shared_bytes,
                                  std::span<const std::byte> code) {
  const std::string head = entry + '\0' + std::to_string(dynamic_shared_bytes) + '\0';
  std::vector<std::byte> out(head.size() + code.size());
  std::memcpy(out.data(), head.data(), head.size());
  if (!code.empty()) std::memcpy(out.data() + head.size(), code.data(), code.size());
  return out;
}

Image unpack_image(std::span<const std::byte> payload) {
  const char* begin = reinterpret_cast<const char*>(payload.data());
  const char* end = begin + payload.size();
  const char* nul = static_cast<const char*>(std::memchr(begin, 0, payload.size()));
  if (!nul || nul == begin)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "CUDA payload has no entry name");
  Image image;
  image.entry.assign(begin, nul);
  const char* count = nul + 1;
  const char* count_end = static_cast<const char*>(std::memchr(count, 0, size_t(end - count)));
  const auto [last, ec] = std::from_chars(count, count_end ? count_end : end, image.dynamic_shared_bytes);
  if (!count_end || count_end == count || ec != std::errc{} || last != count_end)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "CUDA payload of " + image.entry + " has no dynamic shared memory size");
  image.code = payload.subspan(size_t(count_end + 1 - begin));
  if (image.code.empty())
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "CUDA payload of " + image.entry + " has no code");
  return image;
}

int parse_target(const std::string& target) {
  int arch = 0;
  if (target.size() >= 5 && target.rfind("sm_", 0) == 0 &&
      std::all_of(target.begin() + 3, target.end(), [](char c) { return c >= '0' && c <= '9'; }))
    arch = std::atoi(target.c_str() + 3);
  if (arch < 75)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "unknown CUDA target \"" + target +
                                                          "\": expected sm_XY with XY >= 75 (e.g. sm_90)");
  return arch;
}

std::string Compiler::resolve(const std::string& target) const {
  if (!target.empty()) return target;
  try { // the first GPU, when there is one; compiling needs none
    const Driver& d = driver();
    CUdevice dev = 0;
    int major = 0, minor = 0;
    if (d.cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
        d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
        d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
      return "sm_" + std::to_string(major * 10 + minor);
  } catch (const sdk::PluginError&) {
  }
  return "sm_75";
}

sdk::CompileOutput Compiler::compile(const sdk::CompileRequest& request) {
  const std::string target = resolve(request.target);
  const ArchChoice arch = choose(parse_target(target));
  // MMA (IR 1.3) names one of the units this compute capability declares (matrix_units.hpp):
  // mma.sync m16n8k16 from registers, rendered by cuda_mma_sync_m16n8k16, or wgmma from shared
  // memory, rendered as WGMMA.
  const std::vector<tg_matrix_unit> units = matrix_units(parse_target(target));
  sdk::check_mma(request.ir, units);
  const sdk::KernelIR ir = local_mma_as_wgmma(request.ir, units);
  // WGMMA (IR 1.2) is wgmma.mma_async, which exists only in the arch-specific sm_90a target
  // (docs/cuda.md): such a program builds for sm_90a or not at all.
  const bool wgmma = sdk::uses_wgmma(ir);
  if (wgmma && !(arch.cubin && arch.arch == 90))
    throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                           "kernel " + ir.name + " uses WGMMA, which needs sm_90a (Hopper); the target is " +
                               target);
  sdk::render::Options render_options;
  render_options.cuda_completion_word = true; // every kernel: Device::launch passes the word or null
  render_options.mma = [](const sdk::render::MmaStatement& mma) {
    return sdk::render::cuda_mma_sync_m16n8k16(mma);
  };
  sdk::render::Source source = sdk::render::render(sdk::render::Dialect::cuda, ir, render_options);

  nvrtcProgram raw = nullptr;
  check_nvrtc(
      nvrtcCreateProgram(&raw, source.text.c_str(), (source.entry + ".cu").c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram(" + source.entry + ")");
  ProgramHandle program(raw);
  std::vector<std::string> options = include_options();
  options.push_back(std::string("--gpu-architecture=") + (arch.cubin ? "sm_" : "compute_") +
                    std::to_string(arch.arch) + (wgmma ? "a" : ""));
  if (request.opt_level == 0) options.push_back("--dopt=off");
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult built = nvrtcCompileProgram(raw, int(argv.size()), argv.data());
  size_t log_size = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(raw, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    nvrtcGetProgramLog(raw, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  }
  if (built == NVRTC_ERROR_COMPILATION)
    throw sdk::PluginError(TG_ERROR_INTERNAL,
                           "NVRTC " + nvrtc_version() + " failed to compile kernel " + source.entry +
                               " for " + target + "; log: " + (log.empty() ? "(empty)" : log.substr(0, 2000)),
                           log + "\n--- source\n" + source.text);
  check_nvrtc(built, "nvrtcCompileProgram(" + source.entry + ")");

  std::vector<std::byte> code;
  size_t size = 0;
  if (arch.cubin) {
    check_nvrtc(nvrtcGetCUBINSize(raw, &size), "nvrtcGetCUBINSize");
    code.resize(size);
    check_nvrtc(nvrtcGetCUBIN(raw, reinterpret_cast<char*>(code.data())), "nvrtcGetCUBIN");
  } else {
    check_nvrtc(nvrtcGetPTXSize(raw, &size), "nvrtcGetPTXSize"); // includes the NUL
    code.resize(size);
    check_nvrtc(nvrtcGetPTX(raw, reinterpret_cast<char*>(code.data())), "nvrtcGetPTX");
  }
  sdk::CompileOutput out;
  out.target = target;
  out.payload = pack_image(source.entry, source.dynamic_local_bytes, code);
  if (request.want_source) out.source = std::move(source.text);
  out.log = std::move(log);
  return out;
}

std::string Compiler::cache_key(const std::string& target) {
  const std::string resolved = resolve(target);
  const ArchChoice arch = choose(parse_target(resolved));
  // "image 2": payloads carry the dynamic shared memory size (older cached ones do not);
  // "image 3": their kernels take the completion word (stream.hpp) after their scalars
  return "nvrtc " + nvrtc_version() + "|image 3|" + resolved + "|" + (arch.cubin ? "sm_" : "compute_") +
         std::to_string(arch.arch);
}

} // namespace tg::cuda
