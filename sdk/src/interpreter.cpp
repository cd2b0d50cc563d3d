#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/wmma.hpp>

#include "interpreter_values.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tg::sdk {

namespace {

using namespace interp;

// ------------------------------------------------------------------------------------------
// The machine
// ------------------------------------------------------------------------------------------

struct Memory {
  std::byte* data = nullptr;
  size_t bytes = 0;
  tg_dtype dtype = TG_DTYPE_VOID;
  std::string what; // "buffer 1" or "local memory %3"
};

struct WorkItem {
  std::array<int64_t, 3> group{};
  std::array<int64_t, 3> local{};
  size_t pc = 0;
  bool done = false;
  std::vector<Lane> lanes;
};

class Interpreter {
public:
  Interpreter(const KernelIR& ir, std::span<const std::span<std::byte>> buffers,
              std::span<const tg_scalar_arg> scalars, std::span<const tg_matrix_unit> units);
  void run(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local);

private:
  void run_group(std::array<int64_t, 3> group, std::array<uint32_t, 3> local);
  void step_until_barrier(WorkItem& item); // stops at a BARRIER or a matrix op (pc on it) or the end (done)
  void warpgroup_mma(std::vector<WorkItem>& items, size_t i); // WGMMA i for every warpgroup
  // MMA i (or WMMA i, through the description of m16n8k16) for every group of the unit's items;
  // `unit` names the op and the unit in messages
  void unit_mma(std::vector<WorkItem>& items, size_t i, const tg_matrix_unit& u, const std::string& unit);
  // A local-memory unit's A or B for the group of items from `g` (MMA's local form), by position.
  void read_local_operand(std::vector<WorkItem>& items, size_t g, size_t i, const tg_matrix_unit& u,
                          MatrixOperand op, const std::string& unit, std::vector<Lane>& out);
  void execute(WorkItem& item, size_t i);
  Lane operand(const WorkItem& item, uint32_t src, unsigned lane) const {
    const Instruction& s = ir_.instructions[src];
    return item.lanes[slot_[src] + (s.vcount > 1 ? lane : 0)];
  }
  Lane* result(WorkItem& item, size_t i) { return &item.lanes[slot_[i]]; }
  // The memory an INDEX points into and the element range [index, index + count) it touches.
  // The address of `count` elements from the INDEX's element plus `lane`, checked against its memory.
  std::byte* address(const WorkItem& item, size_t i, uint32_t index_ins, unsigned count, unsigned lane = 0);
  [[noreturn]] void fail(const WorkItem& item, size_t i, const std::string& why) const;
  // kWgmmaDeferReads / TG_MMA_DEFER_READS: the tiles a deferred WGMMA or MMA read stay pending
  // until the work group's first BARRIER after its items start a later run or leave the innermost
  // loop around the op; a STORE to a pending byte fails (on a device that read may not have
  // happened yet).
  struct PendingRead {
    size_t op = 0, first = 0, count = 0, memory = 0; // the op, its items, the DEFINE_LOCAL read
    uint64_t run = 0;                                // the items' run count when it read
    bool leaving = false;                            // released at the next BARRIER
    std::vector<uint32_t> bytes;
  };
  size_t item_index(const WorkItem& item) const {
    return size_t((item.local[2] * local_[1] + item.local[1]) * local_[0] + item.local[0]);
  }
  // A WGMMA or MMA of the items from `first` on: a new run releases their earlier ones' reads.
  void start_run(size_t i, size_t first);
  void defer_reads(size_t op, size_t first, size_t count, size_t memory, std::vector<uint32_t> bytes);
  void release_reads(); // at a BARRIER
  void check_store(const WorkItem& item, size_t i, size_t memory, size_t at, size_t bytes) const;

  const KernelIR& ir_;
  std::span<const tg_scalar_arg> scalars_;
  std::span<const tg_matrix_unit> units_;
  std::vector<size_t> slot_;   // per instruction: its first lane (ASSIGN shares its accumulator's)
  std::vector<size_t> match_;  // RANGE/IF -> its ENDRANGE/ENDIF and back
  std::vector<Memory> memory_; // per instruction: for DEFINE_GLOBAL and DEFINE_LOCAL
  std::vector<std::vector<std::byte>> locals_; // storage of each DEFINE_LOCAL, per work group
  std::vector<size_t> local_ins_;              // which instruction each locals_ entry belongs to
  size_t lane_count_ = 0;
  bool has_barrier_ = false;
  std::vector<bool> run_start_; // per WGMMA or MMA: the first of a run (the renderers' wgmma_run_ends)
  std::vector<size_t> loop_of_; // per instruction: the innermost RANGE around it (or SIZE_MAX)
  std::array<int64_t, 3> local_{1, 1, 1};
  std::vector<PendingRead> pending_;
  std::vector<std::vector<uint32_t>> pending_count_; // per instruction (DEFINE_LOCAL): per byte
  std::vector<uint64_t> runs_;                       // per first item of a group: runs started
};

Interpreter::Interpreter(const KernelIR& ir, std::span<const std::span<std::byte>> buffers,
                         std::span<const tg_scalar_arg> scalars, std::span<const tg_matrix_unit> units)
    : ir_(ir), scalars_(scalars), units_(units) {
  try {
    if (uses_mma(ir)) check_mma(ir, units);
  } catch (const IRError& e) { // a program the target's units cannot run: a failure of this run
    throw InterpreterError("kernel '" + ir.name + "', " + e.what(), e.instruction());
  }
  for (size_t i = 0; i < ir.instructions.size(); ++i) // MMA reads the layouts: each must be well formed
    if (ir.instructions[i].op == TG_OP_MMA)
      if (const std::string why = matrix_unit_error(units[size_t(ir.instructions[i].arg0 & 0xFFFFFFFF)]);
          !why.empty())
        throw InterpreterError(
            "kernel '" + ir.name + "', instruction " + std::to_string(i) + " (MMA): " + why, int64_t(i));
  if (buffers.size() != ir.buffer_count)
    throw std::invalid_argument("kernel '" + ir.name + "' takes " + std::to_string(ir.buffer_count) +
                                " buffers, got " + std::to_string(buffers.size()));
  if (scalars.size() != ir.scalar_count)
    throw std::invalid_argument("kernel '" + ir.name + "' takes " + std::to_string(ir.scalar_count) +
                                " scalars, got " + std::to_string(scalars.size()));
  for (size_t k = 0; k < scalars.size(); ++k)
    if (scalars[k].dtype != ir.scalar_dtypes[k])
      throw std::invalid_argument("kernel '" + ir.name + "': scalars[" + std::to_string(k) + "].dtype is " +
                                  std::to_string(scalars[k].dtype) + ", the kernel's DEFINE_VAR is " +
                                  dtype_name(ir.scalar_dtypes[k]));
  const auto& list = ir.instructions;
  slot_.assign(list.size(), 0);
  match_.assign(list.size(), 0);
  memory_.assign(list.size(), Memory{});
  run_start_.assign(list.size(), false);
  loop_of_.assign(list.size(), SIZE_MAX);
  pending_count_.assign(list.size(), {});
  std::vector<size_t> open;
  size_t last_wgmma = SIZE_MAX, last_mma = SIZE_MAX;
  for (size_t i = 0; i < list.size(); ++i) {
    const Instruction& ins = list[i];
    slot_[i] = lane_count_;
    for (size_t k = open.size(); k-- > 0;)
      if (list[open[k]].op == TG_OP_RANGE) {
        loop_of_[i] = open[k];
        break;
      }
    // a run of WGMMAs or MMAs: only CONST, INDEX and integer ALU since the last of them
    if (ins.op == TG_OP_WGMMA || ins.op == TG_OP_MMA) {
      size_t& last = ins.op == TG_OP_WGMMA ? last_wgmma : last_mma;
      bool joined = last != SIZE_MAX;
      for (size_t j = last + 1; joined && j < i; ++j) {
        const Instruction& x = list[j];
        const bool int_alu = x.op >= TG_OP_NEG && x.op <= TG_OP_MULACC && !dtype_is_float(x.dtype);
        joined = x.op == TG_OP_CONST || x.op == TG_OP_INDEX || int_alu;
      }
      run_start_[i] = !joined;
      last = i;
    }
    switch (ins.op) {
    case TG_OP_ASSIGN:
      slot_[i] = slot_[ins.src[0]]; // reading an ASSIGN reads the accumulator, as on the CPU plugin
      continue;
    case TG_OP_RANGE:
      lane_count_ += 2; // the counter, then the end fixed when the loop starts
      open.push_back(i);
      continue;
    case TG_OP_IF:
      open.push_back(i);
      continue;
    case TG_OP_ENDRANGE:
    case TG_OP_ENDIF:
      match_[open.back()] = i;
      match_[i] = open.back();
      open.pop_back();
      continue;
    case TG_OP_BARRIER:
      has_barrier_ = true;
      continue;
    case TG_OP_WMMA: // a warp-wide op: the items of a group run to it together, like to a BARRIER
    case TG_OP_WGMMA:
    case TG_OP_MMA:
      has_barrier_ = true;
      lane_count_ += ins.vcount;
      continue;
    case TG_OP_DEFINE_GLOBAL: {
      std::span<std::byte> b = buffers[size_t(ins.arg0)];
      memory_[i] = {b.data(), b.size(), ins.dtype, "buffer " + std::to_string(ins.arg0)};
      continue;
    }
    case TG_OP_DEFINE_LOCAL:
      locals_.emplace_back(size_t(ins.arg0) * dtype_size(ins.dtype));
      local_ins_.push_back(i);
      memory_[i] = {locals_.back().data(), locals_.back().size(), ins.dtype,
                    "local memory %" + std::to_string(i)};
      continue;
    case TG_OP_STORE:
      continue;
    default:
      lane_count_ += ins.vcount;
    }
  }
}

void Interpreter::fail(const WorkItem& item, size_t i, const std::string& why) const {
  const Instruction& ins = ir_.instructions[i];
  auto triple = [](const std::array<int64_t, 3>& v) {
    return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
  };
  throw InterpreterError("kernel '" + ir_.name + "', instruction " + std::to_string(i) + " (" +
                             op_name(ins.op) + "), group " + triple(item.group) + " local " +
                             triple(item.local) + ": " + why,
                         int64_t(i));
}

std::byte* Interpreter::address(const WorkItem& item, size_t i, uint32_t index_ins, unsigned count,
                                unsigned lane) {
  const Instruction& index = ir_.instructions[index_ins];
  const Memory& mem = memory_[index.src[0]];
  const Instruction& idx_src = ir_.instructions[index.src[1]];
  Lane v = operand(item, index.src[1], 0);
  if (is_signed(idx_src.dtype))
    v.i += int64_t(lane);
  else
    v.u += lane;
  const size_t elem = dtype_size(mem.dtype);
  const size_t elements = mem.bytes / elem;
  const bool negative = is_signed(idx_src.dtype) && v.i < 0;
  if (negative || v.u > elements || elements - v.u < count) {
    std::string at = negative ? std::to_string(v.i) : std::to_string(v.u);
    fail(item, i,
         "element index " + at + (count > 1 ? " (" + std::to_string(count) + " lanes)" : "") +
             " is outside " + mem.what + " (" + std::to_string(elements) + " " + dtype_name(mem.dtype) +
             " elements)");
  }
  return mem.data + v.u * elem;
}

void Interpreter::execute(WorkItem& item, size_t i) {
  const Instruction& ins = ir_.instructions[i];
  const unsigned vc = ins.vcount;
  switch (ins.op) {
  case TG_OP_DEFINE_GLOBAL:
  case TG_OP_DEFINE_LOCAL:
  case TG_OP_ENDIF:
  case TG_OP_BARRIER: // handled by the group loop
    ++item.pc;
    return;
  case TG_OP_DEFINE_VAR: {
    const tg_scalar_arg& s = scalars_[size_t(ins.arg0)];
    Lane* r = result(item, i);
    if (is_float(ins.dtype))
      *r = float_lane(ins.dtype == TG_DTYPE_FLOAT64 ? s.value.f : round_to(ins.dtype, s.value.f));
    else
      *r = int_lane(ins.dtype == TG_DTYPE_BOOL ? (s.value.i != 0 ? 1 : 0) : wrap(ins.dtype, s.value.u));
    break;
  }
  case TG_OP_SPECIAL:
    result(item, i)->i =
        ins.arg0 == TG_SPECIAL_GROUP_ID ? item.group[size_t(ins.arg1)] : item.local[size_t(ins.arg1)];
    break;
  case TG_OP_CONST: {
    Lane* r = result(item, i);
    if (is_float(ins.dtype))
      *r = float_lane(round_to(ins.dtype, ins.const_float()));
    else
      *r = int_lane(ins.dtype == TG_DTYPE_BOOL ? (ins.arg0 != 0 ? 1 : 0)
                                               : wrap(ins.dtype, uint64_t(ins.arg0)));
    break;
  }
  case TG_OP_DEFINE_ACC:
  case TG_OP_ASSIGN: {
    // Lane k is read before lane k is written, so assigning the accumulator to itself is fine.
    uint32_t value = ins.src[ins.op == TG_OP_ASSIGN ? 1 : 0];
    Lane* r = result(item, i);
    for (unsigned k = 0; k < vc; ++k) r[k] = operand(item, value, k);
    break;
  }
  case TG_OP_RANGE: {
    Lane* r = result(item, i);
    Lane start = operand(item, ins.src[0], 0), end = operand(item, ins.src[1], 0);
    if (start.i >= end.i) {
      item.pc = match_[i] + 1;
      return;
    }
    r[0] = start;
    r[1] = end;
    break;
  }
  case TG_OP_ENDRANGE: {
    size_t range = match_[i];
    Lane* r = result(item, range);
    int64_t next = int64_t(wrap(ir_.instructions[range].dtype, r[0].u + 1));
    if (next < r[1].i) {
      r[0].i = next;
      item.pc = range + 1;
      return;
    }
    for (PendingRead& p : pending_) // the loop around a deferred op ends: its reads by the next BARRIER
      if (item_index(item) - p.first < p.count && loop_of_[p.op] == range) p.leaving = true;
    break;
  }
  case TG_OP_IF:
    if (operand(item, ins.src[0], 0).u == 0) {
      item.pc = match_[i] + 1;
      return;
    }
    break;
  case TG_OP_INDEX:
    result(item, i)->u = 0; // the address is worked out by the LOAD/STORE that uses it
    break;
  case TG_OP_LOAD: {
    Lane* r = result(item, i);
    if (ins.src.size() == 3 && ir_.instructions[ins.src[1]].vcount > 1) { // gated per lane (IR 1.4)
      for (unsigned k = 0; k < vc; ++k)
        r[k] = operand(item, ins.src[1], k).u == 0
                   ? operand(item, ins.src[2], k)
                   : load_element(ins.dtype, address(item, i, ins.src[0], 1, k));
      break;
    }
    if (ins.src.size() == 3 && operand(item, ins.src[1], 0).u == 0) {
      for (unsigned k = 0; k < vc; ++k) r[k] = operand(item, ins.src[2], k); // reads no memory
      break;
    }
    std::byte* p = address(item, i, ins.src[0], vc);
    for (unsigned k = 0; k < vc; ++k) r[k] = load_element(ins.dtype, p + k * dtype_size(ins.dtype));
    break;
  }
  case TG_OP_STORE: {
    if (ins.src.size() == 3 && operand(item, ins.src[2], 0).u == 0) break;
    const Instruction& value = ir_.instructions[ins.src[1]];
    tg_dtype dt = ir_.instructions[ins.src[0]].dtype;
    std::byte* p = address(item, i, ins.src[0], value.vcount);
    if (!pending_.empty()) {
      const size_t memory = ir_.instructions[ins.src[0]].src[0];
      check_store(item, i, memory, size_t(p - memory_[memory].data), value.vcount * dtype_size(dt));
    }
    for (unsigned k = 0; k < value.vcount; ++k)
      store_element(dt, p + k * dtype_size(dt), operand(item, ins.src[1], k));
    break;
  }
  case TG_OP_VECTORIZE: {
    Lane* r = result(item, i);
    for (unsigned k = 0; k < vc; ++k) r[k] = operand(item, ins.src[k], 0);
    break;
  }
  case TG_OP_GEP:
    *result(item, i) = operand(item, ins.src[0], unsigned(ins.arg0));
    break;
  case TG_OP_CAST:
  case TG_OP_BITCAST: {
    tg_dtype from = ir_.instructions[ins.src[0]].dtype;
    Lane* r = result(item, i);
    for (unsigned k = 0; k < vc; ++k) {
      Lane v = operand(item, ins.src[0], k);
      r[k] = ins.op == TG_OP_CAST ? cast_lane(v, from, ins.dtype) : bitcast_lane(v, from, ins.dtype);
    }
    break;
  }
  default: {
    // ALU, lane-wise. Operands have the source dtype (comparisons give bool; WHERE's is its own).
    const tg_dtype dt = ins.op == TG_OP_WHERE ? ins.dtype : ir_.instructions[ins.src[0]].dtype;
    Lane* r = result(item, i);
    for (unsigned k = 0; k < vc; ++k) {
      Lane a = operand(item, ins.src[0], k);
      if (ins.src.size() == 1) {
        r[k] = unary(ins.op, dt, a);
        continue;
      }
      Lane b = operand(item, ins.src[1], k);
      if (ins.op == TG_OP_WHERE)
        r[k] = a.u != 0 ? b : operand(item, ins.src[2], k);
      else if (ins.op == TG_OP_MULACC)
        r[k] = mulacc(dt, a, b, operand(item, ins.src[2], k));
      else
        r[k] = binary(ins.op, dt, a, b);
    }
  }
  }
  ++item.pc;
}

void Interpreter::step_until_barrier(WorkItem& item) {
  const size_t n = ir_.instructions.size();
  while (item.pc < n) {
    const tg_op op = ir_.instructions[item.pc].op;
    if (op == TG_OP_BARRIER || op == TG_OP_WMMA || op == TG_OP_WGMMA || op == TG_OP_MMA) return;
    execute(item, item.pc);
  }
  item.done = true;
}

void Interpreter::run_group(std::array<int64_t, 3> group, std::array<uint32_t, 3> local) {
  for (auto& storage : locals_) std::fill(storage.begin(), storage.end(), std::byte{0});
  local_ = {local[0], local[1], local[2]};
  pending_.clear();
  for (auto& counts : pending_count_) std::fill(counts.begin(), counts.end(), 0u);
  runs_.assign(size_t(local[0]) * local[1] * local[2], 0);
  std::vector<WorkItem> items(has_barrier_ ? size_t(local[0]) * local[1] * local[2] : 1);
  for (auto& item : items) {
    item.group = group;
    item.lanes.resize(lane_count_);
  }
  auto reset = [&](WorkItem& item, int64_t x, int64_t y, int64_t z) {
    item.local = {x, y, z};
    item.pc = 0;
    item.done = false;
  };
  if (!has_barrier_) { // one item at a time, to the end
    for (int64_t z = 0; z < local[2]; ++z)
      for (int64_t y = 0; y < local[1]; ++y)
        for (int64_t x = 0; x < local[0]; ++x) {
          reset(items[0], x, y, z);
          step_until_barrier(items[0]);
        }
    return;
  }
  size_t k = 0;
  for (int64_t z = 0; z < local[2]; ++z)
    for (int64_t y = 0; y < local[1]; ++y)
      for (int64_t x = 0; x < local[0]; ++x) reset(items[k++], x, y, z);
  // Every item runs to the next BARRIER; all must stop at the same one (or all finish).
  while (true) {
    for (auto& item : items) step_until_barrier(item);
    const WorkItem& first = items.front();
    for (const auto& item : items) {
      if (item.done == first.done && item.pc == first.pc) continue;
      const WorkItem& waiting = item.done ? first : item; // one that stopped at a BARRIER
      const WorkItem& other = item.done ? item : first;
      fail(waiting, waiting.pc,
           "the work items of a group diverge: this one waits at a BARRIER while local id (" +
               std::to_string(other.local[0]) + "," + std::to_string(other.local[1]) + "," +
               std::to_string(other.local[2]) + ") " +
               (other.done ? "has finished" : "waits at instruction " + std::to_string(other.pc)));
    }
    if (first.done) return;
    if (ir_.instructions[first.pc].op == TG_OP_BARRIER) release_reads();
    if (const Instruction& ins = ir_.instructions[first.pc]; ins.op == TG_OP_WMMA)
      unit_mma(items, first.pc, wmma_m16n8k16_unit(ir_.instructions[ins.src[0]].dtype), "WMMA m16n8k16");
    if (ir_.instructions[first.pc].op == TG_OP_WGMMA) warpgroup_mma(items, first.pc);
    if (const Instruction& ins = ir_.instructions[first.pc]; ins.op == TG_OP_MMA) {
      const int64_t index = ins.arg0 & 0xFFFFFFFF;     // below: TG_MMA_* flags
      const tg_matrix_unit& u = units_[size_t(index)]; // checked by check_mma
      unit_mma(items, first.pc, u,
               "MMA on matrix unit " + std::to_string(index) + " (\"" + matrix_unit_name(u) + "\")");
    }
    for (auto& item : items) ++item.pc;
  }
}

// D[r][col] of a matrix op: C's element plus A's row r times B's column col (row-major m x k and
// k x n in double, so products are exact), rounded to float once.
double mma_element(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c,
                   int r, int col, int k, int n) {
  double sum = c[size_t(r * n + col)];
  for (int kk = 0; kk < k; ++kk) sum += a[size_t(r * k + kk)] * b[size_t(kk * n + col)];
  return double(float(sum));
}

// A warpgroup is 128 consecutive work items (4 warps). A and B are read from local memory at the
// byte offsets of the core-matrix layout (wgmma_address: B's n-major under kWgmmaBNMajor, both
// 128-byte swizzled under kWgmmaSwizzle128) from the address every item of the
// warpgroup names; products are exact in double and the sum is rounded to float once, as for WMMA.
void Interpreter::warpgroup_mma(std::vector<WorkItem>& items, size_t i) {
  const Instruction& ins = ir_.instructions[i];
  const WgmmaShape shape = *wgmma_shape(wgmma_shape_code(ins.arg0)); // validated
  const WgmmaStrides st = wgmma_unpack(ins.arg1);
  if (items.size() % size_t(shape.threads) != 0)
    fail(items.front(), i,
         "WGMMA needs whole warpgroups: the work group has " + std::to_string(items.size()) +
             " items, not a multiple of " + std::to_string(shape.threads));
  // The tile element at byte `offset` from operand k's address (bounds checked).
  auto tile = [&](const WorkItem& item, int k, int row, int kk) {
    const Instruction& index = ir_.instructions[ins.src[size_t(k)]];
    const Memory& mem = memory_[index.src[0]];
    const uint64_t at = wgmma_address(ins.arg0, st, k, operand(item, index.src[1], 0).u * 2, row, kk);
    if (at + 2 > mem.bytes)
      fail(item, i,
           std::string(k == 0 ? "A" : "B") + " reads byte " + std::to_string(at) + ", outside " + mem.what +
               " (" + std::to_string(mem.bytes) + " bytes)");
    return load_element(mem.dtype, mem.data + at).f;
  };
  std::vector<double> a(size_t(shape.m * shape.k)), b(size_t(shape.k * shape.n)),
      c(size_t(shape.m * shape.n));
  const bool deferred = wgmma_defers_reads(ins.arg0);
  for (size_t w = 0; w < items.size(); w += size_t(shape.threads)) {
    const WorkItem& first = items[w];
    start_run(i, w);
    for (int k = 0; k < 2; ++k) { // one tile per warpgroup, 16-byte aligned (the descriptor drops 4 bits)
      const uint32_t idx_src = ir_.instructions[ins.src[size_t(k)]].src[1];
      const uint64_t base = operand(first, idx_src, 0).u;
      if (base * 2 % 16 != 0)
        fail(first, i,
             std::string(k == 0 ? "A" : "B") + "'s address (element " + std::to_string(base) +
                 ") is not a multiple of 16 bytes");
      if (const std::string why = wgmma_swizzle_start_error(ins.arg0, k, base * 2); !why.empty())
        fail(first, i,
             std::string(k == 0 ? "A" : "B") + "'s address (byte " + std::to_string(base * 2) +
                 ") is off: " + why);
      for (int t = 1; t < shape.threads; ++t)
        if (operand(items[w + size_t(t)], idx_src, 0).u != base)
          fail(items[w + size_t(t)], i,
               std::string(k == 0 ? "A" : "B") + "'s address differs within the warpgroup (element " +
                   std::to_string(operand(items[w + size_t(t)], idx_src, 0).u) + ", its first item names " +
                   std::to_string(base) + ")");
    }
    for (int r = 0; r < shape.m; ++r)
      for (int kk = 0; kk < shape.k; ++kk) a[size_t(r * shape.k + kk)] = tile(first, 0, r, kk);
    for (int col = 0; col < shape.n; ++col)
      for (int kk = 0; kk < shape.k; ++kk) b[size_t(kk * shape.n + col)] = tile(first, 1, col, kk);
    if (deferred)
      for (int k = 0; k < 2; ++k) {
        const Instruction& index = ir_.instructions[ins.src[size_t(k)]];
        const uint64_t base = operand(first, index.src[1], 0).u * 2;
        std::vector<uint32_t> bytes;
        for (int row = 0; row < (k == 0 ? shape.m : shape.n); ++row)
          for (int kk = 0; kk < shape.k; ++kk) {
            const uint64_t at = wgmma_address(ins.arg0, st, k, base, row, kk);
            bytes.push_back(uint32_t(at));
            bytes.push_back(uint32_t(at + 1));
          }
        defer_reads(i, w, size_t(shape.threads), index.src[0], std::move(bytes));
      }
    for (int t = 0; t < shape.threads; ++t)
      for (int e = 0; e < shape.c_lanes; ++e) {
        auto [r, col] = wgmma_c_element(ins.arg0, t, e);
        c[size_t(r * shape.n + col)] = operand(items[w + size_t(t)], ins.src[2], unsigned(e)).f;
      }
    for (int t = 0; t < shape.threads; ++t) {
      Lane* out = result(items[w + size_t(t)], i);
      for (int e = 0; e < shape.c_lanes; ++e) {
        auto [r, col] = wgmma_c_element(ins.arg0, t, e);
        out[e] = float_lane(mma_element(a, b, c, r, col, shape.k, shape.n));
      }
    }
  }
}

namespace {
std::string lane_text(tg_dtype dt, Lane v) {
  if (is_float(dt)) {
    std::string s = std::to_string(v.f);
    while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) s.pop_back();
    return s;
  }
  return is_signed(dt) ? std::to_string(v.i) : std::to_string(v.u);
}

bool same_value(tg_dtype dt, Lane x, Lane y) {
  if (is_float(dt) && std::isnan(x.f) && std::isnan(y.f)) return true;
  return x.u == y.u;
}
} // namespace

// The unit's items are consecutive work items in local-id order (x fastest), 2^item_bits at a
// time. A, B and C are gathered through the unit's layouts; an A or B position that several items
// hold must come with the same value from each. A local-memory unit reads A and B itself, at
// matrix_local_index from the start every item of the group names. Float C: the products and their
// sum are exact in double (up to the double sum's own rounding) and rounded once to c_dtype;
// integer C is exact and wraps to c_dtype.
void Interpreter::unit_mma(std::vector<WorkItem>& items, size_t i, const tg_matrix_unit& u,
                           const std::string& unit) {
  const Instruction& ins = ir_.instructions[i];
  const size_t count = matrix_items(u);
  if (items.size() % count != 0)
    fail(items.front(), i,
         unit + " needs whole groups of " + std::to_string(count) + " work items: the work group has " +
             std::to_string(items.size()));
  struct Held {
    Lane value{};
    int64_t item = -1, element = 0;
  };
  const MatrixOperand ops[] = {MatrixOperand::a, MatrixOperand::b, MatrixOperand::c};
  const tg_dtype dtypes[] = {u.a_dtype, u.b_dtype, u.c_dtype};
  const bool local = matrix_local(u);
  std::vector<Held> held[3];
  std::vector<Lane> read[2]; // a local unit's A and B, row-major
  for (size_t g = 0; g < items.size(); g += count) {
    if (local) {
      start_run(i, g);
      read_local_operand(items, g, i, u, MatrixOperand::a, unit, read[0]);
      read_local_operand(items, g, i, u, MatrixOperand::b, unit, read[1]);
    }
    for (size_t k = local ? 2 : 0; k < 3; ++k) {
      const tg_matrix_layout& l = matrix_layout(u, ops[k]);
      const MatrixElement ext = matrix_extent(u, ops[k]);
      held[k].assign(size_t(ext.row * ext.col), Held{});
      for (uint32_t t = 0; t < count; ++t)
        for (uint32_t e = 0; e < matrix_lanes(l); ++e) {
          const MatrixElement p = matrix_element(l, t, e);
          Held& h = held[k][size_t(p.row * ext.col + p.col)];
          const Lane v = operand(items[g + t], ins.src[k], e);
          if (h.item >= 0 && !same_value(dtypes[k], h.value, v))
            fail(items[g + t], i,
                 unit + ": " + operand_name(ops[k]) + "(" + std::to_string(p.row) + ", " +
                     std::to_string(p.col) + ") is passed as " + lane_text(dtypes[k], h.value) +
                     " by work item " + std::to_string(h.item) + " (element " + std::to_string(h.element) +
                     ") and as " + lane_text(dtypes[k], v) + " by work item " + std::to_string(t) +
                     " (element " + std::to_string(e) + ") of the unit's items; replicas must be equal");
          if (h.item < 0) h = {v, int64_t(t), int64_t(e)};
        }
    }
    for (size_t k = 0; local && k < 2; ++k) {
      held[k].assign(read[k].size(), Held{});
      for (size_t x = 0; x < read[k].size(); ++x) held[k][x].value = read[k][x];
    }
    const bool float_c = is_float(u.c_dtype);
    const bool int_products = !is_float(u.a_dtype) && !is_float(u.b_dtype);
    auto as_double = [](tg_dtype dt, Lane v) {
      return is_float(dt) ? v.f : is_signed(dt) ? double(v.i) : double(v.u);
    };
    for (uint32_t t = 0; t < count; ++t) {
      Lane* out = result(items[g + t], i);
      for (uint32_t e = 0; e < matrix_lanes(u.c); ++e) {
        const MatrixElement p = matrix_element(u.c, t, e);
        const Lane c = held[2][size_t(p.row * int(u.n) + p.col)].value;
        if (!float_c && int_products) { // exact modulo 2^64, then wrapped to C's width
          uint64_t sum = c.u;
          for (uint32_t kk = 0; kk < u.k; ++kk)
            sum += held[0][size_t(p.row * int(u.k) + int(kk))].value.u *
                   held[1][size_t(kk * u.n + uint32_t(p.col))].value.u;
          out[e] = int_lane(wrap(u.c_dtype, sum));
          continue;
        }
        double sum = as_double(u.c_dtype, c);
        for (uint32_t kk = 0; kk < u.k; ++kk)
          sum += as_double(u.a_dtype, held[0][size_t(p.row * int(u.k) + int(kk))].value) *
                 as_double(u.b_dtype, held[1][size_t(kk * u.n + uint32_t(p.col))].value);
        out[e] = float_c ? float_lane(round_to(u.c_dtype, sum))
                         : cast_lane(float_lane(sum), TG_DTYPE_FLOAT64, u.c_dtype);
      }
    }
  }
}

void Interpreter::read_local_operand(std::vector<WorkItem>& items, size_t g, size_t i,
                                     const tg_matrix_unit& u, MatrixOperand op, const std::string& unit,
                                     std::vector<Lane>& out) {
  const Instruction& ins = ir_.instructions[i];
  const size_t k = op == MatrixOperand::a ? 0 : 1;
  const std::string name = operand_name(op);
  const Instruction& index = ir_.instructions[ins.src[k]];
  if (index.op != TG_OP_INDEX || !index.is_local()) // parse-time rule too
    fail(items[g], i,
         unit + " reads " + name + " from local memory: source " + std::to_string(k) +
             " must be an INDEX into a DEFINE_LOCAL");
  const Memory& mem = memory_[index.src[0]];
  const tg_dtype idx_dtype = ir_.instructions[index.src[1]].dtype;
  const Lane start = operand(items[g], index.src[1], 0);
  if (is_signed(idx_dtype) && start.i < 0)
    fail(items[g], i, unit + ": " + name + "'s start (element " + std::to_string(start.i) + ") is negative");
  for (size_t t = 1; t < matrix_items(u); ++t)
    if (const Lane other = operand(items[g + t], index.src[1], 0); other.u != start.u)
      fail(items[g + t], i,
           unit + ": " + name + "'s start differs within the unit's items (element " +
               lane_text(idx_dtype, other) + " in work item " + std::to_string(t) + ", " +
               lane_text(idx_dtype, start) + " in work item 0)");
  const MatrixStrides strides = matrix_strides_unpack(ins.arg1);
  const MatrixElement ext = matrix_extent(u, op);
  const size_t size = dtype_size(mem.dtype), elements = mem.bytes / size;
  const bool deferred = (ins.arg0 & TG_MMA_DEFER_READS) != 0;
  std::vector<uint32_t> bytes;
  out.assign(size_t(ext.row * ext.col), Lane{});
  for (int r = 0; r < ext.row; ++r)
    for (int c = 0; c < ext.col; ++c) {
      const uint64_t at = matrix_local_index(u, op, strides, start.u, r, c);
      if (at >= elements)
        fail(items[g], i,
             unit + ": " + name + "(" + std::to_string(r) + ", " + std::to_string(c) + ") is at element " +
                 std::to_string(at) + ", outside " + mem.what + " (" + std::to_string(elements) + " " +
                 dtype_name(mem.dtype) + " elements; " + name + " starts at element " +
                 std::to_string(start.u) + ")");
      out[size_t(r * ext.col + c)] = load_element(mem.dtype, mem.data + at * size);
      for (size_t b = 0; deferred && b < size; ++b) bytes.push_back(uint32_t(at * size + b));
    }
  if (deferred) defer_reads(i, g, matrix_items(u), index.src[0], std::move(bytes));
}

void Interpreter::start_run(size_t i, size_t first) {
  if (!run_start_[i]) return;
  ++runs_[first]; // a later run: the reads of the earlier ones end by the next BARRIER
  for (PendingRead& p : pending_)
    if (p.first == first && p.run < runs_[first]) p.leaving = true;
}

void Interpreter::defer_reads(size_t op, size_t first, size_t count, size_t memory,
                              std::vector<uint32_t> bytes) {
  std::vector<uint32_t>& counts = pending_count_[memory];
  if (counts.empty()) counts.assign(memory_[memory].bytes, 0u);
  for (uint32_t b : bytes) ++counts[b];
  pending_.push_back({op, first, count, memory, runs_[first], false, std::move(bytes)});
}

void Interpreter::release_reads() {
  std::erase_if(pending_, [&](const PendingRead& p) {
    if (!p.leaving) return false;
    for (uint32_t b : p.bytes) --pending_count_[p.memory][b];
    return true;
  });
}

void Interpreter::check_store(const WorkItem& item, size_t i, size_t memory, size_t at, size_t bytes) const {
  const std::vector<uint32_t>& counts = pending_count_[memory];
  if (counts.empty()) return;
  for (size_t b = at; b < at + bytes; ++b) {
    if (counts[b] == 0) continue;
    for (const PendingRead& p : pending_) {
      if (p.memory != memory || std::find(p.bytes.begin(), p.bytes.end(), uint32_t(b)) == p.bytes.end())
        continue;
      const bool wgmma = ir_.instructions[p.op].op == TG_OP_WGMMA;
      fail(item, i,
           "stores to byte " + std::to_string(b) + " of " + memory_[memory].what + ", which the deferred " +
               (wgmma ? "WGMMA at instruction " + std::to_string(p.op) + " (warpgroup " +
                            std::to_string(p.first / p.count) + ")"
                      : "MMA at instruction " + std::to_string(p.op) + " (work items " +
                            std::to_string(p.first) + " to " + std::to_string(p.first + p.count - 1) + ")") +
               " may still read: no BARRIER has followed " + (wgmma ? "that warpgroup's" : "those items'") +
               " next run or the end of its loop");
    }
  }
}

void Interpreter::run(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local) {
  for (int a = 0; a < 3; ++a)
    if (local[size_t(a)] == 0)
      throw std::invalid_argument("kernel '" + ir_.name + "': local_size[" + std::to_string(a) + "] is 0");
  for (int64_t z = 0; z < global[2]; ++z)
    for (int64_t y = 0; y < global[1]; ++y)
      for (int64_t x = 0; x < global[0]; ++x) run_group({x, y, z}, local);
}

} // namespace

void interpret(const KernelIR& ir, std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
               std::span<const std::span<std::byte>> buffers, std::span<const tg_scalar_arg> scalars,
               std::span<const tg_matrix_unit> units) {
  Interpreter(ir, buffers, scalars, units).run(global, local);
}

} // namespace tg::sdk
