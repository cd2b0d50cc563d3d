// The reference interpreter against hand-computed values: C integer semantics, 16-bit float
// rounding, gates, loops, local memory and barriers, vectors, bounds errors, and MMA on declared
// matrix units.
#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/matrix_unit.hpp>

#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using tg::sdk::interpret;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

template <class T> std::span<std::byte> bytes(std::vector<T>& v) {
  return std::as_writable_bytes(std::span(v));
}

tg::sdk::KernelIR ir_of(KernelBuilder& k) { return tg::sdk::parse_kernel_ir(k.serialize()); }

void run(KernelBuilder& k, std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
         std::vector<std::span<std::byte>> buffers, std::vector<tg_scalar_arg> scalars = {}) {
  interpret(ir_of(k), global, local, buffers, scalars);
}

tg_scalar_arg scalar_i32(int32_t v) {
  tg_scalar_arg s{};
  s.dtype = TG_DTYPE_INT32;
  s.value.i = v;
  return s;
}

// out[i] = op(a[i], b[i]) for one binary op; one work group per element.
template <class T>
std::vector<T> binary_op(tg_dtype dt, tg_op op, std::vector<T> a, std::vector<T> b, tg_dtype out_dt = 0) {
  KernelBuilder k("binary");
  Ref pa = k.global(0, dt), pb = k.global(1, dt), pc = k.global(2, out_dt ? out_dt : dt);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(pa, i));
  Ref y = k.load(k.index(pb, i));
  Ref r = k.alu(op, x, y);
  k.store(k.index(pc, i), r);
  std::vector<T> c(a.size());
  run(k, {uint32_t(a.size()), 1, 1}, {1, 1, 1}, {bytes(a), bytes(b), bytes(c)});
  return c;
}

} // namespace

BOOST_AUTO_TEST_SUITE(interpreter)

BOOST_AUTO_TEST_CASE(vector_add_with_if_bounds_check) {
  KernelBuilder k("vadd");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), b = k.global(1, TG_DTYPE_FLOAT32), c = k.global(2, TG_DTYPE_FLOAT32);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref gid = k.group_id(0);
  Ref lid = k.local_id(0);
  Ref i = k.add(k.mul(gid, k.i32(4)), lid);
  Ref in_bounds = k.if_(k.cmplt(i, n));
  Ref x = k.load(k.index(a, i));
  Ref y = k.load(k.index(b, i));
  Ref pc = k.index(c, i);
  k.store(pc, k.add(x, y));
  k.end_if(in_bounds);
  std::vector<float> va = {1, 2, 3, 4, 5, 6}, vb = {10, 20, 30, 40, 50, 60}, vc(7, -1.0f);
  // 8 threads, 6 elements: the IF keeps the last two inside; c's 7th element stays untouched.
  run(k, {2, 1, 1}, {4, 1, 1}, {bytes(va), bytes(vb), bytes(vc)}, {scalar_i32(6)});
  std::vector<float> want = {11, 22, 33, 44, 55, 66, -1};
  BOOST_CHECK_EQUAL_COLLECTIONS(vc.begin(), vc.end(), want.begin(), want.end());
}

BOOST_AUTO_TEST_CASE(integer_division_is_c_division) {
  auto q = binary_op<int32_t>(TG_DTYPE_INT32, TG_OP_IDIV, {-7, 7, -7, 7}, {2, -2, -2, 2});
  auto r = binary_op<int32_t>(TG_DTYPE_INT32, TG_OP_MOD, {-7, 7, -7, 7}, {2, -2, -2, 2});
  std::vector<int32_t> wq = {-3, -3, 3, 3}, wr = {-1, 1, -1, 1};
  BOOST_CHECK_EQUAL_COLLECTIONS(q.begin(), q.end(), wq.begin(), wq.end());
  BOOST_CHECK_EQUAL_COLLECTIONS(r.begin(), r.end(), wr.begin(), wr.end());
  auto u = binary_op<uint8_t>(TG_DTYPE_UINT8, TG_OP_IDIV, {200, 7}, {3, 0}); // x / 0: unspecified, 0 here
  BOOST_CHECK_EQUAL(int(u[0]), 66);
  BOOST_CHECK_EQUAL(int(u[1]), 0);
}

BOOST_AUTO_TEST_CASE(integers_wrap_and_shift_by_signedness) {
  auto s = binary_op<int8_t>(TG_DTYPE_INT8, TG_OP_ADD, {100, -128}, {100, -1});
  BOOST_CHECK_EQUAL(int(s[0]), -56);
  BOOST_CHECK_EQUAL(int(s[1]), 127);
  auto m = binary_op<uint16_t>(TG_DTYPE_UINT16, TG_OP_MUL, {300}, {300}); // 90000 mod 65536
  BOOST_CHECK_EQUAL(int(m[0]), 24464);
  auto sr = binary_op<int16_t>(TG_DTYPE_INT16, TG_OP_SHR, {-16, 16}, {2, 2});
  BOOST_CHECK_EQUAL(sr[0], -4); // arithmetic
  BOOST_CHECK_EQUAL(sr[1], 4);
  auto ur = binary_op<uint32_t>(TG_DTYPE_UINT32, TG_OP_SHR, {0x80000000u}, {31});
  BOOST_CHECK_EQUAL(ur[0], 1u); // logical
  auto lt = binary_op<int64_t>(TG_DTYPE_INT64, TG_OP_CMPLT, {-1, 5}, {0, 5}, TG_DTYPE_BOOL);
  // bool outputs are single bytes
  BOOST_CHECK_EQUAL(int(reinterpret_cast<const uint8_t*>(lt.data())[0]), 1);
  BOOST_CHECK_EQUAL(int(reinterpret_cast<const uint8_t*>(lt.data())[1]), 0);
  auto mx = binary_op<uint8_t>(TG_DTYPE_UINT8, TG_OP_MAX, {200, 3}, {100, 4}); // unsigned compare
  BOOST_CHECK_EQUAL(int(mx[0]), 200);
  BOOST_CHECK_EQUAL(int(mx[1]), 4);
}

BOOST_AUTO_TEST_CASE(casts_truncate_toward_zero_and_nan_is_true) {
  KernelBuilder k("casts");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), ints = k.global(1, TG_DTYPE_INT32),
      flags = k.global(2, TG_DTYPE_BOOL), small = k.global(3, TG_DTYPE_UINT8);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(in, i));
  k.store(k.index(ints, i), k.cast(x, TG_DTYPE_INT32));
  k.store(k.index(flags, i), k.cast(x, TG_DTYPE_BOOL));
  k.store(k.index(small, i), k.cast(k.cast(x, TG_DTYPE_INT32), TG_DTYPE_UINT8));
  std::vector<float> v = {-3.75f, 3.75f, -0.0f, NAN, 300.5f};
  std::vector<int32_t> vi(5);
  std::vector<uint8_t> vb(5), vu(5);
  run(k, {4, 1, 1}, {1, 1, 1}, {bytes(v), bytes(vi), bytes(vb), bytes(vu)}); // NaN -> int not checked
  BOOST_CHECK_EQUAL(vi[0], -3);
  BOOST_CHECK_EQUAL(vi[1], 3);
  BOOST_CHECK_EQUAL(vi[2], 0);
  BOOST_CHECK_EQUAL(int(vb[0]), 1);
  BOOST_CHECK_EQUAL(int(vb[2]), 0);   // -0 is false
  BOOST_CHECK_EQUAL(int(vb[3]), 1);   // NaN != 0
  BOOST_CHECK_EQUAL(int(vu[0]), 253); // -3 wraps to uint8
  KernelBuilder w("wide");
  Ref win = w.global(0, TG_DTYPE_FLOAT32), wout = w.global(1, TG_DTYPE_UINT8);
  w.store(w.index(wout, w.i32(0)),
          w.cast(w.cast(w.load(w.index(win, w.i32(0))), TG_DTYPE_INT32), TG_DTYPE_UINT8));
  std::vector<float> big = {300.5f};
  std::vector<uint8_t> out(1);
  run(w, {1, 1, 1}, {1, 1, 1}, {bytes(big), bytes(out)});
  BOOST_CHECK_EQUAL(int(out[0]), 300 - 256);
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_round_to_nearest_even) {
  using tg::sdk::float_to_half_bits;
  BOOST_CHECK_EQUAL(float_to_half_bits(1.0), 0x3c00);
  BOOST_CHECK_EQUAL(float_to_half_bits(1.0 / 3.0), 0x3555);
  BOOST_CHECK_EQUAL(float_to_half_bits(65504.0), 0x7bff);
  BOOST_CHECK_EQUAL(float_to_half_bits(65520.0), 0x7c00);
  BOOST_CHECK_EQUAL(float_to_half_bits(-std::ldexp(1.0, -24)), 0x8001);
  BOOST_CHECK_EQUAL(float_to_half_bits(1.0 + std::ldexp(1.0, -11)), 0x3c00); // tie -> even
  BOOST_CHECK_EQUAL(float_to_half_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  BOOST_CHECK_EQUAL(tg::sdk::float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie -> even
  BOOST_CHECK_EQUAL(tg::sdk::float_to_bfloat16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  BOOST_CHECK(std::isnan(tg::sdk::bfloat16_bits_to_double(tg::sdk::float_to_bfloat16_bits(NAN))));

  // f16 arithmetic rounds after every op: 2048 + 1 = 2048 (spacing 2), then + 1 again = 2048.
  KernelBuilder k("half_sum");
  Ref out = k.global(0, TG_DTYPE_FLOAT16);
  Ref one = k.const_float(TG_DTYPE_FLOAT16, 1.0);
  Ref s = k.add(k.add(k.const_float(TG_DTYPE_FLOAT16, 2048.0), one), one);
  k.store(k.index(out, k.i32(0)), s);
  Ref third = k.alu(TG_OP_FDIV, one, k.const_float(TG_DTYPE_FLOAT16, 3.0));
  k.store(k.index(out, k.i32(1)), third);
  std::vector<uint16_t> h(2);
  run(k, {1, 1, 1}, {1, 1, 1}, {bytes(h)});
  BOOST_CHECK_EQUAL(h[0], float_to_half_bits(2048.0));
  BOOST_CHECK_EQUAL(h[1], 0x3555);

  // bfloat16: 256 + 1 = 256 (8 significant bits), computed in float and rounded.
  KernelBuilder b("bf16_sum");
  Ref bout = b.global(0, TG_DTYPE_BFLOAT16);
  b.store(b.index(bout, b.i32(0)),
          b.add(b.const_float(TG_DTYPE_BFLOAT16, 256.0), b.const_float(TG_DTYPE_BFLOAT16, 1.0)));
  std::vector<uint16_t> bb(1);
  run(b, {1, 1, 1}, {1, 1, 1}, {bytes(bb)});
  BOOST_CHECK_EQUAL(tg::sdk::bfloat16_bits_to_double(bb[0]), 256.0);
}

BOOST_AUTO_TEST_CASE(gated_loads_read_no_memory) {
  KernelBuilder k("gated");
  Ref in = k.global(0, TG_DTYPE_INT32), out = k.global(1, TG_DTYPE_INT32);
  Ref i = k.group_id(0);
  Ref ok = k.cmplt(i, k.i32(2));
  Ref v = k.load_gated(k.index(in, i), ok, k.i32(-5)); // index 2, 3 are past `in`: gate is false
  k.store(k.index(out, i), v);
  std::vector<int32_t> vin = {7, 8}, vout(4);
  run(k, {4, 1, 1}, {1, 1, 1}, {bytes(vin), bytes(vout)});
  std::vector<int32_t> want = {7, 8, -5, -5};
  BOOST_CHECK_EQUAL_COLLECTIONS(vout.begin(), vout.end(), want.begin(), want.end());
}

BOOST_AUTO_TEST_CASE(out_of_bounds_access_names_kernel_instruction_and_index) {
  KernelBuilder k("overrun");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  k.store(k.index(out, i), k.load(k.index(in, i)));
  std::vector<float> vin = {1, 2, 3}, vout(4);
  try {
    run(k, {4, 1, 1}, {1, 1, 1}, {bytes(vin), bytes(vout)});
    BOOST_FAIL("expected an InterpreterError");
  } catch (const tg::sdk::InterpreterError& e) {
    std::string what = e.what();
    BOOST_TEST_MESSAGE(what);
    BOOST_CHECK(what.find("overrun") != std::string::npos);
    BOOST_CHECK(what.find("LOAD") != std::string::npos);
    BOOST_CHECK(what.find("element index 3") != std::string::npos);
    BOOST_CHECK(what.find("buffer 0 (3 float32 elements)") != std::string::npos);
    BOOST_CHECK_EQUAL(e.instruction(), 4);
  }
  // A vector store that runs one element past the end is caught too.
  KernelBuilder v("vector_overrun");
  Ref p = v.global(0, TG_DTYPE_INT32);
  Ref one = v.i32(1);
  std::vector<Ref> lanes = {one, one, one, one};
  v.store(v.index(p, v.i32(1)), v.vectorize(lanes));
  std::vector<int32_t> four(4);
  BOOST_CHECK_THROW(run(v, {1, 1, 1}, {1, 1, 1}, {bytes(four)}), tg::sdk::InterpreterError);
  // Negative indices as well.
  KernelBuilder n("negative");
  Ref q = n.global(0, TG_DTYPE_INT32);
  n.store(n.index(q, n.i32(-1)), n.i32(0));
  BOOST_CHECK_THROW(run(n, {1, 1, 1}, {1, 1, 1}, {bytes(four)}), tg::sdk::InterpreterError);
}

BOOST_AUTO_TEST_CASE(accumulator_loop_and_mulacc) {
  // out[r] = sum_c in[r * 3 + c] * 2 + 1 per term, via MULACC into an accumulator.
  KernelBuilder k("row_mulacc");
  Ref in = k.global(0, TG_DTYPE_INT32), out = k.global(1, TG_DTYPE_INT32);
  Ref row = k.group_id(0);
  Ref acc = k.acc(k.i32(100));
  Ref c = k.range(k.i32(0), k.i32(3));
  Ref v = k.load(k.index(in, k.add(k.mul(row, k.i32(3)), c)));
  k.assign(acc, k.alu(TG_OP_MULACC, v, k.i32(2), acc));
  k.end_range(c);
  k.store(k.index(out, row), acc);
  std::vector<int32_t> vin = {1, 2, 3, 10, 20, 30}, vout(2);
  run(k, {2, 1, 1}, {1, 1, 1}, {bytes(vin), bytes(vout)});
  BOOST_CHECK_EQUAL(vout[0], 100 + 12);
  BOOST_CHECK_EQUAL(vout[1], 100 + 120);
  // An empty range leaves the accumulator at its initial value.
  KernelBuilder e("empty_range");
  Ref o = e.global(0, TG_DTYPE_FLOAT32);
  Ref a = e.acc(e.f32(4.5f));
  Ref r = e.range(e.i32(3), e.i32(3));
  e.assign(a, e.add(a, e.f32(1.0f)));
  e.end_range(r);
  e.store(e.index(o, e.i32(0)), a);
  std::vector<float> fo(1);
  run(e, {1, 1, 1}, {1, 1, 1}, {bytes(fo)});
  BOOST_CHECK_EQUAL(fo[0], 4.5f);
}

BOOST_AUTO_TEST_CASE(local_memory_and_barrier_reverse_a_group) {
  // shared[lid] = in[g * 4 + lid]; BARRIER; out[g * 4 + lid] = shared[3 - lid].
  KernelBuilder k("reverse");
  Ref in = k.global(0, TG_DTYPE_INT32), out = k.global(1, TG_DTYPE_INT32);
  Ref shared = k.local(4, TG_DTYPE_INT32);
  Ref lid = k.local_id(0);
  Ref i = k.add(k.mul(k.group_id(0), k.i32(4)), lid);
  k.store(k.index(shared, lid), k.load(k.index(in, i)));
  k.barrier();
  Ref mirrored = k.alu(TG_OP_SUB, k.i32(3), lid);
  k.store(k.index(out, i), k.load(k.index(shared, mirrored)));
  std::vector<int32_t> vin = {1, 2, 3, 4, 5, 6, 7, 8}, vout(8);
  run(k, {2, 1, 1}, {4, 1, 1}, {bytes(vin), bytes(vout)});
  std::vector<int32_t> want = {4, 3, 2, 1, 8, 7, 6, 5};
  BOOST_CHECK_EQUAL_COLLECTIONS(vout.begin(), vout.end(), want.begin(), want.end());
}

// BARRIER's arg0 (async copy groups in flight, docs/abi.md 5.3.3) round trips; the interpreter's
// copies are synchronous, so a barrier that lets one group stay in flight still orders them:
// two tiles copied ahead into four sets, each read mirrored after its step's barrier(1).
BOOST_AUTO_TEST_CASE(barrier_with_copies_in_flight_still_orders_the_interpreter) {
  KernelBuilder k("ahead");
  Ref in = k.global(0, TG_DTYPE_INT32), out = k.global(1, TG_DTYPE_INT32);
  Ref sets = k.local(16, TG_DTYPE_INT32);
  Ref lid = k.local_id(0);
  auto copy = [&](Ref tile, Ref set) {
    k.store(k.index(sets, k.add(k.mul(set, k.i32(4)), lid)),
            k.load(k.index(in, k.add(k.mul(tile, k.i32(4)), lid))));
  };
  copy(k.i32(0), k.i32(0));
  k.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, 1, 0, {}}); // arg0 1: one copy group in flight
  copy(k.i32(1), k.i32(1));
  Ref acc = k.acc(k.i32(0));
  Ref r = k.range(k.i32(0), k.i32(5));
  k.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, 1, 0, {}}); // arg0 1: one copy group in flight
  Ref ahead = k.add(r, k.i32(2));
  copy(k.alu(TG_OP_MOD, ahead, k.i32(5)), k.alu(TG_OP_MOD, ahead, k.i32(4)));
  Ref v = k.load(
      k.index(sets, k.add(k.mul(k.alu(TG_OP_MOD, r, k.i32(4)), k.i32(4)), k.alu(TG_OP_SUB, k.i32(3), lid))));
  k.assign(acc, k.add(acc, k.mul(v, k.add(r, k.i32(1)))));
  k.end_range(r);
  k.barrier();
  k.store(k.index(out, lid), acc);
  const tg::sdk::KernelIR ir = ir_of(k);
  std::vector<int64_t> args;
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_BARRIER) args.push_back(ins.arg0);
  const std::vector<int64_t> want_args = {1, 1, 0};
  BOOST_CHECK_EQUAL_COLLECTIONS(args.begin(), args.end(), want_args.begin(), want_args.end());
  std::vector<int32_t> vin(20), vout(4);
  for (int32_t j = 0; j < 20; ++j) vin[size_t(j)] = j * j;
  std::vector<std::span<std::byte>> buffers = {bytes(vin), bytes(vout)};
  interpret(ir, {1, 1, 1}, {4, 1, 1}, buffers, {});
  for (int32_t l = 0; l < 4; ++l) { // out[l] = sum over steps t of (t + 1) * in[4 t + 3 - l], by hand
    int32_t want = 0;
    for (int32_t t = 0; t < 5; ++t) want += (t + 1) * (4 * t + 3 - l) * (4 * t + 3 - l);
    BOOST_TEST(vout[size_t(l)] == want, "lane " << l);
  }
}

BOOST_AUTO_TEST_CASE(barrier_reached_by_part_of_a_group_is_an_error) {
  KernelBuilder k("divergent");
  Ref out = k.global(0, TG_DTYPE_INT32);
  Ref lid = k.local_id(0);
  Ref branch = k.if_(k.cmplt(lid, k.i32(2)));
  k.barrier();
  k.end_if(branch);
  k.store(k.index(out, lid), lid);
  std::vector<int32_t> vout(4);
  BOOST_CHECK_THROW(run(k, {1, 1, 1}, {4, 1, 1}, {bytes(vout)}), tg::sdk::InterpreterError);
}

BOOST_AUTO_TEST_CASE(vectors_gep_and_vectorize) {
  KernelBuilder k("vec4");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32),
      s = k.global(2, TG_DTYPE_FLOAT32);
  Ref base = k.mul(k.group_id(0), k.i32(4));
  Ref v = k.load(k.index(a, base), 4);
  Ref one = k.f32(1.0f);
  std::vector<Ref> ones = {one, one, one, one};
  Ref sq = k.add(k.mul(v, v), k.vectorize(ones));
  k.store(k.index(out, base), sq);
  Ref total = k.add(k.add(k.gep(sq, 0), k.gep(sq, 1)), k.add(k.gep(sq, 2), k.gep(sq, 3)));
  k.store(k.index(s, k.group_id(0)), total);
  std::vector<float> va = {1, 2, 3, 4, -1, -2, 0, 5}, vo(8), vs(2);
  run(k, {2, 1, 1}, {1, 1, 1}, {bytes(va), bytes(vo), bytes(vs)});
  std::vector<float> want = {2, 5, 10, 17, 2, 5, 1, 26};
  BOOST_CHECK_EQUAL_COLLECTIONS(vo.begin(), vo.end(), want.begin(), want.end());
  BOOST_CHECK_EQUAL(vs[0], 34.0f);
  BOOST_CHECK_EQUAL(vs[1], 34.0f);
}

BOOST_AUTO_TEST_CASE(special_ids_in_three_dimensions) {
  KernelBuilder k("ids");
  Ref out = k.global(0, TG_DTYPE_INT32);
  Ref x = k.add(k.mul(k.group_id(0), k.i32(2)), k.local_id(0));
  Ref y = k.add(k.mul(k.group_id(1), k.i32(1)), k.local_id(1));
  Ref z = k.add(k.group_id(2), k.local_id(2));
  Ref idx = k.add(k.mul(k.add(k.mul(z, k.i32(3)), y), k.i32(4)), x);
  k.store(k.index(out, idx), k.add(k.add(k.mul(x, k.i32(100)), k.mul(y, k.i32(10))), z));
  std::vector<int32_t> vout(4 * 3 * 2, -1);
  run(k, {2, 3, 2}, {2, 1, 1}, {bytes(vout)});
  for (int zz = 0; zz < 2; ++zz)
    for (int yy = 0; yy < 3; ++yy)
      for (int xx = 0; xx < 4; ++xx)
        BOOST_CHECK_EQUAL(vout[size_t((zz * 3 + yy) * 4 + xx)], xx * 100 + yy * 10 + zz);
}

BOOST_AUTO_TEST_CASE(scalars_bitcast_and_argument_checks) {
  KernelBuilder k("scalars");
  Ref out = k.global(0, TG_DTYPE_UINT32);
  Ref f = k.var(0, TG_DTYPE_FLOAT32);
  Ref u = k.var(1, TG_DTYPE_UINT8);
  k.store(k.index(out, k.i32(0)), k.bitcast(f, TG_DTYPE_UINT32));
  k.store(k.index(out, k.i32(1)), k.cast(u, TG_DTYPE_UINT32));
  tg_scalar_arg sf{}, su{};
  sf.dtype = TG_DTYPE_FLOAT32;
  sf.value.f = 1.0;
  su.dtype = TG_DTYPE_UINT8;
  su.value.u = 0x1ff; // truncated to the dtype
  std::vector<uint32_t> vout(2);
  run(k, {1, 1, 1}, {1, 1, 1}, {bytes(vout)}, {sf, su});
  BOOST_CHECK_EQUAL(vout[0], 0x3f800000u);
  BOOST_CHECK_EQUAL(vout[1], 0xffu);
  BOOST_CHECK_THROW(run(k, {1, 1, 1}, {1, 1, 1}, {bytes(vout)}, {sf}), std::invalid_argument);
  BOOST_CHECK_THROW(run(k, {1, 1, 1}, {1, 1, 1}, {bytes(vout)}, {su, sf}), std::invalid_argument);
  BOOST_CHECK_THROW(run(k, {1, 1, 1}, {1, 1, 1}, {}, {sf, su}), std::invalid_argument);
  // An empty grid runs nothing.
  std::vector<uint32_t> untouched = {7, 7};
  run(k, {0, 1, 1}, {1, 1, 1}, {bytes(untouched)}, {sf, su});
  BOOST_CHECK_EQUAL(untouched[0], 7u);
}

BOOST_AUTO_TEST_CASE(float_math_and_nan_semantics) {
  auto mx = binary_op<float>(TG_DTYPE_FLOAT32, TG_OP_MAX, {NAN, 1.0f, 2.0f}, {1.0f, NAN, -3.0f});
  BOOST_CHECK(std::isnan(mx[0]));
  BOOST_CHECK(std::isnan(mx[1]));
  BOOST_CHECK_EQUAL(mx[2], 2.0f);
  auto ne = binary_op<double>(TG_DTYPE_FLOAT64, TG_OP_CMPNE, {NAN, 1.0}, {NAN, 1.0}, TG_DTYPE_BOOL);
  BOOST_CHECK_EQUAL(int(reinterpret_cast<const uint8_t*>(ne.data())[0]), 1);
  BOOST_CHECK_EQUAL(int(reinterpret_cast<const uint8_t*>(ne.data())[1]), 0);
  auto d = binary_op<float>(TG_DTYPE_FLOAT32, TG_OP_FDIV, {1.0f, -1.0f}, {0.0f, 0.0f});
  BOOST_CHECK(std::isinf(d[0]) && d[0] > 0);
  BOOST_CHECK(std::isinf(d[1]) && d[1] < 0);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------
// MMA on a declared matrix unit (ABI 1.4): the interpreter against a naive matmul
// ------------------------------------------------------------------------------------------

namespace {

using tg::sdk::matrix_element;
using tg::sdk::matrix_items;
using tg::sdk::matrix_lanes;

std::vector<std::byte> encode(tg_dtype dt, const std::vector<double>& values) {
  std::vector<std::byte> out(values.size() * tg::sdk::dtype_size(dt));
  for (size_t i = 0; i < values.size(); ++i) {
    std::byte* p = out.data() + i * tg::sdk::dtype_size(dt);
    if (dt == TG_DTYPE_FLOAT16) {
      const uint16_t h = tg::sdk::float_to_half_bits(values[i]);
      std::memcpy(p, &h, 2);
    } else if (dt == TG_DTYPE_FLOAT32) {
      const float f = float(values[i]);
      std::memcpy(p, &f, 4);
    } else { // integers: the low bytes of the two's complement value
      const int64_t v = int64_t(values[i]);
      std::memcpy(p, &v, tg::sdk::dtype_size(dt));
    }
  }
  return out;
}

double decode(tg_dtype dt, const std::byte* p) {
  if (dt == TG_DTYPE_FLOAT32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  int32_t v; // the tests' integer results are int32
  std::memcpy(&v, p, 4);
  return v;
}

// One MMA by one group of the unit's items in a work group of `local` items (the unit's count by
// default): item t loads its A, B and C elements at the flat indices in a table built from the
// unit's layouts (`table_edit` may change it first), runs MMA `unit_index` and stores D the same way.
// Returns D (m x n, row-major) as doubles.
std::vector<double> mma_once(const tg_matrix_unit& u, const std::vector<double>& a,
                             const std::vector<double>& b, const std::vector<double>& c,
                             int64_t unit_index = 0, uint32_t local = 0,
                             const std::function<void(std::vector<int32_t>&)>& table_edit = {}) {
  const uint32_t items = matrix_items(u);
  const uint32_t la = matrix_lanes(u.a), lb = matrix_lanes(u.b), lc = matrix_lanes(u.c);
  const uint32_t per_item = la + lb + lc;
  std::vector<int32_t> table;
  for (uint32_t t = 0; t < items; ++t) {
    for (uint32_t e = 0; e < la; ++e) {
      auto p = matrix_element(u.a, t, e);
      table.push_back(int32_t(p.row * int(u.k) + p.col));
    }
    for (uint32_t e = 0; e < lb; ++e) {
      auto p = matrix_element(u.b, t, e);
      table.push_back(int32_t(p.row * int(u.n) + p.col));
    }
    for (uint32_t e = 0; e < lc; ++e) {
      auto p = matrix_element(u.c, t, e);
      table.push_back(int32_t(p.row * int(u.n) + p.col));
    }
  }
  if (table_edit) table_edit(table);
  KernelBuilder k("mma_once");
  Ref ga = k.global(0, u.a_dtype), gb = k.global(1, u.b_dtype), gc = k.global(2, u.c_dtype),
      gd = k.global(3, u.c_dtype), gt = k.global(4, TG_DTYPE_INT32);
  Ref t = k.alu(TG_OP_MOD, k.local_id(0), k.i32(int32_t(items)));
  Ref base = k.mul(t, k.i32(int32_t(per_item)));
  auto gather = [&](Ref buffer, uint32_t offset, uint32_t lanes) {
    std::vector<Ref> refs, at;
    for (uint32_t e = 0; e < lanes; ++e) {
      at.push_back(k.load(k.index(gt, k.add(base, k.i32(int32_t(offset + e))))));
      refs.push_back(k.load(k.index(buffer, at.back())));
    }
    return std::pair{k.vectorize(refs), at};
  };
  auto [va, ia] = gather(ga, 0, la);
  auto [vb, ib] = gather(gb, la, lb);
  auto [vc, ic] = gather(gc, la + lb, lc);
  Ref d = k.mma(va, vb, vc, unit_index);
  Ref first = k.cmplt(k.local_id(0), k.i32(int32_t(items))); // one group stores
  for (uint32_t e = 0; e < lc; ++e) k.store_gated(k.index(gd, ic[e]), k.gep(d, uint16_t(e)), first);
  std::vector<std::byte> ba = encode(u.a_dtype, a), bb = encode(u.b_dtype, b), bc = encode(u.c_dtype, c),
                         bd = encode(u.c_dtype, std::vector<double>(c.size(), -1));
  std::vector<std::span<std::byte>> buffers = {ba, bb, bc, bd, bytes(table)};
  const tg_matrix_unit units[] = {u};
  interpret(ir_of(k), {1, 1, 1}, {local ? local : items, 1, 1}, buffers, {}, units);
  std::vector<double> out(c.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = decode(u.c_dtype, bd.data() + i * tg::sdk::dtype_size(u.c_dtype));
  return out;
}

// D = A * B + C in double (exact for these inputs), row-major.
std::vector<double> naive(const tg_matrix_unit& u, const std::vector<double>& a, const std::vector<double>& b,
                          const std::vector<double>& c) {
  std::vector<double> d(c);
  for (uint32_t i = 0; i < u.m; ++i)
    for (uint32_t j = 0; j < u.n; ++j)
      for (uint32_t kk = 0; kk < u.k; ++kk) d[i * u.n + j] += a[i * u.k + kk] * b[kk * u.n + j];
  return d;
}

std::vector<double> pattern(size_t count, int modulus, int offset, double scale) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = double(int(i * 7 % size_t(modulus)) - offset) * scale;
  return v;
}

// Item t holds row t of A and of C (4 lanes each) and all 16 elements of B (replicated).
tg_matrix_unit rows_unit_4x4x4() {
  using tg::sdk::matrix_layout;
  const auto rows = matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {0, 2}});
  const auto all = matrix_layout({{0, 0}, {0, 0}}, {{0, 1}, {0, 2}, {1, 0}, {2, 0}});
  return tg::sdk::matrix_unit("rows.m4n4k4.f32", 4, 4, 4, 2, TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT32,
                              TG_DTYPE_FLOAT32, rows, all, rows);
}

// int8 x int8 + int32, m4n4k8 over 4 items; C is swizzled (element bit 1 moves both row and col).
tg_matrix_unit int8_unit() {
  using tg::sdk::matrix_layout;
  const auto a = matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {0, 2}, {0, 4}});
  const auto b = matrix_layout({{0, 1}, {0, 2}}, {{1, 0}, {2, 0}, {4, 0}});
  const auto c = matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {1, 2}});
  return tg::sdk::matrix_unit("swz.m4n4k8.s8", 4, 4, 8, 2, TG_DTYPE_INT8, TG_DTYPE_INT8, TG_DTYPE_INT32, a, b,
                              c);
}

std::string interpreter_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const tg::sdk::InterpreterError& e) {
    return e.what();
  }
  return "(no InterpreterError)";
}

} // namespace

BOOST_AUTO_TEST_SUITE(interpreter_mma)

BOOST_AUTO_TEST_CASE(m16n8k16_float16_description) {
  const tg_matrix_unit u = tg::sdk::wmma_m16n8k16_unit(TG_DTYPE_FLOAT16);
  BOOST_REQUIRE_EQUAL(tg::sdk::matrix_unit_error(u), "");
  const auto a = pattern(16 * 16, 13, 6, 0.5), b = pattern(16 * 8, 11, 5, 0.25),
             c = pattern(16 * 8, 9, 4, 1.0);
  const auto want = naive(u, a, b, c), got = mma_once(u, a, b, c);
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST(got[i] == want[i], "D(" << i / 8 << ", " << i % 8 << ")");
}

BOOST_AUTO_TEST_CASE(rows_4x4x4_float32_with_replicated_b) {
  const tg_matrix_unit u = rows_unit_4x4x4();
  BOOST_REQUIRE_EQUAL(tg::sdk::matrix_unit_error(u), "");
  const auto a = pattern(16, 9, 4, 1.0), b = pattern(16, 5, 2, 1.5), c = pattern(16, 7, 3, 1.0);
  const auto want = naive(u, a, b, c), got = mma_once(u, a, b, c);
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST(got[i] == want[i], "D(" << i / 4 << ", " << i % 4 << ")");
  // Two units side by side in one work group of 8 give the same (the second group stores nothing).
  const auto twice = mma_once(u, a, b, c, 0, 8);
  for (size_t i = 0; i < want.size(); ++i) BOOST_TEST(twice[i] == want[i]);
}

BOOST_AUTO_TEST_CASE(int8_times_int8_plus_int32_swizzled_c) {
  const tg_matrix_unit u = int8_unit();
  BOOST_REQUIRE_EQUAL(tg::sdk::matrix_unit_error(u), "");
  std::vector<double> a(32), b(32), c(16);
  for (size_t i = 0; i < 32; ++i) {
    a[i] = double(int(i * 37 % 256) - 128); // the whole int8 range, signs included
    b[i] = double(int(i * 53 % 255) - 127);
  }
  for (size_t i = 0; i < 16; ++i) c[i] = double(int(i) * 100003 - 700000);
  const auto want = naive(u, a, b, c), got = mma_once(u, a, b, c);
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST(got[i] == want[i], "D(" << i / 4 << ", " << i % 4 << ")");
}

BOOST_AUTO_TEST_CASE(unknown_unit_index_is_an_error) {
  const tg_matrix_unit u = rows_unit_4x4x4();
  const auto v = pattern(16, 5, 2, 1.0);
  const std::string what = interpreter_error([&] { mma_once(u, v, v, v, 1); });
  BOOST_TEST(what.find("matrix unit 1 is not declared") != std::string::npos, what);
}

BOOST_AUTO_TEST_CASE(differing_replicas_are_an_error) {
  const tg_matrix_unit u = rows_unit_4x4x4();
  const auto a = pattern(16, 5, 2, 1.0), b = pattern(16, 16, 0, 1.0); // B's elements all differ
  // Item 2 passes B(1, 1) (its element 5) from B(1, 2) instead: 4 + 2 lanes of A and per-item offset.
  const std::string what = interpreter_error(
      [&] { mma_once(u, a, b, a, 0, 0, [](std::vector<int32_t>& table) { table[2 * 24 + 4 + 5] = 6; }); });
  BOOST_TEST(what.find("\"rows.m4n4k4.f32\"") != std::string::npos, what);
  BOOST_TEST(what.find("B(1, 1) is passed as " + std::to_string(int(b[5])) +
                       " by work item 0 (element 5) and as " + std::to_string(int(b[6])) +
                       " by work item 2 (element 5)") != std::string::npos,
             what);
}

BOOST_AUTO_TEST_CASE(work_group_not_a_multiple_of_the_unit_is_an_error) {
  const tg_matrix_unit u = rows_unit_4x4x4();
  const auto v = pattern(16, 5, 2, 1.0);
  const std::string what = interpreter_error([&] { mma_once(u, v, v, v, 0, 6); });
  BOOST_TEST(what.find("needs whole groups of 4 work items: the work group has 6") != std::string::npos,
             what);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------------------------------
// MMA's local form (ABI 1.5): A and B read from local memory through the unit's atoms
// ------------------------------------------------------------------------------------------

namespace {

using tg::sdk::MatrixOperand;
using tg::sdk::MatrixStrides;

// m8n4k4 float16 over 4 items: A in swizzled 4 x 8 atoms (row bits XORed into the columns), B in
// swizzled 2 x 4 atoms, C rows t and t + 4 in item t (the conform fixture's unit).
tg_matrix_unit local_unit() {
  const auto c = tg::sdk::matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {0, 2}, {4, 0}});
  return tg::sdk::matrix_unit_local("lds.m8n4k4.f16", 8, 4, 4, 2, TG_DTYPE_FLOAT16, TG_DTYPE_FLOAT16,
                                    TG_DTYPE_FLOAT32,
                                    tg::sdk::matrix_atom({{0, 1}, {0, 2}, {0, 4}, {1, 2}, {2, 4}}),
                                    tg::sdk::matrix_atom({{0, 1}, {0, 2}, {1, 2}}), c);
}

struct LocalMma {
  MatrixStrides strides{32, 64, 8, 32}; // A: 2 atoms down, B: 2 atoms down (k)
  int64_t a_elements = 128, b_elements = 64;
  uint64_t a_start = 0, b_start = 0; // each item copies A(r, c) to A's element at the start's position
  int64_t flags = 0;
};

// One MMA of one group: the items copy A and B from global memory to the local elements
// matrix_local_index gives for `m.*_start`, a BARRIER, the MMA, D stored by C's layout. Returns D.
std::vector<double> local_mma_once(const tg_matrix_unit& u, const std::vector<double>& a,
                                   const std::vector<double>& b, const std::vector<double>& c,
                                   const LocalMma& m) {
  const uint32_t items = matrix_items(u), lc = matrix_lanes(u.c);
  std::vector<int32_t> table;
  for (uint32_t r = 0; r < u.m; ++r)
    for (uint32_t kk = 0; kk < u.k; ++kk)
      table.push_back(
          int32_t(tg::sdk::matrix_local_index(u, MatrixOperand::a, m.strides, m.a_start, int(r), int(kk))));
  for (uint32_t kk = 0; kk < u.k; ++kk)
    for (uint32_t n = 0; n < u.n; ++n)
      table.push_back(
          int32_t(tg::sdk::matrix_local_index(u, MatrixOperand::b, m.strides, m.b_start, int(kk), int(n))));
  for (uint32_t t = 0; t < items; ++t)
    for (uint32_t e = 0; e < lc; ++e) {
      const auto p = matrix_element(u.c, t, e);
      table.push_back(int32_t(p.row * int(u.n) + p.col));
    }
  KernelBuilder k("local_mma_once");
  Ref ga = k.global(0, u.a_dtype), gb = k.global(1, u.b_dtype), gc = k.global(2, u.c_dtype),
      gd = k.global(3, u.c_dtype), gt = k.global(4, TG_DTYPE_INT32);
  Ref la = k.local(m.a_elements, u.a_dtype), lb = k.local(m.b_elements, u.b_dtype);
  Ref t = k.local_id(0);
  auto copy = [&](Ref from, Ref to, uint32_t count, uint32_t table_at) {
    for (uint32_t j = 0; j < count; j += items) {
      Ref e = k.add(t, k.i32(int32_t(j)));
      Ref at = k.load(k.index(gt, k.add(e, k.i32(int32_t(table_at)))));
      Ref inside = k.cmplt(at, k.i32(int32_t(to == la ? m.a_elements : m.b_elements)));
      k.store_gated(k.index(to, k.alu(TG_OP_WHERE, inside, at, k.i32(0))), k.load(k.index(from, e)), inside);
    }
  };
  copy(ga, la, u.m * u.k, 0);
  copy(gb, lb, u.k * u.n, u.m * u.k);
  k.barrier();
  std::vector<Ref> lanes, at;
  for (uint32_t e = 0; e < lc; ++e) {
    at.push_back(
        k.load(k.index(gt, k.add(k.mul(t, k.i32(int32_t(lc))), k.i32(int32_t(u.m * u.k + u.k * u.n + e))))));
    lanes.push_back(k.load(k.index(gc, at.back())));
  }
  const int64_t strides = tg::sdk::matrix_strides_pack(m.strides);
  Ref d = 0;
  if (m.flags) { // deferred reads only inside a RANGE
    Ref once = k.range(k.i32(0), k.i32(1));
    d = k.mma(k.index(la, k.i32(int32_t(m.a_start))), k.index(lb, k.i32(int32_t(m.b_start))),
              k.vectorize(lanes), m.flags, strides);
    k.store(k.index(la, k.i32(0)), k.load(k.index(ga, k.i32(0)))); // into A's tile, before any BARRIER
    for (uint32_t e = 0; e < lc; ++e) k.store(k.index(gd, at[e]), k.gep(d, uint16_t(e)));
    k.end_range(once);
  } else {
    d = k.mma(k.index(la, k.i32(int32_t(m.a_start))), k.index(lb, k.i32(int32_t(m.b_start))),
              k.vectorize(lanes), 0, strides);
    for (uint32_t e = 0; e < lc; ++e) k.store(k.index(gd, at[e]), k.gep(d, uint16_t(e)));
  }
  std::vector<std::byte> ba = encode(u.a_dtype, a), bb = encode(u.b_dtype, b), bc = encode(u.c_dtype, c),
                         bd = encode(u.c_dtype, std::vector<double>(c.size(), -1));
  std::vector<std::span<std::byte>> buffers = {ba, bb, bc, bd, bytes(table)};
  const tg_matrix_unit units[] = {u};
  interpret(ir_of(k), {1, 1, 1}, {items, 1, 1}, buffers, {}, units);
  std::vector<double> out(c.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = decode(u.c_dtype, bd.data() + i * tg::sdk::dtype_size(u.c_dtype));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(interpreter_mma_local)

// A at a start inside its atoms (the second k-step of 8 columns: element 4, whose bit the row
// swizzle also sets, so XOR and + differ) and B one column of atoms in.
BOOST_AUTO_TEST_CASE(swizzled_atoms_at_a_start_inside_the_atom) {
  const tg_matrix_unit u = local_unit();
  BOOST_REQUIRE_EQUAL(tg::sdk::matrix_unit_error(u), "");
  const auto a = pattern(32, 13, 6, 0.5), b = pattern(16, 11, 5, 0.25), c = pattern(32, 9, 4, 1.0);
  const auto want = naive(u, a, b, c);
  for (uint64_t a_start : {0u, 4u, 68u}) {
    LocalMma m;
    m.a_start = a_start;
    m.b_start = 32;
    const auto got = local_mma_once(u, a, b, c, m);
    for (size_t i = 0; i < want.size(); ++i)
      BOOST_TEST(got[i] == want[i], "A at " << a_start << ": D(" << i / 4 << ", " << i % 4 << ")");
  }
  // The read really is at start XOR offset: A(2, 0) from start 4 is element 16, not 4 + 20.
  BOOST_TEST(tg::sdk::matrix_local_index(u, MatrixOperand::a, MatrixStrides{32, 64, 8, 32}, 4, 2, 0) == 16u);
}

BOOST_AUTO_TEST_CASE(a_read_outside_local_memory_names_the_unit_operand_and_position) {
  const tg_matrix_unit u = local_unit();
  const auto v = pattern(32, 5, 2, 1.0);
  LocalMma m;
  m.a_elements = 48; // the second atom of rows (elements 32..63) only half there
  const std::string what = interpreter_error([&] { local_mma_once(u, v, pattern(16, 5, 2, 1.0), v, m); });
  BOOST_TEST(what.find("MMA on matrix unit 0 (\"lds.m8n4k4.f16\"): A(") != std::string::npos, what);
  BOOST_TEST(what.find("outside local memory") != std::string::npos, what);
  BOOST_TEST(what.find("48 float16 elements") != std::string::npos, what);
}

BOOST_AUTO_TEST_CASE(values_for_a_local_unit_and_indexes_for_a_register_unit_are_errors) {
  const tg_matrix_unit local = local_unit();
  const auto v = pattern(32, 5, 2, 1.0);
  // values to a unit that reads local memory
  std::string what = interpreter_error([&] {
    KernelBuilder k("values_to_local_unit");
    Ref out = k.global(0, TG_DTYPE_FLOAT32), one = k.const_float(TG_DTYPE_FLOAT16, 1);
    const std::vector<Ref> zeros(8, k.f32(0));
    k.store(k.index(out, k.i32(0)), k.gep(k.mma(one, one, k.vectorize(zeros), 0), 0));
    std::vector<float> d(1);
    const std::vector<std::span<std::byte>> buffers{bytes(d)};
    const tg_matrix_unit units[] = {local};
    interpret(ir_of(k), {1, 1, 1}, {4, 1, 1}, buffers, {}, units);
  });
  BOOST_TEST(what.find("(lds.m8n4k4.f16) reads A and B from local memory") != std::string::npos, what);
  // local operands to a register unit of the same shape
  tg_matrix_unit regs = rows_unit_4x4x4();
  what = interpreter_error([&] { local_mma_once(regs, v, v, v, LocalMma{}); });
  BOOST_TEST(what.find("(rows.m4n4k4.f32) reads A and B as values, not from local memory") !=
                 std::string::npos,
             what);
}

BOOST_AUTO_TEST_CASE(a_store_into_a_tile_a_deferred_mma_may_still_read_is_an_error) {
  const tg_matrix_unit u = local_unit();
  const auto v = pattern(32, 5, 2, 1.0);
  LocalMma m;
  m.flags = TG_MMA_DEFER_READS;
  const std::string what = interpreter_error([&] { local_mma_once(u, v, pattern(16, 5, 2, 1.0), v, m); });
  BOOST_TEST(what.find("which the deferred MMA at instruction") != std::string::npos, what);
  BOOST_TEST(what.find("(work items 0 to 3) may still read") != std::string::npos, what);
}

BOOST_AUTO_TEST_SUITE_END()
