// The tensor core opts: matmul detection; TC, the split of m, n and k by a declared matrix unit and the
// reduce as a chain of matrix ops over its layouts (tg/sdk/matrix_unit.hpp), from registers or local memory.
#include "kernel/codegen/lower.hpp"
#include "kernel/codegen/lowerer.hpp"

#include "kernel/schedule/buffer.hpp"

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/wmma.hpp>

#include <algorithm>
#include <string>

namespace tg::lower_detail {

UOpRef unwidened_operand(UOpRef x) {
  // the CAST may sit under movement ops (a view of a cast buffer): the same movement of its source
  std::vector<UOpRef> moves;
  UOpRef y = x;
  while (is_movement(y->op())) {
    moves.push_back(y);
    y = y->src(0);
  }
  if (y->op() != Ops::CAST) return x;
  const DType from = y->src(0)->dtype(), to = y->dtype();
  if (!(to.is_float() && (from == dtypes::float16 || from == dtypes::bfloat16)) &&
      !(to.is_int() && from.is_int() && from.itemsize() < to.itemsize()))
    return x;
  UOpRef out = y->src(0);
  for (auto it = moves.rbegin(); it != moves.rend(); ++it)
    out = UOp::make((*it)->op(), from, {out}, (*it)->arg());
  return out;
}

std::optional<MatmulAxes> Lowerer::matmul_axes(const Dims& in_shape, const std::vector<int64_t>& out_dims,
                                               const std::vector<int64_t>& in_dims, bool unit_operands) {
  UOpRef v = first_reduce_->src(0);
  if (v->op() == Ops::CAST && v->dtype().is_float()) v = v->src(0); // a half product summed in float
  if (v->op() != Ops::MUL) return std::nullopt;
  UOpRef a = v->src(0), b = v->src(1);
  if (unit_operands) {
    a = unwidened_operand(a);
    b = unwidened_operand(b);
  }
  auto operand_strides = [&](const UOpRef& x) {
    std::vector<Dims> st;
    strides_seen_.clear();
    leaf_strides(x, {}, in_shape, st);
    strides_seen_.clear();
    return st;
  };
  const std::vector<Dims> sa = operand_strides(a), sb = operand_strides(b);
  auto varies = [](const std::vector<Dims>& st, int64_t dim) {
    return std::any_of(st.begin(), st.end(), [&](const Dims& d) { return d[size_t(dim)] != 0; });
  };
  MatmulAxes mm; // m: only a varies along it, n: only b; k: a reduce axis both vary along
  int64_t m_dim = -1, n_dim = -1, k_dim = -1;
  for (size_t i = 0; i < out_dims.size(); ++i) {
    const bool va = varies(sa, in_dims[i]), vb = varies(sb, in_dims[i]);
    if (va && !vb) {
      mm.m2 = mm.m;
      mm.m = int(out_dims[i]);
      m_dim = in_dims[i];
    }
    if (vb && !va) {
      mm.n = int(out_dims[i]);
      n_dim = in_dims[i];
    }
  }
  for (size_t j = 0; j < reduce_dims_.size(); ++j)
    if (varies(sa, reduce_dims_[j]) && varies(sb, reduce_dims_[j])) {
      mm.k = int(out_shape_.size() + j);
      k_dim = reduce_dims_[j];
    }
  if (mm.m < 0 || mm.n < 0 || mm.k < 0) return std::nullopt;
  auto unit_stride = [](const std::vector<Dims>& st, int64_t dim) {
    return !st.empty() &&
           std::all_of(st.begin(), st.end(), [&](const Dims& d) { return d[size_t(dim)] == 1; });
  };
  mm.a_inner = unit_stride(sa, k_dim) ? mm.k : unit_stride(sa, m_dim) ? mm.m : -1;
  mm.b_inner = unit_stride(sb, n_dim) ? mm.n : unit_stride(sb, k_dim) ? mm.k : -1;
  mm.a = to_abi(a->dtype());
  mm.b = to_abi(b->dtype());
  mm.float_sum = first_reduce_->dtype().is_float();
  if (unit_operands) {
    tc_a_ = a;
    tc_b_ = b;
  }
  return mm;
}

// TC (amount: which of the device's matrix units) splits m, n and k by the unit's m, n and k
// (innermost parts) and makes LOCAL_ID 0 the unit's cooperating work items. A unit that reads A
// and B from local memory needs its operands staged (local_reduce).
void Lowerer::apply_tc(const Opt& o, const KernelInfo& info,
                       const std::function<void(const std::string&)>& refuse) {
  if (!options_.tensor_cores())
    refuse("the device declares no matrix units (and has no TG_FEATURE_TENSOR_CORES m16n8k16)");
  if (!info.matmul) refuse("the kernel is not a sum over k of a[m,k] * b[k,n]");
  const MatmulAxes mm = *info.matmul;
  if (o.axis != mm.k) refuse("TC names the reduce axis k of the matmul, axis " + std::to_string(mm.k));
  if (o.amount < 0 || o.amount >= int64_t(options_.matrix_units.size()))
    refuse("TC's amount names one of the device's " + std::to_string(options_.matrix_units.size()) +
           " matrix units (0-based)");
  const tg_matrix_unit& unit = options_.matrix_units[size_t(o.amount)].unit;
  if (!unit_fits(unit, mm))
    refuse("matrix unit " + std::to_string(o.amount) + " \"" + sdk::matrix_unit_name(unit) + "\" (" +
           sdk::matrix_unit_summary(unit) + ") does not take this matmul's operands (" +
           std::string(sdk::dtype_name(mm.a)) + ", " + sdk::dtype_name(mm.b) +
           (mm.float_sum ? ", a float sum)" : ", an integer sum)"));
  if (local_axes_ > 0 || !upcasts_.empty() || !unrolls_.empty() ||
      std::any_of(plan_.begin(), plan_.end(), [](const AxisPlan& a) { return a.parts.size() != 1; }))
    refuse("TC must be the first optimization");
  const uint32_t threads = sdk::matrix_items(unit);
  if (options_.max_local_threads < threads || options_.max_local_size[0] < threads)
    refuse("the unit's " + std::to_string(threads) + " work items do not fit the device's work group");
  const std::array<std::pair<int, int64_t>, 3> splits{
      {{mm.m, int64_t(unit.m)}, {mm.n, int64_t(unit.n)}, {mm.k, int64_t(unit.k)}}};
  for (auto [axis, size] : splits)
    if (plan_[size_t(axis)].size % size != 0)
      refuse("axis " + std::to_string(axis) + " (" + std::to_string(plan_[size_t(axis)].size) +
             ") is not a multiple of " + std::to_string(size));
  for (auto [axis, size] : splits) {
    AxisPlan& ax = plan_[size_t(axis)];
    ax.parts[0].size /= size;
    ax.parts.push_back(Part{OptOp::TC, size, false});
  }
  local_axes_ = 1;
  local_[0] = threads;
  tc_ = mm;
  tc_unit_ = int(o.amount);
  tc_local_ = sdk::matrix_local(unit);
}

// The row or column a layout gives work item `item` (a UOp below 2^item_bits) at element
// `element`: the XOR of the entries of their set bits (abi.h). Runs of item bits whose entries are
// consecutive powers of two become one term (lane / 2^b % 2^len * entry), and where no two entries
// share a bit the XOR is their sum, so mma.sync's C row is lane / 4 + 8 * (element / 2).
UOpRef Lowerer::layout_index(const uint16_t* item_entries, const uint16_t* element_entries,
                             uint32_t item_bits, const UOpRef& item, uint32_t element) const {
  int64_t constant = 0, used = 0;
  bool overlap = false;
  for (uint32_t b = 0; b < TG_MATRIX_MAX_BITS; ++b)
    if (element >> b & 1) constant ^= element_entries[b];
  std::vector<UOpRef> terms;
  for (uint32_t b = 0; b < item_bits;) {
    const int64_t e = item_entries[b];
    if (e == 0) {
      ++b;
      continue;
    }
    uint32_t len = 1;
    while (b + len < item_bits && item_entries[b + len] == (e << len)) ++len;
    const int64_t bits = ((int64_t(1) << len) - 1) * e;
    overlap = overlap || (used & bits) != 0 || (e & (e - 1)) != 0;
    used |= bits;
    UOpRef t = b ? idiv(item, idx_const(int64_t(1) << b)) : item;
    if (b + len < item_bits) t = t % idx_const(int64_t(1) << len);
    terms.push_back(e == 1 ? t : t * idx_const(e));
    b += len;
  }
  overlap = overlap || (used & constant) != 0;
  UOpRef out = idx_const(constant);
  for (const UOpRef& t : terms) out = overlap ? (out ^ t) : out + t;
  return simplify(out);
}

// The index within its TC part of axis m, n or k: a fragment position being loaded
// (tc_override_), else the C position of the output lane being built.
UOpRef Lowerer::tc_index(size_t axis) const {
  if (auto it = tc_override_.find(axis); it != tc_override_.end()) return it->second;
  const UOpRef& lane = local_ids_.at(0);
  const tg_matrix_unit& u = tc_unit();
  if (int(axis) == tc_->m)
    return layout_index(u.c.item_row, u.c.element_row, u.item_bits, lane, uint32_t(tc_digit_));
  if (int(axis) == tc_->n)
    return layout_index(u.c.item_col, u.c.element_col, u.item_bits, lane, uint32_t(tc_digit_));
  throw UOpError("codegen: the TC part of axis " + std::to_string(axis) + " has no fragment position");
}

// Under STAGE, the fragment positions (2j, 2j+1) being loaded (tc_override_) as one read of two
// neighbouring elements of the operand's tile: k is the tile's innermost axis (plan_stage) and the
// TC part its innermost part, so the pair is adjacent; it is one aligned 32-bit word if the index
// is even (docs/abi.md 5.3: such a 2-lane LOAD of local memory starts at a multiple of 4 bytes).
// nullptr where that does not hold (the lanes are then read one by one).
UOpRef Lowerer::tc_staged_pair(const UOpRef& operand) const {
  const auto k = size_t(tc_->k);
  if (options_.vector_bytes < 4 || plan_[k].parts.back().op != OptOp::TC) return nullptr; // scalar code only
  for (const Staged& s : staged_) {
    if (s.operand != operand) continue;
    if (s.layout.empty() || s.layout.back() != k) return nullptr;
    UOpRef idx = stage_read_offset() + idx_const(s.offset);
    for (size_t i = 0; i < s.layout.size(); ++i)
      idx = idx + within_index(s.layout[i]) * idx_const(s.local_strides[i]);
    idx = simplify(idx);
    const auto [rest, c] = split_const(idx);
    if (c % 2 != 0 || !multiple_of(rest, 2)) return nullptr;
    UOpRef ptr = UOp::make(Ops::INDEX, stage_buffer_->dtype(), {stage_buffer_, idx, stage_barrier_});
    return UOp::make(Ops::LOAD, operand->dtype().vec(2), {ptr});
  }
  return nullptr;
}

// The first reduce under TC: every output lane of one upcast lane shares a chain of matrix ops
// over the k loop; each takes its C position from the result. A and B load the operands at the
// positions the unit's layout gives this work item (tg/sdk/matrix_unit.hpp).
UOpRef Lowerer::tc_reduce(const UOpRef& r, const Frame& f) {
  if (tc_local_) return local_reduce(r, f);
  const Dims& in_shape = shapes_(r->src(0));
  if (f.base != out_shape_)
    throw OptError("optimization TC: the kernel's reduce is not read in the output's index space");
  UOpRef& acc = tc_acc_[cur_lane_];
  if (!acc) {
    const size_t ndim = out_shape_.size();
    const MatrixUnitChoice& choice = options_.matrix_units.at(size_t(tc_unit_));
    const tg_matrix_unit& u = choice.unit;
    std::vector<UOpRef> rest_range(reduce_dims_.size()), ranges;
    for (size_t j = 0; j < reduce_dims_.size(); ++j) {
      const AxisPlan& ax = plan_[ndim + j];
      if (ax.rest() == 1) continue;
      rest_range[j] = range_for(r.get(), size_t(reduce_dims_[j]), ax.rest());
      ranges.push_back(rest_range[j]);
    }
    if (!staged_.empty()) { // the fragments come from the work group's tiles in local memory
      stage_copies(r, f);
      for (const auto& [axis, rng] : stage_ranges_) ranges.push_back(rng);
    }
    // the operand at matrix position (row, col) of its fragment: `over` gives the TC parts
    auto operand = [&](const UOpRef& x, std::map<size_t, UOpRef> over) {
      tc_override_ = std::move(over);
      if (!staged_.empty()) {
        UOpRef out = staged_load(x);
        tc_override_.clear();
        return out;
      }
      UOpRef valid = UOp::constant(dtypes::bool_, true);
      std::vector<UOpRef> idx;
      for (size_t d = 0; d < ndim; ++d) idx.push_back(output_index(d, rest_idx_, cur_lane_, valid));
      std::vector<UOpRef> in_idx = reduce_input_index(r, f, idx);
      for (size_t j = 0; j < reduce_dims_.size(); ++j)
        in_idx[size_t(reduce_dims_[j])] = reduce_index(j, rest_range[j], 0);
      tc_override_.clear();
      ++reduce_depth_;
      UOpRef out = value(x, Frame{in_idx, in_shape, {}});
      --reduce_depth_;
      return out;
    };
    const UOpRef& lane = local_ids_.at(0);
    const auto m = size_t(tc_->m), n = size_t(tc_->n), k = size_t(tc_->k);
    // the operand's lanes; where element bit 0 steps k by one, lanes 2j and 2j+1 are neighbours
    // along k: one word from a tile where it can be
    auto lanes = [&](const UOpRef& x, const tg_matrix_layout& l, size_t row_axis, size_t col_axis,
                     bool k_is_col) {
      auto position = [&](uint32_t i) {
        return std::map<size_t, UOpRef>{
            {row_axis, layout_index(l.item_row, l.element_row, u.item_bits, lane, i)},
            {col_axis, layout_index(l.item_col, l.element_col, u.item_bits, lane, i)}};
      };
      const bool pairs = l.element_bits >= 1 && (k_is_col ? l.element_row[0] == 0 && l.element_col[0] == 1
                                                          : l.element_row[0] == 1 && l.element_col[0] == 0);
      std::vector<UOpRef> out;
      const uint32_t count = sdk::matrix_lanes(l);
      for (uint32_t i = 0; i < count; i += pairs ? 2 : 1) {
        UOpRef word;
        if (pairs && !staged_.empty()) {
          tc_override_ = position(i);
          word = tc_staged_pair(x);
          tc_override_.clear();
        }
        for (uint32_t j = i; j < i + (pairs ? 2 : 1); ++j)
          out.push_back(word ? UOp::make(Ops::GEP, x->dtype(), {word}, int64_t(j - i))
                             : operand(x, position(j)));
      }
      return out;
    };
    std::vector<UOpRef> a_lanes = lanes(tc_a_, u.a, m, k, true), b_lanes = lanes(tc_b_, u.b, k, n, false);
    UOpRef A = UOp::make(Ops::VECTORIZE, tc_a_->dtype().vec(uint16_t(a_lanes.size())), std::move(a_lanes));
    UOpRef B = UOp::make(Ops::VECTORIZE, tc_b_->dtype().vec(uint16_t(b_lanes.size())), std::move(b_lanes));
    const DType cd = dtype_from_abi(u.c_dtype).vec(uint16_t(sdk::matrix_lanes(u.c)));
    const UOpRef zero = cd.is_float() ? UOp::constant(cd, 0.0) : UOp::constant(cd, int64_t{0});
    UOpRef mma = choice.wmma ? UOp::make(Ops::WMMA, cd, {A, B, zero}, int64_t(TG_WMMA_M16N8K16))
                             : UOp::make(Ops::MMA, cd, {A, B, zero}, choice.index);
    alu_inside_ += 2 * int64_t(u.m) * u.n * u.k / sdk::matrix_items(u); // per work item
    acc = tc_accumulate(r, mma, ranges, 1);
  }
  return tc_output(r, f, acc);
}

// The accumulator over the reduce's remaining loops (`product` is one pass of its body, `ops` matrix
// ops per pass), with the reduce's loop and size counts for the kernel's statistics.
UOpRef Lowerer::tc_accumulate(const UOpRef& r, const UOpRef& product, const std::vector<UOpRef>& ranges,
                              int64_t ops) {
  UOpRef acc = product;
  if (!ranges.empty()) {
    std::vector<UOpRef> src{product};
    src.insert(src.end(), ranges.begin(), ranges.end());
    acc = UOp::make(Ops::REDUCE, product->dtype(), std::move(src), ReduceArg{Ops::ADD, {}});
  }
  int64_t iters = 1;
  for (const auto& rg : ranges) iters *= rg->src(1)->arg_int();
  reduce_iters_ = std::max(reduce_iters_, iters * ops);
  int64_t count = 1;
  const Dims& in_shape = shapes_(r->src(0));
  for (auto a : r->arg_if<ReduceArg>()->axes) count *= in_shape[size_t(a)];
  reduce_size_ = std::max(reduce_size_, count);
  return acc;
}

// This lane's element of the accumulator, as the reduce's dtype, masked where the frame is outside.
UOpRef Lowerer::tc_output(const UOpRef& r, const Frame& f, const UOpRef& acc) {
  const Dims& out_shape = shapes_(r);
  UOpRef out = UOp::make(Ops::GEP, DType{acc->dtype().scalar}, {acc}, int64_t(tc_digit_));
  if (out->dtype() != r->dtype()) out = cast(out, r->dtype());
  UOpRef valid = UOp::constant(dtypes::bool_, true);
  if (!f.mops.empty() || f.base != out_shape) valid = tracker(out_shape, f.mops).to_index(f.idx).second;
  return is_true(valid) ? out : where(valid, out, const_like(out, int64_t{0}));
}

// The first reduce under a local-memory unit: per upcast lane, one chain of MMAs through the unit
// k steps of a staged tile (A at the work items' first row of m, B at their first column of n, one
// unit k further each op), summed over the tile loop; each output lane takes its C position with a
// GEP. The chain is one run for the renderer (one fence, one commit and wait per tile).
UOpRef Lowerer::local_reduce(const UOpRef& r, const Frame& f) {
  if (f.base != out_shape_)
    throw OptError("optimization TC: the kernel's reduce is not read in the output's index space");
  if (staged_.empty())
    throw OptError("optimization TC: matrix unit \"" + sdk::matrix_unit_name(tc_unit()) +
                   "\" reads A and B from local memory: they must be staged (a STAGE of k after it)");
  UOpRef& acc = tc_acc_[cur_lane_];
  if (!acc) {
    const size_t ndim = out_shape_.size();
    const MatrixUnitChoice& choice = options_.matrix_units.at(size_t(tc_unit_));
    const tg_matrix_unit& u = choice.unit;
    const auto m = size_t(tc_->m), n = size_t(tc_->n), k = size_t(tc_->k);
    std::vector<UOpRef> ranges;
    for (size_t j = 0; j < reduce_dims_.size(); ++j) {
      const AxisPlan& ax = plan_[ndim + j];
      if (ax.rest() > 1) ranges.push_back(range_for(r.get(), size_t(reduce_dims_[j]), ax.rest()));
    }
    stage_copies(r, f); // makes the tile loop's range (the same node as above)
    const int64_t steps = within_size(k) / int64_t(u.k);
    const Staged *sa = nullptr, *sb = nullptr;
    for (const Staged& s : staged_) (s.operand == tc_a_ ? sa : sb) = &s;
    // three or more sets of tiles (local_unit_sets): a run may go on reading its set while the next
    // tiles are copied
    const bool defer = stage_sets_ >= 3;
    auto start = [&](const Staged* s, size_t row_axis, int64_t k0) {
      tc_override_ = {{row_axis, idx_const(0)}};
      const UOpRef row0 = within_index(row_axis);
      tc_override_.clear();
      UOpRef idx = stage_read_offset() + idx_const(s->offset) + atom_tile_index_axes(*s, row0, idx_const(k0));
      return UOp::make(Ops::INDEX, stage_buffer_->dtype(), {stage_buffer_, simplify(idx), stage_barrier_});
    };
    // the atom strides: A along m and k, B along k and n (Staged::atom_axes are in that order)
    const sdk::MatrixStrides st{sa->atom_strides[0], sa->atom_strides[1], sb->atom_strides[0],
                                sb->atom_strides[1]};
    const DType cd = dtype_from_abi(u.c_dtype).vec(uint16_t(sdk::matrix_lanes(u.c)));
    UOpRef c = cd.is_float() ? UOp::constant(cd, 0.0) : UOp::constant(cd, int64_t{0});
    for (int64_t i = 0; i < steps; ++i) {
      const UOpRef a = start(sa, m, int64_t(u.k) * i), b = start(sb, n, int64_t(u.k) * i);
      if (choice.wgmma >= 0) // a 1.2/1.3 plugin's warpgroup op
        c = UOp::make(Ops::WGMMA, cd, {a, b, c},
                      std::vector<int64_t>{choice.index | choice.wgmma | (defer ? sdk::kWgmmaDeferReads : 0),
                                           sdk::wgmma_strides(choice.wgmma, st)});
      else
        c = UOp::make(Ops::MMA, cd, {a, b, c},
                      std::vector<int64_t>{choice.index | (defer ? TG_MMA_DEFER_READS : 0),
                                           sdk::matrix_strides_pack(st)});
    }
    alu_inside_ += 2 * int64_t(u.m) * u.n * u.k * steps / sdk::matrix_items(u); // per work item
    acc = tc_accumulate(r, c, ranges, steps);
  }
  return tc_output(r, f, acc);
}

} // namespace tg::lower_detail

namespace tg {

std::vector<MatrixUnitChoice> matrix_unit_choices(const std::vector<tg_matrix_unit>& declared,
                                                  const tg_device_properties& props, bool wmma_attribute,
                                                  bool wgmma_attribute) {
  std::vector<MatrixUnitChoice> out;
  for (size_t i = 0; i < declared.size(); ++i)
    if (declared[i].operand_source == TG_MATRIX_SOURCE_REGISTERS ||
        declared[i].operand_source == TG_MATRIX_SOURCE_LOCAL)
      out.push_back({declared[i], int64_t(i), false});
  if (!declared.empty() || !(props.features & TG_FEATURE_TENSOR_CORES)) return out;
  if (wmma_attribute)
    for (tg_dtype input : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16})
      out.push_back({sdk::wmma_m16n8k16_unit(input), TG_WMMA_M16N8K16, true});
  if (wgmma_attribute)
    for (const tg_matrix_unit& u : sdk::wgmma_units())
      out.push_back({u, sdk::wgmma_code(int(u.n)), false, sdk::wgmma_unit_flags(u)});
  return out;
}

} // namespace tg
