#include "test_kernels.hpp"

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace tgtest {
namespace {

// The build's source tree, or TG_TEST_SOURCE_DIR where the tests run from a copy of the build on
// another machine (the GPU machine gets the working tree at another path).
std::filesystem::path test_source_dir() {
  const char* dir = std::getenv("TG_TEST_SOURCE_DIR");
  std::filesystem::path root = dir && *dir ? dir : TG_SOURCE_DIR;
  if (!std::filesystem::is_directory(root / "tests/data/corpus"))
    throw std::runtime_error("no golden corpus under " + (root / "tests/data/corpus").string() +
                             " (set TG_TEST_SOURCE_DIR to a checkout of the sources)");
  return root;
}

using tg::conform::CorpusBuffer;
using tg::conform::CorpusKernel;
using tg::sdk::KernelBuilder;

CorpusKernel finish(KernelBuilder& b, std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                    std::vector<CorpusBuffer> buffers, std::vector<tg_scalar_arg> scalars = {}) {
  CorpusKernel k;
  k.name = b.ir().name;
  k.origin = "hand-built (renderer tests)";
  k.ir = b.serialize();
  k.global = global;
  k.local = local;
  k.buffers = std::move(buffers);
  k.scalars = std::move(scalars);
  return k;
}

// out[g*4 .. g*4+3] = sum over j of in[(g*8 + j)*4 ..] as one 4-lane accumulator, lanes swapped
// pairwise through GEP/VECTORIZE on the way out.
CorpusKernel vector_accumulator() {
  KernelBuilder b("render_vector_acc");
  auto out = b.global(0, TG_DTYPE_FLOAT32);
  auto in = b.global(1, TG_DTYPE_FLOAT32);
  auto g = b.group_id(0);
  auto zero = b.f32(0.0f);
  auto acc = b.acc(b.vectorize(std::vector<KernelBuilder::Ref>{zero, zero, zero, zero}));
  auto j = b.range(b.i32(0), b.i32(8));
  auto row = b.add(b.mul(g, b.i32(8)), j);
  auto v = b.load(b.index(in, b.mul(row, b.i32(4))), 4);
  auto half = b.f32(0.5f);
  b.assign(acc, b.add(acc, b.mul(v, b.vectorize(std::vector<KernelBuilder::Ref>{half, half, half, half}))));
  b.end_range(j);
  auto swapped = b.vectorize(
      std::vector<KernelBuilder::Ref>{b.gep(acc, 1), b.gep(acc, 0), b.gep(acc, 3), b.gep(acc, 2)});
  b.store(b.index(out, b.mul(g, b.i32(4))), swapped);
  return finish(b, {3, 1, 1}, {1, 1, 1}, {{TG_DTYPE_FLOAT32, 12}, {TG_DTYPE_FLOAT32, 96}});
}

// Bit reinterpretations and conversions between every width, one output per pair.
CorpusKernel bitcasts() {
  KernelBuilder b("render_bitcasts");
  auto o_u32 = b.global(0, TG_DTYPE_UINT32);
  auto o_f32 = b.global(1, TG_DTYPE_FLOAT32);
  auto o_i16 = b.global(2, TG_DTYPE_INT16);
  auto o_bf = b.global(3, TG_DTYPE_BFLOAT16);
  auto o_f64 = b.global(4, TG_DTYPE_FLOAT64);
  auto o_i8 = b.global(5, TG_DTYPE_INT8);
  auto i_f32 = b.global(6, TG_DTYPE_FLOAT32);
  auto i_i32 = b.global(7, TG_DTYPE_INT32);
  auto i_f16 = b.global(8, TG_DTYPE_FLOAT16);
  auto i_u16 = b.global(9, TG_DTYPE_UINT16);
  auto i_i64 = b.global(10, TG_DTYPE_INT64);
  auto i_bool = b.global(11, TG_DTYPE_BOOL);
  auto x = b.local_id(0);
  b.store(b.index(o_u32, x), b.bitcast(b.load(b.index(i_f32, x)), TG_DTYPE_UINT32));
  b.store(b.index(o_f32, x),
          b.bitcast(b.alu(TG_OP_AND, b.load(b.index(i_i32, x)), b.i32(0x3fffffff)), TG_DTYPE_FLOAT32));
  b.store(b.index(o_i16, x), b.bitcast(b.load(b.index(i_f16, x)), TG_DTYPE_INT16));
  b.store(b.index(o_bf, x),
          b.bitcast(b.alu(TG_OP_AND, b.load(b.index(i_u16, x)), b.const_int(TG_DTYPE_UINT16, 0x3fff)),
                    TG_DTYPE_BFLOAT16));
  b.store(b.index(o_f64, x), b.bitcast(b.alu(TG_OP_AND, b.load(b.index(i_i64, x)),
                                             b.const_int(TG_DTYPE_INT64, 0x3fffffffffffffffLL)),
                                       TG_DTYPE_FLOAT64));
  auto flag = b.load(b.index(i_bool, x));
  auto as_i8 = b.bitcast(flag, TG_DTYPE_INT8);
  auto f_cast = b.cast(b.load(b.index(i_f32, x)), TG_DTYPE_INT8); // truncates toward zero
  b.store(b.index(o_i8, x), b.add(b.add(as_i8, b.cast(flag, TG_DTYPE_INT8)), f_cast));
  return finish(b, {1, 1, 1}, {16, 1, 1},
                {{TG_DTYPE_UINT32, 16},
                 {TG_DTYPE_FLOAT32, 16},
                 {TG_DTYPE_INT16, 16},
                 {TG_DTYPE_BFLOAT16, 16},
                 {TG_DTYPE_FLOAT64, 16},
                 {TG_DTYPE_INT8, 16},
                 {TG_DTYPE_FLOAT32, 16},
                 {TG_DTYPE_INT32, 16},
                 {TG_DTYPE_FLOAT16, 16},
                 {TG_DTYPE_UINT16, 16},
                 {TG_DTYPE_INT64, 16},
                 {TG_DTYPE_BOOL, 16}});
}

// Wrapping and C-rule integer ops on int32, int8, uint16 and int64 (divisors forced odd, so never 0).
CorpusKernel integer_edges() {
  KernelBuilder b("render_integer_edges");
  auto out32 = b.global(0, TG_DTYPE_INT32);
  auto out8 = b.global(1, TG_DTYPE_INT8);
  auto out16 = b.global(2, TG_DTYPE_UINT16);
  auto out64 = b.global(3, TG_DTYPE_INT64);
  auto a = b.global(4, TG_DTYPE_INT32);
  auto c = b.global(5, TG_DTYPE_INT32);
  auto g = b.group_id(0);
  auto x = b.load(b.index(a, g));
  auto y = b.alu(TG_OP_OR, b.load(b.index(c, g)), b.i32(1));
  auto r = b.add(b.alu(TG_OP_IDIV, x, y), b.mul(b.alu(TG_OP_MOD, x, y), b.i32(1000)));
  r = b.alu(TG_OP_XOR, r, b.alu(TG_OP_SHL, x, y));                  // shift amount masked to 31
  r = b.add(r, b.alu(TG_OP_SHR, b.alu(TG_OP_NEG, x), b.i32(3)));    // arithmetic shift
  r = b.alu(TG_OP_MULACC, r, b.i32(65599), b.alu(TG_OP_MAX, x, y)); // wraps
  b.store(b.index(out32, g), r);
  auto x8 = b.cast(x, TG_DTYPE_INT8), y8 = b.cast(y, TG_DTYPE_INT8);
  b.store(b.index(out8, g), b.add(b.mul(x8, y8), b.alu(TG_OP_MOD, x8, y8)));
  auto x16 = b.cast(x, TG_DTYPE_UINT16), y16 = b.cast(y, TG_DTYPE_UINT16);
  b.store(b.index(out16, g), b.add(b.mul(x16, y16), b.alu(TG_OP_SHR, x16, b.const_int(TG_DTYPE_UINT16, 17))));
  auto x64 = b.cast(x, TG_DTYPE_INT64);
  auto big = b.mul(b.mul(x64, x64), b.const_int(TG_DTYPE_INT64, 0x7fffffffffLL));
  b.store(b.index(out64, g), b.add(big, b.alu(TG_OP_IDIV, big, b.cast(y, TG_DTYPE_INT64))));
  return finish(b, {64, 1, 1}, {1, 1, 1},
                {{TG_DTYPE_INT32, 64},
                 {TG_DTYPE_INT8, 64},
                 {TG_DTYPE_UINT16, 64},
                 {TG_DTYPE_INT64, 64},
                 {TG_DTYPE_INT32, 64},
                 {TG_DTYPE_INT32, 64}});
}

// IF, gated loads with an alternative, NaN-propagating MAX, float64/float16 math, scalars of
// several dtypes, a 2-D local shape.
CorpusKernel control_and_scalars() {
  KernelBuilder b("render_control_scalars");
  auto out = b.global(0, TG_DTYPE_FLOAT32);
  auto out_h = b.global(1, TG_DTYPE_FLOAT16);
  auto out_d = b.global(2, TG_DTYPE_FLOAT64);
  auto in = b.global(3, TG_DTYPE_FLOAT32);
  auto n = b.var(0, TG_DTYPE_INT32);
  auto scale = b.var(1, TG_DTYPE_FLOAT16);
  auto flip = b.var(2, TG_DTYPE_BOOL);
  auto shift = b.var(3, TG_DTYPE_FLOAT64);
  auto gid = b.add(b.mul(b.group_id(0), b.i32(8)), b.add(b.mul(b.local_id(1), b.i32(4)), b.local_id(0)));
  auto inside = b.cmplt(gid, n);
  auto v = b.load_gated(b.index(in, gid), inside, b.f32(-1.0f));
  auto m = b.alu(TG_OP_MAX, v, b.f32(0.25f));
  auto chosen = b.alu(TG_OP_WHERE, flip, b.alu(TG_OP_NEG, m), m);
  b.store(b.index(out, gid), chosen);
  auto cond = b.alu(TG_OP_CMPNE, b.alu(TG_OP_MOD, gid, b.i32(3)), b.i32(0));
  auto iff = b.if_(cond);
  auto h = b.mul(b.cast(v, TG_DTYPE_FLOAT16), scale);
  h = b.alu(TG_OP_SQRT, b.alu(TG_OP_ADD, b.mul(h, h), b.const_float(TG_DTYPE_FLOAT16, 1.0)));
  b.store(b.index(out_h, gid), b.alu(TG_OP_EXP2, b.alu(TG_OP_RECIP, h)));
  auto d = b.add(b.cast(v, TG_DTYPE_FLOAT64), shift);
  b.store(b.index(out_d, gid),
          b.alu(TG_OP_TRUNC, b.alu(TG_OP_FDIV, b.mul(d, d), b.const_float(TG_DTYPE_FLOAT64, 3.0))));
  b.end_if(iff);
  tg_scalar_arg s0{TG_DTYPE_INT32, 0, {}}, s1{TG_DTYPE_FLOAT16, 0, {}}, s2{TG_DTYPE_BOOL, 0, {}},
      s3{TG_DTYPE_FLOAT64, 0, {}};
  s0.value.i = 29;
  s1.value.f = 1.5;
  s2.value.i = 1;
  s3.value.f = 0.125;
  return finish(
      b, {4, 1, 1}, {4, 2, 1},
      {{TG_DTYPE_FLOAT32, 32}, {TG_DTYPE_FLOAT16, 32}, {TG_DTYPE_FLOAT64, 32}, {TG_DTYPE_FLOAT32, 32}},
      {s0, s1, s2, s3});
}

} // namespace

// a[64,48] @ b[48,32] with its operands staged in local memory 8 reduce steps at a time (the
// codegen STAGE opt: copies, barriers, reads at computed local offsets) by 8x8 threads, each
// computing 2x4 outputs; built by the core, since the stored corpus is made with the heuristic.
// Its IR is read from a stored copy (tests/data/render/staged_matmul.tgir; TG_UPDATE_GOLDEN=1 or a
// missing file writes it), so the golden texts move only when it is regenerated, as with the
// corpus: lowering it under ASan gave a different (equally valid) instruction order.
CorpusKernel staged_matmul() {
  auto input = [](tg::Dims shape) {
    tg::UOpRef buffer = tg::make_buffer("CPU", tg::dtypes::float32, tg::dims_prod(shape));
    tg::UOpRef view =
        tg::UOp::make(tg::Ops::RESHAPE, tg::dtypes::float32, {buffer}, std::vector<int64_t>(shape));
    return tg::Tensor(view, std::move(shape), "CPU");
  };
  auto items = input({64, 48}).matmul(input({48, 32})).schedule();
  const tg::ScheduleItem& item = items.back();
  tg::LowerOptions o = tg::lower_options(tg::conform::reference_properties(), true);
  o.opts = std::vector<tg::Opt>{{tg::OptOp::LOCAL, 1, 8},
                                {tg::OptOp::LOCAL, 0, 8},
                                {tg::OptOp::UPCAST, 0, 2},
                                {tg::OptOp::UPCAST, 1, 4},
                                {tg::OptOp::STAGE, 2, 8}};
  tg::LoweredKernel lowered = tg::lower_kernel(item, o);
  CorpusKernel k;
  k.name = "render_staged_matmul";
  k.origin = "codegen with opts " + lowered.opts + " (renderer tests)";
  const std::filesystem::path stored = test_source_dir() / "tests/data/render/staged_matmul.tgir";
  const char* update = std::getenv("TG_UPDATE_GOLDEN");
  if ((update && std::string(update) == "1") || !std::filesystem::exists(stored)) {
    k.ir = tg::linearize(lowered.sink, lowered.name).ir;
    std::ofstream(stored, std::ios::binary)
        .write(reinterpret_cast<const char*>(k.ir.data()), std::streamsize(k.ir.size()));
  } else {
    std::ifstream in(stored, std::ios::binary);
    for (auto it = std::istreambuf_iterator<char>(in); it != std::istreambuf_iterator<char>(); ++it)
      k.ir.push_back(std::byte(static_cast<unsigned char>(*it)));
  }
  k.global = lowered.global;
  k.local = lowered.local;
  for (const auto& b : item.buffers)
    k.buffers.push_back({TG_DTYPE_FLOAT32, uint64_t(tg::buffer_arg(b).size())});
  k.features = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER;
  return k;
}

std::vector<CorpusKernel> render_test_kernels() {
  std::vector<CorpusKernel> all = tg::conform::read_corpus(test_source_dir() / "tests/data/corpus");
  all.push_back(vector_accumulator());
  all.push_back(bitcasts());
  all.push_back(integer_edges());
  all.push_back(control_and_scalars());
  all.push_back(staged_matmul());
  return all;
}

} // namespace tgtest
