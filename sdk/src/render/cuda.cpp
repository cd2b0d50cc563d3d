// The CUDA C++ dialect for NVRTC (sm_75 and newer). float16/bfloat16 use the toolkit's
// cuda_fp16.h/cuda_bf16.h types in memory and their conversion intrinsics; arithmetic is done in
// float and rounded after every operation, like every other dialect.
#include "cstyle.hpp"

#include <tg/sdk/wmma.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace tg::sdk::render {
namespace {

// Static __shared__ arrays may hold 48 KiB per block in all; more must be dynamic shared memory
// (the launch passes its size and the function opts in to it: plugins/cuda/program.cpp).
constexpr uint64_t kStaticSharedBytes = 48 * 1024;
// Where each array starts in the dynamic buffer: 128-byte aligned (enough for any vector access,
// and for the tile layouts wgmma and cp.async want); 1024 in a program with 128-byte swizzled
// WGMMA tiles (kWgmmaSwizzle128: the swizzle reads bits 7-9 of the shared-memory address, so each
// DEFINE_LOCAL starts an atom).
constexpr uint64_t kDynamicAlign = 128;
constexpr uint64_t kSwizzleAlign = 1024;
bool swizzled_wgmma(const KernelIR& ir) {
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_WGMMA && wgmma_swizzled(ins.arg0)) return true;
  return false;
}
uint64_t local_align(const KernelIR& ir) { return swizzled_wgmma(ir) ? kSwizzleAlign : kDynamicAlign; }

// The DEFINE_LOCALs in the one dynamic buffer, in program order, each at a 128-byte boundary:
// instruction -> byte offset, and the buffer's size. Empty when they fit the static limit in all
// (their declarations stay static arrays, the source as before).
struct SharedLayout {
  std::map<uint32_t, uint64_t> offsets;
  uint64_t bytes = 0;
};
SharedLayout dynamic_shared_layout(const KernelIR& ir) {
  SharedLayout l;
  uint64_t total = 0;
  for (uint32_t i = 0; i < ir.instructions.size(); ++i) {
    const Instruction& ins = ir.instructions[i];
    if (ins.op != TG_OP_DEFINE_LOCAL) continue;
    const uint64_t size = uint64_t(ins.arg0) * dtype_size(ins.dtype);
    const uint64_t align = local_align(ir);
    l.offsets[i] = (l.bytes + align - 1) / align * align;
    l.bytes = l.offsets[i] + size;
    total += size;
  }
  return total > kStaticSharedBytes ? l : SharedLayout{};
}

class CudaRenderer final : public CStyle {
public:
  CudaRenderer(const KernelIR& ir, const Options& options)
      : CStyle(Dialect::cuda, ir, options), shared_(dynamic_shared_layout(ir)) {
    if (shared_.bytes > UINT32_MAX)
      throw PluginError(TG_ERROR_UNIMPLEMENTED, "cuda: kernel " + ir.name + " needs " +
                                                    std::to_string(shared_.bytes) +
                                                    " bytes of local memory, more than a launch can pass");
  }

private:
  const SharedLayout shared_; // empty: static __shared__ arrays

  // ptxas of CUDA 13.0 (V13.0.88, sm_80 and sm_90, -O1 and up) miscompiles an unrolled loop that
  // takes the max of negated int32 values (how the core computes an integer min: -max(-x)): about
  // half the results came back wrong on an H200, with the negation written any way, while the same
  // loop not unrolled, or built with -Xptxas -O0, was right (docs/cuda.md, "Kernels: CUDA C through
  // NVRTC"). So a loop that accumulates an integer MAX is kept rolled.
  // An innermost loop of 8 to 16 steps that reads work-group local memory (the steps through a
  // staged matmul tile: 64 FMAs and 4 shared loads each) is unrolled: nvcc keeps a body that large
  // rolled, paying index arithmetic and a branch every step and never issuing the next step's
  // shared loads early; unrolled, the steps' tile offsets become immediates of the shared loads
  // (4096^3 f32 on an H200: ~10% faster). Shorter nests (a staged convolution's 4 x 3 x 3 steps)
  // stay as nvcc leaves them: unrolled by hand they run ~20% slower.
  // A loop whose WGMMAs defer their reads (a run still in flight when the next step starts) is
  // unrolled twice: kept rolled, ptxas 13.0 (NVRTC and nvcc, sm_90a) serializes every wgmma of a
  // body that also issues several cp.async (C7514, a `WARPGROUP.DEPBAR.LE gsb0, 0x0` after each
  // HGMMA in the SASS), unless the loop is short enough that it unrolls it whole (8192^3 f16's 128
  // steps are serialized; the tests' 5 are not). Unrolled twice, the runs stay pipelined.
  std::string loop_pragma(uint32_t i) const override {
    const auto& code = ir_.instructions;
    bool innermost = true, reads_local = false, deferred_wgmma = false;
    for (uint32_t j = i + 1; j < code.size(); ++j) {
      const Instruction& ins = code[j];
      if (ins.op == TG_OP_ENDRANGE && !ins.src.empty() && ins.src[0] == i) break;
      if (ins.op == TG_OP_MAX && !dtype_is_float(ins.dtype) && ins.dtype != TG_DTYPE_BOOL)
        return "#pragma unroll 1 // integer max: see loop_pragma in the CUDA renderer";
      if (ins.op == TG_OP_WGMMA && innermost && wgmma_defers_reads(ins.arg0)) deferred_wgmma = true;
      if (ins.op == TG_OP_RANGE) innermost = false;
      if (ins.op == TG_OP_LOAD && code[ins.src[0]].op == TG_OP_INDEX &&
          code[code[ins.src[0]].src[0]].is_local())
        reads_local = true;
    }
    const Instruction &start = code[code[i].src[0]], &end = code[code[i].src[1]];
    const bool short_loop = start.op == TG_OP_CONST && end.op == TG_OP_CONST && end.arg0 - start.arg0 >= 8 &&
                            end.arg0 - start.arg0 <= 16;
    if (innermost && deferred_wgmma)
      return "#pragma unroll 2 // deferred wgmma reads: see loop_pragma in the CUDA renderer";
    return innermost && reads_local && short_loop ? "#pragma unroll // the steps through a staged tile" : "";
  }

  std::string type(tg_dtype dt) const override {
    static const char* names[] = {
        "void",           "bool",          "signed char",  "unsigned char", "short",
        "unsigned short", "int",           "unsigned int", "long long",     "unsigned long long",
        "__half",         "__nv_bfloat16", "float",        "double"};
    return names[dt];
  }
  std::string memory_type(tg_dtype dt, bool local) const override {
    if (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16) return type(dt);
    return CStyle::memory_type(dt, local);
  }
  std::string nonfinite_literal(double v, tg_dtype dt) const override {
    if (dt == TG_DTYPE_FLOAT64)
      return std::string("__longlong_as_double(") +
             (std::isnan(v) ? "0x7ff8000000000000LL"
              : v > 0       ? "0x7ff0000000000000LL"
                            : "(long long)0xfff0000000000000ULL") +
             ")";
    return std::string("__int_as_float(") +
           (std::isnan(v) ? "0x7fc00000"
            : v > 0       ? "0x7f800000"
                          : "(int)0xff800000u") +
           ")";
  }
  std::string special(int64_t kind, int64_t axis) const override {
    static const char* xyz[] = {"x", "y", "z"};
    return std::string(kind == TG_SPECIAL_GROUP_ID ? "((int)blockIdx." : "((int)threadIdx.") + xyz[axis] +
           ")";
  }
  // Local memory written by ordinary stores and read next by wgmma (the async proxy) needs a proxy
  // fence in each writing thread before the barrier (PTX ISA, "async proxy").
  // Copies by cp.async (async_copy) are waited for first, so that the fence and the barrier
  // publish them as they do ordinary stores.
  std::string barrier() const override {
    if (async_copies_ && !tensor_core_program()) return "tg_copy16_wait(); __syncthreads();";
    return std::string(async_copies_ ? "asm volatile(\"cp.async.wait_all;\" ::: \"memory\"); " : "") +
           (uses_wgmma(ir_)
                ? "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); __syncthreads();"
                : "__syncthreads();");
  }
  // BARRIER arg0 = n > 0 in a WGMMA program whose copies are cp.async: the copies issued since the
  // last barrier close one commit group, and the barrier waits until at most the latest n groups
  // are pending (cp.async.wait_group n) before the proxy fence: the warpgroup tile loop copying n + 1
  // tiles ahead waits only for the tile its step reads (lower_stage.cpp, stage_copies).
  std::string barrier_in_flight(int64_t n) const override {
    if (!async_copies_) return barrier();
    if (!tensor_core_program()) return "tg_copy16_wait_group<" + std::to_string(n) + ">(); __syncthreads();";
    return "asm volatile(\"cp.async.commit_group;\\ncp.async.wait_group " + std::to_string(n) +
           ";\" ::: \"memory\"); asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); "
           "__syncthreads();";
  }
  // cp.async.cg (sm_80 and newer; 16 bytes, through L2 only) for the tiles of WGMMA programs whose
  // B is n-major (the warpgroup matmul's 16-byte rows of A and B), which then skip registers; other
  // tensor-core programs keep their register copies (byte for byte).
  // Programs without tensor cores (the staged f32 convolutions and matmuls) move every such copy
  // by tg_copy16 (cp.async.cg on sm_80 and newer, a register copy before): a double-buffered
  // tile's copies then lead the step (lower_stage.cpp, stage_copies) without holding the next
  // tile in registers across it.
  std::string async_copy(const std::string& local, const std::string& global) const override {
    if (!tensor_core_program()) return "tg_copy16(" + local + ", " + global + ");";
    bool rows = false; // every tile a set of 16-byte rows: A, and B n-major
    for (const auto& ins : ir_.instructions) rows |= ins.op == TG_OP_WGMMA && wgmma_b_n_major(ins.arg0);
    if (!rows) return "";
    return "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: "
           "\"r\"((unsigned)__cvta_generic_to_shared(" +
           local + ")), \"l\"(" + global + ") : \"memory\");";
  }
  // wgmma.mma_async m64nNk16 (sm_90a): A and B through shared-memory matrix descriptors
  // (tg_wgmma_desc: no swizzle, the leading byte offset is the stride between core matrices along
  // k, the stride byte offset the one along m/n; K-major, or for B under kWgmmaBNMajor N-major:
  // imm-trans-b 1, core matrices of 8 k-rows x 16 bytes, the offsets keeping their meaning as PTX's
  // no-swizzle MN-major canonical layout defines them), D in N/2 floats per thread updated
  // in place (scale-d 1: D = A * B + D). A run of consecutive WGMMAs shares one wgmma.fence before
  // its first and one commit_group + wait_group 0 after its last, so the results are complete
  // before anything else reads them. A run whose ops defer their reads (kWgmmaDeferReads) waits
  // with wait_group 1 instead: the previous run is complete, this one stays in flight while the
  // thread goes on to the next tile's copy and barrier; the loop around it ends with wait_group 0
  // (loop_end). The run's D feeds the next run's C in the same registers (the accumulator's
  // ASSIGN in between is a register copy ptxas coalesces; were it not, ptxas would serialize the
  // wgmmas and say so in the log).
  bool has_wgmma() const override { return true; }
  std::string wgmma(int64_t shape, tg_dtype input, const std::string& a, const std::string& b,
                    int64_t strides, const std::vector<std::string>& d, bool first,
                    bool last) const override {
    const WgmmaShape sh = *wgmma_shape(wgmma_shape_code(shape));
    const WgmmaStrides st = wgmma_unpack(strides);
    const std::string in = input == TG_DTYPE_BFLOAT16 ? "bf16" : "f16";
    const size_t nd = d.size();
    std::string regs;
    for (size_t k = 0; k < nd; ++k) regs += (k ? ", %" : "%") + std::to_string(k);
    std::string s = first ? "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n" : "";
    s += "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(nd + 2) +
         ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(sh.n) + "k16.f32." + in + "." + in +
         " {" + regs + "}, %" + std::to_string(nd) + ", %" + std::to_string(nd + 1) + ", p, 1, 1, 0, " +
         (wgmma_b_n_major(shape) ? "1" : "0") + ";\\n}\" : ";
    for (size_t k = 0; k < nd; ++k) s += (k ? ", \"+f\"(" : "\"+f\"(") + d[k] + ")";
    // 128-byte swizzle (kWgmmaSwizzle128): layout type 1 in bits 62-63; K-major: the leading byte
    // offset is unused (a_k = 16 encodes PTX's "assumed 1"), the stride byte offset the 8-row groups;
    // n-major B: the leading byte offset is the 64-n blocks (b_n), the stride byte offset the 8-k
    // groups (b_k), PTX's MN-major swizzled canonical layout. Base offset 0: every atom starts at a
    // multiple of 1024 bytes (local_align).
    const bool swz = wgmma_swizzled(shape);
    auto desc = [&](const std::string& p, int64_t lbo, int64_t sbo) {
      return "\"l\"(tg_wgmma_desc(" + p + ", " + std::to_string(lbo) + "ull, " + std::to_string(sbo) +
             "ull)" + (swz ? " | (1ull << 62)" : "") + ")";
    };
    const bool bn_swz = swz && wgmma_b_n_major(shape);
    s += " : " + desc(a, st.a_k, st.a_m) + ", " +
         (bn_swz ? desc(b, st.b_n, st.b_k) : desc(b, st.b_k, st.b_n)) + ", \"r\"(1) : \"memory\");";
    if (last)
      s += std::string("\nasm volatile(\"wgmma.commit_group.sync.aligned;\\nwgmma.wait_group.sync.aligned ") +
           (wgmma_defers_reads(shape) ? "1" : "0") + ";\" ::: \"memory\");";
    return s;
  }
  std::string loop_end(uint32_t i) const override {
    const auto& code = ir_.instructions;
    for (uint32_t j = i + 1; j < code.size(); ++j) {
      if (code[j].op == TG_OP_ENDRANGE && code[j].src[0] == i) break;
      if (code[j].op == TG_OP_WGMMA && wgmma_defers_reads(code[j].arg0))
        return "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\"); // the deferred runs";
    }
    return "";
  }
  // mma.sync m16n8k16 (sm_80 and newer): A in 4 and B in 2 registers of two packed 16-bit values
  // (the lower fragment position in the low half), D/C in 4 floats (docs/abi.md, WMMA). A pair
  // read from local memory as one __half2/__nv_bfloat162 word goes in as that word (no float round
  // trip; docs/cuda.md, "Kernels: CUDA C through NVRTC").
  bool has_wmma() const override { return true; }
  std::string wmma(int64_t, tg_dtype input, const std::vector<std::string>& a,
                   const std::vector<std::string>& b, const std::vector<std::string>& d,
                   const std::vector<std::string>& a_words,
                   const std::vector<std::string>& b_words) const override {
    MmaStatement st;
    st.a_dtype = st.b_dtype = input;
    st.c_dtype = TG_DTYPE_FLOAT32;
    st.a = a;
    st.b = b;
    st.d = d;
    st.a_words = a_words;
    st.b_words = b_words;
    return cuda_mma_sync_m16n8k16(st);
  }
  // 16-byte aligned, so that nvcc may merge adjacent reads of a staged tile into 128-bit loads.
  // Past 48 KiB in all, a pointer into the one dynamic buffer (dynamic_shared_layout).
  std::string local_array(const std::string& name, tg_dtype dt, int64_t count) const override {
    if (shared_.bytes == 0)
      return std::string(swizzled_wgmma(ir_) ? "__shared__ __align__(1024) " : "__shared__ __align__(16) ") +
             memory_type(dt, true) + " " + name + "[" + std::to_string(count) + "];";
    const uint64_t at = shared_.offsets.at(uint32_t(std::stoul(name.substr(1)))); // name: "l<instruction>"
    const std::string t = memory_type(dt, true);
    return t + "* const " + name + " = reinterpret_cast<" + t + "*>(tg_shared + " + std::to_string(at) +
           "); // " + std::to_string(count) + " elements";
  }
  std::string math(tg_op op, tg_dtype dt, const std::string& x) const override {
    return std::string(math_name(op)) + (dt == TG_DTYPE_FLOAT64 ? "" : "f") + "(" + x + ")";
  }
  std::string load(tg_dtype dt, const std::string& base, const std::string& idx, bool local) const override {
    if (dt == TG_DTYPE_FLOAT16) return "__half2float(" + element(base, idx, local) + ")";
    if (dt == TG_DTYPE_BFLOAT16) return "__bfloat162float(" + element(base, idx, local) + ")";
    return CStyle::load(dt, base, idx, local);
  }
  std::string local_vector_type(tg_dtype dt, unsigned n) const override {
    if (dt == TG_DTYPE_FLOAT16 && n == 2) return "__half2";
    if (dt == TG_DTYPE_BFLOAT16 && n == 2) return "__nv_bfloat162";
    if (dt != TG_DTYPE_FLOAT32 || (n != 2 && n != 4)) return "";
    return n == 2 ? "float2" : "float4";
  }
  // 128-bit global/shared accesses (ld/st .v4): four floats, or eight 16-bit floats as four words.
  std::string aligned_vector_type(tg_dtype dt, unsigned n) const override {
    if (dt == TG_DTYPE_FLOAT32 && n == 4) return "float4";
    if ((dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16) && n == 8) return "uint4";
    return "";
  }
  std::string aligned_vector_lane(tg_dtype dt, const std::string& var, unsigned k) const override {
    static const char* const xyzw[] = {".x", ".y", ".z", ".w"};
    if (dt == TG_DTYPE_FLOAT32) return var + xyzw[k];
    const std::string bits = "(unsigned short)(" + var + xyzw[k / 2] + (k % 2 ? " >> 16)" : ")");
    return dt == TG_DTYPE_FLOAT16 ? "__half2float(__ushort_as_half(" + bits + "))"
                                  : "__bfloat162float(__ushort_as_bfloat16(" + bits + "))";
  }
  std::string aligned_vector_make(tg_dtype dt, const std::vector<std::string>& v) const override {
    if (dt == TG_DTYPE_FLOAT32) return "make_float4(" + v[0] + ", " + v[1] + ", " + v[2] + ", " + v[3] + ")";
    auto bits = [&](const std::string& x) {
      return dt == TG_DTYPE_FLOAT16 ? "(unsigned)__half_as_ushort(__float2half_rn(" + x + "))"
                                    : "(unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(" + x + "))";
    };
    std::string s = "make_uint4(";
    for (size_t w = 0; w < 4; ++w)
      s += (w ? ", " : "") + bits(v[2 * w]) + " | (" + bits(v[2 * w + 1]) + " << 16)";
    return s + ")";
  }
  std::string local_vector_lane(tg_dtype dt, const std::string& var, unsigned k) const override {
    if (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16)
      return (k ? "__high2float(" : "__low2float(") + var + ")";
    return CStyle::local_vector_lane(dt, var, k);
  }
  std::string store(tg_dtype dt, const std::string& base, const std::string& idx, bool local,
                    const std::string& value) const override {
    if (dt == TG_DTYPE_FLOAT16) return element(base, idx, local) + " = __float2half_rn(" + value + ");";
    if (dt == TG_DTYPE_BFLOAT16) return element(base, idx, local) + " = __float2bfloat16_rn(" + value + ");";
    return CStyle::store(dt, base, idx, local, value);
  }
  std::string round_half(const std::string& x) const override {
    return "__half2float(__float2half_rn(" + x + "))";
  }
  std::string round_bf16(const std::string& x) const override {
    return "__bfloat162float(__float2bfloat16_rn(" + x + "))";
  }
  std::string float_bits(int width, const std::string& x) const override {
    if (width == 16) return "__half_as_ushort(__float2half_rn(" + x + "))";
    if (width == 32) return "__float_as_uint(" + x + ")";
    return "((unsigned long long)__double_as_longlong(" + x + "))";
  }
  std::string bits_float(int width, const std::string& u) const override {
    if (width == 16) return "__half2float(__ushort_as_half((unsigned short)(" + u + ")))";
    if (width == 32) return "__uint_as_float(" + u + ")";
    return "__longlong_as_double((long long)(" + u + "))";
  }
  std::string bf16_bits(const std::string& x) const override {
    return "__bfloat16_as_ushort(__float2bfloat16_rn(" + x + "))";
  }
  std::string bits_bf16(const std::string& u) const override {
    return "__bfloat162float(__ushort_as_bfloat16((unsigned short)(" + u + ")))";
  }

  bool tensor_core_program() const {
    for (const auto& ins : ir_.instructions)
      if (ins.op == TG_OP_WMMA || ins.op == TG_OP_WGMMA || ins.op == TG_OP_MMA) return true;
    return false;
  }

  bool wmma_uses(tg_dtype input) const {
    for (const auto& ins : ir_.instructions)
      if ((ins.op == TG_OP_WMMA || ins.op == TG_OP_MMA) && ir_.instructions[ins.src[0]].dtype == input)
        return true;
    return false;
  }

  std::string assemble(const std::string& body) override {
    std::string s;
    if (uses(TG_DTYPE_FLOAT16)) s += "#include <cuda_fp16.h>\n";
    if (uses(TG_DTYPE_BFLOAT16)) s += "#include <cuda_bf16.h>\n";
    if (wmma_uses(TG_DTYPE_FLOAT16))
      s += "__device__ __forceinline__ unsigned tg_pack_h2(float lo, float hi) {\n"
           "  __half2 v = __floats2half2_rn(lo, hi);\n  return *reinterpret_cast<unsigned*>(&v);\n}\n";
    if (wmma_uses(TG_DTYPE_BFLOAT16))
      s += "__device__ __forceinline__ unsigned tg_pack_bf2(float lo, float hi) {\n"
           "  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);\n  return "
           "*reinterpret_cast<unsigned*>(&v);\n}\n";
    if (async_copies_ && !tensor_core_program())
      s += "// 16 bytes global -> shared without registers (cp.async, sm_80 and newer); waited for before\n"
           "// each barrier\n"
           "__device__ __forceinline__ void tg_copy16(void* l, const void* g) {\n"
           "#if __CUDA_ARCH__ >= 800\n"
           "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: "
           "\"r\"((unsigned)__cvta_generic_to_shared(l)), \"l\"(g) : \"memory\");\n"
           "#else\n  *(float4*)l = *(const float4*)g;\n#endif\n}\n"
           "__device__ __forceinline__ void tg_copy16_wait() {\n"
           "#if __CUDA_ARCH__ >= 800\n  asm volatile(\"cp.async.wait_all;\" ::: \"memory\");\n#endif\n}\n";
    if (async_copies_ && !tensor_core_program() &&
        std::any_of(ir_.instructions.begin(), ir_.instructions.end(),
                    [](const Instruction& ins) { return ins.op == TG_OP_BARRIER && ins.arg0 > 0; }))
      s += "// a BARRIER letting the latest n groups of copies stay in flight (docs/abi.md, BARRIER's arg0)\n"
           "template <int n> __device__ __forceinline__ void tg_copy16_wait_group() {\n"
           "#if __CUDA_ARCH__ >= 800\n  asm volatile(\"cp.async.commit_group;\\ncp.async.wait_group %0;\" :: "
           "\"n\"(n) : \"memory\");\n#endif\n}\n";
    if (uses_wgmma(ir_))
      s += "// a shared-memory matrix descriptor: address, leading and stride byte offsets >> 4, no swizzle\n"
           "__device__ __forceinline__ unsigned long long tg_wgmma_desc(const void* p, unsigned long long "
           "lbo,\n"
           "                                                           unsigned long long sbo) {\n"
           "  const unsigned long long a = (unsigned long long)__cvta_generic_to_shared(p);\n"
           "  return ((a & 0x3FFFFull) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32);\n}\n";
    s += "extern \"C\" __global__ void " + out_.entry + "(";
    std::string sep;
    for (const auto& b : out_.buffers) {
      s += sep + memory_type(b.dtype, false) + "* b" + std::to_string(b.index);
      sep = ", ";
    }
    for (const auto& p : out_.scalars) {
      s += sep + type(p.passed_as) + " s" + std::to_string(p.index);
      sep = ", ";
    }
    if (options_.cuda_completion_word) s += sep + "unsigned int* tg_done, unsigned int tg_seq";
    s += ") {\n";
    if (shared_.bytes) {
      s += std::string("  extern __shared__ __align__(") + std::to_string(local_align(ir_)) +
           ") unsigned char tg_shared[]; // " + std::to_string(shared_.bytes) + " bytes, passed at launch\n";
      out_.dynamic_local_bytes = uint32_t(shared_.bytes);
    }
    for (const auto& l : locals_) s += "  " + l + "\n";
    if (options_.cuda_completion_word) // the renderer emits no early return: every thread gets here
      return s + body +
             "  if (tg_done) { // a one-block launch: tell the host it is done\n"
             "    __syncthreads();\n"
             "    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {\n"
             "      __threadfence();\n"
             "      *(volatile unsigned int*)tg_done = tg_seq;\n"
             "    }\n"
             "  }\n}\n";
    return s + body + "}\n";
  }
};

} // namespace

// mma.sync m16n8k16 (sm_80 and newer): A in 4 and B in 2 registers of two packed 16-bit values
// (the lower fragment position in the low half), D/C in 4 floats (docs/abi.md). A pair read from
// local memory as one __half2/__nv_bfloat162 word goes in as that word (no float round trip;
// docs/cuda.md, "Kernels: CUDA C through NVRTC").
std::string cuda_mma_sync_m16n8k16(const MmaStatement& mma) {
  const bool bf16 = mma.a_dtype == TG_DTYPE_BFLOAT16;
  const std::string pack = bf16 ? "tg_pack_bf2(" : "tg_pack_h2(";
  auto reg = [&](const std::vector<std::string>& lanes, const std::vector<std::string>& words, size_t k) {
    if (k / 2 < words.size() && !words[k / 2].empty())
      return "*reinterpret_cast<const unsigned*>(&" + words[k / 2] + ")";
    return pack + lanes[k] + ", " + lanes[k + 1] + ")";
  };
  std::string s = std::string("asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.") +
                  (bf16 ? "bf16.bf16" : "f16.f16") +
                  ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\" : ";
  for (size_t k = 0; k < mma.d.size(); ++k) s += (k ? ", \"+f\"(" : "\"+f\"(") + mma.d[k] + ")";
  s += " : ";
  for (size_t k = 0; k + 1 < mma.a.size(); k += 2)
    s += (k ? ", \"r\"(" : "\"r\"(") + reg(mma.a, mma.a_words, k) + ")";
  for (size_t k = 0; k + 1 < mma.b.size(); k += 2) s += ", \"r\"(" + reg(mma.b, mma.b_words, k) + ")";
  return s + ");";
}

Source render_cuda(const KernelIR& ir, const Options& options) { return CudaRenderer(ir, options).render(); }

} // namespace tg::sdk::render
