// Tensor cores (the TC opt, kernel IR 1.1 WMMA): a float16/bfloat16 matmul lowered with TC is
// checked on this machine without a GPU: the SDK's reference interpreter runs the WMMA warp by
// warp (tg/sdk/wmma.hpp's layout) and the result is compared with a double-precision matmul of the
// same inputs; the IR round-trips and says 1.1; the CUDA renderer's mma.sync compiles for sm_90 with
// NVRTC (where the toolkit was found); a device without the feature never gets the op. The
// warpgroup op (IR 1.2 WGMMA, and as a declared local-memory unit) is in wgmma_test.cpp, the shared helpers
// in tc_check.hpp.
#include "tc_check.hpp"

#include <tg/sdk/render/render.hpp>

#include "../render/nvrtc_compile.hpp" // NVRTC where the build found it

#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace tg;
using namespace tg::tc_check;

BOOST_AUTO_TEST_CASE(tc_matmul_matches_a_double_reference) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(64, 48, 32, dt);
    const KernelInfo info = analyze_kernel(mm.item);
    BOOST_REQUIRE(info.matmul.has_value());
    // the TC opt alone, with register blocking and warps, and the heuristic's choice
    std::vector<std::optional<std::vector<Opt>>> lists{
        std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)}},
        std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)},
                         {OptOp::UPCAST, info.matmul->n, 2},
                         {OptOp::UPCAST, info.matmul->m, 2},
                         {OptOp::LOCAL, info.matmul->m, 2}},
        // fragments read from tiles in local memory
        std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)}, {OptOp::STAGE, info.matmul->k, 3}},
        std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)},
                         {OptOp::UPCAST, info.matmul->n, 2},
                         {OptOp::LOCAL, info.matmul->m, 2},
                         {OptOp::LOCAL, info.matmul->n, 2},
                         {OptOp::UPCAST, info.matmul->m, 2},
                         {OptOp::STAGE, info.matmul->k, 3}},
        std::nullopt};
    for (const auto& list : lists) {
      LowerOptions o = gpu(true);
      o.opts = list;
      const Lowered l = lower(mm, o);
      BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts) {
        BOOST_TEST(has_wmma(l.ir));
        BOOST_TEST(l.kernel.local[0] == 32u);
        // float32 accumulation, one float16/bfloat16 rounding of the result
        BOOST_TEST(run_error(mm, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(wmma_ir_round_trips_as_version_1_1) {
  const Matmul mm = matmul(32, 32, 16, dtypes::float16);
  const Lowered l = lower(mm, gpu(true));
  BOOST_TEST(ir_minor(l.ir) == TG_IR_VERSION_MINOR_WMMA);
  BOOST_TEST((sdk::serialize_kernel_ir(sdk::parse_kernel_ir(l.ir)) == l.ir));
  std::vector<std::byte> old = l.ir; // the same program claiming IR 1.0: refused
  old[6] = std::byte{0};
  BOOST_CHECK_EXCEPTION(sdk::parse_kernel_ir(old), sdk::IRError, [](const sdk::IRError& e) {
    return std::string(e.what()).find("WMMA needs kernel IR 1.1") != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(without_the_feature_tc_is_refused_and_wmma_never_emitted) {
  const Matmul mm = matmul(32, 32, 16, dtypes::float16);
  const KernelInfo info = analyze_kernel(mm.item);
  LowerOptions o = gpu(false);
  o.opts = std::vector<Opt>{{OptOp::TC, info.matmul->k, 0}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("declares no matrix units") != std::string::npos;
  });
  const Lowered plain = lower(mm, gpu(false)); // the heuristic without the feature: IR 1.0
  BOOST_TEST(!has_wmma(plain.ir));
  BOOST_TEST(ir_minor(plain.ir) == 0);
  // float32 inputs (no unit takes them), the wrong axis or unit index, a non-multiple of 16 and TC
  // after another opt are refused with the reason
  const Matmul f32 = matmul(32, 32, 16, dtypes::float32);
  const KernelInfo f32_info = analyze_kernel(f32.item);
  BOOST_REQUIRE(f32_info.matmul.has_value());
  BOOST_TEST(f32_info.matmul->a == TG_DTYPE_FLOAT32);
  LowerOptions t = gpu(true);
  BOOST_TEST(fitting_units(f32_info, t).empty());
  t.opts = std::vector<Opt>{{OptOp::TC, f32_info.matmul->k, 0}};
  BOOST_CHECK_EXCEPTION(lower_kernel(f32.item, t), OptError, [](const OptError& e) {
    return std::string(e.what()).find("does not take this matmul's operands (float32, float32") !=
           std::string::npos;
  });
  t.opts = std::vector<Opt>{{OptOp::TC, info.matmul->k, 2}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, t), OptError, [](const OptError& e) {
    return std::string(e.what()).find("one of the device's 2 matrix units") != std::string::npos;
  });
  t.opts = std::vector<Opt>{{OptOp::TC, 0, 0}};
  BOOST_CHECK_THROW(lower_kernel(mm.item, t), OptError);
  const Matmul odd = matmul(24, 32, 16, dtypes::float16);
  t.opts = std::vector<Opt>{{OptOp::TC, analyze_kernel(odd.item).matmul->k, 0}};
  BOOST_CHECK_EXCEPTION(lower_kernel(odd.item, t), OptError, [](const OptError& e) {
    return std::string(e.what()).find("not a multiple of 16") != std::string::npos;
  });
  t.opts = std::vector<Opt>{{OptOp::UPCAST, info.matmul->n, 2}, {OptOp::TC, info.matmul->k, 0}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, t), OptError, [](const OptError& e) {
    return std::string(e.what()).find("first optimization") != std::string::npos;
  });
  BOOST_TEST(to_string(parse_opts("[TC(2,1)]")) == "[TC(2,1)]");
}

BOOST_AUTO_TEST_CASE(cuda_renders_mma_sync_that_nvrtc_compiles_for_sm_90) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Lowered l = lower(matmul(32, 32, 16, dt), gpu(true));
    const auto ir = sdk::parse_kernel_ir(l.ir);
    const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
    const std::string mma = std::string("mma.sync.aligned.m16n8k16.row.col.f32.") +
                            (dt == dtypes::float16 ? "f16.f16" : "bf16.bf16") +
                            ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};";
    BOOST_TEST(src.text.find(mma) != std::string::npos, src.text);
    // dialects without a matrix unit refuse the op by name
    BOOST_CHECK_EXCEPTION(
        sdk::render::render(sdk::render::Dialect::opencl, ir), std::exception,
        [](const std::exception& e) { return std::string(e.what()).find("WMMA") != std::string::npos; });
#ifdef TG_HAVE_NVRTC
    const auto out = tgtest::nvrtc_compile(src.text, "tc.cu", "sm_90");
    BOOST_TEST(out.ok, out.log << "\n" << src.text);
    BOOST_TEST(out.cubin_bytes > 0u);
#endif
  }
}

// The heuristic's staged TC kernel (128x128 outputs per work group, two tiles of 64 k): the tiles
// keep k innermost, so each fragment register is one 32-bit read of a __half2/__nv_bfloat162 word
// handed to mma.sync as is (no float round trip, no packing); the result matches a double matmul
// in the interpreter and the source compiles for sm_90.
BOOST_AUTO_TEST_CASE(staged_tc_fragments_are_read_as_32_bit_words) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(128, 128, 128, dt);
    const Lowered l = lower(mm, gpu(true));
    BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts) {
      BOOST_TEST(l.kernel.opts.find("STAGE") != std::string::npos);
      BOOST_TEST(l.kernel.local[0] * l.kernel.local[1] * l.kernel.local[2] == 128u); // 2x2 warps
      BOOST_TEST(run_error(mm, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(l.ir)).text;
      const std::string word = dt == dtypes::float16 ? "__half2 " : "__nv_bfloat162 ";
      size_t mmas = 0, packed = 0;
      for (size_t at = src.find("mma.sync"); at != std::string::npos; at = src.find("mma.sync", at + 1)) {
        const std::string stmt = src.substr(at, src.find(';', src.find("\" :", at)) - at);
        ++mmas;
        if (stmt.find("tg_pack_") != std::string::npos) ++packed;
        BOOST_TEST(stmt.find("reinterpret_cast<const unsigned*>") != std::string::npos, stmt);
      }
      BOOST_TEST(mmas == 32u); // 4x8 tiles of 16x8 per warp
      BOOST_TEST(packed == 0u, src);
      BOOST_TEST(src.find(word) != std::string::npos);
#ifdef TG_HAVE_NVRTC
      const auto out = tgtest::nvrtc_compile(src, "tc.cu", "sm_90");
      BOOST_TEST(out.ok, out.log << "\n" << src);
#endif
    }
  }
}

// 128-bit tile copies: with buffers 16-byte aligned at launch, the staged TC kernel
// copies A (k contiguous in global memory and innermost in the tile) as 8-lane vector LOADs and
// STOREs stating 16-byte alignment; B (n contiguous in global memory, transposed into the n x k
// tile) as 8 scalar global loads of neighbouring k per thread gathered into one 8-lane 16-byte
// STORE (every tile store is then 16 bytes wide); only A's DEFINE_GLOBAL claims 16 and the CUDA
// source moves uint4 words. Without the device's 16-byte buffer alignment nothing claims it and
// A's loads are scalar, B's stores still 16 bytes. Values vs a double matmul in the interpreter.
BOOST_AUTO_TEST_CASE(staged_tc_copies_are_128_bit_when_buffers_are_aligned) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(128, 128, 128, dt);
    LowerOptions o = gpu(true);
    o.buffer_alignment = 256;
    const Lowered l = lower(mm, o);
    BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts) {
      const auto ir = sdk::parse_kernel_ir(l.ir);
      size_t vloads = 0, vstores = 0, gathered = 0, narrow = 0, claimed = 0;
      for (const auto& ins : ir.instructions) {
        if (ins.op == TG_OP_DEFINE_GLOBAL && ins.arg1 == 16) ++claimed;
        const bool global = ins.op != TG_OP_BARRIER && !ins.src.empty() &&
                            (ins.op == TG_OP_LOAD || ins.op == TG_OP_STORE) &&
                            !ir.instructions[ins.src[0]].is_local();
        if (ins.op == TG_OP_LOAD && global && ins.vcount == 8 && ins.arg0 == 16) ++vloads;
        if (ins.op != TG_OP_STORE || global) continue;
        const auto& value = ir.instructions[ins.src[1]];
        if (value.vcount == 8 && ins.arg0 == 16) {
          ++vstores;
          if (value.op == TG_OP_VECTORIZE) ++gathered; // B's: lanes from 8 scalar global loads
        } else {
          ++narrow;
        }
      }
      BOOST_TEST(claimed == 1u); // A only; B and the output as before
      BOOST_TEST(vloads > 0u);
      BOOST_TEST(gathered == vloads); // B's tile (128 x 64) is as large as A's (128 x 64)
      BOOST_TEST(vstores == vloads + gathered);
      BOOST_TEST(narrow == 0u); // no 16-bit store into the tiles is left
      BOOST_TEST(run_error(mm, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir).text;
      BOOST_TEST(src.find("= *((const uint4*)&") != std::string::npos, src);
      BOOST_TEST(src.find("*((uint4*)&") != std::string::npos);
#ifdef TG_HAVE_NVRTC
      const auto out = tgtest::nvrtc_compile(src, "tc.cu", "sm_90");
      BOOST_TEST(out.ok, out.log << "\n" << src);
      BOOST_TEST(out.ptx.find("ld.global.v4.u32") != std::string::npos);
      BOOST_TEST(out.ptx.find("st.shared.v4.u32") != std::string::npos);
#endif
    }
    const Lowered plain = lower(mm, gpu(true)); // buffer_alignment 0: no claim
    size_t plain_gathered = 0;
    const auto plain_ir = sdk::parse_kernel_ir(plain.ir);
    for (const auto& ins : plain_ir.instructions) {
      BOOST_TEST(!(ins.op == TG_OP_DEFINE_GLOBAL && ins.arg1 != 0));
      BOOST_TEST(!(ins.op == TG_OP_LOAD && ins.vcount > 1 && ins.arg0 == 16 &&
                   !plain_ir.instructions[ins.src[0]].is_local()));
      if (ins.op == TG_OP_STORE && plain_ir.instructions[ins.src[1]].op == TG_OP_VECTORIZE && ins.arg0 == 16)
        ++plain_gathered; // B's stores need only the tile's alignment, not the buffers'
    }
    BOOST_TEST(plain_gathered > 0u);
    BOOST_TEST(run_error(mm, plain) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
  }
}

// Double-buffered TC tiles: with one loop over tiles and room for two sets, tile 0 is
// copied before the loop and each step copies the next tile into the other set while its mma read
// this one: one BARRIER per step (two when single-buffered), a local buffer twice the size, and in
// the loop the next tile's global loads come before the first WMMA and its stores into the tiles
// after the last one (what lets the loads' latency hide behind the mma). Values vs a double matmul
// in the interpreter for 4 tiles (k 128, 32 per tile); NVRTC compiles it for sm_90.
BOOST_AUTO_TEST_CASE(staged_tc_tiles_are_double_buffered) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(128, 128, 128, dt);
    const KernelInfo info = analyze_kernel(mm.item);
    BOOST_REQUIRE(info.matmul.has_value());
    const auto list = [&](int64_t stage) {
      return std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)}, {OptOp::UPCAST, info.matmul->n, 8},
                              {OptOp::UPCAST, info.matmul->m, 4},  {OptOp::LOCAL, info.matmul->m, 2},
                              {OptOp::LOCAL, info.matmul->n, 2},   {OptOp::STAGE, info.matmul->k, stage}};
    };
    LowerOptions o = gpu(true);
    o.buffer_alignment = 256;
    o.opts = list(2); // 2 x 18 KiB of tiles: fits 48 KiB twice
    const Lowered dbl = lower(mm, o);
    LowerOptions one = o;
    one.local_memory_bytes = 30000; // room for one set only
    const Lowered single = lower(mm, one);
    BOOST_TEST_CONTEXT(dt.name() << " " << dbl.kernel.opts) {
      auto shape = [](const Lowered& l) {
        const auto ir = sdk::parse_kernel_ir(l.ir);
        struct {
          int64_t local = 0;
          size_t barriers = 0, first_wmma = 0, last_wmma = 0, loop = 0, vector_loads = 0, narrow_stores = 0;
          std::vector<size_t> global_loads, local_stores;
        } out;
        for (size_t i = 0; i < ir.instructions.size(); ++i) {
          const auto& ins = ir.instructions[i];
          if (ins.op == TG_OP_DEFINE_LOCAL) out.local = ins.arg0;
          if (ins.op == TG_OP_BARRIER) ++out.barriers;
          if (ins.op == TG_OP_RANGE && !out.loop) out.loop = i; // the loop over tiles
          if (ins.op == TG_OP_WMMA) {
            if (!out.first_wmma) out.first_wmma = i;
            out.last_wmma = i;
          }
          const bool local =
              (ins.op == TG_OP_LOAD || ins.op == TG_OP_STORE) && ir.instructions[ins.src[0]].is_local();
          if (ins.op == TG_OP_LOAD && !local) out.global_loads.push_back(i);
          if (ins.op == TG_OP_LOAD && !local && ins.vcount == 8 && ins.arg0 == 16) ++out.vector_loads;
          if (ins.op == TG_OP_STORE && local) out.local_stores.push_back(i);
          if (ins.op == TG_OP_STORE && local && !(ir.instructions[ins.src[1]].vcount == 8 && ins.arg0 == 16))
            ++out.narrow_stores;
        }
        return out;
      };
      const auto d = shape(dbl), s = shape(single);
      BOOST_TEST(d.local == 2 * s.local);
      BOOST_TEST(d.barriers == 1u);
      BOOST_TEST(s.barriers == 2u);
      // A's rows of 32 k go as 16-byte copies (4 per row; rows of a quarter warp 4 apart), B's as
      // 16-byte stores: 4 of each per thread and tile
      BOOST_TEST(d.vector_loads == 2 * 4u);
      BOOST_TEST(d.narrow_stores == 0u);
      BOOST_TEST(d.local_stores.size() == 2 * 8u);
      // half the copies are the prologue's (before the loop), half the next tile's (in it)
      BOOST_TEST(d.local_stores.size() == 2 * s.local_stores.size());
      size_t ahead_loads = 0, late_stores = 0;
      for (size_t i : d.global_loads) ahead_loads += i > d.loop && i < d.first_wmma;
      for (size_t i : d.local_stores) late_stores += i > d.last_wmma;
      BOOST_TEST(ahead_loads * 2 == d.global_loads.size());
      BOOST_TEST(late_stores * 2 == d.local_stores.size());
      BOOST_TEST(run_error(mm, dbl) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      BOOST_TEST(run_error(mm, single) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      // three tiles: the last step's copy wraps to tile 0 (read by nobody)
      const Matmul odd = matmul(64, 96, 32, dt);
      LowerOptions oo = gpu(true);
      oo.opts = std::vector<Opt>{{OptOp::TC, analyze_kernel(odd.item).matmul->k, tc(dt)},
                                 {OptOp::STAGE, analyze_kernel(odd.item).matmul->k, 2}};
      const Lowered three = lower(odd, oo);
      BOOST_TEST(shape(three).barriers == 1u);
      BOOST_TEST(run_error(odd, three) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
#ifdef TG_HAVE_NVRTC
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(dbl.ir)).text;
      const auto out = tgtest::nvrtc_compile(src, "tc.cu", "sm_90");
      BOOST_TEST(out.ok, out.log << "\n" << src);
#endif
    }
  }
}

// On a device with tensor cores (TG_DEVICE=CUDA on the GPU machine; elsewhere this case only says
// so): float16/bfloat16 matmuls through the heuristic's TC (mma.sync or the warpgroup unit) against a double
// matmul on the host.
BOOST_AUTO_TEST_CASE(tc_matmul_on_the_device_matches_a_double_reference) {
  const char* device = std::getenv("TG_DEVICE");
  if (!device || std::string(device) != "CUDA") {
    BOOST_TEST_MESSAGE("TG_DEVICE is not CUDA: nothing to run on a device");
    return;
  }
  for (DType dt : {dtypes::float16, dtypes::bfloat16})
    // 2048x128x2304: 144 blocks of 128x256, enough for the warpgroup unit on Hopper (64 k per tile, 4 sets,
    // two tiles ahead: the loop's copies wrap); 2048x640x2304: 10 tiles, every set reused
    for (auto [m, k, n] : {std::array<int64_t, 3>{64, 48, 32},
                           {256, 512, 128},
                           {1024, 1024, 1024},
                           {2048, 128, 2304},
                           {2048, 640, 2304}}) {
      Tensor a = Tensor::randn({m, k}).cast(dt), b = Tensor::randn({k, n}).cast(dt);
      const auto got = a.matmul(b).cast(dtypes::float32).to_vector<float>();
      const auto av = a.cast(dtypes::float32).to_vector<float>(),
                 bv = b.cast(dtypes::float32).to_vector<float>();
      const double worst = worst_error(got, av, bv, m, k, n);
      BOOST_TEST(worst < 1e-2, dt.name() << " " << m << "x" << k << "x" << n << ": worst error " << worst);
    }
}

// On CUDA (as above): float32 matmuls big enough for the heuristic's STAGE tiles (768: 64x64 per
// work group; 1536: 128x128, with 16-byte tile reads and outputs 64 apart) against a double matmul.
BOOST_AUTO_TEST_CASE(staged_f32_matmul_on_the_device_matches_a_double_reference) {
  const char* device = std::getenv("TG_DEVICE");
  if (!device || std::string(device) != "CUDA") {
    BOOST_TEST_MESSAGE("TG_DEVICE is not CUDA: nothing to run on a device");
    return;
  }
  for (auto [m, k, n] : {std::array<int64_t, 3>{768, 96, 768}, {1536, 64, 1536}}) {
    Tensor a = Tensor::randn({m, k}), b = Tensor::randn({k, n});
    const auto got = a.matmul(b).to_vector<float>();
    const auto av = a.to_vector<float>(), bv = b.to_vector<float>();
    const double worst = worst_error(got, av, bv, m, k, n);
    BOOST_TEST(worst < 1e-5, m << "x" << k << "x" << n << ": worst error " << worst);
  }
}
