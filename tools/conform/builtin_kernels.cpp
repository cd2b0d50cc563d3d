// The built-in kernel corpus, written with tg::sdk::KernelBuilder. It covers what the golden
// corpus of the core's own codegen covers, plus what codegen rarely emits (every cast, bool
// math, nested IFs, local memory with a barrier).
#include "tools/conform/kernel_case.hpp"
#include "tools/conform/wgmma_kernel.hpp"

#include <tg/sdk/kernel_ir.hpp>

namespace tg::conform {
namespace {

using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

tg_scalar_arg scalar(tg_dtype dtype, int64_t i, double f = 0) {
  tg_scalar_arg s{};
  s.dtype = dtype;
  if (tg::sdk::dtype_is_float(dtype))
    s.value.f = f;
  else
    s.value.i = i;
  return s;
}

KernelCase make(KernelBuilder& k, std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                std::vector<KernelBuffer> buffers, std::vector<tg_scalar_arg> scalars = {}) {
  return {k.ir().name, k.serialize(), global, local, std::move(buffers), std::move(scalars)};
}

// i = group_id(0) * 64 + local_id(0), the usual flat index of a 1-D launch with groups of 64.
Ref flat_index(KernelBuilder& k) {
  Ref gid = k.group_id(0);
  Ref scaled = k.mul(gid, k.i32(64));
  Ref lid = k.local_id(0);
  return k.add(scaled, lid);
}

// out = a op-mix b for i < n (1000 elements, 16 groups of 64: the last 24 threads do nothing).
KernelCase elementwise(tg_dtype dt) {
  KernelBuilder k(std::string("elementwise_") + tg::sdk::dtype_name(dt));
  Ref out = k.global(0, dt), a_buf = k.global(1, dt), b_buf = k.global(2, dt);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref i = flat_index(k);
  Ref inside = k.if_(k.cmplt(i, n));
  Ref a = k.load(k.index(a_buf, i));
  Ref b = k.load(k.index(b_buf, i));
  Ref lt = k.cmplt(a, b);
  Ref r;
  if (dt == TG_DTYPE_BOOL) {
    Ref x = k.alu(TG_OP_AND, a, b);
    Ref y = k.alu(TG_OP_XOR, a, b);
    Ref z = k.alu(TG_OP_OR, k.mul(a, b), k.alu(TG_OP_CMPNE, a, b));
    r = k.add(k.alu(TG_OP_WHERE, lt, x, y), z);
  } else if (tg::sdk::dtype_is_float(dt)) {
    Ref quotient = k.alu(TG_OP_FDIV, a, b);
    Ref fused = k.alu(TG_OP_MULACC, a, b, quotient);
    Ref root = k.alu(TG_OP_SQRT, k.alu(TG_OP_MAX, a, k.alu(TG_OP_NEG, a)));
    Ref power = k.alu(TG_OP_EXP2, k.alu(TG_OP_RECIP, a));
    Ref logarithm = k.alu(TG_OP_LOG2, root);
    Ref wave = k.alu(TG_OP_SIN, a);
    Ref whole = k.alu(TG_OP_TRUNC, k.mul(a, k.const_float(dt, 3.0)));
    Ref picked = k.alu(TG_OP_WHERE, lt, k.add(fused, root), k.alu(TG_OP_SUB, power, logarithm));
    Ref same = k.alu(TG_OP_WHERE, k.alu(TG_OP_CMPEQ, a, b), a, k.mul(wave, whole));
    r = k.add(picked, same);
  } else {
    Ref divisor = k.add(k.alu(TG_OP_AND, b, k.const_int(dt, 7)), k.const_int(dt, 1)); // 1..8
    Ref fused = k.alu(TG_OP_MULACC, a, b, k.alu(TG_OP_IDIV, a, divisor));
    Ref other = k.alu(TG_OP_SUB, k.alu(TG_OP_MAX, a, b), k.alu(TG_OP_MOD, a, divisor));
    Ref picked = k.alu(TG_OP_WHERE, lt, fused, other);
    Ref shifted =
        k.alu(TG_OP_XOR, k.alu(TG_OP_SHR, a, k.const_int(dt, 1)), k.alu(TG_OP_SHL, b, k.const_int(dt, 2)));
    Ref ne = k.cast(k.alu(TG_OP_CMPNE, a, b), dt);
    r = k.add(k.alu(TG_OP_OR, picked, ne), k.alu(TG_OP_NEG, shifted));
  }
  k.store(k.index(out, i), r);
  k.end_if(inside);
  return make(k, {16, 1, 1}, {64, 1, 1}, {{dt, 1000}, {dt, 1000}, {dt, 1000}},
              {scalar(TG_DTYPE_INT32, 1000)});
}

// Casts between dt and float32 / int32 both ways, and a bitcast through an unsigned integer.
KernelCase casts(tg_dtype dt) {
  static const tg_dtype same_size_uint[] = {0,
                                            TG_DTYPE_UINT8,
                                            TG_DTYPE_UINT8,
                                            TG_DTYPE_UINT8,
                                            TG_DTYPE_UINT16,
                                            TG_DTYPE_UINT16,
                                            TG_DTYPE_UINT32,
                                            TG_DTYPE_UINT32,
                                            TG_DTYPE_UINT64,
                                            TG_DTYPE_UINT64,
                                            TG_DTYPE_UINT16,
                                            TG_DTYPE_UINT16,
                                            TG_DTYPE_UINT32,
                                            TG_DTYPE_UINT64};
  KernelBuilder k(std::string("casts_") + tg::sdk::dtype_name(dt));
  Ref to_f32 = k.global(0, TG_DTYPE_FLOAT32), to_i32 = k.global(1, TG_DTYPE_INT32),
      from_f32 = k.global(2, dt), from_i32 = k.global(3, dt), bits = k.global(4, dt);
  Ref a_buf = k.global(5, dt), f_buf = k.global(6, TG_DTYPE_FLOAT32), i_buf = k.global(7, TG_DTYPE_INT32);
  Ref i = k.group_id(0);
  Ref a = k.load(k.index(a_buf, i));
  Ref f = k.load(k.index(f_buf, i));
  Ref n = k.load(k.index(i_buf, i));
  k.store(k.index(to_f32, i), k.cast(a, TG_DTYPE_FLOAT32));
  k.store(k.index(to_i32, i), k.cast(a, TG_DTYPE_INT32));
  Ref magnitude = k.alu(TG_OP_MAX, f, k.alu(TG_OP_NEG, f)); // no negative float -> unsigned casts
  k.store(k.index(from_f32, i), k.cast(tg::sdk::dtype_is_unsigned_int(dt) ? magnitude : f, dt));
  k.store(k.index(from_i32, i), k.cast(n, dt));
  tg_dtype u = same_size_uint[dt];
  Ref raw = k.bitcast(a, u);
  Ref flipped = dt == TG_DTYPE_BOOL ? raw : k.alu(TG_OP_XOR, raw, k.const_int(u, 1));
  k.store(k.index(bits, i), k.bitcast(flipped, dt));
  const uint64_t e = 301;
  return make(k, {uint32_t(e), 1, 1}, {1, 1, 1},
              {{TG_DTYPE_FLOAT32, e},
               {TG_DTYPE_INT32, e},
               {dt, e},
               {dt, e},
               {dt, e},
               {dt, e},
               {TG_DTYPE_FLOAT32, e},
               {TG_DTYPE_INT32, e}});
}

// float16 -> float32 -> float64 -> bfloat16 -> float16 and back, rounding at each step.
KernelCase float_widths() {
  KernelBuilder k("casts_float_widths");
  Ref out64 = k.global(0, TG_DTYPE_FLOAT64), out16 = k.global(1, TG_DTYPE_FLOAT16),
      outb = k.global(2, TG_DTYPE_BFLOAT16);
  Ref in64 = k.global(3, TG_DTYPE_FLOAT64);
  Ref i = k.group_id(0);
  Ref d = k.mul(k.load(k.index(in64, i)), k.const_float(TG_DTYPE_FLOAT64, 1.0 / 3.0));
  Ref h = k.cast(d, TG_DTYPE_FLOAT16);
  Ref b = k.cast(k.cast(h, TG_DTYPE_FLOAT32), TG_DTYPE_BFLOAT16);
  k.store(k.index(out64, i), k.add(k.cast(b, TG_DTYPE_FLOAT64), k.cast(h, TG_DTYPE_FLOAT64)));
  k.store(k.index(out16, i), k.cast(d, TG_DTYPE_FLOAT16));
  k.store(k.index(outb, i), k.cast(d, TG_DTYPE_BFLOAT16));
  return make(
      k, {257, 1, 1}, {1, 1, 1},
      {{TG_DTYPE_FLOAT64, 257}, {TG_DTYPE_FLOAT16, 257}, {TG_DTYPE_BFLOAT16, 257}, {TG_DTYPE_FLOAT64, 257}});
}

// Gated loads and a gated store past n: the gate keeps every access inside the buffers.
KernelCase gated() {
  KernelBuilder k("gated_load_store");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref i = flat_index(k);
  Ref ok = k.cmplt(i, n);
  Ref v = k.load_gated(k.index(a, i), ok, k.f32(-1.0f));
  k.store_gated(k.index(out, i), k.mul(v, k.f32(2.0f)), ok);
  return make(k, {16, 1, 1}, {64, 1, 1}, {{TG_DTYPE_FLOAT32, 997}, {TG_DTYPE_FLOAT32, 997}},
              {scalar(TG_DTYPE_INT32, 997)});
}

// out[r, c] = a[r, c] + b[c] * s: a row broadcast over a 2-D grid of groups.
KernelCase broadcast() {
  const int32_t R = 37, C = 53;
  KernelBuilder k("broadcast_row");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32),
      b = k.global(2, TG_DTYPE_FLOAT32);
  Ref s = k.var(0, TG_DTYPE_FLOAT32);
  Ref c = k.group_id(0);
  Ref r = k.group_id(1);
  Ref idx = k.add(k.mul(r, k.i32(C)), c);
  Ref x = k.load(k.index(a, idx));
  Ref y = k.load(k.index(b, c));
  k.store(k.index(out, idx), k.alu(TG_OP_MULACC, y, s, x));
  return make(k, {uint32_t(C), uint32_t(R), 1}, {1, 1, 1},
              {{TG_DTYPE_FLOAT32, R * C}, {TG_DTYPE_FLOAT32, R * C}, {TG_DTYPE_FLOAT32, C}},
              {scalar(TG_DTYPE_FLOAT32, 0, 0.75)});
}

// out[r] = reduce over a row: sum (float32) or max (int32), DEFINE_ACC + RANGE + ASSIGN.
KernelCase reduce_rows(tg_dtype dt) {
  const int32_t R = 37, C = 129;
  const bool sum = dt == TG_DTYPE_FLOAT32;
  KernelBuilder k(sum ? "reduce_sum_rows_float32" : "reduce_max_rows_int32");
  Ref out = k.global(0, dt), a = k.global(1, dt);
  Ref row = k.group_id(0);
  Ref acc = k.acc(sum ? k.f32(0.0f) : k.i32(-1000));
  Ref c = k.range(k.i32(0), k.i32(C));
  Ref v = k.load(k.index(a, k.add(k.mul(row, k.i32(C)), c)));
  k.assign(acc, k.alu(sum ? TG_OP_ADD : TG_OP_MAX, acc, v));
  k.end_range(c);
  k.store(k.index(out, row), acc);
  return make(k, {uint32_t(R), 1, 1}, {1, 1, 1}, {{dt, R}, {dt, R * C}});
}

// C[M x N] = A[M x K] @ B[K x N] with MULACC; K is a scalar argument.
KernelCase matmul(tg_dtype dt) {
  const int32_t M = 33, K = 45, N = 29;
  KernelBuilder k(std::string("matmul_") + tg::sdk::dtype_name(dt));
  Ref c = k.global(0, dt), a = k.global(1, dt), b = k.global(2, dt);
  Ref kk = k.var(0, TG_DTYPE_INT32);
  Ref col = k.group_id(0);
  Ref row = k.group_id(1);
  Ref zero = tg::sdk::dtype_is_float(dt) ? k.const_float(dt, 0.0) : k.const_int(dt, 0);
  Ref acc = k.acc(zero);
  Ref r = k.range(k.i32(0), kk);
  Ref av = k.load(k.index(a, k.add(k.mul(row, kk), r)));
  Ref bv = k.load(k.index(b, k.add(k.mul(r, k.i32(N)), col)));
  k.assign(acc, k.alu(TG_OP_MULACC, av, bv, acc));
  k.end_range(r);
  k.store(k.index(c, k.add(k.mul(row, k.i32(N)), col)), acc);
  return make(k, {uint32_t(N), uint32_t(M), 1}, {1, 1, 1}, {{dt, M * N}, {dt, M * K}, {dt, K * N}},
              {scalar(TG_DTYPE_INT32, K)});
}

// A 3x3 convolution over a 12x14 image, nested RANGE loops, groups of 4 output columns.
KernelCase conv2d() {
  const int32_t H = 12, W = 14, OH = H - 2, OW = W - 2;
  KernelBuilder k("conv2d_3x3");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), in = k.global(1, TG_DTYPE_FLOAT32),
      w = k.global(2, TG_DTYPE_FLOAT32);
  Ref x = k.add(k.mul(k.group_id(0), k.i32(4)), k.local_id(0));
  Ref y = k.group_id(1);
  Ref acc = k.acc(k.f32(0.0f));
  Ref ky = k.range(k.i32(0), k.i32(3));
  Ref kx = k.range(k.i32(0), k.i32(3));
  Ref pixel = k.add(k.mul(k.add(y, ky), k.i32(W)), k.add(x, kx));
  Ref v = k.load(k.index(in, pixel));
  Ref weight = k.load(k.index(w, k.add(k.mul(ky, k.i32(3)), kx)));
  k.assign(acc, k.alu(TG_OP_MULACC, v, weight, acc));
  k.end_range(kx);
  k.end_range(ky);
  k.store(k.index(out, k.add(k.mul(y, k.i32(OW)), x)), acc);
  return make(k, {OW / 4, OH, 1}, {4, 1, 1},
              {{TG_DTYPE_FLOAT32, OH * OW}, {TG_DTYPE_FLOAT32, H * W}, {TG_DTYPE_FLOAT32, 9}});
}

// An odd grid in three dimensions: every id lands in the output exactly once.
KernelCase odd_grid() {
  KernelBuilder k("odd_grid_3d");
  Ref out = k.global(0, TG_DTYPE_INT32);
  Ref x = k.add(k.mul(k.group_id(0), k.i32(3)), k.local_id(0)); // 7 groups of 3: 21
  Ref y = k.group_id(1);                                        // 3
  Ref z = k.add(k.mul(k.group_id(2), k.i32(2)), k.local_id(2)); // 5 groups of 2: 10
  Ref idx = k.add(k.mul(k.add(k.mul(z, k.i32(3)), y), k.i32(21)), x);
  Ref value = k.add(k.add(k.mul(x, k.i32(10000)), k.mul(y, k.i32(100))), z);
  k.store(k.index(out, idx), value);
  return make(k, {7, 3, 5}, {3, 1, 2}, {{TG_DTYPE_INT32, 21 * 3 * 10}});
}

// Buffers of no elements: an IF with n = 0 keeps every thread away from them.
KernelCase zero_size() {
  KernelBuilder k("zero_size_buffers");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref i = flat_index(k);
  Ref inside = k.if_(k.cmplt(i, n));
  k.store(k.index(out, i), k.load(k.index(a, i)));
  k.end_if(inside);
  return make(k, {1, 1, 1}, {64, 1, 1}, {{TG_DTYPE_FLOAT32, 0}, {TG_DTYPE_FLOAT32, 0}},
              {scalar(TG_DTYPE_INT32, 0)});
}

// An empty grid (global 0 on an axis): the kernel would write everywhere, but nothing runs.
KernelCase empty_grid() {
  KernelBuilder k("empty_grid");
  Ref out = k.global(0, TG_DTYPE_INT32);
  k.store(k.index(out, k.group_id(0)), k.i32(7));
  return make(k, {4, 0, 1}, {1, 1, 1}, {{TG_DTYPE_INT32, 4}});
}

// Float vectors of 4: vector loads and stores, lane-wise math, VECTORIZE and GEP.
KernelCase vector4() {
  KernelBuilder k("vector4_float32");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), sums = k.global(1, TG_DTYPE_FLOAT32),
      a = k.global(2, TG_DTYPE_FLOAT32);
  Ref base = k.mul(k.group_id(0), k.i32(4));
  Ref v = k.load(k.index(a, base), 4);
  Ref one = k.f32(1.0f);
  Ref half = k.f32(0.5f);
  std::vector<Ref> lanes = {one, half, one, half};
  Ref sq = k.alu(TG_OP_MULACC, v, v, k.vectorize(lanes));
  k.store(k.index(out, base), sq);
  Ref total = k.add(k.add(k.gep(sq, 0), k.gep(sq, 1)), k.add(k.gep(sq, 2), k.gep(sq, 3)));
  k.store(k.index(sums, k.group_id(0)), total);
  return make(k, {101, 1, 1}, {1, 1, 1},
              {{TG_DTYPE_FLOAT32, 404}, {TG_DTYPE_FLOAT32, 101}, {TG_DTYPE_FLOAT32, 404}});
}

// IR 1.4, a load gated per lane: out[8g + k] = a[8g + k - 1] where that element exists, else -1.
// Lane 0 of group 0 and the last lanes of the last group point outside a: their gates are false
// and they read no memory. Runs where the device's lane_gates attribute is "load".
KernelCase lane_gated_load() {
  const int32_t groups = 13, n = groups * 8 - 3;
  KernelBuilder k("lane_gated_load");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32);
  Ref base = k.mul(k.group_id(0), k.i32(8));
  Ref first = k.add(base, k.i32(-1));
  std::vector<Ref> gates, alts;
  for (int32_t lane = 0; lane < 8; ++lane) {
    Ref idx = k.add(first, k.i32(lane));
    gates.push_back(k.alu(TG_OP_AND, k.cmplt(k.i32(-1), idx), k.cmplt(idx, k.i32(n))));
    alts.push_back(k.f32(-1.0f));
  }
  Ref v = k.load_gated(k.index(a, first), k.vectorize(gates), k.vectorize(alts));
  k.store(k.index(out, base), v);
  return make(k, {uint32_t(groups), 1, 1}, {1, 1, 1},
              {{TG_DTYPE_FLOAT32, groups * 8}, {TG_DTYPE_FLOAT32, n}});
}

// A vector accumulator: out4[g] = sum over r of a4[r, g], DEFINE_ACC and ASSIGN of 4 lanes.
KernelCase vector_accumulator() {
  const int32_t rows = 19, groups = 23;
  KernelBuilder k("vector_accumulator_int32");
  Ref out = k.global(0, TG_DTYPE_INT32), a = k.global(1, TG_DTYPE_INT32);
  Ref col = k.mul(k.group_id(0), k.i32(4));
  Ref zero = k.i32(0);
  std::vector<Ref> zeros = {zero, zero, zero, zero};
  Ref acc = k.acc(k.vectorize(zeros));
  Ref r = k.range(k.i32(0), k.i32(rows));
  Ref v = k.load(k.index(a, k.add(k.mul(r, k.i32(groups * 4)), col)), 4);
  k.assign(acc, k.add(acc, v));
  k.end_range(r);
  k.store(k.index(out, col), acc);
  return make(k, {uint32_t(groups), 1, 1}, {1, 1, 1},
              {{TG_DTYPE_INT32, groups * 4}, {TG_DTYPE_INT32, rows * groups * 4}});
}

// Local memory and a barrier: each group of 64 stages its inputs, then thread 0 sums them and
// every thread writes the mirrored element.
KernelCase locals_barrier() {
  KernelBuilder k("locals_barrier_sum");
  Ref sums = k.global(0, TG_DTYPE_FLOAT32), mirrored = k.global(1, TG_DTYPE_FLOAT32),
      a = k.global(2, TG_DTYPE_FLOAT32);
  Ref shared = k.local(64, TG_DTYPE_FLOAT32);
  Ref lid = k.local_id(0);
  Ref i = flat_index(k);
  k.store(k.index(shared, lid), k.load(k.index(a, i)));
  k.barrier();
  k.store(k.index(mirrored, i), k.load(k.index(shared, k.alu(TG_OP_SUB, k.i32(63), lid))));
  Ref first = k.if_(k.alu(TG_OP_CMPEQ, lid, k.i32(0)));
  Ref acc = k.acc(k.f32(0.0f));
  Ref r = k.range(k.i32(0), k.i32(64));
  k.assign(acc, k.add(acc, k.load(k.index(shared, r))));
  k.end_range(r);
  k.store(k.index(sums, k.group_id(0)), acc);
  k.end_if(first);
  return make(k, {9, 1, 1}, {64, 1, 1},
              {{TG_DTYPE_FLOAT32, 9}, {TG_DTYPE_FLOAT32, 576}, {TG_DTYPE_FLOAT32, 576}});
}

// BARRIER's arg0 (docs/abi.md 5.3.3): a tile loop copying two tiles ahead into four sets of local
// memory, each step's barrier letting the latest copy group stay in flight. Each of 64 threads
// copies 16 bytes of a 256-float tile (a 16-byte LOAD of a read-only buffer stored whole: on CUDA a
// cp.async, so the barriers render as commit/wait_group 1) and then reads the mirrored 4 floats
// of the step's set, weighted by the step: a tile read before its copy completed, or a set
// overwritten before its step read it, changes the sums. A last BARRIER (arg0 0) waits for all.
KernelCase pipelined_copies() {
  constexpr int32_t tiles = 7, groups = 3;
  KernelBuilder k("pipelined_copies_float32");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32, 16);
  Ref sets = k.local(4 * 256, TG_DTYPE_FLOAT32);
  Ref lid = k.local_id(0);
  Ref mine = k.mul(lid, k.i32(4));
  Ref first_tile = k.mul(k.group_id(0), k.i32(tiles * 256));
  auto copy = [&](Ref tile, Ref set) { // global tile -> local set, 16 bytes per thread
    Ref from = k.add(k.add(first_tile, k.mul(tile, k.i32(256))), mine);
    k.store(k.index(sets, k.add(k.mul(set, k.i32(256)), mine)), k.load(k.index(a, from), 4, 16), 16);
  };
  copy(k.i32(0), k.i32(0));
  k.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, 1, 0, {}}); // arg0 1: one copy group in flight
  copy(k.i32(1), k.i32(1));
  Ref acc = k.acc(k.f32(0.0f));
  Ref r = k.range(k.i32(0), k.i32(tiles));
  k.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, 1, 0, {}}); // arg0 1: one copy group in flight
  Ref ahead = k.add(r, k.i32(2));
  copy(k.alu(TG_OP_MOD, ahead, k.i32(tiles)), k.alu(TG_OP_MOD, ahead, k.i32(4)));
  Ref mirrored = k.add(k.mul(k.alu(TG_OP_MOD, r, k.i32(4)), k.i32(256)), k.alu(TG_OP_SUB, k.i32(252), mine));
  Ref v = k.load(k.index(sets, mirrored), 4, 16);
  Ref lanes = k.add(k.add(k.gep(v, 0), k.gep(v, 1)), k.add(k.gep(v, 2), k.gep(v, 3)));
  Ref weight = k.cast(k.add(r, k.i32(1)), TG_DTYPE_FLOAT32);
  k.assign(acc, k.add(acc, k.mul(lanes, weight)));
  k.end_range(r);
  k.barrier();
  k.store(k.index(out, k.add(k.mul(k.group_id(0), k.i32(64)), lid)), acc);
  return make(k, {uint32_t(groups), 1, 1}, {64, 1, 1},
              {{TG_DTYPE_FLOAT32, groups * 64}, {TG_DTYPE_FLOAT32, uint64_t(groups * tiles * 256)}});
}

// 16 buffers: out = the sum of 15 inputs.
KernelCase many_buffers() {
  KernelBuilder k("many_buffers_16");
  Ref out = k.global(0, TG_DTYPE_FLOAT32);
  std::vector<Ref> inputs;
  for (uint32_t b = 1; b < 16; ++b) inputs.push_back(k.global(b, TG_DTYPE_FLOAT32));
  Ref i = k.group_id(0);
  Ref sum = k.load(k.index(inputs[0], i));
  for (size_t b = 1; b < inputs.size(); ++b) sum = k.add(sum, k.load(k.index(inputs[b], i)));
  k.store(k.index(out, i), sum);
  std::vector<KernelBuffer> buffers(16, KernelBuffer{TG_DTYPE_FLOAT32, 129});
  return make(k, {129, 1, 1}, {1, 1, 1}, buffers);
}

// Scalar arguments of several dtypes combined into one output.
KernelCase scalars_mixed(bool wide) {
  KernelBuilder k(wide ? "scalars_wide" : "scalars_basic");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(a, i));
  std::vector<tg_scalar_arg> scalars;
  Ref r;
  if (!wide) {
    Ref f = k.var(0, TG_DTYPE_FLOAT32);
    Ref n = k.var(1, TG_DTYPE_INT32);
    Ref flag = k.var(2, TG_DTYPE_BOOL);
    Ref scaled = k.alu(TG_OP_MULACC, x, f, k.cast(n, TG_DTYPE_FLOAT32));
    r = k.alu(TG_OP_WHERE, flag, scaled, x);
    scalars = {scalar(TG_DTYPE_FLOAT32, 0, 1.5), scalar(TG_DTYPE_INT32, -7), scalar(TG_DTYPE_BOOL, 1)};
  } else {
    Ref big = k.var(0, TG_DTYPE_INT64);
    Ref small = k.var(1, TG_DTYPE_UINT8);
    Ref d = k.var(2, TG_DTYPE_FLOAT64);
    Ref h = k.var(3, TG_DTYPE_FLOAT16);
    Ref offset = k.cast(k.alu(TG_OP_MOD, big, k.const_int(TG_DTYPE_INT64, 1000)), TG_DTYPE_FLOAT32);
    Ref factor = k.cast(k.mul(d, k.cast(small, TG_DTYPE_FLOAT64)), TG_DTYPE_FLOAT32);
    r = k.add(k.alu(TG_OP_MULACC, x, factor, offset), k.cast(h, TG_DTYPE_FLOAT32));
    scalars = {scalar(TG_DTYPE_INT64, (int64_t(1) << 40) + 123), scalar(TG_DTYPE_UINT8, 200),
               scalar(TG_DTYPE_FLOAT64, 0, 0.001), scalar(TG_DTYPE_FLOAT16, 0, 0.333)};
  }
  k.store(k.index(out, i), r);
  return make(k, {77, 1, 1}, {1, 1, 1}, {{TG_DTYPE_FLOAT32, 77}, {TG_DTYPE_FLOAT32, 77}}, scalars);
}

// 64-bit index math: the flat index is computed in int64, as the core does for huge tensors.
KernelCase int64_index() {
  KernelBuilder k("int64_index");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, TG_DTYPE_FLOAT32);
  Ref gid = k.cast(k.group_id(0), TG_DTYPE_INT64);
  Ref lid = k.cast(k.local_id(0), TG_DTYPE_INT64);
  Ref i = k.add(k.mul(gid, k.const_int(TG_DTYPE_INT64, 32)), lid);
  Ref src = k.alu(TG_OP_SUB, k.const_int(TG_DTYPE_INT64, 319), i); // reversed
  k.store(k.index(out, i), k.load(k.index(a, src)));
  return make(k, {10, 1, 1}, {32, 1, 1}, {{TG_DTYPE_FLOAT32, 320}, {TG_DTYPE_FLOAT32, 320}});
}

// Nested IFs whose bodies compute values, and a loop inside one of them.
KernelCase nested_ifs() {
  KernelBuilder k("nested_ifs");
  Ref out = k.global(0, TG_DTYPE_INT32), a = k.global(1, TG_DTYPE_INT32);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(a, i));
  Ref pi = k.index(out, i);
  k.store(pi, k.i32(0));
  Ref outer = k.if_(k.cmplt(k.i32(0), x));
  Ref twice = k.add(x, x);
  Ref inner = k.if_(k.cmplt(twice, k.i32(100)));
  Ref acc = k.acc(k.i32(0));
  Ref r = k.range(k.i32(0), x);
  k.assign(acc, k.add(acc, r));
  k.end_range(r);
  k.store(pi, acc);
  k.end_if(inner);
  k.end_if(outer);
  return make(k, {200, 1, 1}, {1, 1, 1}, {{TG_DTYPE_INT32, 200}, {TG_DTYPE_INT32, 200}});
}

} // namespace

std::vector<KernelCase> builtin_kernels() {
  std::vector<KernelCase> kernels;
  for (tg_dtype dt = TG_DTYPE_BOOL; dt < TG_DTYPE_COUNT; ++dt) kernels.push_back(elementwise(dt));
  for (tg_dtype dt = TG_DTYPE_BOOL; dt < TG_DTYPE_COUNT; ++dt) kernels.push_back(casts(dt));
  kernels.push_back(float_widths());
  kernels.push_back(gated());
  kernels.push_back(broadcast());
  kernels.push_back(reduce_rows(TG_DTYPE_FLOAT32));
  kernels.push_back(reduce_rows(TG_DTYPE_INT32));
  kernels.push_back(matmul(TG_DTYPE_FLOAT32));
  kernels.push_back(matmul(TG_DTYPE_INT32));
  kernels.push_back(matmul(TG_DTYPE_FLOAT16));
  kernels.push_back(conv2d());
  kernels.push_back(odd_grid());
  kernels.push_back(zero_size());
  kernels.push_back(empty_grid());
  kernels.push_back(vector4());
  kernels.push_back(vector_accumulator());
  kernels.push_back(locals_barrier());
  kernels.push_back(pipelined_copies());
  kernels.push_back(many_buffers());
  kernels.push_back(scalars_mixed(false));
  kernels.push_back(scalars_mixed(true));
  kernels.push_back(int64_index());
  kernels.push_back(nested_ifs());
  kernels.push_back(lane_gated_load());
  // IR 1.2 WGMMA: 2 warpgroups, 3 k steps; B k-major, and n-major (kWgmmaBNMajor, "_bn"); both
  // tiles 128-byte swizzled (kWgmmaSwizzle128, "_swz": 128 k, two atom columns, 8 k steps)
  for (bool swz : {false, true})
    for (bool bn : {false, true})
      for (tg_dtype dt : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16}) {
        WgmmaMatmul w = wgmma_matmul_kernel(dt, 128, swz ? 128 : 48, 2, bn, swz);
        KernelCase k{
            std::string("wgmma_matmul_") + tg::sdk::dtype_name(dt) + (bn ? "_bn" : "") + (swz ? "_swz" : ""),
            std::move(w.ir),
            {1, 1, 1},
            {uint32_t(w.threads), 1, 1},
            {{TG_DTYPE_FLOAT32, uint64_t(w.m * w.n)}, {dt, uint64_t(w.m * w.k)}, {dt, uint64_t(w.k * w.n)}},
            {}};
        kernels.push_back(std::move(k));
      }
  return kernels;
}

} // namespace tg::conform
