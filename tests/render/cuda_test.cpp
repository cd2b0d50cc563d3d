// CUDA C: every kernel is rendered and compiled to PTX for sm_75 by NVRTC (no GPU or driver is
// needed). Without the CUDA toolkit at configure time the suite is still registered and skips.
#include "big_local_kernel.hpp"
#include "render_test_util.hpp"

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

#include "nvrtc_compile.hpp" // NVRTC where the build found it

namespace {

// out[g] = max over 20 values of f(in[g*20 + j]): the loop shape of the core's integer min (-max(-x)).
std::string rendered_max_loop(tg_dtype dt) {
  tg::sdk::KernelBuilder b(std::string("max_loop_") + tg::sdk::dtype_name(dt));
  auto out = b.global(0, dt), in = b.global(1, dt);
  auto g = b.group_id(0);
  auto acc = b.acc(dt == TG_DTYPE_INT32 ? b.i32(-2147483647 - 1) : b.f32(-1e30f));
  auto j = b.range(b.i32(0), b.i32(20));
  auto x = b.load(b.index(in, b.add(b.mul(g, b.i32(20)), j)));
  b.assign(acc, b.alu(TG_OP_MAX, acc, b.alu(TG_OP_NEG, x)));
  b.end_range(j);
  b.store(b.index(out, g), b.alu(TG_OP_NEG, acc));
  return tg::sdk::render::render(tg::sdk::render::Dialect::cuda, b.ir()).text;
}

// ptxas of CUDA 13.0 miscompiles this loop unrolled for int32 (docs/cuda.md): the renderer keeps a
// loop that accumulates an integer MAX rolled, and only such a loop.
BOOST_AUTO_TEST_CASE(integer_max_loops_stay_rolled) {
  const std::string ints = rendered_max_loop(TG_DTYPE_INT32), floats = rendered_max_loop(TG_DTYPE_FLOAT32);
  BOOST_TEST(ints.find("#pragma unroll 1") != std::string::npos, ints);
  BOOST_TEST(ints.find("#pragma unroll 1") < ints.find("for ("), ints);
  BOOST_TEST(floats.find("#pragma unroll") == std::string::npos, floats);
}

// A vector LOAD of local memory (the STAGE lowering emits them at 16-byte multiples) is one
// float4 read: PTX ld.shared.v4.f32, not four scalar reads.
BOOST_AUTO_TEST_CASE(local_vector_loads_are_128_bit) {
  tg::sdk::KernelBuilder b("local_vector");
  auto out = b.global(0, TG_DTYPE_FLOAT32), in = b.global(1, TG_DTYPE_FLOAT32);
  auto tile = b.local(8, TG_DTYPE_FLOAT32);
  auto t = b.local_id(0);
  b.store(b.index(tile, t), b.load(b.index(in, t)));
  b.barrier();
  auto v = b.load(b.index(tile, b.mul(b.alu(TG_OP_IDIV, t, b.i32(4)), b.i32(4))), 4);
  b.store(b.index(out, t), b.add(b.gep(v, 0), b.gep(v, 3)));
  const std::string text =
      tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tg::sdk::parse_kernel_ir(b.serialize())).text;
  BOOST_TEST(text.find("float4 ") != std::string::npos, text);
#ifdef TG_HAVE_NVRTC
  const auto nvrtc = tgtest::nvrtc_compile(text, "local_vector.cu", "compute_90");
  BOOST_TEST_REQUIRE(nvrtc.ok, nvrtc.log << "\n" << text);
  BOOST_TEST(nvrtc.ptx.find("ld.shared.v4.f32") != std::string::npos, nvrtc.ptx);
#endif
}

// A staged convolution's weight copy (lower_stage.cpp: plain_vector_copy): a 16-byte global load
// and a 16-byte store into the tile, gated in a last round the threads do not fill, renders as
// one guarded tg_copy16 (cp.async on sm_80 and newer, waited for before the barrier; a float4
// register copy before); the window's pairs of columns read 8 bytes at once (float2).
BOOST_AUTO_TEST_CASE(gated_vector_stores_and_pair_reads) {
  tg::sdk::KernelBuilder b("gated_vector");
  auto out = b.global(0, TG_DTYPE_FLOAT32), in = b.global(1, TG_DTYPE_FLOAT32, 16);
  auto tile = b.local(64, TG_DTYPE_FLOAT32);
  auto t = b.local_id(0);
  auto v = b.load(b.index(in, b.mul(t, b.i32(4))), 4, 16);
  b.store_gated(b.index(tile, b.mul(t, b.i32(4))), v, b.cmplt(t, b.i32(12)), 16);
  b.barrier();
  auto pair = b.load(b.index(tile, b.mul(t, b.i32(2))), 2);
  b.store(b.index(out, t), b.add(b.gep(pair, 0), b.gep(pair, 1)));
  const std::string text =
      tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tg::sdk::parse_kernel_ir(b.serialize())).text;
  BOOST_TEST(text.find(") tg_copy16(&") != std::string::npos, text); // if (gate) tg_copy16(&tile[...], ...)
  BOOST_TEST(text.find("tg_copy16_wait(); __syncthreads();") != std::string::npos, text);
  BOOST_TEST(text.find("float2 ") != std::string::npos, text);
#ifdef TG_HAVE_NVRTC
  const auto nvrtc = tgtest::nvrtc_compile(text, "gated_vector.cu", "compute_90");
  BOOST_TEST_REQUIRE(nvrtc.ok, nvrtc.log << "\n" << text);
  BOOST_TEST(nvrtc.ptx.find("cp.async.cg.shared.global") != std::string::npos, nvrtc.ptx);
  BOOST_TEST(nvrtc.ptx.find("cp.async.wait_all") != std::string::npos, nvrtc.ptx);
  BOOST_TEST(nvrtc.ptx.find("st.shared.v4.f32") == std::string::npos, nvrtc.ptx);
  BOOST_TEST(nvrtc.ptx.find("ld.shared.v2.f32") != std::string::npos, nvrtc.ptx);
  const auto turing = tgtest::nvrtc_compile(text, "gated_vector.cu", "compute_75"); // no cp.async there
  BOOST_TEST_REQUIRE(turing.ok, turing.log << "\n" << text);
  BOOST_TEST(turing.ptx.find("cp.async") == std::string::npos, turing.ptx);
  BOOST_TEST(turing.ptx.find("ld.global.v4.") != std::string::npos, turing.ptx); // a register copy
  BOOST_TEST(turing.ptx.find("st.shared.v4.") != std::string::npos, turing.ptx);
#endif
}

// out[t] = sum over `steps` of tile[j] * in[t]: the steps through a staged tile read from local
// memory (or, with from_local false, the same loop reading global memory), inside a loop over 2
// tiles; the CUDA C source.
std::string rendered_tile_steps(int steps, bool from_local) {
  tg::sdk::KernelBuilder b("tile_steps");
  auto out = b.global(0, TG_DTYPE_FLOAT32), in = b.global(1, TG_DTYPE_FLOAT32);
  auto tile = b.local(32, TG_DTYPE_FLOAT32);
  auto t = b.local_id(0);
  auto acc = b.acc(b.f32(0.0f));
  auto tiles = b.range(b.i32(0), b.i32(2));
  b.store(b.index(tile, t), b.load(b.index(in, b.add(b.mul(tiles, b.i32(32)), t))));
  b.barrier();
  auto j = b.range(b.i32(0), b.i32(steps));
  auto x = from_local ? b.load(b.index(tile, j)) : b.load(b.index(in, j));
  b.assign(acc, b.alu(TG_OP_MULACC, x, b.load(b.index(in, t)), acc));
  b.end_range(j);
  b.end_range(tiles);
  b.store(b.index(out, t), acc);
  return tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tg::sdk::parse_kernel_ir(b.serialize()))
      .text;
}

// The steps through a staged tile (an innermost loop of 8 to 16 steps reading local memory) are
// unrolled (nvcc leaves the 16-step loop of the f32 matmul rolled, ~10% slower than unrolled on an
// H200); the loop around them, shorter or longer step loops and loops over global memory are not.
BOOST_AUTO_TEST_CASE(staged_tile_steps_are_unrolled) {
  const std::string pragma = "#pragma unroll // the steps through a staged tile";
  for (int steps : {8, 16}) {
    const std::string text = rendered_tile_steps(steps, true);
    const size_t at = text.find(pragma);
    BOOST_TEST_REQUIRE(at != std::string::npos, text);
    BOOST_TEST(text.find(pragma, at + 1) == std::string::npos, text); // not the loop over tiles
    const size_t loop = text.find("for (", at);
    BOOST_TEST(text.substr(loop, text.find('\n', loop) - loop).find("< " + std::to_string(steps) + ";") !=
                   std::string::npos,
               text); // the pragma's loop is the step loop
  }
  for (int steps : {4, 32})
    BOOST_TEST(rendered_tile_steps(steps, true).find("#pragma unroll") == std::string::npos, steps);
  BOOST_TEST(rendered_tile_steps(16, false).find("#pragma unroll") == std::string::npos);
#ifdef TG_HAVE_NVRTC
  const std::string text = rendered_tile_steps(16, true);
  const auto out = tgtest::nvrtc_compile(text, "tile_steps.cu", "compute_90");
  BOOST_TEST_REQUIRE(out.ok, out.log << "\n" << text);
  const std::string& ptx = out.ptx;
  size_t shared_loads = 0; // rolled: one read of the tile; unrolled: 16 floats, 4 at a time or fewer
  for (size_t p = ptx.find("ld.shared."); p != std::string::npos; p = ptx.find("ld.shared.", p + 1))
    ++shared_loads;
  BOOST_TEST(shared_loads >= 4u, ptx);
#endif
}

// Past CUDA's 48 KiB of static __shared__ arrays the locals are pointers into one dynamic buffer,
// each at a 128-byte boundary, and Source says how many bytes a launch must pass; up to 48 KiB
// they stay static arrays (the source of every such kernel as before).
BOOST_AUTO_TEST_CASE(local_memory_over_48k_is_dynamic_shared) {
  auto big = tgtest::big_local_kernel();
  const auto src =
      tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tg::sdk::parse_kernel_ir(big.serialize()));
  BOOST_TEST(src.dynamic_local_bytes == 65536u); // 48 KiB + 16 KiB, the second array at 49152
  BOOST_TEST(src.text.find("extern __shared__ __align__(128) unsigned char tg_shared[];") !=
                 std::string::npos,
             src.text);
  BOOST_TEST(src.text.find("reinterpret_cast<float*>(tg_shared + 0)") != std::string::npos, src.text);
  BOOST_TEST(src.text.find("reinterpret_cast<float*>(tg_shared + 49152)") != std::string::npos, src.text);
  BOOST_TEST(src.text.find("__shared__ __align__(16)") == std::string::npos, src.text);

  tg::sdk::KernelBuilder small("small_local"); // 48 KiB exactly: static
  const auto out = small.global(0, TG_DTYPE_FLOAT32);
  const auto l = small.local(tgtest::kBigLocalA, TG_DTYPE_FLOAT32);
  const auto t = small.local_id(0);
  small.store(small.index(l, t), small.f32(1));
  small.barrier();
  small.store(small.index(out, t), small.load(small.index(l, t)));
  const auto static_src =
      tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tg::sdk::parse_kernel_ir(small.serialize()));
  BOOST_TEST(static_src.dynamic_local_bytes == 0u);
  BOOST_TEST(static_src.text.find("__shared__ __align__(16) float l") != std::string::npos, static_src.text);
  BOOST_TEST(static_src.text.find("extern __shared__") == std::string::npos, static_src.text);
#ifdef TG_HAVE_NVRTC
  const auto built = tgtest::nvrtc_compile(src.text, "big_local.cu", "sm_90");
  BOOST_TEST_REQUIRE(built.ok, built.log << "\n" << src.text);
  BOOST_TEST(built.ptx.find(".extern .shared .align 128 .b8 tg_shared[]") != std::string::npos, built.ptx);
#endif
}

// The completion word (Options::cuda_completion_word, what the CUDA plugin renders with): two
// parameters after the scalars, and after the body a barrier, a device-wide fence and thread 0's
// store of tg_seq, only where a launch passed a word.
BOOST_AUTO_TEST_CASE(completion_word_follows_the_scalars_and_the_body) {
  tg::sdk::KernelBuilder b("add_scalar");
  auto out = b.global(0, TG_DTYPE_FLOAT32), in = b.global(1, TG_DTYPE_FLOAT32);
  auto s = b.var(0, TG_DTYPE_FLOAT32);
  auto t = b.local_id(0);
  b.store(b.index(out, t), b.add(b.load(b.index(in, t)), s));
  const auto ir = tg::sdk::parse_kernel_ir(b.serialize());
  tg::sdk::render::Options with;
  with.cuda_completion_word = true;
  const std::string text = tg::sdk::render::render(tg::sdk::render::Dialect::cuda, ir, with).text;
  const std::string plain = tg::sdk::render::render(tg::sdk::render::Dialect::cuda, ir).text;
  BOOST_TEST(text.find("float s0, unsigned int* tg_done, unsigned int tg_seq) {") != std::string::npos, text);
  const size_t store = text.find("b0["), done = text.find("if (tg_done) {");
  BOOST_TEST_REQUIRE(done != std::string::npos, text);
  BOOST_TEST(store < done, text); // after the body's last store
  const size_t barrier = text.find("__syncthreads();", done), fence = text.find("__threadfence();", done),
               word = text.find("*(volatile unsigned int*)tg_done = tg_seq;", done);
  BOOST_TEST((barrier < fence && fence < word && word != std::string::npos), text);
  BOOST_TEST(plain.find("tg_done") == std::string::npos, plain);
}

// Every test kernel still compiles with the word (a barrier at the end of each), and its PTX has
// the fence and the store to the word.
BOOST_AUTO_TEST_CASE(every_kernel_compiles_with_the_completion_word) {
#ifndef TG_HAVE_NVRTC
  tgtest::skip_suite("the CUDA toolkit (NVRTC) was not found when this build was configured");
#else
  tg::sdk::render::Options with;
  with.cuda_completion_word = true;
  int compiled = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      auto src = tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tgtest::parse(k), with);
      const auto out = tgtest::nvrtc_compile(src.text, k.name + ".cu", "compute_75");
      BOOST_CHECK_MESSAGE(out.ok, out.error + "\n" + out.log + "\n" + src.text);
      BOOST_CHECK_MESSAGE(out.ptx.find("membar.gl") != std::string::npos, "no membar.gl in PTX");
      BOOST_CHECK_MESSAGE(out.ptx.find("st.volatile.global.u32") != std::string::npos ||
                              out.ptx.find("st.volatile.u32") != std::string::npos,
                          "no volatile store of the word in PTX\n" + out.ptx);
      ++compiled;
    }
  }
  BOOST_TEST(compiled > 40);
#endif
}

BOOST_AUTO_TEST_CASE(every_kernel_compiles_to_ptx_with_nvrtc) {
#ifndef TG_HAVE_NVRTC
  tgtest::skip_suite("the CUDA toolkit (NVRTC) was not found when this build was configured");
#else
  int compiled = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      auto src = tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tgtest::parse(k));
      const auto out = tgtest::nvrtc_compile(src.text, k.name + ".cu", "compute_75");
      BOOST_CHECK_MESSAGE(out.ok, out.error + "\n" + out.log + "\n" + src.text);
      BOOST_CHECK_MESSAGE(out.ptx.find(".entry " + src.entry) != std::string::npos,
                          "no entry " + src.entry + " in PTX");
      ++compiled;
    }
  }
  BOOST_TEST_MESSAGE("CUDA C: " << compiled << " kernels compiled to PTX");
  BOOST_TEST(compiled > 40);
#endif
}

} // namespace
