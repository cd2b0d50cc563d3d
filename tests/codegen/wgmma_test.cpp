// Hopper's warpgroup op (kernel IR 1.2 WGMMA) and the core's matmul on it through the TC opt with a
// local-memory unit (sdk::wgmma_units): a hand-built WGMMA program (tools/conform/wgmma_kernel.hpp)
// and lowered matmuls run in the SDK's reference interpreter against a double matmul, in every tile
// layout (core matrices, 128-byte swizzled, B k- or n-major) and with deferred reads; the IR says
// 1.2 (1.3 as MMA where the plugin declares the units) and a 1.1 reader refuses it; the CUDA source
// compiles for sm_90a with NVRTC (where the toolkit was found) without ptxas serializing the wgmmas.
// Part of the tensor_core_test binary (tensor_core_test.cpp: WMMA).
#include "tc_check.hpp"

#include <tg/sdk/render/render.hpp>

#include "../../tools/conform/wgmma_kernel.hpp" // a hand-built IR 1.2 WGMMA program
#include "../render/nvrtc_compile.hpp"          // NVRTC where the build found it

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tg;
using namespace tg::tc_check;

// ---- IR 1.2 WGMMA (the warpgroup op) on a hand-built program (tools/conform/wgmma_kernel.hpp) ----

namespace {

// Random 16-bit inputs for a WGMMA matmul, run in the interpreter: the worst error against a
// double matmul, relative to the sum of |products|.
double wgmma_interpreter_error(const tg::conform::WgmmaMatmul& w) {
  const DType dt = w.input == TG_DTYPE_FLOAT16 ? dtypes::float16 : dtypes::bfloat16;
  std::mt19937 rng(11);
  auto fill = [&](size_t count) {
    std::vector<std::byte> bytes(count * 2);
    for (size_t i = 0; i < bytes.size(); i += 2) {
      const uint16_t v = from_double(dt, std::uniform_real_distribution<double>(-2, 2)(rng));
      std::memcpy(bytes.data() + i, &v, 2);
    }
    return bytes;
  };
  std::vector<std::byte> a = fill(size_t(w.m * w.k)), b = fill(size_t(w.k * w.n)),
                         d(size_t(w.m * w.n) * 4, std::byte{0xff}); // NaN where nothing is written
  std::vector<std::span<std::byte>> spans{d, a, b};
  sdk::interpret(sdk::parse_kernel_ir(w.ir), {1, 1, 1}, {uint32_t(w.threads), 1, 1}, spans, {});
  std::vector<float> got(size_t(w.m * w.n)), av, bv;
  std::memcpy(got.data(), d.data(), d.size());
  for (size_t i = 0; i < a.size(); i += 2) av.push_back(float(to_double(dt, a.data() + i)));
  for (size_t i = 0; i < b.size(); i += 2) bv.push_back(float(to_double(dt, b.data() + i)));
  return worst_error(got, av, bv, w.m, w.k, w.n);
}

// How often `what` appears in a rendered source.
size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// NVRTC compiles a WGMMA kernel for sm_90a and ptxas keeps its wgmmas pipelined: ptxas notes
// "wgmma.mma_async instructions are serialized ..." (C7514) in its -v log where it serializes them.
// The notes reach NVRTC's log on our Debian machines (CI), where the check runs; on the GPU test
// machine the same NVRTC (13.0.88) leaves every ptxas line out of its log, so the check cannot be
// made there and says it is skipped (the compile itself is still required to succeed).
void expect_pipelined_wgmma([[maybe_unused]] const std::string& text, [[maybe_unused]] const char* file,
                            [[maybe_unused]] bool check = true) {
#ifdef TG_HAVE_NVRTC
  const auto out = tgtest::nvrtc_compile(text, file, "sm_90a", "--ptxas-options=-v");
  BOOST_TEST_REQUIRE(out.ok, out.log << "\n" << text);
  if (!check) return;
  if (out.log.find("ptxas") == std::string::npos) {
    BOOST_TEST_MESSAGE(file << ": skipped: NVRTC's log holds no ptxas notes here, so wgmma serialization "
                               "cannot be checked");
    return;
  }
  BOOST_TEST(out.log.find("Used ") != std::string::npos, out.log); // ptxas's notes are in the log
  BOOST_TEST(out.log.find("serialized") == std::string::npos, out.log);
#endif
}

} // namespace

// Every shape, both input dtypes, one and two warpgroups, one to three k steps: products are exact
// and the interpreter rounds the double sum to float once per WGMMA, so the error is float's.
// Also with both tiles 128-byte swizzled (kWgmmaSwizzle128; up to two atom columns of 64 k): the
// hand-built copy stores at the swizzled positions, so a reader that ignored the flag, or swapped
// the n-major strides, would be off by O(1).
BOOST_AUTO_TEST_CASE(wgmma_matmul_in_the_interpreter_matches_a_double_reference) {
  for (bool swz : {false, true})
    for (bool bn : {false, true}) // B k-major, and n-major (kWgmmaBNMajor)
      for (tg_dtype dt : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16})
        for (auto [n, k, groups] :
             {std::array<int, 3>{64, 16, 1}, {128, 32, 2}, {256, 48, 1}, {128, 128, 2}}) {
          const auto w = tg::conform::wgmma_matmul_kernel(dt, n, k, groups, bn, swz);
          const double err = wgmma_interpreter_error(w);
          BOOST_TEST(err < 1e-6, sdk::dtype_name(dt) << " n " << n << " k " << k << " groups " << groups
                                                     << (bn ? " B n-major" : "") << (swz ? " swizzled" : "")
                                                     << ": worst error " << err);
        }
}

// The swizzled layout, by hand: byte x of a 1024-byte atom lies at x ^ ((x >> 7 & 7) << 4) (row
// r's chunk c at chunk c ^ r), wgmma_address applies it to A, a K-major and an n-major B with the
// strides' meanings of docs/abi.md 5.7; the validator refuses strides the 128-byte rows cannot
// have, and the interpreter an operand that does not start where a swizzled descriptor can.
BOOST_AUTO_TEST_CASE(wgmma_swizzled_layout_by_hand) {
  BOOST_TEST(sdk::wgmma_swizzle128(0) == 0u);
  BOOST_TEST(sdk::wgmma_swizzle128(16) == 16u);         // row 0: chunks in place
  BOOST_TEST(sdk::wgmma_swizzle128(128) == 128u + 16u); // row 1, chunk 0 -> chunk 1
  BOOST_TEST(sdk::wgmma_swizzle128(7 * 128 + 2 * 16 + 6) == 7 * 128 + 5 * 16 + 6u); // row 7, chunk 2 -> 5
  BOOST_TEST(sdk::wgmma_swizzle128(1024 + 3 * 128) == 1024 + 3 * 128 + 3 * 16u);    // the next atom alike
  const int64_t code = TG_WGMMA_M64N128K16 | sdk::kWgmmaSwizzle128;
  const sdk::WgmmaStrides st{16, 2048, 16, 1024};
  // A[m = 9][k = 20] from byte 32: row 9 = group 1 (2048) + row 1 (128), k 20 = byte 32 + 40
  BOOST_TEST(sdk::wgmma_address(code, st, 0, 32, 9, 20) == sdk::wgmma_swizzle128(2048 + 128 + 32 + 40));
  BOOST_TEST(sdk::wgmma_address(code, st, 0, 32, 9, 20) == 2048 + 128 + (4 ^ 1) * 16 + 8u);
  // K-major B[k = 3][n = 17]: row 17 = group 2 (2 * 1024) + row 1
  BOOST_TEST(sdk::wgmma_address(code, st, 1, 0, 17, 3) == 2048 + 128 + (0 ^ 1) * 16 + 6u);
  // n-major B[k = 10][n = 70] with b_k 1024 (8-k groups), b_n 8192 (64-n blocks): k row 2 of
  // group 1, n 70 = block 1, chunk 0, element 6
  const sdk::WgmmaStrides sn{16, 1024, 1024, 8192};
  BOOST_TEST(sdk::wgmma_address(code | sdk::kWgmmaBNMajor, sn, 1, 0, 70, 10) ==
             8192 + 1024 + 2 * 128 + (0 ^ 2) * 16 + 12u);
  BOOST_TEST(sdk::wgmma_swizzle_start_error(code, 0, 96).empty());
  BOOST_TEST(!sdk::wgmma_swizzle_start_error(code, 0, 128).empty()); // the atom's second row
  BOOST_TEST(!sdk::wgmma_swizzle_start_error(code, 0, 48).empty());  // not a 16 k step
  BOOST_TEST(!sdk::wgmma_swizzle_start_error(code | sdk::kWgmmaBNMajor, 1, 32).empty());
  BOOST_TEST(sdk::wgmma_swizzle_start_error(code | sdk::kWgmmaBNMajor, 1, 2048).empty());
  auto program = [](int64_t shape, sdk::WgmmaStrides s, int a_at) {
    sdk::KernelBuilder b("swz");
    const auto l = b.local(16384, TG_DTYPE_FLOAT16);
    const auto pa = b.index(l, b.i32(a_at)), pb = b.index(l, b.i32(8192));
    std::vector<sdk::KernelBuilder::Ref> zeros(64, b.f32(0));
    b.wgmma(pa, pb, b.vectorize(zeros), shape, sdk::wgmma_pack(s));
    return b;
  };
  auto refused = [](sdk::KernelBuilder b, const char* why) {
    BOOST_CHECK_EXCEPTION(b.serialize(), sdk::IRError, [&](const sdk::IRError& e) {
      return std::string(e.what()).find(why) != std::string::npos;
    });
  };
  refused(program(code, {128, 2048, 16, 1024}, 0), "a_k 16");
  refused(program(code, {16, 1024, 16, 1040}, 0), "b_k 16 and b_n a multiple of 1024");
  refused(program(code | sdk::kWgmmaBNMajor, {16, 1024, 16, 8192}, 0), "b_k and b_n multiples of 1024");
  // A starting at byte 128 (element 64): a row inside the atom
  const sdk::KernelIR ir = sdk::parse_kernel_ir(program(code, st, 64).serialize());
  std::vector<std::span<std::byte>> none;
  BOOST_CHECK_EXCEPTION(
      sdk::interpret(ir, {1, 1, 1}, {128, 1, 1}, none, {}), std::exception, [](const std::exception& e) {
        return std::string(e.what()).find("first 128 bytes of a 1024-byte atom") != std::string::npos;
      });
}

// A program with WGMMA says IR 1.2 and round-trips; a 1.1 (or 1.0) header with the op is refused;
// malformed operands are refused naming the instruction; the interpreter needs whole warpgroups.
BOOST_AUTO_TEST_CASE(wgmma_ir_is_version_1_2_and_refused_under_1_1) {
  const auto w = tg::conform::wgmma_matmul_kernel(TG_DTYPE_FLOAT16, 64, 32, 1);
  BOOST_TEST(ir_minor(w.ir) == TG_IR_VERSION_MINOR_WGMMA);
  const sdk::KernelIR parsed = sdk::parse_kernel_ir(w.ir);
  BOOST_TEST(sdk::uses_wgmma(parsed));
  BOOST_TEST((sdk::serialize_kernel_ir(parsed) == w.ir));
  BOOST_TEST(sdk::to_string(parsed).find("WGMMA") != std::string::npos);
  for (uint8_t minor : {1, 0}) {
    std::vector<std::byte> old = w.ir;
    old[6] = std::byte{minor};
    BOOST_CHECK_EXCEPTION(sdk::parse_kernel_ir(old), sdk::IRError, [](const sdk::IRError& e) {
      return std::string(e.what()).find("WGMMA needs kernel IR 1.2") != std::string::npos;
    });
  }
  // operands: A from global memory, strides off 16, too few C lanes
  auto refused = [](sdk::KernelBuilder& b, const char* why) {
    BOOST_CHECK_EXCEPTION(b.serialize(), sdk::IRError, [&](const sdk::IRError& e) {
      BOOST_TEST_MESSAGE(e.what());
      return std::string(e.what()).find(why) != std::string::npos &&
             std::string(e.what()).find("(WGMMA)") != std::string::npos;
    });
  };
  auto program = [](bool global_a, int64_t a_k, int lanes) {
    sdk::KernelBuilder b("bad");
    const auto g = b.global(0, TG_DTYPE_FLOAT16), l = b.local(4096, TG_DTYPE_FLOAT16);
    const auto pa = b.index(global_a ? g : l, b.i32(0)), pb = b.index(l, b.i32(0));
    std::vector<sdk::KernelBuilder::Ref> zeros(size_t(lanes), b.f32(0));
    b.wgmma(pa, pb, b.vectorize(zeros), TG_WGMMA_M64N64K16, sdk::wgmma_pack({a_k, 256, 128, 256}));
    return b;
  };
  auto b1 = program(true, 128, 32);
  refused(b1, "A must be an INDEX into local memory");
  auto b2 = program(false, 120, 32);
  refused(b2, "multiples of 16");
  auto b3 = program(false, 128, 16);
  refused(b3, "need 32 lanes");
  // half a warpgroup
  const sdk::KernelIR ir = sdk::parse_kernel_ir(w.ir);
  std::vector<std::byte> d(64 * 64 * 4), a(64 * 32 * 2), bb(32 * 64 * 2);
  std::vector<std::span<std::byte>> spans{d, a, bb};
  BOOST_CHECK_EXCEPTION(sdk::interpret(ir, {1, 1, 1}, {64, 1, 1}, spans, {}), std::exception,
                        [](const std::exception& e) {
                          return std::string(e.what()).find("whole warpgroups") != std::string::npos;
                        });
}

// The CUDA renderer: one wgmma.fence before and one commit/wait after the run of WGMMAs of a k
// loop step (here 3 back to back), descriptors built from __cvta_generic_to_shared, the proxy fence
// before the barrier; NVRTC compiles it for sm_90a and the PTX holds wgmma.mma_async. Dialects
// without the op refuse it by name.
BOOST_AUTO_TEST_CASE(cuda_renders_wgmma_that_nvrtc_compiles_for_sm_90a) {
  for (tg_dtype dt : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16}) {
    const auto w = tg::conform::wgmma_matmul_kernel(dt, 128, 48, 2);
    const auto ir = sdk::parse_kernel_ir(w.ir);
    const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
    auto count = [&](const std::string& what) { return occurrences(src.text, what); };
    const std::string in = dt == TG_DTYPE_FLOAT16 ? "f16.f16" : "bf16.bf16";
    BOOST_TEST(count("wgmma.mma_async.sync.aligned.m64n128k16.f32." + in) == 3u, src.text);
    BOOST_TEST(count("wgmma.fence.sync.aligned") == 1u);
    BOOST_TEST(count("wgmma.commit_group.sync.aligned") == 1u);
    BOOST_TEST(count("wgmma.wait_group.sync.aligned 0") == 1u);
    BOOST_TEST(count("fence.proxy.async.shared::cta") == 1u);
    BOOST_TEST(count("__cvta_generic_to_shared") == 1u);
    BOOST_TEST(count("p, 1, 1, 0, 0;") == 3u); // imm-trans-b 0: B k-major
    // B n-major (kWgmmaBNMajor): the same ops with imm-trans-b 1
    const auto bn =
        sdk::render::render(sdk::render::Dialect::cuda,
                            sdk::parse_kernel_ir(tg::conform::wgmma_matmul_kernel(dt, 128, 48, 2, true).ir));
    BOOST_TEST(bn.text.find("p, 1, 1, 0, 0;") == std::string::npos, bn.text);
    BOOST_TEST(bn.text.find("p, 1, 1, 0, 1;") != std::string::npos, bn.text);
    BOOST_CHECK_EXCEPTION(
        sdk::render::render(sdk::render::Dialect::opencl, ir), std::exception,
        [](const std::exception& e) { return std::string(e.what()).find("WGMMA") != std::string::npos; });
#ifdef TG_HAVE_NVRTC
    const auto out = tgtest::nvrtc_compile(src.text, "wgmma.cu", "sm_90a");
    BOOST_TEST(out.ok, out.log << "\n" << src.text);
    BOOST_TEST(out.ptx.find("wgmma.mma_async.sync.aligned.m64n128k16") != std::string::npos);
    BOOST_TEST(out.cubin_bytes > 0u);
    const auto out_bn = tgtest::nvrtc_compile(bn.text, "wgmma_bn.cu", "sm_90a");
    BOOST_TEST(out_bn.ok, out_bn.log << "\n" << bn.text);
#endif
  }
}

// ---- the core's matmul on the warpgroup op: a local-memory matrix unit ----

namespace {
// gpu(true) on a device whose 1.2/1.3 plugin names the warpgroup shapes (sm_90a): the host's
// descriptions of IR 1.2 WGMMA (sdk::wgmma_units) after the two mma.sync ones, emitted as WGMMA;
// without `swizzle` or `b_n_major` the units of those layouts are left out.
LowerOptions hopper(bool swizzle = true, bool b_n_major = true) {
  LowerOptions o = gpu(true);
  for (const tg_matrix_unit& u : sdk::wgmma_units()) {
    const int64_t flags = sdk::wgmma_unit_flags(u);
    if ((!swizzle && (flags & sdk::kWgmmaSwizzle128)) || (!b_n_major && (flags & sdk::kWgmmaBNMajor)))
      continue;
    o.matrix_units.push_back({u, sdk::wgmma_code(int(u.n)), false, flags});
  }
  o.buffer_alignment = 16; // A's copy as 16-byte chunks, reordered by rows (lower_stage.cpp)
  o.compute_units = 1;     // the heuristic takes a local-memory unit only with a block per compute unit
  return o;
}

// The name sdk::wgmma_unit gives that unit.
std::string wg_name(int n, DType dt, bool swizzle, bool b_n_major) {
  return "wgmma.m64n" + std::to_string(n) + "k16." + (dt == dtypes::bfloat16 ? "bf16" : "f16") +
         (swizzle ? ".sw128" : "") + (b_n_major ? ".bn" : "");
}

// "TC(axis,i)" for the unit of o named `name`.
std::string tc_of(const LowerOptions& o, int axis, const std::string& name) {
  for (size_t i = 0; i < o.matrix_units.size(); ++i)
    if (sdk::matrix_unit_name(o.matrix_units[i].unit) == name)
      return "TC(" + std::to_string(axis) + "," + std::to_string(i) + ")";
  BOOST_FAIL("no unit " + name);
  return "";
}
int64_t tc_index(const LowerOptions& o, const std::string& name) {
  const std::string t = tc_of(o, 0, name);
  return std::stoll(t.substr(5, t.size() - 6));
}
} // namespace

// Where three sets of tiles of the warpgroup unit fit the device's opt-in maximum (CUDA's dynamic shared
// memory: 3 x 24 KiB for the 128x256 block), the WGMMAs defer their reads (kWgmmaDeferReads): the
// interpreter, which fails a store into a tile a deferred WGMMA may still read, runs the kernel to
// a double reference's result; the CUDA source waits with wait_group 1 after each run and
// wait_group 0 after the tile loop, in dynamic shared memory, and compiles for sm_90a without
// ptxas serializing the wgmmas. Where only two sets fit nothing changes.
// With the n-major units (B's n axis is contiguous, so they agree with it) B's tile is n-major
// (kWgmmaBNMajor) and both copies are 16-byte rows, rendered as cp.async and issued before the
// step's WGMMA run; with those units left out B stays k-major (its transposed register copy) and
// the source has no cp.async.
BOOST_AUTO_TEST_CASE(warpgroup_three_sets_defer_wgmma_reads) {
  for (bool bn : {false, true})
    for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
      const Matmul wide = matmul(256, 160, 512, dt); // 5 tiles of 32 k: every set is reused
      LowerOptions o = hopper(true, bn);
      o.max_local_memory_bytes = 232448; // an H100/H200's opt-in maximum
      const Lowered l = lower(wide, o);
      BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts << (bn ? " B n-major" : "")) {
        BOOST_TEST(l.kernel.opts.find("[" + tc_of(o, 2, wg_name(128, dt, false, bn)) +
                                      ", LOCAL(0,2), STAGE(2,2)]") != std::string::npos);
        const sdk::KernelIR ir = sdk::parse_kernel_ir(l.ir);
        int deferred = 0, locals = 0, n_major = 0, vector_loads = 0;
        for (const auto& ins : ir.instructions) {
          deferred += ins.op == TG_OP_WGMMA && sdk::wgmma_defers_reads(ins.arg0);
          // B (K x N, n contiguous) n-major: both copies are 16-byte loads
          n_major += ins.op == TG_OP_WGMMA && sdk::wgmma_b_n_major(ins.arg0);
          vector_loads += ins.op == TG_OP_LOAD && ins.vcount == 8;
          if (ins.op == TG_OP_DEFINE_LOCAL) locals += int(ins.arg0);
        }
        BOOST_TEST(deferred == 2); // 32 k per tile
        BOOST_TEST(n_major == (bn ? 2 : 0));
        // prologue, loop: A 128x32 (2 per thread), B 32x128 (2) over 256 threads
        BOOST_TEST(vector_loads == (bn ? 2 * (2 + 2) : 2 * 2));
        BOOST_TEST(locals == 3 * (128 + 128) * 32);
        BOOST_TEST(run_error(wide, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
        const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
        BOOST_TEST(src.dynamic_local_bytes == 0u); // three sets of 16 KiB: static shared memory
        BOOST_TEST(src.text.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos, src.text);
        // the eight 16-byte row copies (prologue and loop) as cp.async, waited for before each barrier;
        // the loop's are issued before the step's WGMMA run (they lead: lower_stage.cpp)
        size_t copies = 0;
        for (size_t at = src.text.find("cp.async.cg.shared.global"); at != std::string::npos;
             at = src.text.find("cp.async.cg.shared.global", at + 1))
          ++copies;
        BOOST_TEST(copies == (bn ? 8u : 0u), src.text);
        BOOST_TEST((src.text.find("cp.async.wait_all;") != std::string::npos) == bn);
        if (bn) BOOST_TEST(src.text.rfind("cp.async.cg.shared.global") < src.text.rfind("wgmma.mma_async"));
        const size_t loop_end =
            src.text.find("wgmma.wait_group.sync.aligned 0;\" ::: \"memory\"); // the deferred");
        BOOST_TEST(loop_end != std::string::npos);
        BOOST_TEST(src.text.find("wgmma.wait_group.sync.aligned 0;") == loop_end); // no other wait for all
        // ptxas serializes where a run's D is read before its wait (checked by hand with nvcc 13.0:
        // a read of D after wait_group 1 gets the note, this source none)
        expect_pipelined_wgmma(src.text, "warpgroup3.cu");
      }
    }
  LowerOptions big = hopper();
  big.max_local_memory_bytes = 232448;
  { // k a multiple of 64: the heuristic takes 64 k per tile (3 x 48 KiB); swizzled, B n-major (the
    // first units): 2x1 warpgroups of 64x256; without the swizzled units 2x1 of 64x128
    const Matmul deep = matmul(256, 320, 512, dtypes::float16);
    const Lowered l = lower(deep, big);
    BOOST_TEST(l.kernel.opts.find("[" + tc_of(big, 2, wg_name(256, dtypes::float16, true, true)) +
                                  ", LOCAL(0,2), STAGE(2,4)]") != std::string::npos,
               l.kernel.opts);
    LowerOptions plain = hopper(false);
    plain.max_local_memory_bytes = 232448;
    BOOST_TEST(lower(deep, plain)
                   .kernel.opts.find("[" + tc_of(plain, 2, wg_name(128, dtypes::float16, false, true)) +
                                     ", LOCAL(0,2), STAGE(2,4)]") != std::string::npos);
    BOOST_TEST(run_error(deep, l) < 2e-3);
    const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(l.ir));
    BOOST_TEST(src.dynamic_local_bytes == uint32_t(3 * (128 + 256) * 64 * 2));
  }
  { // fewer 128x256 blocks than compute units: the mma.sync list (each warpgroup block takes an SM)
    LowerOptions wide_gpu = big;
    wide_gpu.compute_units = 132;
    const Lowered l = lower(matmul(256, 320, 512, dtypes::float16), wide_gpu);
    BOOST_TEST(l.kernel.opts.find("[TC(2,0), ") != std::string::npos, l.kernel.opts);
  }
  LowerOptions small = hopper();
  small.local_memory_bytes = 32768; // three sets of 16 KiB do not fit: two
  const Lowered two = lower(matmul(256, 160, 512, dtypes::float16), small);
  for (const auto& ins : sdk::parse_kernel_ir(two.ir).instructions)
    if (ins.op == TG_OP_WGMMA) BOOST_TEST(!sdk::wgmma_defers_reads(ins.arg0));
}

namespace {
// A loop of 3 steps by one warpgroup: a barrier, every item fills 8 elements of A (64x16, value
// step + 1) and of B (16x64, value 1) in set `step % sets`, a barrier, one deferred m64n64k16
// WGMMA of that set into the accumulator. D = sum over steps of 16 (step + 1) = 96 everywhere.
std::vector<std::byte> deferred_loop(int sets) {
  sdk::KernelBuilder b("deferred_loop");
  const auto out = b.global(0, TG_DTYPE_FLOAT32);
  const auto la = b.local(1024 * sets, TG_DTYPE_FLOAT16), lb = b.local(1024 * sets, TG_DTYPE_FLOAT16);
  const auto t = b.local_id(0);
  auto acc = b.acc(b.vectorize(std::vector<sdk::KernelBuilder::Ref>(32, b.f32(0))));
  const auto step = b.range(b.i32(0), b.i32(3));
  b.barrier();
  const auto set = b.mul(b.alu(TG_OP_MOD, step, b.i32(sets)), b.i32(1024));
  const auto at = b.add(set, b.mul(t, b.i32(8)));
  const auto value = b.cast(b.add(step, b.i32(1)), TG_DTYPE_FLOAT16),
             one = b.cast(b.f32(1), TG_DTYPE_FLOAT16);
  for (int e = 0; e < 8; ++e) {
    b.store(b.index(la, b.add(at, b.i32(e))), value);
    b.store(b.index(lb, b.add(at, b.i32(e))), one);
  }
  b.barrier();
  const int64_t strides = sdk::wgmma_pack({128, 256, 128, 256});
  b.assign(acc, b.wgmma(b.index(la, set), b.index(lb, set), acc, sdk::wgmma_code(64) | sdk::kWgmmaDeferReads,
                        strides));
  b.end_range(step);
  b.store(b.index(out, t), b.gep(acc, 0));
  return b.serialize();
}
} // namespace

// The interpreter checks kWgmmaDeferReads: with one set, step 1's stores overwrite the tiles step
// 0's WGMMA may still read (its warpgroup has started no later run since), and the run fails with
// a message naming both; with two sets the same program is legal and computes 96. The validator
// refuses the flag outside a loop.
BOOST_AUTO_TEST_CASE(interpreter_checks_deferred_wgmma_reads) {
  std::vector<float> out(128);
  std::vector<std::span<std::byte>> spans{std::as_writable_bytes(std::span(out))};
  sdk::interpret(sdk::parse_kernel_ir(deferred_loop(2)), {1, 1, 1}, {128, 1, 1}, spans, {});
  for (float v : out) BOOST_TEST(v == 96.f);
  try {
    sdk::interpret(sdk::parse_kernel_ir(deferred_loop(1)), {1, 1, 1}, {128, 1, 1}, spans, {});
    BOOST_ERROR("a store into a tile a deferred WGMMA may still read was accepted");
  } catch (const sdk::InterpreterError& e) {
    BOOST_TEST(std::string(e.what()).find("the deferred WGMMA at instruction") != std::string::npos,
               e.what());
  }
  const auto w = conform::wgmma_matmul_kernel(TG_DTYPE_FLOAT16, 64, 16, 1); // its WGMMA outside any loop
  sdk::KernelIR ir = sdk::parse_kernel_ir(w.ir);
  for (auto& ins : ir.instructions)
    if (ins.op == TG_OP_WGMMA) ins.arg0 |= sdk::kWgmmaDeferReads;
  BOOST_CHECK_EXCEPTION(sdk::validate_kernel_ir(ir), sdk::IRError, [](const sdk::IRError& e) {
    return std::string(e.what()).find("outside a RANGE") != std::string::npos;
  });
}

// On the swizzled units, a warpgroup matmul of 64 k per tile stages both tiles 128-byte swizzled
// (kWgmmaSwizzle128 on every WGMMA): its copies stay 16-byte stores (A's rows, B's transposed
// copy or, n-major, its rows), the interpreter, reading at the swizzled positions, gives a double
// reference's result, and the CUDA source (descriptors of layout type 1, dynamic shared memory
// aligned to 1024 bytes) compiles for sm_90a. With 32 k per tile (no 128-byte rows) nothing is
// swizzled.
BOOST_AUTO_TEST_CASE(warpgroup_swizzled_tiles_match_a_double_reference) {
  LowerOptions big = hopper();
  big.max_local_memory_bytes = 232448;
  for (bool bn : {false, true})
    for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
      const Matmul deep = matmul(256, 320, 512, dt); // 5 tiles of 64 k: every set reused
      LowerOptions o = hopper(true, bn);
      o.max_local_memory_bytes = 232448;
      const Lowered l = lower(deep, o);
      BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts << (bn ? " B n-major" : "")) {
        // 2x1 warpgroups of 64x256 (heuristic.cpp), B n- or k-major: 256 threads
        BOOST_TEST(l.kernel.opts.find("[" + tc_of(o, 2, wg_name(256, dt, true, bn)) +
                                      ", LOCAL(0,2), STAGE(2,4)]") != std::string::npos);
        const int per_thread = 2;
        const sdk::KernelIR ir = sdk::parse_kernel_ir(l.ir);
        int swizzled = 0, wgmmas = 0, stores16 = 0, loads16 = 0;
        for (const auto& ins : ir.instructions) {
          wgmmas += ins.op == TG_OP_WGMMA;
          swizzled += ins.op == TG_OP_WGMMA && sdk::wgmma_swizzled(ins.arg0) &&
                      sdk::wgmma_b_n_major(ins.arg0) == bn && sdk::wgmma_defers_reads(ins.arg0);
          stores16 += ins.op == TG_OP_STORE && ir.instructions[ins.src[1]].vcount == 8;
          loads16 += ins.op == TG_OP_LOAD && ins.vcount == 8;
        }
        BOOST_TEST(wgmmas == 4); // 64 k per tile
        BOOST_TEST(swizzled == wgmmas);
        // prologue and loop: A 128x64 (1024 16-byte chunks), B 64x256 (2048) over the threads
        BOOST_TEST(stores16 == 2 * (2 + 4) * per_thread);
        BOOST_TEST(loads16 == (bn ? 2 * (2 + 4) * per_thread : 2 * 4));
        BOOST_TEST(run_error(deep, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
        const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
        BOOST_TEST(src.dynamic_local_bytes == uint32_t(3 * (128 + 256) * 64 * 2));
        BOOST_TEST(src.text.find("__align__(1024) unsigned char tg_shared[]") != std::string::npos, src.text);
        BOOST_TEST(src.text.find("| (1ull << 62)") != std::string::npos);
        // With B n-major every copy is a 16-byte row (cp.async) and ptxas keeps the wgmmas
        // pipelined. (B k-major in float16, by a transposed register copy, gets ptxas's C7514
        // "wgmma.mma_async instructions are serialized" with or without the swizzle, 124-128
        // registers; bfloat16 does not.)
        expect_pipelined_wgmma(src.text, "warpgroup_swz.cu", bn);
      }
    }
  const Lowered shallow = lower(matmul(256, 160, 512, dtypes::float16), big); // 32 k per tile
  for (const auto& ins : sdk::parse_kernel_ir(shallow.ir).instructions)
    if (ins.op == TG_OP_WGMMA) BOOST_TEST(!sdk::wgmma_swizzled(ins.arg0));
  BOOST_TEST(run_error(matmul(256, 160, 512, dtypes::float16), shallow) < 2e-3);
}

// On a device that moves 16-byte copies without registers (async_local_copies: CUDA's cp.async),
// the swizzled n-major warpgroup kernel copies stage_prefetch = 2 tiles ahead in four sets (4 x 48 KiB
// fit an H100/H200's opt-in maximum): the prologue copies tiles 0 and 1 with a BARRIER between
// them, and the prologue's and each step's BARRIER let one copy group stay in flight (arg0 1; the
// other barriers keep 0). The interpreter, which fails a store into a set a deferred WGMMA may
// still read, runs it to a double reference's result over 5 tiles (every set reused) and over 2
// (the loop's copies wrap to tiles 0 and 1); the CUDA source commits a group and waits with
// cp.async.wait_group 1 at those two barriers and compiles for sm_90a without serialized wgmmas.
// stage_prefetch 1, or no async copies, or an opt-in maximum that holds only three sets, keeps
// the three-set kernel (no BARRIER arg; its numerics: warpgroup_swizzled_tiles_match_a_double_reference).
BOOST_AUTO_TEST_CASE(warpgroup_copies_two_tiles_ahead_in_four_sets) {
  LowerOptions big = hopper();
  big.max_local_memory_bytes = 232448;
  big.async_local_copies = true;
  const int64_t set_bytes = (128 + 256) * 64 * 2;
  // (the interpreter's runs are slow under asan: k 128 only in float16)
  for (auto [dt, k] : {std::pair{dtypes::float16, int64_t(320)}, std::pair{dtypes::bfloat16, int64_t(320)},
                       std::pair{dtypes::float16, int64_t(128)}}) {
    const Matmul deep = matmul(256, k, 512, dt);
    const Lowered l = lower(deep, big);
    BOOST_TEST_CONTEXT(dt.name() << " k " << k << " " << l.kernel.opts) {
      BOOST_TEST(l.kernel.opts.find("[" + tc_of(big, 2, wg_name(256, dt, true, true)) +
                                    ", LOCAL(0,2), STAGE(2,4)]") != std::string::npos);
      const sdk::KernelIR ir = sdk::parse_kernel_ir(l.ir);
      std::vector<int64_t> barriers;
      int stores16 = 0, deferred = 0;
      for (const auto& ins : ir.instructions) {
        if (ins.op == TG_OP_BARRIER) barriers.push_back(ins.arg0);
        stores16 += ins.op == TG_OP_STORE && ir.instructions[ins.src[1]].vcount == 8;
        deferred += ins.op == TG_OP_WGMMA && sdk::wgmma_defers_reads(ins.arg0);
      }
      const std::vector<int64_t> want = {1, 1}; // between the prologue's tiles; the step's
      BOOST_TEST(barriers == want, boost::test_tools::per_element());
      BOOST_TEST(deferred == 4);
      // tiles 0 and 1, then the loop's: A 128x64 (4 chunks per thread), B 64x256 (8)
      BOOST_TEST(stores16 == 3 * (4 + 8));
      BOOST_TEST(run_error(deep, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
      BOOST_TEST(src.dynamic_local_bytes == uint32_t(4 * set_bytes));
      auto count = [&](const std::string& what) { return occurrences(src.text, what); };
      BOOST_TEST(count("cp.async.commit_group;\\ncp.async.wait_group 1;") == 2u, src.text);
      BOOST_TEST(count("cp.async.wait_all;") == 0u);
      BOOST_TEST(count("cp.async.cg.shared.global") == 3u * (4 + 8), src.text);
      expect_pipelined_wgmma(src.text, "warpgroup4.cu");
    }
  }
  const Matmul deep = matmul(256, 320, 512, dtypes::float16);
  LowerOptions one = big, sync = big, small = big;
  one.stage_prefetch = 1;
  sync.async_local_copies = false;
  small.max_local_memory_bytes = uint64_t(4 * set_bytes - 16);
  for (const LowerOptions* o : {&one, &sync, &small}) {
    const Lowered l = lower(deep, *o);
    const sdk::KernelIR ir = sdk::parse_kernel_ir(l.ir);
    for (const auto& ins : ir.instructions)
      if (ins.op == TG_OP_BARRIER) BOOST_TEST(ins.arg0 == 0);
    BOOST_TEST(sdk::render::render(sdk::render::Dialect::cuda, ir).dynamic_local_bytes ==
               uint32_t(3 * set_bytes));
  }
}

// The default f16 kernel over many tiles: its k loop stays rolled, and ptxas (CUDA 13.0) serialized
// every wgmma of it (C7514) until the CUDA renderer unrolled the loop twice (loop_pragma); the
// tests above use 2-5 tiles, which ptxas unrolls whole and never serialized. 9 tiles (an odd
// count: a remainder step after the unrolled pairs) and 16. Numerics of this kernel: above.
BOOST_AUTO_TEST_CASE(warpgroup_many_tiles_keep_wgmma_pipelined) {
  LowerOptions big = hopper();
  big.max_local_memory_bytes = 232448;
  big.async_local_copies = true;
  for (int64_t k : {576, 1024}) {
    const Lowered l = lower(matmul(256, k, 512, dtypes::float16), big);
    BOOST_TEST_CONTEXT("k " << k << " " << l.kernel.opts) {
      BOOST_TEST(l.kernel.opts.find("[" + tc_of(big, 2, wg_name(256, dtypes::float16, true, true)) +
                                    ", LOCAL(0,2), STAGE(2,4)]") != std::string::npos);
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(l.ir));
      const size_t loop = src.text.find("#pragma unroll 2 // deferred wgmma reads");
      BOOST_TEST_REQUIRE(loop != std::string::npos, src.text);
      BOOST_TEST(src.text.find("for (", loop) < src.text.find("wgmma.mma_async", loop));
      expect_pipelined_wgmma(src.text, "warpgroup_many.cu");
    }
  }
}

BOOST_AUTO_TEST_CASE(warpgroup_matmul_matches_a_double_reference) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(256, 96, 128, dt);
    const Lowered l = lower(mm, hopper());
    BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts) {
      BOOST_TEST(l.kernel.opts.find("[" + tc_of(hopper(), 2, wg_name(128, dt, false, true)) +
                                    ", LOCAL(0,2), STAGE(2,2)]") != std::string::npos);
      BOOST_TEST(ir_minor(l.ir) == TG_IR_VERSION_MINOR_WGMMA);
      BOOST_TEST(l.kernel.local[0] == 128u);
      BOOST_TEST(run_error(mm, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(l.ir));
      auto count = [&](const std::string& what) { return occurrences(src.text, what); };
      BOOST_TEST(count("wgmma.mma_async") == 2u, src.text); // 32 k per tile: 2 ops, one run
      BOOST_TEST(count("wgmma.fence.sync.aligned") == 1u);
      BOOST_TEST(count("wgmma.commit_group") == 1u);
#ifdef TG_HAVE_NVRTC
      const auto out = tgtest::nvrtc_compile(src.text, "warpgroup.cu", "sm_90a");
      BOOST_TEST(out.ok, out.log << "\n" << src.text);
      BOOST_TEST(out.ptx.find("wgmma.mma_async.sync.aligned.m64n128k16") != std::string::npos);
#endif
    }
  }
  { // 32 k per tile within 48 KiB: no swizzled N 256, so 2x1 warpgroups of 64x128
    const Matmul wide = matmul(128, 64, 256, dtypes::bfloat16);
    const Lowered l = lower(wide, hopper());
    BOOST_TEST(l.kernel.opts.find("[" + tc_of(hopper(), 2, wg_name(128, dtypes::bfloat16, false, true)) +
                                  ", LOCAL(0,2), STAGE(2,2)]") != std::string::npos,
               l.kernel.opts);
    BOOST_TEST(run_error(wide, l) < 1e-2);
  }
  const Matmul mm = matmul(128, 64, 128, dtypes::float16);
  const KernelInfo info = analyze_kernel(mm.item);
  LowerOptions o = hopper();
  const int k = info.matmul->k;
  o.opts = std::vector<Opt>{{OptOp::TC, k, tc_index(o, wg_name(128, dtypes::float16, false, true))}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("must be staged") != std::string::npos;
  });
  // a unit the device does not have
  o = gpu(true);
  o.opts = std::vector<Opt>{{OptOp::TC, k, 5}, {OptOp::STAGE, k, 2}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("one of the device's 2 matrix units") != std::string::npos;
  });
  // swizzled atoms need 64 k per tile
  o = hopper();
  o.opts = std::vector<Opt>{{OptOp::TC, k, tc_index(o, wg_name(128, dtypes::float16, true, true))},
                            {OptOp::STAGE, k, 2}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("is not made of whole 8 x 64 atoms") != std::string::npos;
  });
  // explicit lists: N 64 with one warpgroup, N 128 with an upcast of m (two chains per thread)
  o = hopper();
  for (const auto& list :
       {std::vector<Opt>{{OptOp::TC, k, tc_index(o, wg_name(64, dtypes::float16, true, true))},
                         {OptOp::STAGE, k, 4}},
        std::vector<Opt>{{OptOp::TC, k, tc_index(o, wg_name(128, dtypes::float16, false, true))},
                         {OptOp::UPCAST, info.matmul->m, 2},
                         {OptOp::STAGE, k, 1 + 1}}}) {
    o.opts = list;
    const Lowered l = lower(mm, o);
    BOOST_TEST_CONTEXT(l.kernel.opts) { BOOST_TEST(run_error(mm, l) < 2e-3); }
  }
}

// A plugin that declares the warpgroup units (ABI 1.5, TG_MATRIX_SOURCE_LOCAL) gets the same
// kernels as a 1.2/1.3 plugin's WGMMA path, its matrix ops MMA in local form instead: instruction
// for instruction the same program but for those ops, whose strides are the tiles' atom strides
// (sdk::wgmma_strides of them gives WGMMA's) and whose flags defer the reads where WGMMA's do. The
// IR says 1.3; the interpreter runs it from the declarations to a double reference's result.
BOOST_AUTO_TEST_CASE(declared_warpgroup_units_give_the_wgmma_kernels_as_mma) {
  std::vector<tg_matrix_unit> units{sdk::wmma_m16n8k16_unit(TG_DTYPE_FLOAT16),
                                    sdk::wmma_m16n8k16_unit(TG_DTYPE_BFLOAT16)};
  for (const tg_matrix_unit& u : sdk::wgmma_units()) units.push_back(u);
  struct Case {
    Matmul mm;
    uint64_t opt_in; // the device's opt-in maximum of local memory
    double tolerance;
  };
  // 64 k per tile, swizzled, B n-major, two tiles ahead in four sets; 32 k per tile in two sets
  for (const Case& c : {Case{matmul(256, 320, 512, dtypes::float16), 232448, 2e-3},
                        Case{matmul(128, 96, 256, dtypes::bfloat16), 0, 1e-2}}) {
    LowerOptions legacy = hopper(), declared = hopper();
    declared.matrix_units.clear();
    for (size_t i = 0; i < units.size(); ++i) declared.matrix_units.push_back({units[i], int64_t(i), false});
    for (LowerOptions* o : {&legacy, &declared}) {
      o->max_local_memory_bytes = c.opt_in;
      if (!c.opt_in) o->local_memory_bytes = 32768; // two sets
      o->async_local_copies = true;
    }
    const Lowered old = lower(c.mm, legacy), now = lower(c.mm, declared);
    BOOST_TEST_CONTEXT(now.kernel.opts) {
      BOOST_TEST(old.kernel.opts == now.kernel.opts); // the same unit indices: the same order
      BOOST_TEST(ir_minor(now.ir) == TG_IR_VERSION_MINOR_MMA);
      const sdk::KernelIR a = sdk::parse_kernel_ir(old.ir), b = sdk::parse_kernel_ir(now.ir);
      BOOST_TEST_REQUIRE(a.instructions.size() == b.instructions.size());
      int ops = 0, deferred = 0;
      for (size_t i = 0; i < a.instructions.size(); ++i) {
        const sdk::Instruction &x = a.instructions[i], &y = b.instructions[i];
        BOOST_TEST((x.src == y.src), "instruction " << i);
        BOOST_TEST(x.dtype == y.dtype);
        if (x.op != TG_OP_WGMMA) {
          BOOST_TEST((x.op == y.op && x.arg0 == y.arg0 && x.arg1 == y.arg1), "instruction " << i);
          continue;
        }
        BOOST_TEST_REQUIRE(y.op == TG_OP_MMA);
        const tg_matrix_unit& u = units.at(size_t(y.arg0 & 0xFFFFFFFF));
        const int64_t flags = sdk::wgmma_unit_flags(u);
        const bool defer = (y.arg0 & TG_MMA_DEFER_READS) != 0;
        BOOST_TEST(x.arg0 == (sdk::wgmma_code(int(u.n)) | flags | (defer ? sdk::kWgmmaDeferReads : 0)));
        BOOST_TEST(x.arg1 == sdk::wgmma_strides(flags, sdk::matrix_strides_unpack(y.arg1)));
        ++ops;
        deferred += defer;
      }
      BOOST_TEST(ops > 0);
      BOOST_TEST(deferred == (c.opt_in ? ops : 0));
      BOOST_CHECK_NO_THROW(sdk::check_mma(b, units));
      BOOST_TEST(run_error(c.mm, now, units) < c.tolerance);
    }
  }
}
