// Renderers: kernel IR -> source text in a C-family language, for plugins whose device compiler
// takes source (OpenCL, CUDA/NVRTC, Metal, Vulkan via GLSL) and for the out-of-tree C example.
// One walker (cstyle) emits the statements; each dialect supplies its types, qualifiers, ids,
// barriers, memory access, casts and math. Link tinygrad_cpp::sdk_render (the installed package's
// name; tg::sdk_render inside the tinygrad.cpp tree).
//
// Shared choices (docs/architecture.md, "Renderers", says more):
//  - Vectors (vcount > 1) are rendered lane by lane: every lane is its own scalar variable and
//    vector LOAD/STORE become consecutive element accesses. No dialect relies on vector types or
//    their alignment; the device compiler re-vectorizes.
//  - float16 and bfloat16 values are computed in float and rounded to their type after every
//    operation (the CPU plugin's semantics); memory holds the 16-bit encoding.
//  - Integer + - * and << wrap (computed in the unsigned type); IDIV/MOD follow C (truncate
//    toward zero, remainder has the dividend's sign); shift amounts are masked to the bit width;
//    MAX of floats returns NaN when either operand is NaN. Division by zero and INT_MIN / -1 are
//    left to the language (the host never relies on them).
//  - What a dialect cannot express is refused with PluginError(TG_ERROR_UNIMPLEMENTED) whose
//    message names the dialect, the kernel, the instruction, the op and the dtype.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/plugin.hpp> // PluginError

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tg::sdk::render {

enum class Dialect {
  c,      // C99, self-contained; entry runs one work group (see CKernelFn)
  opencl, // OpenCL C 1.2
  cuda,   // CUDA C++ for NVRTC, sm_75+
  metal,  // Metal Shading Language 2.x (checked against golden text only)
  glsl,   // GLSL 450 compute for Vulkan 1.1+ (SPIR-V via glslang/shaderc)
};
const char* dialect_name(Dialect dialect); // "c", "opencl", "cuda", "metal", "glsl"

// One IR 1.3 MMA (a matrix unit the plugin declares, tg_matrix_unit) as the renderer hands it to
// Options::mma: `d` are variables already holding this item's C lanes, which the statement updates
// in place to D; `a` and `b` are expressions of the item's A and B lanes (their dtypes' values as
// the dialect computes them: float for float16/bfloat16). `a_words`/`b_words` hold, per lane pair
// (2j, 2j + 1), a 2-lane variable read from local memory whose lanes (0, 1) are that pair, else ""
// (CUDA passes such a pair as one 32-bit register).
struct MmaStatement {
  int64_t unit = 0; // MMA's arg0: the index in the target's declared list
  tg_dtype a_dtype = 0, b_dtype = 0, c_dtype = 0;
  std::vector<std::string> a, b, d;
  std::vector<std::string> a_words, b_words;
};

// CUDA's mma.sync.aligned.m16n8k16.row.col.f32 for float16 or bfloat16 A and B (the layout of
// sdk::wmma_m16n8k16_unit): a plugin declaring that unit renders its MMA with this.
std::string cuda_mma_sync_m16n8k16(const MmaStatement& mma);

struct Options {
  // OpenCL: the device has cl_khr_fp16, so half values may live in registers and local memory.
  // Without it, float16 buffers are read and written with vload_half/vstore_half.
  bool opencl_fp16 = false;
  // GLSL: default work-group size; the pipeline overrides it through specialization constants
  // 0, 1, 2 (layout(local_size_x_id = 0, ...)).
  std::array<uint32_t, 3> glsl_local_size{1, 1, 1};
  // CUDA: the kernel takes two more parameters after its scalars, `unsigned int* tg_done` and
  // `unsigned int tg_seq`. Where a launch passes a non-null tg_done, which it may only do for a
  // grid of one block, the block's last act (after a barrier and a device-wide fence) stores
  // tg_seq there: host-mapped memory the host can watch instead of asking the driver whether the
  // kernel ended (the CUDA plugin's synchronize, plugins/cuda/stream.hpp). Device scope is
  // enough: the host reads results only through later work on the stream, which the driver
  // orders after the kernel; the word says that every thread has done its stores.
  bool cuda_completion_word = false;
  // The statement for one MMA (IR 1.3) on the plugin's declared unit `mma.unit`. Unset, MMA is
  // refused (UNIMPLEMENTED). Declare the units with the same index on the device (ABI 1.4).
  std::function<std::string(const MmaStatement& mma)> mma;
};

// How a DEFINE_GLOBAL reaches the kernel.
struct BufferParam {
  uint32_t index = 0;   // DEFINE_GLOBAL arg0
  tg_dtype dtype = 0;   // element dtype (BOOL is one byte 0/1, BFLOAT16 its 16-bit pattern)
  uint32_t binding = 0; // GLSL: descriptor set 0 binding; Metal: [[buffer(n)]]; else = index
};

// How a DEFINE_VAR reaches the kernel.
//  - c: scalars[index] is a uint64_t slot holding tg_scalar_arg.value's 8 bytes.
//  - opencl, cuda: kernel argument number (buffer_count + index) of type passed_as.
//  - metal: `constant T&` at [[buffer(buffer_count + index)]] of type passed_as.
//  - glsl: a push-constant member (std430) at `offset` bytes, `size` bytes, of type passed_as.
// passed_as differs from dtype only where the language cannot take the dtype as an argument:
// BOOL -> INT32 (0/1), FLOAT16/BFLOAT16 -> FLOAT32, and for glsl INT8/INT16 -> INT32,
// UINT8/UINT16 -> UINT32.
struct ScalarParam {
  uint32_t index = 0;
  tg_dtype dtype = 0;
  tg_dtype passed_as = 0;
  uint32_t offset = 0;
  uint32_t size = 0;
};

struct Source {
  Dialect dialect = Dialect::c;
  std::string text;                 // the whole translation unit
  std::string entry;                // kernel function name ("main" for glsl)
  std::vector<BufferParam> buffers; // by DEFINE_GLOBAL index
  std::vector<ScalarParam> scalars; // by DEFINE_VAR index
  uint32_t push_constant_bytes = 0; // glsl: size of the push-constant block (0: none)
  bool uses_local_memory = false;   // DEFINE_LOCAL present
  bool uses_barrier = false;        // BARRIER present
  // cuda: bytes of dynamic shared memory a launch must pass (cuLaunchKernel's sharedMemBytes).
  // 0 while the program's local memory fits CUDA's 48 KiB of static __shared__ arrays; above
  // that every DEFINE_LOCAL is carved out of one `extern __shared__` buffer of this size.
  uint32_t dynamic_local_bytes = 0;
};

// The C dialect's entry point, `void <entry>(...)` with exactly this signature. One call runs
// the work group (group_x, group_y, group_z) of a launch whose work-group shape is
// (local_x, local_y, local_z): it loops over the local ids itself, z outermost, x innermost.
// buffers[k] is DEFINE_GLOBAL k's base (already offset), scalars[k] as in ScalarParam.
// The source needs only <stdint.h>, <math.h> and <string.h>; compile it with any C99 compiler
// (e.g. `cc -O2 -shared -fPIC`) and link libm. BARRIER and DEFINE_LOCAL are refused.
using CKernelFn = void (*)(void* const* buffers, const uint64_t* scalars, int32_t group_x, int32_t group_y,
                           int32_t group_z, int32_t local_x, int32_t local_y, int32_t local_z);

// Renders a validated program (parse_kernel_ir / KernelBuilder::serialize output).
// Throws PluginError(TG_ERROR_UNIMPLEMENTED) for what the dialect does not support.
Source render(Dialect dialect, const KernelIR& ir, const Options& options = {});

// One dialect each, the same as render(<dialect>, ...). A plugin that calls only its own dialect's
// function links only that dialect's code (render() reaches all five).
Source render_c(const KernelIR& ir, const Options& options = {});
Source render_opencl(const KernelIR& ir, const Options& options = {});
Source render_cuda(const KernelIR& ir, const Options& options = {});
Source render_metal(const KernelIR& ir, const Options& options = {});
Source render_glsl(const KernelIR& ir, const Options& options = {});

} // namespace tg::sdk::render
