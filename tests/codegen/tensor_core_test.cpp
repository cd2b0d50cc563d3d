// Tensor cores (the TC opt, kernel IR 1.1 WMMA): a float16/bfloat16 matmul lowered with TC is
// checked on this machine without a GPU: the SDK's reference interpreter runs the WMMA warp by
// warp (tg/sdk/wmma.hpp's layout) and the result is compared with a double-precision matmul of the
// same inputs; the IR round-trips and says 1.1; the CUDA renderer's mma.sync compiles for sm_90 with
// NVRTC (where the toolkit was found); a device without the feature never gets the op.
#include <boost/test/unit_test.hpp>

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/render/render.hpp>

#include "../../tools/conform/wgmma_kernel.hpp" // a hand-built IR 1.2 WGMMA program
#include "../render/nvrtc_compile.hpp"          // NVRTC where the build found it

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <vector>

using namespace tg;

namespace {

Tensor input(Dims shape, DType dt) {
  UOpRef buffer = make_buffer("CPU", dt, dims_prod(shape)); // a label: nothing is opened
  UOpRef view = UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), "CPU");
}

// An sm_90-like device: 1024 threads per work group, 48 KiB of shared memory, tensor cores.
LowerOptions gpu(bool tensor_cores) {
  LowerOptions o;
  o.compute_units = 132;
  o.max_groups = 65535;
  o.vector_bytes = 16;
  o.max_local_size = {1024, 1024, 64};
  o.max_local_threads = 1024;
  o.local_memory_bytes = 49152;
  o.subgroup_size = 32;
  o.tensor_cores = tensor_cores;
  return o;
}

struct Matmul {
  ScheduleItem item;
  int64_t m, k, n;
  DType dt;
};

Matmul matmul(int64_t m, int64_t k, int64_t n, DType dt) {
  Tensor c = input({m, k}, dt).matmul(input({k, n}, dt));
  for (auto& item : c.schedule())
    if (item.ast->src(0)->op() == Ops::STORE) return {std::move(item), m, k, n, dt};
  throw std::logic_error("no compute kernel");
}

double to_double(DType dt, const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return dt == dtypes::float16 ? sdk::half_bits_to_double(bits) : sdk::bfloat16_bits_to_double(bits);
}

uint16_t from_double(DType dt, double v) {
  return dt == dtypes::float16 ? sdk::float_to_half_bits(v) : sdk::float_to_bfloat16_bits(float(v));
}

struct Lowered {
  LoweredKernel kernel;
  std::vector<std::byte> ir;
};

Lowered lower(const Matmul& mm, const LowerOptions& options) {
  LoweredKernel k = lower_kernel(mm.item, options);
  LinearKernel linear = linearize(k.sink, k.name);
  return {std::move(k), std::move(linear.ir)};
}

// Runs the kernel in the interpreter on random inputs; the largest error against a double matmul
// of the same (16-bit) inputs, relative to the sum of |a*b| (the scale the f32 accumulation sees).
double run_error(const Matmul& mm, const Lowered& l) {
  std::mt19937 rng(7);
  std::map<const UOp*, std::vector<std::byte>> mem;
  for (const auto& b : mm.item.buffers) {
    std::vector<std::byte> bytes(size_t(buffer_arg(b).size() * 2));
    for (size_t i = 0; i < bytes.size(); i += 2) {
      uint16_t v = from_double(mm.dt, std::uniform_real_distribution<double>(-2, 2)(rng));
      std::memcpy(bytes.data() + i, &v, 2);
    }
    mem[b.get()] = std::move(bytes);
  }
  std::vector<std::span<std::byte>> spans;
  for (const auto& b : mm.item.buffers) spans.emplace_back(mem.at(b.get()));
  sdk::interpret(sdk::parse_kernel_ir(l.ir), l.kernel.global, l.kernel.local, spans, {});
  const auto& out = mem.at(mm.item.buffers[0].get());
  const auto& a = mem.at(mm.item.buffers[1].get());
  const auto& b = mem.at(mm.item.buffers[2].get());
  double worst = 0;
  for (int64_t i = 0; i < mm.m; ++i)
    for (int64_t j = 0; j < mm.n; ++j) {
      double want = 0, scale = 0;
      for (int64_t kk = 0; kk < mm.k; ++kk) {
        const double p = to_double(mm.dt, a.data() + 2 * (i * mm.k + kk)) *
                         to_double(mm.dt, b.data() + 2 * (kk * mm.n + j));
        want += p;
        scale += std::fabs(p);
      }
      const double got = to_double(mm.dt, out.data() + 2 * (i * mm.n + j));
      worst = std::max(worst, std::fabs(got - want) / std::max(scale, 1.0));
    }
  return worst;
}

bool has_wmma(const std::vector<std::byte>& ir) { return sdk::uses_wmma(sdk::parse_kernel_ir(ir)); }
uint16_t ir_minor(const std::vector<std::byte>& ir) {
  uint16_t v;
  std::memcpy(&v, ir.data() + 6, 2);
  return v;
}

// The worst error of got = a @ b (m x k times k x n, row-major) against a double-precision
// product, relative to the sum of |products| of each output.
double worst_error(const std::vector<float>& got, const std::vector<float>& av, const std::vector<float>& bv,
                   int64_t m, int64_t k, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, scale = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double p = double(av[size_t(i * k + kk)]) * double(bv[size_t(kk * n + j)]);
        want += p;
        scale += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(double(got[size_t(i * n + j)]) - want) / std::max(scale, 1.0));
    }
  return worst;
}

} // namespace

BOOST_AUTO_TEST_CASE(tc_matmul_matches_a_double_reference) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(64, 48, 32, dt);
    const KernelInfo info = analyze_kernel(mm.item);
    BOOST_REQUIRE(info.matmul.has_value());
    // the TC opt alone, with register blocking and warps, and the heuristic's choice
    std::vector<std::optional<std::vector<Opt>>> lists{
        std::vector<Opt>{{OptOp::TC, info.matmul->k, 16}},
        std::vector<Opt>{{OptOp::TC, info.matmul->k, 16},
                         {OptOp::UPCAST, info.matmul->n, 2},
                         {OptOp::UPCAST, info.matmul->m, 2},
                         {OptOp::LOCAL, info.matmul->m, 2}},
        // fragments read from tiles in local memory
        std::vector<Opt>{{OptOp::TC, info.matmul->k, 16}, {OptOp::STAGE, info.matmul->k, 3}},
        std::vector<Opt>{{OptOp::TC, info.matmul->k, 16},
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
  o.opts = std::vector<Opt>{{OptOp::TC, info.matmul->k, 16}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("no tensor cores") != std::string::npos;
  });
  const Lowered plain = lower(mm, gpu(false)); // the heuristic without the feature: IR 1.0
  BOOST_TEST(!has_wmma(plain.ir));
  BOOST_TEST(ir_minor(plain.ir) == 0);
  // float32 inputs, a non-multiple of 16 and TC after another opt are refused with the reason
  const Matmul f32 = matmul(32, 32, 16, dtypes::float32);
  BOOST_TEST(!analyze_kernel(f32.item).matmul.has_value());
  LowerOptions t = gpu(true);
  t.opts = std::vector<Opt>{{OptOp::TC, 2, 16}};
  BOOST_CHECK_THROW(lower_kernel(f32.item, t), OptError);
  const Matmul odd = matmul(24, 32, 16, dtypes::float16);
  t.opts = std::vector<Opt>{{OptOp::TC, analyze_kernel(odd.item).matmul->k, 16}};
  BOOST_CHECK_EXCEPTION(lower_kernel(odd.item, t), OptError, [](const OptError& e) {
    return std::string(e.what()).find("not a multiple of 16") != std::string::npos;
  });
  t.opts = std::vector<Opt>{{OptOp::UPCAST, info.matmul->n, 2}, {OptOp::TC, info.matmul->k, 16}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, t), OptError, [](const OptError& e) {
    return std::string(e.what()).find("first optimization") != std::string::npos;
  });
  BOOST_TEST(to_string(parse_opts("[TC(2,16)]")) == "[TC(2,16)]");
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

// 128-bit tile copies (issue 13): with buffers 16-byte aligned at launch, the staged TC kernel
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

// Double-buffered TC tiles (issue 13): with one loop over tiles and room for two sets, tile 0 is
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
      return std::vector<Opt>{{OptOp::TC, info.matmul->k, 16},    {OptOp::UPCAST, info.matmul->n, 8},
                              {OptOp::UPCAST, info.matmul->m, 4}, {OptOp::LOCAL, info.matmul->m, 2},
                              {OptOp::LOCAL, info.matmul->n, 2},  {OptOp::STAGE, info.matmul->k, stage}};
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
      oo.opts = std::vector<Opt>{{OptOp::TC, analyze_kernel(odd.item).matmul->k, 16},
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
// so): float16/bfloat16 matmuls through the heuristic's TC (or TCWG) against a double matmul on the
// host.
BOOST_AUTO_TEST_CASE(tc_matmul_on_the_device_matches_a_double_reference) {
  const char* device = std::getenv("TG_DEVICE");
  if (!device || std::string(device) != "CUDA") {
    BOOST_TEST_MESSAGE("TG_DEVICE is not CUDA: nothing to run on a device");
    return;
  }
  for (DType dt : {dtypes::float16, dtypes::bfloat16})
    // 2048x128x2304: 144 blocks of 128x256, enough for TCWG on Hopper (64 k per tile, 3 sets)
    for (auto [m, k, n] :
         {std::array<int64_t, 3>{64, 48, 32}, {256, 512, 128}, {1024, 1024, 1024}, {2048, 128, 2304}}) {
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
    auto count = [&](const std::string& what) {
      size_t c = 0;
      for (size_t at = src.text.find(what); at != std::string::npos; at = src.text.find(what, at + 1)) ++c;
      return c;
    };
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

// ---- the TCWG opt: the core's matmul on the warpgroup op ----

namespace {
LowerOptions hopper() { // gpu(true) on a device that names the warpgroup shapes (sm_90a)
  LowerOptions o = gpu(true);
  o.warpgroup_mma = true;
  o.buffer_alignment = 16; // A's copy as 16-byte chunks, reordered by rows (lower_stage.cpp)
  o.compute_units = 1;     // the heuristic takes TCWG only with a block per compute unit
  return o;
}
} // namespace

// The heuristic picks TCWG on such a device (2 warpgroups of 64x128, 32 k per tile, tiles in the
// core-matrix layout, double-buffered); the interpreter's result matches a double matmul; the IR
// says 1.2; an explicit TCWG without STAGE is refused with the reason, and so is TCWG on a device
// without the shapes; the CUDA source compiles for sm_90a with NVRTC and holds one wgmma run (one
// fence, one commit/wait) per tile step.
// Where three sets of TCWG tiles fit the device's opt-in maximum (CUDA's dynamic shared memory:
// 3 x 24 KiB for the 128x256 block), the WGMMAs defer their reads (kWgmmaDeferReads): the
// interpreter, which fails a store into a tile a deferred WGMMA may still read, runs the kernel to
// a double reference's result; the CUDA source waits with wait_group 1 after each run and
// wait_group 0 after the tile loop, in dynamic shared memory, and compiles for sm_90a without
// ptxas serializing the wgmmas. Within 48 KiB (two sets) nothing changes.
// With wgmma_b_n_major (off by default) B's tile is n-major (kWgmmaBNMajor) and both copies are
// 16-byte rows, rendered as cp.async and issued before the step's WGMMA run; without it B stays
// k-major (its transposed register copy) and the source has no cp.async.
BOOST_AUTO_TEST_CASE(tcwg_three_sets_defer_wgmma_reads) {
  LowerOptions big = hopper();
  big.max_local_memory_bytes = 232448; // an H100/H200's opt-in maximum
  for (bool bn : {false, true})
    for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
      const Matmul wide = matmul(256, 160, 512, dt); // 5 tiles of 32 k: every set is reused
      LowerOptions o = big;
      o.wgmma_b_n_major = bn;
      const Lowered l = lower(wide, o);
      BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts << (bn ? " B n-major" : "")) {
        BOOST_TEST(l.kernel.opts.find("[TCWG(2,128), LOCAL(0,2), LOCAL(1,2), STAGE(2,2)]") !=
                   std::string::npos);
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
        // prologue, loop: A 128x32 (1 per thread), B 32x256 (2) over 512 threads
        BOOST_TEST(vector_loads == (bn ? 2 * (1 + 2) : 2 * 1));
        BOOST_TEST(locals == 3 * (128 + 256) * 32);
        BOOST_TEST(run_error(wide, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
        const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
        BOOST_TEST(src.dynamic_local_bytes == uint32_t(3 * (128 + 256) * 32 * 2));
        BOOST_TEST(src.text.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos, src.text);
        // the six 16-byte row copies (prologue and loop) as cp.async, waited for before each barrier;
        // the loop's are issued before the step's WGMMA run (they lead: lower_stage.cpp)
        size_t copies = 0;
        for (size_t at = src.text.find("cp.async.cg.shared.global"); at != std::string::npos;
             at = src.text.find("cp.async.cg.shared.global", at + 1))
          ++copies;
        BOOST_TEST(copies == (bn ? 6u : 0u), src.text);
        BOOST_TEST((src.text.find("cp.async.wait_all;") != std::string::npos) == bn);
        if (bn) BOOST_TEST(src.text.rfind("cp.async.cg.shared.global") < src.text.rfind("wgmma.mma_async"));
        const size_t loop_end =
            src.text.find("wgmma.wait_group.sync.aligned 0;\" ::: \"memory\"); // the deferred");
        BOOST_TEST(loop_end != std::string::npos);
        BOOST_TEST(src.text.find("wgmma.wait_group.sync.aligned 0;") == loop_end); // no other wait for all
#ifdef TG_HAVE_NVRTC
        // ptxas notes "wgmma.mma_async instructions are serialized due to non wgmma instructions
        // reading accumulator registers ..." where a run's D is read before its wait (checked by hand
        // with nvcc 13.0: a read of D after wait_group 1 gets that note, this source none)
        const auto out = tgtest::nvrtc_compile(src.text, "tcwg3.cu", "sm_90a", "--ptxas-options=-v");
        BOOST_TEST_REQUIRE(out.ok, out.log << "\n" << src.text);
        BOOST_TEST(out.log.find("Used ") != std::string::npos, out.log); // ptxas's notes are in the log
        BOOST_TEST(out.log.find("serialized") == std::string::npos, out.log);
#endif
      }
    }
  { // k a multiple of 64: the heuristic takes 64 k per tile (3 x 48 KiB); swizzled, B n-major (the
    // defaults): 2x1 warpgroups of 64x256, else 2x2 of 64x128
    const Matmul deep = matmul(256, 320, 512, dtypes::float16);
    const Lowered l = lower(deep, big);
    BOOST_TEST(l.kernel.opts.find("[TCWG(2,256), LOCAL(0,2), STAGE(2,4)]") != std::string::npos,
               l.kernel.opts);
    LowerOptions plain = big;
    plain.wgmma_swizzle = false;
    BOOST_TEST(lower(deep, plain).kernel.opts.find("[TCWG(2,128), LOCAL(0,2), LOCAL(1,2), STAGE(2,4)]") !=
               std::string::npos);
    BOOST_TEST(run_error(deep, l) < 2e-3);
    const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(l.ir));
    BOOST_TEST(src.dynamic_local_bytes == uint32_t(3 * (128 + 256) * 64 * 2));
  }
  { // fewer 128x256 blocks than compute units: the mma.sync list (each TCWG block takes an SM)
    LowerOptions wide_gpu = big;
    wide_gpu.compute_units = 132;
    const Lowered l = lower(matmul(256, 320, 512, dtypes::float16), wide_gpu);
    BOOST_TEST(l.kernel.opts.find("TCWG") == std::string::npos, l.kernel.opts);
    BOOST_TEST(l.kernel.opts.find("TC(") != std::string::npos, l.kernel.opts);
  }
  const Lowered two = lower(matmul(256, 160, 512, dtypes::float16), hopper()); // 48 KiB: two sets
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

// With wgmma_swizzle, a TCWG matmul of 64 k per tile stages both tiles 128-byte swizzled
// (kWgmmaSwizzle128 on every WGMMA): its copies stay 16-byte stores (A's rows, B's transposed
// copy or, n-major, its rows), the interpreter, reading at the swizzled positions, gives a double
// reference's result, and the CUDA source (descriptors of layout type 1, dynamic shared memory
// aligned to 1024 bytes) compiles for sm_90a. With 32 k per tile (no 128-byte rows) nothing is
// swizzled.
BOOST_AUTO_TEST_CASE(tcwg_swizzled_tiles_match_a_double_reference) {
  LowerOptions big = hopper();
  big.max_local_memory_bytes = 232448;
  big.wgmma_swizzle = true;
  for (bool bn : {false, true})
    for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
      const Matmul deep = matmul(256, 320, 512, dt); // 5 tiles of 64 k: every set reused
      LowerOptions o = big;
      o.wgmma_b_n_major = bn;
      const Lowered l = lower(deep, o);
      BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts << (bn ? " B n-major" : "")) {
        // B n-major: 2x1 warpgroups of 64x256 (heuristic.cpp), else 2x2 of 64x128; the same block
        BOOST_TEST(l.kernel.opts.find(bn ? "[TCWG(2,256), LOCAL(0,2), STAGE(2,4)]"
                                         : "[TCWG(2,128), LOCAL(0,2), LOCAL(1,2), STAGE(2,4)]") !=
                   std::string::npos);
        const int per_thread = bn ? 2 : 1; // 256 threads, else 512
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
        BOOST_TEST(loads16 == (bn ? 2 * (2 + 4) * per_thread : 2 * 2));
        BOOST_TEST(run_error(deep, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
        const auto src = sdk::render::render(sdk::render::Dialect::cuda, ir);
        BOOST_TEST(src.dynamic_local_bytes == uint32_t(3 * (128 + 256) * 64 * 2));
        BOOST_TEST(src.text.find("__align__(1024) unsigned char tg_shared[]") != std::string::npos, src.text);
        BOOST_TEST(src.text.find("| (1ull << 62)") != std::string::npos);
#ifdef TG_HAVE_NVRTC
        const auto out = tgtest::nvrtc_compile(src.text, "tcwg_swz.cu", "sm_90a", "--ptxas-options=-v");
        BOOST_TEST_REQUIRE(out.ok, out.log << "\n" << src.text);
        // With B n-major every copy is a 16-byte row (cp.async) and ptxas keeps the wgmmas
        // pipelined. (B k-major in float16, main's transposed register copy, gets ptxas's C7514
        // "wgmma.mma_async instructions are serialized" with or without the swizzle, 124-128
        // registers; bfloat16 does not: docs/cuda.md, session 20, h/swz.)
        if (bn) BOOST_TEST(out.log.find("serialized") == std::string::npos, out.log);
#endif
      }
    }
  const Lowered shallow = lower(matmul(256, 160, 512, dtypes::float16), big); // 32 k per tile
  for (const auto& ins : sdk::parse_kernel_ir(shallow.ir).instructions)
    if (ins.op == TG_OP_WGMMA) BOOST_TEST(!sdk::wgmma_swizzled(ins.arg0));
  BOOST_TEST(run_error(matmul(256, 160, 512, dtypes::float16), shallow) < 2e-3);
}

BOOST_AUTO_TEST_CASE(tcwg_matmul_matches_a_double_reference) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(256, 96, 128, dt);
    const Lowered l = lower(mm, hopper());
    BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts) {
      BOOST_TEST(l.kernel.opts.find("[TCWG(2,128), LOCAL(0,2), STAGE(2,2)]") != std::string::npos);
      BOOST_TEST(ir_minor(l.ir) == TG_IR_VERSION_MINOR_WGMMA);
      BOOST_TEST(l.kernel.local[0] == 128u);
      BOOST_TEST(run_error(mm, l) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      const auto src = sdk::render::render(sdk::render::Dialect::cuda, sdk::parse_kernel_ir(l.ir));
      auto count = [&](const std::string& what) {
        size_t c = 0;
        for (size_t at = src.text.find(what); at != std::string::npos; at = src.text.find(what, at + 1)) ++c;
        return c;
      };
      BOOST_TEST(count("wgmma.mma_async") == 2u, src.text); // 32 k per tile: 2 ops, one run
      BOOST_TEST(count("wgmma.fence.sync.aligned") == 1u);
      BOOST_TEST(count("wgmma.commit_group") == 1u);
#ifdef TG_HAVE_NVRTC
      const auto out = tgtest::nvrtc_compile(src.text, "tcwg.cu", "sm_90a");
      BOOST_TEST(out.ok, out.log << "\n" << src.text);
      BOOST_TEST(out.ptx.find("wgmma.mma_async.sync.aligned.m64n128k16") != std::string::npos);
#endif
    }
  }
  { // n a multiple of 256: 2x2 warpgroups (a 128x256 block)
    const Matmul wide = matmul(128, 64, 256, dtypes::bfloat16);
    const Lowered l = lower(wide, hopper());
    BOOST_TEST(l.kernel.opts.find("[TCWG(2,128), LOCAL(0,2), LOCAL(1,2), STAGE(2,2)]") != std::string::npos,
               l.kernel.opts);
    BOOST_TEST(run_error(wide, l) < 1e-2);
  }
  const Matmul mm = matmul(128, 64, 128, dtypes::float16);
  const KernelInfo info = analyze_kernel(mm.item);
  LowerOptions o = hopper();
  o.opts = std::vector<Opt>{{OptOp::TCWG, info.matmul->k, 128}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("must be staged") != std::string::npos;
  });
  o = gpu(true);
  o.opts = std::vector<Opt>{{OptOp::TCWG, info.matmul->k, 128}, {OptOp::STAGE, info.matmul->k, 2}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, o), OptError, [](const OptError& e) {
    return std::string(e.what()).find("no warpgroup matrix unit") != std::string::npos;
  });
  // explicit lists: N 64 with one warpgroup, N 128 with an upcast of m (two chains per thread)
  for (const auto& list :
       {std::vector<Opt>{{OptOp::TCWG, info.matmul->k, 64}, {OptOp::STAGE, info.matmul->k, 4}},
        std::vector<Opt>{{OptOp::TCWG, info.matmul->k, 128},
                         {OptOp::UPCAST, info.matmul->m, 2},
                         {OptOp::STAGE, info.matmul->k, 1 + 1}}}) {
    o = hopper();
    o.opts = list;
    const Lowered l = lower(mm, o);
    BOOST_TEST_CONTEXT(l.kernel.opts) { BOOST_TEST(run_error(mm, l) < 2e-3); }
  }
  BOOST_TEST(to_string(parse_opts("[TCWG(2,128)]")) == "[TCWG(2,128)]");
}
