// The shared-memory opt STAGE: each reduce tile of a matmul's operands is copied once into local
// memory by the whole work group, and the products read it from there.
#include "kernel/codegen/lowerer.hpp"

#include "kernel/schedule/buffer.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <bit>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

namespace tg::lower_detail {

// STAGE's conditions on the kernel and the opts before it; the first STAGE finds the operands.
void Lowerer::apply_stage(const std::function<void(const std::string&)>& refuse) {
  if (options_.local_memory_bytes == 0) refuse("the device has no work-group local memory");
  if (!first_reduce_ || first_reduce_->arg_if<ReduceArg>()->op != Ops::ADD)
    refuse("STAGE needs a sum (of products)");
  if (axis_dim_.empty()) refuse("the kernel's outputs do not map to its reduce's kept dims");
  if (group_axis_ >= 0 || !unrolls_.empty() || !loops_.empty() ||
      std::any_of(plan_.begin(), plan_.end(),
                  [](const AxisPlan& a) { return a.padded != a.size || a.has(OptOp::LOOP); }))
    refuse("STAGE does not combine with GROUP, GROUPTOP, UNROLL, LOOP or PADTO");
  if (!staged_.empty()) return;
  UOpRef v = first_reduce_->src(0);
  if (v->op() == Ops::CAST && v->dtype().is_float()) v = v->src(0);
  if (v->op() != Ops::MUL) refuse("the reduce is not a sum of products a * b");
  // the tiles hold the operands without a widening CAST where both then have one dtype
  const bool strip = unwidened_operand(v->src(0))->dtype() == unwidened_operand(v->src(1))->dtype();
  if (!strip && v->src(0)->dtype() != v->src(1)->dtype())
    refuse("the product's operands differ in dtype (" + v->src(0)->dtype().name() + ", " +
           v->src(1)->dtype().name() + ")");
  const Dims& in_shape = shapes_(first_reduce_->src(0));
  stage_mul_ = v;
  for (const UOpRef& x : v->src()) {
    Staged s;
    s.operand = x;
    if (UOpRef h = unwidened_operand(x); strip && h != x) {
      s.operand = h;
      s.cast_to = x->dtype();
    }
    std::vector<Dims> st;
    strides_seen_.clear();
    leaf_strides(s.operand, {}, in_shape, st);
    strides_seen_.clear();
    s.strides.assign(in_shape.size(), 0);
    for (const Dims& leaf :
         st) // a dim any leaf varies along is in the tile; the first leaf's stride orders it
      for (size_t d = 0; d < leaf.size(); ++d)
        if (leaf[d] != 0 && s.strides[d] == 0) s.strides[d] = leaf[d];
    staged_.push_back(std::move(s));
  }
}

// The part of an axis inside one work group's tile: all but the rest (which STAGE keeps outermost).
int64_t Lowerer::within_size(size_t axis) const { return plan_[axis].padded / plan_[axis].rest(); }

// This thread's (and output lane's, fragment position's, tile step's) index within the tile.
UOpRef Lowerer::within_index(size_t axis) const {
  const auto digits = lane_digits(upcasts_, cur_lane_);
  UOpRef raw;
  for (const Part& p : plan_[axis].parts) {
    if (p.rest) continue;
    UOpRef pi = p.op == OptOp::UPCAST  ? idx_const(digits.at(size_t(p.lane_id)))
                : p.op == OptOp::TC    ? tc_index(axis)
                : p.op == OptOp::STAGE ? stage_ranges_.at(axis)
                                       : local_ids_.at(size_t(p.local_axis));
    raw = raw ? raw * idx_const(p.size) + pi : pi;
  }
  return raw ? raw : idx_const(0);
}

// Each operand's tile: the kernel axes it varies along with more than one index in the tile,
// reduce axes outermost, output axes innermost (neighbouring threads read neighbouring words).
void Lowerer::plan_stage() {
  int64_t bytes = 0;
  for (Staged& s : staged_) {
    s.layout.clear();
    // Under TC the reduce axes go innermost instead: a fragment's neighbouring k are then one
    // 32-bit word of the tile (A is m x k, B n x k in local memory; lower_tc.cpp: tc_staged_pair).
    const bool k_inner = tc_.has_value();
    for (size_t pass = 0; pass < 2; ++pass)
      for (size_t a = 0; a < plan_.size(); ++a) {
        const bool reduce_axis = a >= out_shape_.size();
        if (reduce_axis != ((pass == 0) != k_inner) || axis_dim_[a] < 0 || within_size(a) < 2) continue;
        if (s.strides[size_t(axis_dim_[a])] != 0) s.layout.push_back(a);
      }
    s.sums.clear();
    s.extents.clear();
    s.footprint = nullptr;
    for (size_t a : s.layout) {
      s.sums.push_back({a});
      s.extents.push_back(within_size(a));
    }
    if (!k_inner) footprint_tile(s);
    // A copy whose contiguous global axis is not the tile's innermost one writes local memory with
    // a stride: pad the rows by 16 bytes (rows stay 16-byte aligned for vector reads) so that those
    // writes fall into different banks. (A 1-element pad makes the f16 TC matmul ~20% slower, H200.)
    int64_t innermost_stride = std::numeric_limits<int64_t>::max(), fastest = -1;
    for (size_t i = 0; i < s.layout.size(); ++i)
      if (int64_t st = s.strides[size_t(axis_dim_[s.layout[i]])]; st > 0 && st < innermost_stride) {
        innermost_stride = st;
        fastest = int64_t(i);
      }
    // Under TC the rows are always padded: a warp reads fragment words from 8 rows (g) at 4
    // columns (t); 16 bytes of pad put those 32 words in 32 banks for rows of 32 words.
    const bool pad =
        !s.layout.empty() && ((fastest >= 0 && size_t(fastest) + 1 != s.layout.size()) || k_inner);
    s.count = 1;
    s.elements = 1;
    for (int64_t e : s.extents) s.elements *= e;
    if (tc_local_) { // the unit's atoms, unpadded (abi.h: tg_matrix_atom)
      const bool is_a = s.operand == tc_a_;
      const size_t row_axis = size_t(is_a ? tc_->m : tc_->n), k = size_t(tc_->k);
      const tg_matrix_unit& u = tc_unit();
      if (s.layout != std::vector<size_t>{row_axis, k} ||
          to_abi(s.operand->dtype()) != (is_a ? u.a_dtype : u.b_dtype))
        throw OptError("optimization TC: an operand's tile is not its rows x k of the unit's dtype");
      s.atom = &sdk::matrix_atom(u, is_a ? sdk::MatrixOperand::a : sdk::MatrixOperand::b);
      s.atom_axes = is_a ? std::array<size_t, 2>{row_axis, k} : std::array<size_t, 2>{k, row_axis};
      const sdk::MatrixElement ext = sdk::atom_extent(*s.atom);
      const std::array<int64_t, 2> extent{ext.row, ext.col};
      for (size_t i = 0; i < 2; ++i)
        if (within_size(s.atom_axes[i]) % extent[i] != 0)
          throw OptError("optimization TC: the " + std::to_string(within_size(row_axis)) + " x " +
                         std::to_string(within_size(k)) + " tile of " + (is_a ? "A" : "B") +
                         " is not made of whole " + std::to_string(ext.row) + " x " +
                         std::to_string(ext.col) + " atoms of unit \"" + sdk::matrix_unit_name(u) + "\"");
      // Atoms stack along their shorter side first (along m or n on a tie): the atoms a unit step
      // reads along k then lie together, and a quarter warp's 16-byte stores of an 8 x 8 atom
      // fill 128 contiguous bytes (stage_copies).
      const size_t first = extent[0] < extent[1] ? 0 : extent[1] < extent[0] ? 1 : (is_a ? 0 : 1);
      const int64_t atom = int64_t(1) << s.atom->offset_bits;
      s.atom_strides[first] = atom;
      s.atom_strides[1 - first] = atom * (within_size(s.atom_axes[first]) / extent[first]);
      const sdk::MatrixStrides st{s.atom_strides[0], s.atom_strides[1], 0, 0};
      if (!sdk::matrix_strides_error(st).empty())
        throw OptError("optimization TC: a tile of " + std::to_string(within_size(row_axis)) + " x " +
                       std::to_string(within_size(k)) + " puts atoms further apart than MMA's strides hold");
      s.local_strides.assign(s.layout.size(), 0);
      s.count = s.elements;
      const int64_t isz = s.operand->dtype().itemsize(), atom_bytes = atom * isz;
      bytes = (bytes + atom_bytes - 1) / atom_bytes * atom_bytes; // atoms start at multiples of their size
      s.offset = bytes / isz;
      bytes += s.count * isz;
      continue;
    }
    s.local_strides.assign(s.layout.size(), 1);
    for (size_t i = s.layout.size(); i-- > 0;) {
      s.local_strides[i] = s.count;
      s.count *= s.extents[i];
      if (pad && i + 1 == s.layout.size()) s.count += std::max(1, 16 / s.operand->dtype().itemsize());
    }
    // each tile starts at a 16-byte block (a footprint's extents need not keep the next tile's
    // 16-byte stores aligned)
    bytes = (bytes + 15) / 16 * 16;
    s.offset = bytes / s.operand->dtype().itemsize();
    bytes += s.count * s.operand->dtype().itemsize();
  }
  if (tc_local_) // each set of tiles starts at a multiple of every atom's size
    for (const Staged& s : staged_) {
      const int64_t atom_bytes = (int64_t(1) << s.atom->offset_bits) * s.operand->dtype().itemsize();
      bytes = (bytes + atom_bytes - 1) / atom_bytes * atom_bytes;
    }
  bytes = (bytes + 15) / 16 * 16; // whole 16-byte blocks: a vector read never leaves the buffer
  if (uint64_t(bytes) > options_.local_memory_limit())
    throw OptError("optimization STAGE: the tiles need " + std::to_string(bytes) +
                   " bytes of local memory; the device has " + std::to_string(options_.local_memory_limit()));
  // Under TC with one loop over tiles, two sets of tiles where they fit: the next tile's copy
  // overlaps this tile's mma (stage_copies). Both operands are 16-bit there, so the second set
  // starts at bytes / 2 elements, a multiple of 8 (16-byte vector stores stay aligned).
  stage_half_ = 0;
  const size_t ndim = out_shape_.size();
  int64_t tile_loops = 0;
  for (size_t a = ndim; a < plan_.size(); ++a) tile_loops += plan_[a].rest() > 1;
  const bool same_size = std::all_of(staged_.begin(), staged_.end(), [&](const Staged& s) {
    return s.operand->dtype().itemsize() == staged_[0].operand->dtype().itemsize();
  });
  if (tc_ && tile_loops == 1 && same_size && uint64_t(2 * bytes) <= options_.local_memory_bytes)
    stage_half_ = bytes / staged_[0].operand->dtype().itemsize();
  else if (!tc_ && same_size)
    stage_half_ = plain_stage_half(bytes, tile_loops);
  stage_sets_ = 2;
  stage_ahead_ = 1;
  local_unit_sets(bytes, tile_loops, same_size);
}

// A local-memory unit: three sets of tiles where they fit the device's opt-in maximum (CUDA: dynamic
// shared memory past 48 KiB), so that the MMAs of step r may still read their set while step r + 1
// copies into the next one: the MMAs then defer their reads (TG_MMA_DEFER_READS, local_reduce).
// Step r copies tile r + 1 into set (r + 1) % 3, last read by step r - 2's MMAs, whose reads end by
// the barrier of step r (the work items' run of step r - 1 started after them).
// On a device that moves 16-byte rows without registers (async_local_copies), where every copy is
// such rows (the atoms agree with the operands' contiguous axes), d = stage_prefetch > 1 tiles
// ahead in d + 2 sets where they fit: step r copies tile r + d into set (r + d) % (d + 2), again
// last read by step r - 2's MMAs, and each step's barrier lets the copies of the last d - 1 steps
// stay in flight (BARRIER's arg, stage_copies).
void Lowerer::local_unit_sets(int64_t bytes, int64_t tile_loops, bool same_size) {
  if (!tc_local_ || tile_loops != 1 || !same_size || uint64_t(3 * bytes) > options_.local_memory_limit())
    return;
  stage_half_ = bytes / staged_[0].operand->dtype().itemsize();
  stage_sets_ = 3;
  const int64_t ahead = options_.stage_prefetch;
  const bool rows = std::all_of(staged_.begin(), staged_.end(), [&](const Staged& s) {
    return s.strides[size_t(axis_dim_[atom_vector_axis(s)])] == 1;
  });
  if (ahead > 1 && options_.async_local_copies && rows && options_.vector_bytes >= 16 &&
      uint64_t((ahead + 2) * bytes) <= options_.local_memory_limit()) {
    stage_sets_ = ahead + 2;
    stage_ahead_ = ahead;
  }
}

// The kernel axis along which a local-memory unit's atom keeps neighbouring elements together
// (bit 0 of its offset): the axis its tile's copies move in vectors.
size_t Lowerer::atom_vector_axis(const Staged& s) const { return s.atom_axes[s.atom->row[0] != 0 ? 0 : 1]; }

// How many neighbouring elements along atom_vector_axis lie at consecutive offsets of the atom, no
// other position sharing those offset bits (a vector store of them then is one aligned run).
int64_t Lowerer::atom_vector_run(const Staged& s) const {
  const sdk::AtomInverse inv = sdk::atom_inverse(*s.atom);
  const bool along_rows = s.atom->row[0] != 0;
  const std::vector<uint32_t>& vec = along_rows ? inv.row_bits : inv.col_bits;
  const std::vector<uint32_t>& other = along_rows ? inv.col_bits : inv.row_bits;
  size_t len = 0;
  while (len < vec.size() && vec[len] == (1u << len)) ++len;
  uint32_t taken = 0;
  for (size_t b = len; b < vec.size(); ++b) taken |= vec[b];
  for (uint32_t e : other) taken |= e;
  while (len > 0 && (taken & ((1u << len) - 1)) != 0) --len;
  return int64_t(1) << len;
}

// For an atom whose offset bits right after a vector of `width` move across the vector's rows
// (along the other axis, by 1, 2, 4 ...): how many rows those bits span (an 8 x 8 core matrix: 8),
// else 1.
int64_t Lowerer::atom_cross_rows(const Staged& s, int64_t width) const {
  const bool along_rows = s.atom->row[0] != 0;
  const uint16_t* other = along_rows ? s.atom->col : s.atom->row;
  const uint16_t* same = along_rows ? s.atom->row : s.atom->col;
  int64_t rows = 1;
  for (uint32_t b = uint32_t(std::countr_zero(uint64_t(width))); b < s.atom->offset_bits; ++b) {
    if (other[b] != rows || same[b] != 0) break;
    rows *= 2;
  }
  return rows;
}

// The atom position (row, col) of a tile made of atoms, from the inverse of the atom's map: each
// run of bits of row (col) whose offsets are e, 2e, 4e ... is (x / 2^b % 2^len) * e, and e's set
// bits split it into runs of offset bits. Runs are cut where another begins or ends, then those on
// the same offset bits are XORed and the rest added: a 128-byte swizzled row is
// col % 8 + ((row % 8) ^ (col / 8 % 8)) * 8 + (row % 8) * 64, each term's alignment visible to the
// simplifier (a 16-byte copy stays one store). Plus the atom strides.
UOpRef Lowerer::atom_tile_index(const Staged& s, const UOpRef& row, const UOpRef& col) const {
  const sdk::AtomInverse inv = sdk::atom_inverse(*s.atom);
  const sdk::MatrixElement ext = sdk::atom_extent(*s.atom);
  struct Run { // ((x >> bit) % 2^len) << shift
    const UOpRef* x;
    int bit, len, shift;
  };
  std::vector<Run> runs;
  auto add_runs = [&](const std::vector<uint32_t>& bits, const UOpRef& x) {
    for (size_t b = 0; b < bits.size();) {
      const uint32_t e = bits[b];
      size_t len = 1;
      while (b + len < bits.size() && bits[b + len] == (e << len)) ++len;
      for (int sh = 0; sh < 32; ++sh)
        if (e >> sh & 1) runs.push_back({&x, int(b), int(len), sh});
      b += len;
    }
  };
  add_runs(inv.row_bits, row);
  add_runs(inv.col_bits, col);
  std::set<int> cuts;
  for (const Run& r : runs) {
    cuts.insert(r.shift);
    cuts.insert(r.shift + r.len);
  }
  std::map<int, std::vector<Run>> pieces; // by first offset bit; equal starts have equal ends
  for (const Run& r : runs)
    for (int at = r.shift; at < r.shift + r.len;) {
      const int end = std::min(r.shift + r.len, *cuts.upper_bound(at));
      pieces[at].push_back({r.x, r.bit + (at - r.shift), end - at, at});
      at = end;
    }
  UOpRef out = idx_const(0);
  for (const auto& [at, group] : pieces) {
    UOpRef v;
    for (const Run& r : group) {
      UOpRef t = r.bit ? idiv(*r.x, idx_const(int64_t(1) << r.bit)) : *r.x;
      t = t % idx_const(int64_t(1) << r.len);
      v = v ? (v ^ t) : t;
    }
    out = out + (at ? v * idx_const(int64_t(1) << at) : v);
  }
  if (within_size(s.atom_axes[0]) > ext.row)
    out = out + idiv(row, idx_const(ext.row)) * idx_const(s.atom_strides[0]);
  if (within_size(s.atom_axes[1]) > ext.col)
    out = out + idiv(col, idx_const(ext.col)) * idx_const(s.atom_strides[1]);
  return out;
}

// The same by the tile's layout coordinates (its row axis, then k).
UOpRef Lowerer::atom_tile_index_axes(const Staged& s, const UOpRef& layout0, const UOpRef& layout1) const {
  const bool rows_first = s.atom_axes[0] == s.layout[0];
  return rows_first ? atom_tile_index(s, layout0, layout1) : atom_tile_index(s, layout1, layout0);
}

// Staging without TC (the f32 matmul, the convolutions): two sets of tiles where they fit and one
// loop runs over tiles, as under TC (stage_copies): the next tile's global loads are issued before
// this tile's steps, their stores after them, one barrier per step instead of two. The second set
// starts at bytes / itemsize elements, a multiple of 4 floats (bytes is a whole number of 16-byte
// blocks), so the 16-byte reads and stores of the tiles stay aligned in either set. The overlap
// gains ~7% on the f32 matmul and conv rows of `tg bench gpu` on an H200.
// Two sets may go past local_memory_bytes up to the device's opt-in maximum (CUDA: dynamic shared
// memory): the heuristics plan within local_memory_bytes, but an explicit or searched list whose
// one set fits and two do not would otherwise lose the overlap (e.g. a conv with 8 input channels
// per tile: two sets of 25.6 KiB).
int64_t Lowerer::plain_stage_half(int64_t bytes, int64_t tile_loops) const {
  if (tile_loops != 1 || uint64_t(2 * bytes) > options_.local_memory_limit()) return 0;
  return bytes / staged_[0].operand->dtype().itemsize();
}

// A plain (non-TC) staged copy of a convolution (several reduce axes staged) whose tile rows are
// contiguous in global memory, of 4-byte elements: the weights, which Tensor::conv2d stores
// output-channel-minor. Each thread moves 4 neighbouring output channels with one 16-byte load
// and one 16-byte store (a gated last round where the threads do not fill it); the buffers must
// be 16-byte aligned at launch and every other dim the operand varies along a multiple of 4
// elements apart (for a footprint tile, every dim but those its innermost entry sums): a window's
// footprint rows of 28 columns (the bench conv) qualify; a view tile's rows start at kw. On an
// H200 the conv row gains ~19% and the training step's conv2 forward ~11%; the f32 matmul's B copy
// (one reduce axis) loses 1-3% as float4, so it stays scalar, as do transposed copies (the
// matmul's A as 4 gathered loads and one 16-byte store: no gain).
bool Lowerer::plain_vector_copy(const Staged& s, bool contiguous) const {
  const auto staged_axes = std::count_if(plan_.begin() + std::ptrdiff_t(out_shape_.size()), plan_.end(),
                                         [](const AxisPlan& a) { return a.has(OptOp::STAGE); });
  if (tc_ || !contiguous || staged_axes < 2 || s.operand->dtype().itemsize() != 4 ||
      options_.vector_bytes < 16 || options_.buffer_alignment < 16 || s.extents.back() % 4 != 0)
    return false;
  std::vector<bool> inner_dim(s.strides.size(), false); // a footprint's innermost entry sums several
  for (size_t a : s.sums.back()) inner_dim[size_t(axis_dim_[a])] = true;
  for (size_t d = 0; d < s.strides.size(); ++d)
    if (!inner_dim[d] && s.strides[d] != 0 && (s.strides[d] < 0 || s.strides[d] % 4 != 0)) return false;
  return true;
}

namespace {

// root with each of vars replaced by the node of the same position in `to`.
UOpRef substitute_vars(const UOpRef& root, const std::vector<UOpRef>& vars, const std::vector<UOpRef>& to) {
  std::vector<std::pair<const UOp*, UOpRef>> replacements;
  for (size_t i = 0; i < vars.size(); ++i) replacements.emplace_back(vars[i].get(), to[i]);
  return simplify(substitute(root, replacements));
}

} // namespace

// A footprint tile (plain STAGE only): where the operand depends on several tile axes only through
// their sum, those axes share one tile entry indexed by the sum, of extent sum(extent - 1) + 1.
// A convolution's window x[.., oh + kh, ow + kw] is then a tile of input rows x columns, 4 x 28
// floats per input channel for 2 x 26 outputs and a 3x3 window instead of 3 x 3 x 2 x 26 = 468
// (the view tile's copy moves 4x the data; docs/cuda.md, "Shared-memory tiles (STAGE) on CUDA").
// The analysis: the operand's value at one variable per reduce-input dim, simplified under the
// dims' bounds, is a function of the maximal affine forms (sums of variables times constants) its
// non-affine nodes read (INDEX, comparisons of masks, div/mod); axes whose coefficients agree in
// every one of those forms give the same value at (i, j) and (i + 1, j - 1): they are summed. The
// copy evaluates that simplified value with the whole entry index on the entry's first axis (0 on
// the others): a point outside the view (ow past its last column), but every form equals its value
// at a point inside.
// A stride-2 window (2 oh + kh) or a mask that reads oh alone keeps the view tile.
void Lowerer::footprint_tile(Staged& s) {
  if (s.layout.size() < 2) return;
  for (const UOpRef& u : toposort(s.operand)) // a nested reduce has loops of its own: the view tile
    if (u->op() == Ops::REDUCE_AXIS) return;
  const Dims& in_shape = shapes_(first_reduce_->src(0));
  std::vector<UOpRef> vars;
  std::unordered_map<const UOp*, size_t> dim_of;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    vars.push_back(
        UOp::variable("stage_dim" + std::to_string(d), 0, std::max<int64_t>(0, in_shape[d] - 1), kIndex));
    dim_of[vars.back().get()] = d;
  }
  const int64_t alu_inside = alu_inside_, alu_outside = alu_outside_; // not the kernel's work
  ++reduce_depth_;
  const UOpRef v = simplify(value(s.operand, Frame{vars, in_shape, {}}));
  --reduce_depth_;
  alu_inside_ = alu_inside;
  alu_outside_ = alu_outside;
  std::unordered_map<const UOp*, Dims> affine; // node -> its coefficient per dim
  std::vector<Dims> forms;                     // the affine forms the value reads
  auto nonzero = [](const Dims& c) {
    return std::any_of(c.begin(), c.end(), [](int64_t x) { return x != 0; });
  };
  auto coef = [&](const UOpRef& u) -> const Dims* {
    auto it = affine.find(u.get());
    return it == affine.end() ? nullptr : &it->second;
  };
  for (const UOpRef& u : toposort(v)) {
    std::optional<Dims> c;
    if (auto it = dim_of.find(u.get()); it != dim_of.end()) {
      c = Dims(in_shape.size(), 0);
      (*c)[it->second] = 1;
    } else if (u->is_const() && u->dtype() == kIndex) {
      c = Dims(in_shape.size(), 0);
    } else if (u->dtype() == kIndex && (u->op() == Ops::ADD || u->op() == Ops::SUB) && coef(u->src(0)) &&
               coef(u->src(1))) {
      c = *coef(u->src(0));
      const Dims& b = *coef(u->src(1));
      for (size_t d = 0; d < c->size(); ++d) (*c)[d] += u->op() == Ops::ADD ? b[d] : -b[d];
    } else if (u->dtype() == kIndex && u->op() == Ops::NEG && coef(u->src(0))) {
      c = *coef(u->src(0));
      for (int64_t& x : *c) x = -x;
    } else if (u->dtype() == kIndex && u->op() == Ops::MUL && coef(u->src(0)) && coef(u->src(1))) {
      for (size_t k = 0; k < 2 && !c; ++k)
        if (u->src(1 - k)->is_const()) {
          c = *coef(u->src(k));
          for (int64_t& x : *c) x *= std::get<int64_t>(u->src(1 - k)->const_value());
        }
    }
    if (c) {
      affine[u.get()] = std::move(*c);
      continue;
    }
    for (const UOpRef& x : u->src())
      if (const Dims* cx = coef(x); cx && nonzero(*cx)) forms.push_back(*cx);
  }
  if (const Dims* cv = coef(v); cv && nonzero(*cv)) forms.push_back(*cv);
  // Tile axes whose coefficients agree in every form are one entry, at the place of its last axis.
  std::vector<Dims> column(s.layout.size());
  for (size_t i = 0; i < s.layout.size(); ++i)
    for (const Dims& f : forms) column[i].push_back(f[size_t(axis_dim_[s.layout[i]])]);
  std::vector<size_t> group(s.layout.size());
  bool summed = false;
  for (size_t i = 0; i < s.layout.size(); ++i) {
    group[i] = i;
    for (size_t j = 0; j < i && group[i] == i; ++j)
      if (group[j] == j && nonzero(column[i]) && column[j] == column[i]) group[i] = j;
    summed |= group[i] != i;
  }
  if (!summed) return;
  std::vector<size_t> layout;
  std::vector<std::vector<size_t>> sums;
  Dims extents;
  for (size_t i = 0; i < s.layout.size(); ++i) {
    const size_t g = group[i];
    bool last = true;
    for (size_t j = i + 1; j < s.layout.size(); ++j) last &= group[j] != g;
    if (!last) continue;
    std::vector<size_t> axes;
    int64_t extent = 1;
    for (size_t j = 0; j <= i; ++j)
      if (group[j] == g) {
        axes.push_back(s.layout[j]);
        extent += within_size(s.layout[j]) - 1;
      }
    layout.push_back(axes[0]);
    sums.push_back(std::move(axes));
    extents.push_back(extent);
  }
  s.layout = std::move(layout);
  s.sums = std::move(sums);
  s.extents = std::move(extents);
  s.footprint = v;
  s.footprint_vars = std::move(vars);
}

// Once per tile: a barrier (every thread is done reading the last tile), the work group's copy of
// each operand's tile (thread t takes elements t, t + threads, ..., in the order of their global
// addresses so that neighbouring threads read neighbouring elements), then a barrier.
void Lowerer::stage_copies(const UOpRef& r, const Frame& f) {
  if (stage_barrier_) return;
  const size_t ndim = out_shape_.size();
  const Dims& in_shape = shapes_(r->src(0));
  std::vector<UOpRef> rest_range(reduce_dims_.size());
  for (size_t j = 0; j < reduce_dims_.size(); ++j) {
    const AxisPlan& ax = plan_[ndim + j];
    if (ax.rest() > 1) {
      rest_range[j] = range_for(r.get(), size_t(reduce_dims_[j]), ax.rest());
      stage_tile_ranges_.push_back(rest_range[j]);
    }
    if (ax.has(OptOp::STAGE))
      for (const Part& p : ax.parts)
        if (!p.rest && p.op == OptOp::STAGE)
          stage_ranges_[ndim + j] = UOp::range(p.size, next_range_id_++, kIndex);
  }
  int64_t threads = 1;
  UOpRef tid = idx_const(0);
  for (int a = local_axes_; a-- > 0;) { // LOCAL_ID 0 fastest, as the hardware numbers a warp
    tid = tid * idx_const(local_[size_t(a)]) + local_ids_[size_t(a)];
    threads *= local_[size_t(a)];
  }
  const Staged& last = staged_.back();
  const int64_t block = std::max(1, 16 / last.operand->dtype().itemsize()); // see plan_stage
  stage_buffer_ = UOp::make(Ops::DEFINE_LOCAL, last.operand->dtype().ptr_to(true), {},
                            stage_half_ ? stage_sets_ * stage_half_
                                        : (last.offset + last.count + block - 1) / block * block);
  // The copies of the tiles `tile` (per reduce axis: the tile loop's index, null without one) to
  // local memory from element `base` on, each STORE's INDEX ordered after `barrier` (if any).
  auto copy = [&](const std::vector<UOpRef>& tile, const UOpRef& base, const UOpRef& barrier) {
    std::vector<UOpRef> stores;
    for (Staged& s : staged_) {
      std::vector<size_t> order(s.layout.size()); // positions in layout, largest global stride first
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      auto stride = [&](size_t i) {
        const int64_t st = s.strides[size_t(axis_dim_[s.layout[i]])];
        return st < 0 ? std::numeric_limits<int64_t>::max() : st;
      };
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return stride(x) > stride(y); });
      // 128-bit copies: where the copy's innermost axis is contiguous in global memory and is also
      // the tile's innermost, each thread takes `width` neighbouring elements at once (chunk c:
      // elements c * width ... + width - 1) and moves them with one aligned vector load and one
      // vector store. Needs every buffer 16-byte aligned at launch (the core launches at offset 0;
      // the kernel's DEFINE_GLOBAL states it, and the launch refuses an offset that breaks it).
      // Transposed copies stay scalar: with a vector load, thread t writes tile rows 8t ... 8t + 7
      // and a warp's stores of one column fall into one bank (B's copy vectorized so makes the f16
      // TC matmul ~40% slower on an H200). Only for 16-bit elements, where A's vectorized copy
      // gains ~20%; the f32 matmul's B copy as float4 loses ~2%, so 32-bit copies stay scalar but a
      // convolution's weights (plain_vector_copy).
      //
      // A transposed 16-bit copy under TC (B: n contiguous in global memory, k innermost in the tile)
      // goes the other way round: thread t takes 8 neighbouring k of one n (neighbouring threads
      // neighbouring n, so each of its 8 scalar global loads is coalesced over the warp) and writes
      // them with one 16-byte store into its tile row; the rows are 144 bytes apart (see plan_stage),
      // so a quarter warp's stores cover 32 banks (16-bit stores there: 70M bank conflicts).
      const int64_t isz = s.operand->dtype().itemsize();
      const size_t inner = s.layout.size() - 1; // the tile's innermost axis (position in layout)
      // the tile axis moved in vectors: the innermost, or the one a local-memory unit's atom keeps
      // neighbouring elements along (an n-major B: its 16-byte rows of n)
      const size_t vec = s.atom && atom_vector_axis(s) == s.layout[0] ? 0 : inner;
      const bool contiguous = !order.empty() && stride(order.back()) == 1 && order.back() == vec;
      const bool transposed = tc_.has_value() && !order.empty() && stride(order.back()) == 1 && !contiguous;
      const bool plain_vector = plain_vector_copy(s, contiguous);
      const int64_t width =
          (options_.vector_bytes >= 16 && isz == 2 && (contiguous || transposed) &&
           (options_.buffer_alignment >= 16 || transposed) && s.extents[vec] % (16 / isz) == 0 &&
           s.elements % (16 / isz * threads) == 0 && (!s.atom || atom_vector_run(s) >= 16 / isz)) ||
                  plain_vector
              ? 16 / isz
              : 1;
      // A contiguous 16-byte copy of a TC tile with 4 chunks per row (32 k) puts 2 rows into a
      // quarter warp; rows 80 bytes apart overlap in one bank group. Rows `gap` apart with
      // stride * gap = 16 words (mod 32 banks) fill the 32 banks: chunk c takes row
      // (c / 4) permuted within blocks of 2 * gap rows so that a quarter warp's 2 rows are r, r + gap.
      int64_t gap = 0;
      if (tc_ && !tc_local_ && contiguous && width > 1 && s.layout.size() >= 2 &&
          within_size(s.layout[inner]) == 4 * width) {
        const int64_t stride16 = s.local_strides[inner - 1] / width, rows = within_size(s.layout[inner - 1]);
        for (int64_t g = 1; g <= 8 && !gap; g *= 2)
          if (s.local_strides[inner - 1] % width == 0 && stride16 * g % 8 == 4 && rows % (2 * g) == 0)
            gap = g;
      }
      const int64_t chunks = s.elements / width;
      for (int64_t first = 0; first < chunks; first += threads) {
        UOpRef c = tid + idx_const(first);
        // An atom whose next offset bits after a vector's run across the rows (8 x 8 core matrices):
        // `rows` neighbouring threads take `rows` neighbouring rows of one chunk, their stores
        // then contiguous. (Where they run along the row, as in a 128-byte swizzled atom, the
        // threads take the chunks in their global order; the swizzle spreads them over the row.)
        if (const int64_t rows = s.atom && contiguous && width > 1 ? atom_cross_rows(s, width) : 1;
            rows > 1) {
          const int64_t per_row = within_size(s.layout[vec]) / width;
          const UOpRef q = idiv(c, idx_const(rows * per_row)), rem = c % idx_const(rows * per_row);
          c = (q * idx_const(rows) + rem % idx_const(rows)) * idx_const(per_row) + idiv(rem, idx_const(rows));
        }
        if (gap) {
          const UOpRef q = idiv(c, idx_const(4)), kc = c % idx_const(4);
          const UOpRef row = idiv(q, idx_const(2 * gap)) * idx_const(2 * gap) +
                             (q % idx_const(2)) * idx_const(gap) + idiv(q, idx_const(2)) % idx_const(gap);
          c = row * idx_const(4) + kc;
        }
        UOpRef valid = UOp::constant(dtypes::bool_, true);
        if (first + threads > chunks) { // the last round: width 1, or a plain vector copy
          valid = lt(c, idx_const(chunks));
          c = min_index(c, chunks - 1);
        }
        std::vector<UOpRef> gs, ptrs;
        for (int64_t j = 0; j < width; ++j) {
          std::vector<UOpRef> coord(s.layout.size(), idx_const(0));
          UOpRef rem = c, chunk; // chunk: the innermost axis's coordinate in units of width
          for (size_t k = order.size(); k-- > 0;) { // the tile's innermost axis in chunks of width
            const int64_t n = s.extents[order[k]] / (order[k] == vec ? width : 1);
            coord[order[k]] = k == 0 ? rem : rem % idx_const(n);
            if (order[k] == vec) chunk = coord[order[k]];
            if (order[k] == vec && width > 1)
              coord[order[k]] = coord[order[k]] * idx_const(width) + idx_const(j);
            if (k > 0) rem = idiv(rem, idx_const(n));
          }
          // a footprint entry's index goes to its first axis whole, the others' to 0: the value
          // depends on their sum only (footprint_tile)
          auto coord_of = [&](size_t axis) {
            for (size_t i = 0; i < s.layout.size(); ++i)
              if (s.layout[i] == axis) return coord[i];
            return idx_const(0);
          };
          UOpRef lidx = base + idx_const(s.offset);
          if (s.atom && width > 1) // a vector's run of the atom: its elements are adjacent
            lidx = lidx +
                   (vec == 0 ? atom_tile_index_axes(s, chunk * idx_const(width), coord[1])
                             : atom_tile_index_axes(s, coord[0], chunk * idx_const(width))) +
                   idx_const(j);
          else if (s.atom)
            lidx = lidx + atom_tile_index_axes(s, coord[0], coord[1]);
          else
            for (size_t i = 0; i < s.layout.size(); ++i)
              lidx = lidx + coord[i] * idx_const(s.local_strides[i]);
          std::vector<UOpRef> oidx;
          for (size_t d = 0; d < ndim; ++d)
            oidx.push_back(rest_idx_[d] * idx_const(within_size(d)) + coord_of(d));
          std::vector<UOpRef> in_idx = reduce_input_index(r, f, oidx);
          for (size_t j2 = 0; j2 < reduce_dims_.size(); ++j2) {
            UOpRef w = coord_of(ndim + j2);
            in_idx[size_t(reduce_dims_[j2])] =
                tile[j2] ? tile[j2] * idx_const(within_size(ndim + j2)) + w : w;
          }
          if (s.footprint) {
            gs.push_back(substitute_vars(s.footprint, s.footprint_vars, in_idx));
          } else {
            ++reduce_depth_;
            gs.push_back(value(s.operand, Frame{in_idx, in_shape, {}}));
            --reduce_depth_;
          }
          ptrs.push_back(barrier
                             ? UOp::make(Ops::INDEX, stage_buffer_->dtype(), {stage_buffer_, lidx, barrier})
                             : UOp::make(Ops::INDEX, stage_buffer_->dtype(), {stage_buffer_, lidx}));
        }
        if (width > 1) {
          UOpRef v = aligned_vector_load(gs);
          if (aligned_run(ptrs,
                          width)) { // one vector store into the tile (of the loads' lanes if transposed)
            if (!v) v = UOp::make(Ops::VECTORIZE, s.operand->dtype().vec(uint16_t(width)), gs);
            stores.push_back(is_true(valid)
                                 ? UOp::make(Ops::STORE, dtypes::void_, {ptrs[0], v}, int64_t(16))
                                 : UOp::make(Ops::STORE, dtypes::void_, {ptrs[0], v, valid}, int64_t(16)));
            continue;
          }
          if (v)
            for (int64_t j = 0; j < width; ++j)
              gs[size_t(j)] = UOp::make(Ops::GEP, s.operand->dtype(), {v}, j);
        }
        for (size_t j = 0; j < gs.size(); ++j)
          stores.push_back(is_true(valid) ? UOp::make(Ops::STORE, dtypes::void_, {ptrs[j], gs[j]})
                                          : UOp::make(Ops::STORE, dtypes::void_, {ptrs[j], gs[j], valid}));
      }
    }
    return stores;
  };
  std::vector<UOpRef> before = stage_tile_ranges_;
  before.insert(before.end(), rest_idx_.begin(), rest_idx_.end());
  if (stage_half_ == 0) { // barrier, copy of this tile, barrier, the reads
    UOpRef start = UOp::make(Ops::BARRIER, dtypes::void_, std::move(before));
    stage_barrier_ = UOp::make(Ops::BARRIER, dtypes::void_, copy(rest_range, idx_const(0), start));
    return;
  }
  // Double-buffered (plan_stage): tile 0 is copied to the first set before the tile loop; step r
  // starts with one barrier, then copies tile r + 1 (wrapping to tile 0 on the last step, whose
  // copy nobody reads) to set (r + 1) % 2 while the fragments read set r % 2. The barrier of step
  // r + 1 orders both: the copy before the reads of the next step, the reads before the copy that
  // overwrites their set one step later. The next tile's global loads lead the sink and its stores
  // trail it, so the linearizer emits the loads before the mma steps and the stores after them:
  // the loads' latency is covered by the mma.
  // Copying d = stage_ahead_ > 1 tiles ahead (local_unit_sets), the prologue copies tiles 0 .. d - 1
  // into sets 0 .. d - 1, a BARRIER after each but the last (they close a group of copies, below),
  // and step r copies tile r + d.
  const int64_t d = stage_ahead_;
  std::vector<UOpRef> next(rest_range.size());
  for (size_t j = 0; j < rest_range.size(); ++j)
    if (rest_range[j]) next[j] = (rest_range[j] + idx_const(d)) % idx_const(plan_[ndim + j].rest());
  // A BARRIER's arg: how many of the latest groups of async copies (each group: the copies a
  // thread issued between two BARRIERs) may still be in flight at it (docs/abi.md, BARRIER). With d
  // tiles ahead, the step's barrier needs tile r, whose copies closed d groups back: d - 1 groups
  // (tiles r + 1 .. r + d - 1) may stay in flight. Other barriers keep 0 (all copies complete).
  const Arg in_flight = d > 1 ? Arg{int64_t(d - 1)} : Arg{};
  // A work group looping over output tiles starts each one's prologue only after every thread's
  // reads of the last set of the previous output tile (with an odd number of tiles, that is set 0),
  // and after every copy still in flight from the last tiles (a BARRIER with arg 0 waits for all).
  UOpRef after = tile_loop_ ? UOp::make(Ops::BARRIER, dtypes::void_, rest_idx_) : nullptr;
  for (int64_t t = 0; t < d; ++t) {
    std::vector<UOpRef> tile(rest_range.size());
    for (size_t j = 0; j < rest_range.size(); ++j)
      if (rest_range[j]) tile[j] = idx_const(t % plan_[ndim + j].rest());
    std::vector<UOpRef> prologue = copy(tile, idx_const(t * stage_half_), after);
    if (t + 1 < d) {
      after = UOp::make(Ops::BARRIER, dtypes::void_, std::move(prologue), in_flight);
      before.push_back(after);
    } else {
      before.insert(before.end(), prologue.begin(), prologue.end());
    }
  }
  stage_barrier_ = UOp::make(Ops::BARRIER, dtypes::void_, std::move(before), in_flight);
  const UOpRef& step = stage_tile_ranges_.at(0);
  const std::vector<UOpRef> copies =
      copy(next, ((step + idx_const(d)) % idx_const(stage_sets_)) * idx_const(stage_half_), stage_barrier_);
  // A local-memory unit with three sets, every copy a 16-byte row: the stores lead too, right
  // after the step's barrier (legal: the set they fill was last read by step r - 2's MMAs, whose
  // reads ended by this barrier). The CUDA renderer moves such a copy as one cp.async (global to
  // shared, no registers), so issuing it before the step's WGMMA run puts its latency under the run
  // and the wait; a register copy would instead stall there on its loads (docs/cuda.md, "Tensor
  // cores"). Copying d > 1 tiles ahead, the copies' loads lead and their stores trail as in
  // the two-set kernel: the cp.async still sits where its STORE is, after the step's barrier and
  // before the WGMMA run in the rendered source, but the global address math of the loads moves
  // ahead of the barrier, so less work lies between the barrier and the WGMMA run (the kernel is
  // bound by that barrier: about half the warps' stall cycles), ~1% faster than the copies leading
  // whole (8192 f16 on an H200).
  const bool rows_lead = tc_local_ && stage_sets_ >= 3 && d == 1 &&
                         std::all_of(copies.begin(), copies.end(), [](const UOpRef& st) {
                           return st->src().size() == 2 && st->src(1)->op() == Ops::LOAD &&
                                  st->src(1)->dtype().count * st->src(1)->dtype().itemsize() == 16;
                         });
  // Plain double-buffered tiles on a device that moves 16-byte copies without registers
  // (async_local_copies: CUDA's cp.async): each such copy leads too, right after the step's
  // barrier (legal: its set was last read by step r - 1, which every thread finished before this
  // barrier), so the next tile is not held in registers across the step; the other copies keep
  // their loads leading and their stores trailing. The bench conv (H200, NVRTC 13.0): 80 registers
  // instead of 96, so 3 work groups of 208 threads per SM instead of 2 (each quarter of an SM holds
  // 16K registers: 5 warps of 96, 6 of 80; docs/cuda.md, "Shared-memory tiles (STAGE) on CUDA").
  const bool plain_lead = !tc_ && stage_sets_ == 2 && options_.async_local_copies;
  for (const UOpRef& st : copies) {
    const bool lead = rows_lead || (plain_lead && st->src(1)->op() == Ops::LOAD &&
                                    st->src(1)->dtype().count * st->src(1)->dtype().itemsize() == 16);
    leading_values_.push_back(lead ? st : st->src(1));
    if (!lead) trailing_barriers_.push_back(st);
  }
}

// Where the tiles of this step start in local memory: the set of the step's parity when
// double-buffered.
UOpRef Lowerer::stage_read_offset() const {
  if (stage_half_ == 0) return idx_const(0);
  return (stage_tile_ranges_.at(0) % idx_const(stage_sets_)) * idx_const(stage_half_);
}

std::pair<UOpRef, int64_t> split_const(const UOpRef& idx) {
  UOpRef i = simplify(idx);
  if (i->op() == Ops::ADD && i->src(1)->op() == Ops::CONST)
    return {i->src(0), std::get<int64_t>(i->src(1)->const_value())};
  if (i->op() == Ops::CONST) return {idx_const(0), std::get<int64_t>(i->const_value())};
  return {i, 0};
}

bool multiple_of(const UOpRef& rest, int64_t width) {
  const UOpRef r = simplify(rest % idx_const(width));
  return r->op() == Ops::CONST && std::get<int64_t>(r->const_value()) == 0;
}

// Whether the INDEXes name elements e, e + 1, ..., of one buffer with e a proven multiple of their
// count (so the run starts at a multiple of its size from the buffer's start).
bool Lowerer::aligned_run(const std::vector<UOpRef>& ptrs, int64_t width) const {
  auto [rest, c0] = split_const(ptrs[0]->src(1));
  if (c0 < 0 || c0 % width != 0 || !multiple_of(rest, width)) return false;
  for (size_t j = 1; j < ptrs.size(); ++j) {
    if (ptrs[j]->src(0) != ptrs[0]->src(0)) return false;
    auto [rj, cj] = split_const(ptrs[j]->src(1));
    if (rj == rest && cj == c0 + int64_t(j)) continue;
    // the same sum associated differently (a chunk at offset 0 folds its terms otherwise)
    const UOpRef d = simplify(ptrs[j]->src(1) - ptrs[0]->src(1));
    if (d->op() != Ops::CONST || std::get<int64_t>(d->const_value()) != int64_t(j)) return false;
  }
  return true;
}

// The values as one 16-byte-aligned vector LOAD of global memory, if they are plain loads of a run
// that aligned_run accepts; else null.
UOpRef Lowerer::aligned_vector_load(const std::vector<UOpRef>& values) const {
  std::vector<UOpRef> ptrs;
  for (const UOpRef& g : values) {
    if (g->op() != Ops::LOAD || g->src().size() != 1 || g->src(0)->op() != Ops::INDEX ||
        g->src(0)->src(0)->op() != Ops::DEFINE_GLOBAL)
      return nullptr;
    ptrs.push_back(g->src(0));
  }
  if (!aligned_run(ptrs, int64_t(values.size()))) return nullptr;
  return UOp::make(Ops::LOAD, values[0]->dtype().vec(uint16_t(values.size())), {ptrs[0]}, int64_t(16));
}

// The staged operand as this lane reads it from local memory.
UOpRef Lowerer::staged_load(const UOpRef& operand) const {
  for (const Staged& s : staged_) {
    if (s.operand != operand) continue;
    UOpRef idx = stage_read_offset() + idx_const(s.offset);
    for (size_t i = 0; i < s.layout.size(); ++i) {
      UOpRef at = within_index(s.sums[i][0]); // a footprint entry: the sum of its axes' indices
      for (size_t j = 1; j < s.sums[i].size(); ++j) at = at + within_index(s.sums[i][j]);
      idx = idx + at * idx_const(s.local_strides[i]);
    }
    auto ptr = [&](const UOpRef& i) {
      return UOp::make(Ops::INDEX, stage_buffer_->dtype(), {stage_buffer_, i, stage_barrier_});
    };
    // Lanes that read neighbouring words of an aligned 16-byte block share one vector read of it
    // (the lanes of an UPCAST whose axis is the tile's innermost): 4 loads become one 128-bit load.
    const int64_t width = 16 / operand->dtype().itemsize();
    if (options_.vector_bytes >= 16 && operand->dtype().itemsize() == 4 && !s.cast_to) {
      idx = simplify(idx);
      auto [rest, c] = split_const(idx);
      if (c >= 0 && multiple_of(rest, width)) {
        UOpRef block = UOp::make(Ops::LOAD, operand->dtype().vec(uint16_t(width)),
                                 {ptr(rest + idx_const(c - c % width))});
        return UOp::make(Ops::GEP, operand->dtype(), {block}, int64_t(c % width));
      }
      // Pairs (8 bytes) where 4 are not proven: a convolution's window as a view tile, whose columns
      // per thread are 2 adjacent ones in rows of 26: 2 reads per step instead of 4 (the conv row on
      // an H200: up to ~7% faster). A footprint's index ow + kw is no proven even number: scalar
      // reads, which nvcc merges into ld.shared.v2 itself (it proves 2t even); explicit pairs there
      // gain nothing.
      if (c >= 0 && !tc_ && multiple_of(rest, 2)) {
        UOpRef pair = UOp::make(Ops::LOAD, operand->dtype().vec(2), {ptr(rest + idx_const(c - c % 2))});
        return UOp::make(Ops::GEP, operand->dtype(), {pair}, int64_t(c % 2));
      }
    }
    return UOp::make(Ops::LOAD, operand->dtype(), {ptr(idx)});
  }
  throw UOpError("codegen: STAGE has no tile for this operand");
}

// The first reduce under STAGE (without TC): the loops over tiles, inside them the loops over each
// tile's steps, and every output lane's product read from local memory.
UOpRef Lowerer::staged_reduce(const UOpRef& r, const Frame& f) {
  if (f.base != out_shape_)
    throw OptError("optimization STAGE: the kernel's reduce is not read in the output's index space");
  stage_copies(r, f);
  std::vector<UOpRef> ops;
  for (const Staged& s : staged_) {
    UOpRef x = staged_load(s.operand);
    ops.push_back(s.cast_to ? cast(x, *s.cast_to) : x);
  }
  UOpRef v = UOp::make(Ops::MUL, stage_mul_->dtype(), std::move(ops));
  if (r->src(0)->op() == Ops::CAST) v = cast(v, r->src(0)->dtype());
  std::vector<UOpRef> ranges = stage_tile_ranges_;
  for (const auto& [axis, rng] : stage_ranges_) ranges.push_back(rng);
  int64_t iters = 1, count = 1;
  for (const auto& rg : ranges) iters *= rg->src(1)->arg_int();
  for (auto a : r->arg_if<ReduceArg>()->axes) count *= shapes_(r->src(0))[size_t(a)];
  reduce_iters_ = std::max(reduce_iters_, iters);
  reduce_size_ = std::max(reduce_size_, count);
  alu_inside_ += 2;
  UOpRef out = v;
  if (!ranges.empty()) {
    std::vector<UOpRef> src{v};
    src.insert(src.end(), ranges.begin(), ranges.end());
    out = UOp::make(Ops::REDUCE, v->dtype(), std::move(src), ReduceArg{Ops::ADD, {}});
  }
  const Dims& out_shape = shapes_(r);
  UOpRef valid = UOp::constant(dtypes::bool_, true);
  if (!f.mops.empty() || f.base != out_shape) valid = tracker(out_shape, f.mops).to_index(f.idx).second;
  return is_true(valid) ? out : where(valid, out, const_like(out, int64_t{0}));
}

} // namespace tg::lower_detail
