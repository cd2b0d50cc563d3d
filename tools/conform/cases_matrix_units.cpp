// matrix_units/*: the matrix units a device declares (ABI 1.4, tg_matrix_unit) are data, so each
// one is checked against its own description. `well_formed` reads every unit and applies the
// host's rules (matrix_unit_error); `matrix_units/<name>` runs a tiled matmul built on the unit's
// MMA, with each work item's A, B and C positions taken from a host-computed table (the layout
// through matrix_element), edge tiles gated, and small integer inputs so the result is exact. A
// local-memory unit (ABI 1.5) gets its A and B tiles copied into local memory at the elements its
// atoms give (matrix_local_index), then MMA's local form. The expected values are a naive host
// matmul, and the reference interpreter must agree with it too.
#include "tools/conform/cases.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <sstream>

namespace tg::conform {
namespace {

using tg::sdk::KernelBuilder;
using tg::sdk::matrix_element;
using tg::sdk::matrix_items;
using tg::sdk::matrix_lanes;
using tg::sdk::matrix_unit_name;
using tg::sdk::MatrixOperand;
using Ref = KernelBuilder::Ref;

constexpr uint64_t kGuard = 64; // bytes of known pattern around the output buffer
std::byte guard_byte(size_t i) { return std::byte(0x5A ^ (i * 31)); }

const char* const kNoUnits = "the device declares no matrix units";

bool has_unit_entries() {
  return TG_CONFORM_HAS(device_matrix_unit_count) && TG_CONFORM_HAS(device_matrix_unit);
}

// An integer value stored as dtype (floats hold it exactly: the cases keep values small).
void write_value(tg_dtype dt, std::byte* p, int64_t v) {
  switch (dt) {
  case TG_DTYPE_FLOAT16: {
    const uint16_t h = tg::sdk::float_to_half_bits(double(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case TG_DTYPE_BFLOAT16: {
    const uint16_t h = tg::sdk::float_to_bfloat16_bits(float(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case TG_DTYPE_FLOAT32: {
    const float f = float(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case TG_DTYPE_FLOAT64: {
    const double d = double(v);
    std::memcpy(p, &d, 8);
    return;
  }
  default: // integers: the low bytes of the two's complement value
    std::memcpy(p, &v, tg::sdk::dtype_size(dt));
  }
}

double read_float(tg_dtype dt, const std::byte* p) {
  uint64_t raw = 0;
  std::memcpy(&raw, p, tg::sdk::dtype_size(dt));
  switch (dt) {
  case TG_DTYPE_FLOAT16:
    return tg::sdk::half_bits_to_double(uint16_t(raw));
  case TG_DTYPE_BFLOAT16:
    return tg::sdk::bfloat16_bits_to_double(uint16_t(raw));
  case TG_DTYPE_FLOAT32:
    return double(std::bit_cast<float>(uint32_t(raw)));
  default:
    return std::bit_cast<double>(raw);
  }
}

// An integer wrapped to dtype's width (sign- or zero-extended back to 64 bits).
int64_t wrap_to(tg_dtype dt, int64_t v) {
  const size_t bits = tg::sdk::dtype_size(dt) * 8;
  if (bits >= 64) return v;
  uint64_t u = uint64_t(v) & ((uint64_t(1) << bits) - 1);
  if (tg::sdk::dtype_is_signed_int(dt) && (u >> (bits - 1)) != 0) u |= ~uint64_t(0) << bits;
  return int64_t(u);
}

int64_t read_int(tg_dtype dt, const std::byte* p) {
  uint64_t raw = 0;
  std::memcpy(&raw, p, tg::sdk::dtype_size(dt));
  return wrap_to(dt, int64_t(raw));
}

std::string format_float(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

// The largest magnitude up to which every integer is exact in a float dtype (0: an integer dtype).
int64_t exact_limit(tg_dtype dt) {
  switch (dt) {
  case TG_DTYPE_FLOAT16:
    return 2048;
  case TG_DTYPE_BFLOAT16:
    return 256;
  case TG_DTYPE_FLOAT32:
    return int64_t(1) << 24;
  case TG_DTYPE_FLOAT64:
    return int64_t(1) << 53;
  default:
    return 0;
  }
}

// The problem one case runs: M x N output tiles of the unit, K in k-steps, the last tile along
// each axis partial where the unit's extent allows (M, N, K not multiples of m, n, k).
struct Problem {
  uint32_t tiles_m = 3, tiles_n = 5, steps = 3;
  uint32_t M = 0, N = 0, K = 0;
};

uint32_t with_edge(uint32_t tiles, uint32_t extent) {
  return (tiles - 1) * extent + (extent > 1 ? (extent + 1) / 2 : 1);
}

Problem problem_for(const tg_matrix_unit& u) {
  // Odd tile counts, fewer for big units so the interpreter and the naive matmul stay quick.
  const uint64_t work = uint64_t(u.m) * u.n * u.k;
  Problem p;
  if (work * 45 > (uint64_t(1) << 25)) p = {1, 3, 1};
  if (work * 3 > (uint64_t(1) << 25)) p = {1, 1, 1};
  p.M = with_edge(p.tiles_m, u.m);
  p.N = with_edge(p.tiles_n, u.n);
  p.K = with_edge(p.steps, u.k);
  return p;
}

// Inputs: A in {-1, 0, 1}, B in {-2 .. 2}, C in {-3 .. 3} (unsigned: from 0), A thinned out along
// k where C's format could not hold every partial sum exactly. Deterministic, row-major.
struct Inputs {
  std::vector<int64_t> a, b, c;
};

Inputs make_inputs(const tg_matrix_unit& u, const Problem& p) {
  const int64_t limit = exact_limit(u.c_dtype);
  int64_t thin = 1;
  if (limit > 0)
    while (int64_t((p.K + uint32_t(thin) - 1) / uint32_t(thin)) * 2 + 3 > limit) ++thin;
  auto value = [](tg_dtype dt, uint64_t h, int64_t half) {
    const int64_t span = 2 * half + 1;
    const int64_t v = int64_t(h % uint64_t(span));
    return tg::sdk::dtype_is_float(dt) || tg::sdk::dtype_is_signed_int(dt) ? v - half : v % (half + 1);
  };
  auto hash = [](uint64_t i, uint64_t salt) { return (i * 2654435761u + salt * 40503u) >> 7; };
  Inputs in;
  for (uint32_t r = 0; r < p.M; ++r)
    for (uint32_t kk = 0; kk < p.K; ++kk)
      in.a.push_back((r + kk) % uint32_t(thin) == 0 ? value(u.a_dtype, hash(r * p.K + kk, 1), 1) : 0);
  for (uint64_t i = 0; i < uint64_t(p.K) * p.N; ++i) in.b.push_back(value(u.b_dtype, hash(i, 2), 2));
  for (uint64_t i = 0; i < uint64_t(p.M) * p.N; ++i) in.c.push_back(value(u.c_dtype, hash(i, 3), 3));
  return in;
}

std::vector<std::byte> encode(tg_dtype dt, const std::vector<int64_t>& values) {
  std::vector<std::byte> out(values.size() * tg::sdk::dtype_size(dt));
  for (size_t i = 0; i < values.size(); ++i)
    write_value(dt, out.data() + i * tg::sdk::dtype_size(dt), values[i]);
  return out;
}

// Per work item: (row, col) of each of its A, B and C elements, in that order.
std::vector<int32_t> position_table(const tg_matrix_unit& u) {
  std::vector<int32_t> table;
  for (uint32_t t = 0; t < matrix_items(u); ++t)
    for (const tg_matrix_layout* l : {&u.a, &u.b, &u.c})
      for (uint32_t e = 0; e < matrix_lanes(*l); ++e) {
        const tg::sdk::MatrixElement p = matrix_element(*l, t, e);
        table.push_back(p.row);
        table.push_back(p.col);
      }
  return table;
}

// D (0) = A (1) * B (2) + C (3); buffer 4 is the position table. Group (x, y) computes output tile
// (y, x); a RANGE runs over the k-steps with the accumulator in the unit's C layout.
std::vector<std::byte> matmul_kernel(const tg_matrix_unit& u, int64_t unit_index, const Problem& p) {
  const uint32_t la = matrix_lanes(u.a), lb = matrix_lanes(u.b), lc = matrix_lanes(u.c);
  const int32_t per_item = int32_t(2 * (la + lb + lc));
  KernelBuilder k("mma_matmul");
  const Ref gd = k.global(0, u.c_dtype), ga = k.global(1, u.a_dtype), gb = k.global(2, u.b_dtype),
            gc = k.global(3, u.c_dtype), gt = k.global(4, TG_DTYPE_INT32);
  auto c = [&](int64_t v) { return k.i32(int32_t(v)); };
  auto zero = [&](tg_dtype dt) {
    return tg::sdk::dtype_is_float(dt) ? k.const_float(dt, 0) : k.const_int(dt, 0);
  };
  const Ref base = k.mul(k.local_id(0), c(per_item));
  auto entry = [&](int64_t at) { return k.load(k.index(gt, k.add(base, c(at)))); };
  const Ref row0 = k.mul(k.group_id(1), c(u.m)), col0 = k.mul(k.group_id(0), c(u.n));
  // A gated element of a row-major rows x cols buffer; the index is 0 where the gate is off.
  struct Access {
    Ref gate, at;
  };
  auto access = [&](Ref row, Ref col, uint32_t rows, uint32_t cols) {
    const Ref gate = k.alu(TG_OP_AND, k.cmplt(row, c(rows)), k.cmplt(col, c(cols)));
    return Access{gate, k.alu(TG_OP_WHERE, gate, k.add(k.mul(row, c(cols)), col), c(0))};
  };
  auto load = [&](Ref buffer, Access a, tg_dtype dt) {
    return k.load_gated(k.index(buffer, a.at), a.gate, zero(dt));
  };

  std::vector<Ref> a_row, a_col, b_row, b_col, c_lanes;
  std::vector<Access> c_at;
  for (uint32_t e = 0; e < la; ++e) {
    a_row.push_back(entry(2 * e));
    a_col.push_back(entry(2 * e + 1));
  }
  for (uint32_t e = 0; e < lb; ++e) {
    b_row.push_back(entry(2 * (la + e)));
    b_col.push_back(entry(2 * (la + e) + 1));
  }
  for (uint32_t e = 0; e < lc; ++e) {
    const int64_t at = 2 * (la + lb + e);
    c_at.push_back(access(k.add(row0, entry(at)), k.add(col0, entry(at + 1)), p.M, p.N));
    c_lanes.push_back(load(gc, c_at.back(), u.c_dtype));
  }
  const Ref acc = k.acc(k.vectorize(c_lanes));
  const Ref step = k.range(c(0), c(p.steps));
  const Ref k0 = k.mul(step, c(u.k));
  std::vector<Ref> a_lanes, b_lanes;
  for (uint32_t e = 0; e < la; ++e)
    a_lanes.push_back(load(ga, access(k.add(row0, a_row[e]), k.add(k0, a_col[e]), p.M, p.K), u.a_dtype));
  for (uint32_t e = 0; e < lb; ++e)
    b_lanes.push_back(load(gb, access(k.add(k0, b_row[e]), k.add(col0, b_col[e]), p.K, p.N), u.b_dtype));
  k.assign(acc, k.mma(k.vectorize(a_lanes), k.vectorize(b_lanes), acc, unit_index));
  k.end_range(step);
  for (uint32_t e = 0; e < lc; ++e)
    k.store_gated(k.index(gd, c_at[e].at), k.gep(acc, uint16_t(e)), c_at[e].gate);
  return k.serialize();
}

// Where a local-memory unit's operand lies in local memory: a panel of `slots` k-steps of its tile
// (A m x slots*k, B slots*k x n), atoms stacked along rows first, each column of atoms after the
// last. Step s copies into slot s % slots and the MMA starts at the slot's first position, inside
// an atom where the atom spans several k-steps. Two slots at least: with deferred reads an MMA may
// still read its slot while the next step is copied.
struct Panel {
  MatrixOperand op = MatrixOperand::a;
  int rows = 0, cols = 0, slots = 0;
  int64_t row_stride = 0, col_stride = 0, elements = 0;
};

Panel panel_for(const tg_matrix_unit& u, MatrixOperand op) {
  const tg_matrix_atom& atom = tg::sdk::matrix_atom(u, op);
  const tg::sdk::MatrixElement at = tg::sdk::atom_extent(atom), ext = tg::sdk::matrix_extent(u, op);
  const bool a = op == MatrixOperand::a;
  Panel p;
  p.op = op;
  p.slots = std::max(2, (a ? at.col : at.row) / int(u.k));
  p.rows = a ? ext.row : p.slots * int(u.k);
  p.cols = a ? p.slots * int(u.k) : ext.col;
  const int64_t size = int64_t(1) << atom.offset_bits, down = (p.rows + at.row - 1) / at.row;
  p.row_stride = size;
  p.col_stride = size * down;
  p.elements = size * down * ((p.cols + at.col - 1) / at.col);
  return p;
}

tg::sdk::MatrixStrides panel_strides(const Panel& a, const Panel& b) {
  return {a.row_stride, a.col_stride, b.row_stride, b.col_stride};
}

// The local element of tile position (r, c) of k-step slot `slot` (r, c < the unit's extent).
uint64_t panel_element(const tg_matrix_unit& u, const Panel& p, const tg::sdk::MatrixStrides& s, int slot,
                       int r, int c) {
  const int k0 = slot * int(u.k);
  return p.op == MatrixOperand::a ? tg::sdk::matrix_local_index(u, p.op, s, 0, r, k0 + c)
                                  : tg::sdk::matrix_local_index(u, p.op, s, 0, k0 + r, c);
}

// Table for the local kernel: C's positions per work item as position_table, then per operand the
// local element of each (slot, tile element) (row-major tile), then each slot's start.
std::vector<int32_t> local_table(const tg_matrix_unit& u, const Panel& pa, const Panel& pb) {
  const tg::sdk::MatrixStrides s = panel_strides(pa, pb);
  std::vector<int32_t> table;
  for (uint32_t t = 0; t < matrix_items(u); ++t)
    for (uint32_t e = 0; e < matrix_lanes(u.c); ++e) {
      const tg::sdk::MatrixElement p = matrix_element(u.c, t, e);
      table.push_back(p.row);
      table.push_back(p.col);
    }
  for (const Panel* p : {&pa, &pb}) {
    const tg::sdk::MatrixElement ext = tg::sdk::matrix_extent(u, p->op);
    for (int slot = 0; slot < p->slots; ++slot)
      for (int r = 0; r < ext.row; ++r)
        for (int c = 0; c < ext.col; ++c) table.push_back(int32_t(panel_element(u, *p, s, slot, r, c)));
  }
  for (const Panel* p : {&pa, &pb})
    for (int slot = 0; slot < p->slots; ++slot) table.push_back(int32_t(panel_element(u, *p, s, slot, 0, 0)));
  return table;
}

// The local form's matmul: buffers as matmul_kernel's, the table local_table's. In each k-step the
// group's items copy A's and B's tiles (zero past the edges) into their slots, a BARRIER, the MMA
// with deferred reads, and a BARRIER that ends the reads of the step before (whose slot the next
// step's copy may reuse).
std::vector<std::byte> local_matmul_kernel(const tg_matrix_unit& u, int64_t unit_index, const Problem& p,
                                           const Panel& pa, const Panel& pb) {
  const uint32_t lc = matrix_lanes(u.c), items = matrix_items(u);
  KernelBuilder k("mma_local_matmul");
  const Ref gd = k.global(0, u.c_dtype), ga = k.global(1, u.a_dtype), gb = k.global(2, u.b_dtype),
            gc = k.global(3, u.c_dtype), gt = k.global(4, TG_DTYPE_INT32);
  const Ref la = k.local(pa.elements, u.a_dtype), lb = k.local(pb.elements, u.b_dtype);
  auto c = [&](int64_t v) { return k.i32(int32_t(v)); };
  auto zero = [&](tg_dtype dt) {
    return tg::sdk::dtype_is_float(dt) ? k.const_float(dt, 0) : k.const_int(dt, 0);
  };
  auto entry = [&](Ref at) { return k.load(k.index(gt, at)); };
  auto both = [&](Ref x, Ref y) { return k.alu(TG_OP_AND, x, y); };
  const Ref t = k.local_id(0);
  const Ref row0 = k.mul(k.group_id(1), c(u.m)), col0 = k.mul(k.group_id(0), c(u.n));
  struct Access {
    Ref gate, at;
  };
  auto access = [&](Ref row, Ref col, uint32_t rows, uint32_t cols) {
    const Ref gate = both(k.cmplt(row, c(rows)), k.cmplt(col, c(cols)));
    return Access{gate, k.alu(TG_OP_WHERE, gate, k.add(k.mul(row, c(cols)), col), c(0))};
  };
  std::vector<Ref> c_lanes;
  std::vector<Access> c_at;
  const Ref base = k.mul(t, c(2 * lc));
  for (uint32_t e = 0; e < lc; ++e) {
    c_at.push_back(access(k.add(row0, entry(k.add(base, c(2 * e)))),
                          k.add(col0, entry(k.add(base, c(2 * e + 1)))), p.M, p.N));
    c_lanes.push_back(k.load_gated(k.index(gc, c_at.back().at), c_at.back().gate, zero(u.c_dtype)));
  }
  const int64_t a_table = 2 * int64_t(items) * lc, b_table = a_table + pa.slots * int64_t(u.m) * u.k,
                starts = b_table + pb.slots * int64_t(u.k) * u.n;
  const Ref acc = k.acc(k.vectorize(c_lanes));
  const Ref step = k.range(c(0), c(p.steps));
  const Ref k0 = k.mul(step, c(u.k));
  const Ref slot_a = k.alu(TG_OP_MOD, step, c(pa.slots)), slot_b = k.alu(TG_OP_MOD, step, c(pb.slots));
  // Tile element e = t + j * items of a rows x cols tile (row-major) for each copy j.
  auto copy = [&](Ref global, Ref local, tg_dtype dt, uint32_t rows, uint32_t cols, Ref grow0, Ref gcol0,
                  uint32_t grows, uint32_t gcols, int64_t table, Ref slot) {
    const int64_t count = int64_t(rows) * cols, copies = std::max<int64_t>(1, count / items);
    const Ref j = k.range(c(0), c(copies));
    const Ref e = k.add(t, k.mul(j, c(items)));
    const Ref in_tile = k.cmplt(e, c(count));
    const Ref r = k.alu(TG_OP_IDIV, e, c(cols)), col = k.alu(TG_OP_MOD, e, c(cols));
    Access g = access(k.add(grow0, r), k.add(gcol0, col), grows, gcols);
    g.gate = both(g.gate, in_tile);
    const Ref v = k.load_gated(k.index(global, g.at), g.gate, zero(dt));
    const Ref at = entry(k.add(c(table), k.add(k.mul(slot, c(count)), k.alu(TG_OP_WHERE, in_tile, e, c(0)))));
    k.store_gated(k.index(local, at), v, in_tile);
    k.end_range(j);
  };
  copy(ga, la, u.a_dtype, u.m, u.k, row0, k0, p.M, p.K, a_table, slot_a);
  copy(gb, lb, u.b_dtype, u.k, u.n, k0, col0, p.K, p.N, b_table, slot_b);
  k.barrier();
  const Ref sa = entry(k.add(c(starts), slot_a)), sb = entry(k.add(c(starts + pa.slots), slot_b));
  const int64_t strides = tg::sdk::matrix_strides_pack(panel_strides(pa, pb));
  k.assign(acc, k.mma(k.index(la, sa), k.index(lb, sb), acc, unit_index | TG_MMA_DEFER_READS, strides));
  k.barrier();
  k.end_range(step);
  for (uint32_t e = 0; e < lc; ++e)
    k.store_gated(k.index(gd, c_at[e].at), k.gep(acc, uint16_t(e)), c_at[e].gate);
  return k.serialize();
}

// D = A * B + C on the host, exact (wrapped to C's width for an integer C).
std::vector<int64_t> naive_matmul(const tg_matrix_unit& u, const Problem& p, const Inputs& in) {
  std::vector<int64_t> d(in.c);
  for (uint32_t r = 0; r < p.M; ++r)
    for (uint32_t col = 0; col < p.N; ++col) {
      int64_t sum = in.c[r * p.N + col];
      for (uint32_t kk = 0; kk < p.K; ++kk) sum += in.a[r * p.K + kk] * in.b[kk * p.N + col];
      d[r * p.N + col] = tg::sdk::dtype_is_float(u.c_dtype) ? sum : wrap_to(u.c_dtype, sum);
    }
  return d;
}

// The first element of `got` (D, c_dtype) that differs from `want`, described; "" when none.
std::string first_difference(const tg_matrix_unit& u, const Problem& p, std::span<const std::byte> got,
                             const std::vector<int64_t>& want, const std::string& who) {
  const size_t size = tg::sdk::dtype_size(u.c_dtype);
  const bool fl = tg::sdk::dtype_is_float(u.c_dtype);
  size_t bad = 0, first = 0;
  std::string got_text;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::byte* g = got.data() + i * size;
    const bool ok = fl ? read_float(u.c_dtype, g) == double(want[i]) : read_int(u.c_dtype, g) == want[i];
    if (ok) continue;
    if (bad++ == 0) {
      first = i;
      got_text = fl ? format_float(read_float(u.c_dtype, g)) : std::to_string(read_int(u.c_dtype, g));
    }
  }
  if (bad == 0) return {};
  const uint32_t r = uint32_t(first / p.N), col = uint32_t(first % p.N);
  uint32_t item = 0, element = 0; // who holds D(r, col) within its tile
  for (uint32_t t = 0; t < matrix_items(u); ++t)
    for (uint32_t e = 0; e < matrix_lanes(u.c); ++e) {
      const tg::sdk::MatrixElement at = matrix_element(u.c, t, e);
      if (uint32_t(at.row) == r % u.m && uint32_t(at.col) == col % u.n) {
        item = t;
        element = e;
      }
    }
  return who + "D(" + std::to_string(r) + ", " + std::to_string(col) + ") (work item " +
         std::to_string(item) + ", element " + std::to_string(element) + " of tile (" +
         std::to_string(r / u.m) + ", " + std::to_string(col / u.n) + ")) is " + got_text + ", expected " +
         std::to_string(want[first]) + " (" + std::to_string(bad) + " of " + std::to_string(want.size()) +
         " elements differ; D is " + std::to_string(p.M) + "x" + std::to_string(p.N) + ", K " +
         std::to_string(p.K) + ")";
}

void run_unit(const Context& ctx, int32_t index, const std::string& name) {
  if (!has_unit_entries()) throw CaseSkipped(kNoUnits);
  Device device(ctx.device_index);
  const std::vector<tg_matrix_unit> units = read_matrix_units(device);
  if (units.empty()) throw CaseSkipped(kNoUnits);
  expect(size_t(index) < units.size(), "the device declared unit " + std::to_string(index) + " (\"" + name +
                                           "\") when probed, and now declares " +
                                           std::to_string(units.size()) + " units");
  const tg_matrix_unit& u = units[size_t(index)];
  expect(matrix_unit_name(u) == name, "unit " + std::to_string(index) + " was named \"" + name +
                                          "\" when probed, and now \"" + matrix_unit_name(u) + "\"");
  if (u.operand_source != TG_MATRIX_SOURCE_REGISTERS && u.operand_source != TG_MATRIX_SOURCE_LOCAL)
    throw CaseSkipped("operand_source " + std::to_string(u.operand_source) + " is not one this host knows");
  if (const std::string why = tg::sdk::matrix_unit_error(u); !why.empty())
    throw CaseSkipped("the unit is not well formed (matrix_units/well_formed reports it)");
  for (tg_dtype dt : {u.a_dtype, u.b_dtype, u.c_dtype, tg_dtype(TG_DTYPE_INT32)})
    if (!(device.properties().dtype_mask & TG_DTYPE_BIT(dt)))
      throw CaseSkipped(std::string("the device does not declare dtype ") + tg::sdk::dtype_name(dt));
  const std::string who = "unit \"" + name + "\": ";
  const tg_device_properties& props = device.properties();
  expect(matrix_items(u) <= props.max_local_size[0] && matrix_items(u) <= props.max_local_threads,
         who + "needs work groups of " + std::to_string(matrix_items(u)) +
             " items, above max_local_size[0] or max_local_threads");
  if (!TG_CONFORM_HAS(compile) || !TG_CONFORM_HAS(program_load) || !TG_CONFORM_HAS(launch))
    throw CaseSkipped("the plugin lacks compile, program_load or launch");

  const Problem p = problem_for(u);
  const Inputs in = make_inputs(u, p);
  const std::vector<int64_t> want = naive_matmul(u, p, in);
  std::vector<std::byte> ir;
  std::vector<int32_t> table;
  if (tg::sdk::matrix_local(u)) {
    const Panel pa = panel_for(u, MatrixOperand::a), pb = panel_for(u, MatrixOperand::b);
    if (const std::string why = tg::sdk::matrix_strides_error(panel_strides(pa, pb)); !why.empty())
      throw CaseSkipped("the case's tile layout does not fit MMA: " + why);
    const uint64_t bytes = uint64_t(pa.elements) * tg::sdk::dtype_size(u.a_dtype) +
                           uint64_t(pb.elements) * tg::sdk::dtype_size(u.b_dtype);
    if (bytes > props.local_memory_bytes)
      throw CaseSkipped("the case's tiles need " + std::to_string(bytes) +
                        " bytes of local memory, the device has " + std::to_string(props.local_memory_bytes));
    ir = local_matmul_kernel(u, index, p, pa, pb);
    table = local_table(u, pa, pb);
  } else {
    ir = matmul_kernel(u, index, p);
    table = position_table(u);
  }
  const std::array<uint32_t, 3> global{p.tiles_n, p.tiles_m, 1}, local{matrix_items(u), 1, 1};
  std::vector<std::vector<std::byte>> inputs = {encode(u.c_dtype, std::vector<int64_t>(in.c.size(), 0)),
                                                encode(u.a_dtype, in.a), encode(u.b_dtype, in.b),
                                                encode(u.c_dtype, in.c)};
  const auto table_bytes = std::as_bytes(std::span(table));
  inputs.emplace_back(table_bytes.begin(), table_bytes.end());

  { // The reference interpreter runs the same kernel from the same description.
    std::vector<std::vector<std::byte>> copies = inputs;
    std::vector<std::span<std::byte>> spans(copies.begin(), copies.end());
    try {
      tg::sdk::interpret(tg::sdk::parse_kernel_ir(ir), global, local, spans, {}, units);
    } catch (const std::exception& e) {
      throw CaseFailed(who + "the reference interpreter refused the kernel: " + e.what());
    }
    if (std::string diff = first_difference(u, p, copies[0], want, who); !diff.empty())
      throw CaseFailed("the reference interpreter disagrees with the naive matmul: " + diff);
  }

  Program program(device, compile_or_fail(ir, target_of(ctx)));
  std::vector<Buffer> buffers;
  std::vector<tg_buffer_arg> args;
  std::vector<std::byte> out_image(inputs[0].size() + 2 * kGuard);
  for (size_t i = 0; i < out_image.size(); ++i) out_image[i] = guard_byte(i);
  std::memcpy(out_image.data() + kGuard, inputs[0].data(), inputs[0].size());
  buffers.emplace_back(device, out_image.size());
  buffers.back().upload(out_image);
  args.push_back({buffers.back().get(), kGuard});
  for (size_t b = 1; b < inputs.size(); ++b) {
    buffers.emplace_back(device, inputs[b].size());
    buffers.back().upload(inputs[b]);
    args.push_back({buffers.back().get(), 0});
  }
  const Status st = program.try_launch(global, local, args, {});
  expect(st.ok(), who + "launch failed: " + st.describe());
  synchronize(device);
  const std::vector<std::byte> got = buffers[0].download(out_image.size());
  for (size_t i = 0; i < got.size(); ++i)
    if ((i < kGuard || i >= got.size() - kGuard) && got[i] != guard_byte(i))
      throw CaseFailed(who + "D: write outside the buffer, " +
                       (i < kGuard
                            ? std::to_string(kGuard - i) + " byte(s) before its start"
                            : std::to_string(i - (got.size() - kGuard) + 1) + " byte(s) past its end"));
  if (std::string diff = first_difference(u, p, std::span(got).subspan(kGuard, inputs[0].size()), want, who);
      !diff.empty())
    throw CaseFailed(diff);
}

void check_well_formed(const Context& ctx) {
  if (!has_unit_entries()) throw CaseSkipped(kNoUnits);
  Device device(ctx.device_index);
  const std::vector<tg_matrix_unit> units = read_matrix_units(device);
  if (units.empty()) throw CaseSkipped(kNoUnits);
  tg_matrix_unit past{};
  past.struct_size = sizeof past;
  expect_code(api().device_matrix_unit(device.get(), int32_t(units.size()), &past), TG_ERROR_NOT_FOUND,
              "device_matrix_unit(" + std::to_string(units.size()) + "), one past the last unit");
  std::string problems;
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i].operand_source != TG_MATRIX_SOURCE_REGISTERS &&
        units[i].operand_source != TG_MATRIX_SOURCE_LOCAL)
      continue; // a later ABI's: the host skips it
    if (const std::string why = tg::sdk::matrix_unit_error(units[i]); !why.empty())
      problems += (problems.empty() ? "" : "; ") + std::string("unit ") + std::to_string(i) + ": " + why;
  }
  expect(problems.empty(), "the host refuses this device's matrix units: " + problems);
}

} // namespace

std::vector<tg_matrix_unit> read_matrix_units(const Device& device) {
  std::vector<tg_matrix_unit> units;
  if (!has_unit_entries()) return units;
  int32_t count = 0;
  check(api().device_matrix_unit_count(device.get(), &count), "device_matrix_unit_count");
  expect(count >= 0, "device_matrix_unit_count reported " + std::to_string(count) + " units");
  for (int32_t i = 0; i < count; ++i) {
    tg_matrix_unit u{}; // zero beyond what the plugin fills, as the host reads it
    u.struct_size = sizeof u;
    check(api().device_matrix_unit(device.get(), i, &u), "device_matrix_unit(" + std::to_string(i) + ")");
    u.struct_size = sizeof u;
    units.push_back(u);
  }
  return units;
}

void add_matrix_unit_cases(std::vector<Case>& cases, const std::vector<std::string>& unit_names) {
  cases.push_back({"matrix_units/well_formed", true, check_well_formed});
  if (unit_names.empty()) { // unknown (--list) or none: one case that says so when run
    cases.push_back({"matrix_units/mma", true, [](const Context& ctx) {
                       if (has_unit_entries() && !read_matrix_units(Device(ctx.device_index)).empty())
                         throw CaseSkipped("the device declared no matrix units when probed");
                       throw CaseSkipped(kNoUnits);
                     }});
    return;
  }
  for (size_t i = 0; i < unit_names.size(); ++i) {
    const std::string name = unit_names[i];
    bool repeated = name.empty() || name == "well_formed" || name == "mma";
    for (size_t j = 0; j < i; ++j) repeated = repeated || unit_names[j] == name;
    cases.push_back({"matrix_units/" + (repeated ? name + "#" + std::to_string(i) : name), true,
                     [i, name](const Context& ctx) { run_unit(ctx, int32_t(i), name); }});
  }
}

} // namespace tg::conform
