// Internal to kernel/codegen (not installed): the Lowerer class that lower_kernel and
// analyze_kernel run, and the small index helpers its files share. lower.cpp holds the plan, the
// opts and the plain lowering; lower_tc.cpp the tensor core (TC) path; lower_stage.cpp the
// shared-memory staging (STAGE).
#pragma once

#include "kernel/codegen/lowered.hpp"
#include "kernel/ir/symbolic.hpp"
#include "kernel/schedule/schedule.hpp"
#include "kernel/shape/shapetracker.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tg::lower_detail {

// Index math is built in int64, so no address, loop or grid index wraps however large a buffer,
// view or loop is; IndexNarrower then turns every value that fits back into int32.
constexpr DType kIndex = dtypes::int64;

inline UOpRef idx_const(int64_t v) { return UOp::constant(kIndex, v); }
inline bool is_true(const UOpRef& u) {
  return u->op() == Ops::CONST && u->dtype().is_bool() && std::get<bool>(u->const_value());
}

inline UOpRef min_index(const UOpRef& a, int64_t b) { return -maximum(-a, idx_const(-b)); }

// An index as (rest, constant): rest + c, the constant split off a simplified sum.
std::pair<UOpRef, int64_t> split_const(const UOpRef& idx);
// Whether `rest` (an index without its constant) is a proven multiple of `width`.
bool multiple_of(const UOpRef& rest, int64_t width);

// Per-dim indices of `flat` in a contiguous `shape`.
std::vector<UOpRef> unflatten(const UOpRef& flat, const Dims& shape);
// An operand of the product as a matrix unit or a staged tile takes it: without a widening CAST
// (float16/bfloat16 to a float, a narrower integer to a wider one), also one under movement ops
// (then those ops over the CAST's source); else the operand itself.
UOpRef unwidened_operand(UOpRef x);

// One axis of the kernel after its optimizations: a size (padded up by PADTO) split into parts,
// outermost first. Exactly one part is the rest: the work-group grid (output axes) or the reduce
// loop (reduce axes); each opt splits the rest into itself and a new part next to it.
struct Part {
  OptOp op = OptOp::PADTO; // PADTO never names a part: with rest = true it marks the rest
  int64_t size = 1;
  bool rest = false;
  int local_axis = -1; // LOCAL/GROUP/GROUPTOP: which LOCAL_ID
  int lane_id = -1;    // UPCAST/UNROLL: which digit of the lane number (lane_digits)
};

// An UPCAST or UNROLL part: its digit of the lane number.
struct LanePart {
  size_t axis;
  int64_t size;
};

// The lane digit of each upcast (or unrolled) part: the first one applied varies fastest.
std::vector<int64_t> lane_digits(const std::vector<LanePart>& parts, int64_t lane);

struct AxisPlan {
  int64_t size = 1, padded = 1;
  std::vector<Part> parts{Part{OptOp::PADTO, 1, true}};
  bool ragged = false; // a LOOP that does not divide the axis: its last work item loops less
  size_t rest_index() const {
    for (size_t i = 0; i < parts.size(); ++i)
      if (parts[i].rest) return i;
    return 0;
  }
  int64_t rest() const { return parts[rest_index()].size; }
  bool has(OptOp op) const {
    return std::any_of(parts.begin(), parts.end(), [&](const Part& p) { return !p.rest && p.op == op; });
  }
};

class Lowerer {
public:
  Lowerer(const ScheduleItem& item, const LowerOptions& options) : item_(item), options_(options) {
    for (size_t i = 0; i < item.buffers.size(); ++i) {
      const auto& b = item.buffers[i];
      global_index_[b.get()] = int64_t(i);
      globals_.push_back(UOp::make(Ops::DEFINE_GLOBAL, b->dtype().ptr_to(), {}, int64_t(i)));
    }
  }

  LoweredKernel run();
  KernelInfo analyze();

private:
  // The index space a value is evaluated in: per-dim indices `idx` of shape `base`, and the
  // movement ops between that space and the node (nearest to the base first).
  struct Frame {
    std::vector<UOpRef> idx;
    Dims base;
    std::vector<UOpRef> mops;
  };

  void apply(const Opt& o, const KernelInfo& info);
  void apply_tc(const Opt& o, const KernelInfo& info, const std::function<void(const std::string&)>& refuse);
  UOpRef tc_index(size_t axis) const;
  std::optional<MatmulAxes> matmul_axes(const Dims& in_shape, const std::vector<int64_t>& out_dims,
                                        const std::vector<int64_t>& in_dims, bool unit_operands);
  UOpRef tc_reduce(const UOpRef& r, const Frame& f);
  UOpRef local_reduce(const UOpRef& r, const Frame& f); // a local-memory unit: chains over the staged tiles
  UOpRef tc_accumulate(const UOpRef& r, const UOpRef& product, const std::vector<UOpRef>& ranges,
                       int64_t ops);
  UOpRef tc_output(const UOpRef& r, const Frame& f, const UOpRef& acc);
  UOpRef tc_staged_pair(const UOpRef& operand) const;
  void apply_stage(const std::function<void(const std::string&)>& refuse);
  void plan_stage();
  int64_t within_size(size_t axis) const;
  UOpRef within_index(size_t axis) const;
  void stage_copies(const UOpRef& r, const Frame& f);
  bool aligned_run(const std::vector<UOpRef>& ptrs, int64_t width) const;
  UOpRef aligned_vector_load(const std::vector<UOpRef>& values) const;
  UOpRef staged_load(const UOpRef& operand) const;
  UOpRef staged_reduce(const UOpRef& r, const Frame& f);
  UOpRef reduce_index(size_t j, const UOpRef& rest_range, int64_t lane);
  UOpRef output_index(size_t axis, const std::vector<UOpRef>& rest_idx, int64_t lane, UOpRef& valid);
  UOpRef value(const UOpRef& u, const Frame& f);
  UOpRef load(const UOpRef& buffer, const Frame& f);
  UOpRef reduce(const UOpRef& r, const Frame& f);
  // The input index of reduce r at output index `idx` of frame f: seen through f's movement ops
  // down to r's output shape, r's reduced axes zeroed (the caller puts its loop indices there).
  // `valid`, when given, receives the movement ops' validity.
  std::vector<UOpRef> reduce_input_index(const UOpRef& r, const Frame& f, const std::vector<UOpRef>& idx,
                                         UOpRef* valid = nullptr);
  std::vector<UOpRef> vector_partials(std::vector<UOpRef> partials) const;
  UOpRef group_stage(Ops op, const UOpRef& partial);
  ShapeTracker tracker(const Dims& start, const std::vector<UOpRef>& below_to_base) const;
  // `within`: the loop whose iterations each run this reduce anew (a nested reduce), or null.
  UOpRef range_for(const UOp* reduce_node, size_t axis, int64_t size, const UOp* within = nullptr);
  // Strides (in elements) of every buffer read under u, per dim of u's index space; a dim whose
  // stride is unknown (several stacked views, symbolic) is reported as -1.
  void leaf_strides(const UOpRef& u, const std::vector<UOpRef>& mops, const Dims& base,
                    std::vector<Dims>& out);
  Dims buffer_strides(const UOpRef& buffer, const std::vector<UOpRef>& mops, const Dims& base) const;
  // Per dim of base: whether some buffer read under u is valid on at most half of it in the view
  // the kernel indexes (the pieces of a cat or stack; not a convolution's padding, which lies
  // below a window view and covers the edges only), and whether some read's validity depends on
  // that dim's index at all (computed only where some dim is the former).
  std::pair<std::vector<bool>, std::vector<bool>> leaf_masks(const UOpRef& u, const std::vector<UOpRef>& mops,
                                                             const Dims& base) const;
  // The equality the first reduce's sum selects by (`c ? x : 0` or `cast(c) * x`; Tensor::eq's
  // CMPNE(CMPNE(a, b), true) as its inner CMPNE), with the movement ops above it.
  struct Equality {
    UOpRef cond;
    std::vector<UOpRef> mops;
  };
  std::optional<Equality> selected_equality();
  // The first reduce's input dim that is a one-hot sum's (fold_one_hot in lower.cpp), or -1.
  int64_t one_hot_dim(const Dims& in_shape);
  // Per input dim of the first reduce, whether its selection's equality varies along it; empty
  // when the reduce is no float selection sum.
  std::vector<bool> selection_dims(const Dims& in_shape);
  // The reduce's kept input dims in the order of the output dims `out_dims` (of size > 1) where the
  // kernel stores the reduce through a plain permutation; empty otherwise.
  std::vector<int64_t> permuted_dims(const UOpRef& root, const std::vector<int64_t>& out_dims,
                                     const std::vector<int64_t>& kept);

  const ScheduleItem& item_;
  LowerOptions options_;
  ShapeMap shapes_;
  std::unordered_map<const UOp*, int64_t> global_index_;
  std::vector<UOpRef> globals_;
  std::map<std::tuple<const UOp*, size_t, const UOp*>, UOpRef> ranges_;
  std::unordered_set<const UOp*> reduce_ranges_; // the RANGEs range_for made
  int64_t next_range_id_ = 1;
  std::map<std::vector<const void*>, UOpRef> memo_;
  std::vector<UOpRef> keep_alive_;
  std::set<std::vector<const void*>> strides_seen_;
  int64_t alu_outside_ = 0, alu_inside_ = 0, reduce_iters_ = 1, reduce_size_ = 1;
  int reduce_depth_ = 0;

  // the plan: one AxisPlan per axis (output dims, then the first reduce's reduced dims)
  Dims out_shape_;                // the kernel's output axes: the item's shape, or its split (refined_shape)
  std::vector<UOpRef> root_mops_; // the output value seen in out_shape_: a RESHAPE, or none
  // The value the kernel computes: the stored value, or the reduce under a root PERMUTE (a
  // product stored transposed), which is then stored through store_perm_ (item dim d is the
  // value's dim store_perm_[d]; empty: the identity).
  UOpRef value_root_;
  std::vector<int64_t> store_perm_;
  // Reduces inside another reduce's input (analyze): loops of their own, never the plan's even
  // where their space is the planned one's (attention with as many keys as features).
  std::unordered_set<const UOp*> nested_;
  UOpRef first_reduce_;
  std::vector<int64_t> reduce_dims_; // the first reduce's reduced input dims of size > 1
  std::vector<AxisPlan> plan_;
  std::vector<LanePart> upcasts_, unrolls_; // in the order applied: lane_id indexes them
  std::array<uint32_t, 3> local_{1, 1, 1};
  int local_axes_ = 0;
  std::map<size_t, UOpRef> loops_; // output axis -> its LOOP range
  std::vector<UOpRef> local_ids_;  // per local axis
  // GROUP: the grouped reduce's threads share partials through local memory
  int group_axis_ = -1; // the LOCAL_ID axis of the GROUP part
  UOpRef local_buf_;
  int64_t group_slots_ = 0, next_slot_ = 0;
  std::vector<UOpRef> trailing_barriers_;
  std::vector<UOpRef> leading_values_; // sink sources ahead of the stores: they sort first (linearize)
  bool tile_loop_ = false;
  // TC: the operands of the matmul-shaped reduce (analyze), the axes the opt took, and while the
  // output lanes are built: the tile, the lane, its C fragment position and the WMMA results.
  UOpRef tc_a_, tc_b_;
  std::optional<MatmulAxes> tc_;
  std::vector<UOpRef> rest_idx_;
  int64_t cur_lane_ = 0; // the upcast lane being built
  int tc_digit_ = 0;     // its position in the C fragment
  std::map<size_t, UOpRef> tc_override_;
  std::map<int64_t, UOpRef> tc_acc_; // upcast lane -> accumulated WMMA result
  int tc_unit_ = -1;                 // TC: the index of its unit in options_.matrix_units
  bool tc_local_ = false;            // TC: the unit reads A and B from local memory (staged tiles)
  const tg_matrix_unit& tc_unit() const { return options_.matrix_units.at(size_t(tc_unit_)).unit; }
  UOpRef layout_index(const uint16_t* item_entries, const uint16_t* element_entries, uint32_t item_bits,
                      const UOpRef& item, uint32_t element) const;
  // STAGE: the reduce's a * b reads a and b from local memory, copied there once per reduce tile
  // by the whole work group. Each operand's tile spans the kernel axes it varies along.
  struct Staged {
    UOpRef operand;               // a or b (a float16/bfloat16 one without its CAST to float)
    std::optional<DType> cast_to; // the CAST stripped from it
    Dims strides;                 // global element stride per reduce-input dim (-1: unknown)
    std::vector<size_t> layout;   // kernel axes of its tile in local memory, outermost first
    Dims local_strides;           // per layout entry
    // A footprint tile (footprint_tile): per layout entry, the kernel axes whose indices it sums
    // (layout[i] is sums[i][0]; one axis: a plain entry) and its extent in the tile.
    std::vector<std::vector<size_t>> sums;
    Dims extents;
    UOpRef footprint;                   // its value at footprint_vars (null: the view tile)
    std::vector<UOpRef> footprint_vars; // one per reduce-input dim
    int64_t elements = 1;               // of the tile
    int64_t count = 1;                  // its local memory, padded
    int64_t offset = 0; // where it starts in the one local buffer (equal DEFINE_LOCALs are one node)
    // Under a local-memory unit: the tile is made of the unit's atoms for this operand
    // (tg_matrix_atom), stacked along atom_axes[first] first; atom_axes = the kernel axes of the
    // atom's rows and columns (A: m, k; B: k, n), atom_strides the elements between atoms along them.
    const tg_matrix_atom* atom = nullptr;
    std::array<size_t, 2> atom_axes{};
    std::array<int64_t, 2> atom_strides{};
  };
  size_t atom_vector_axis(const Staged& s) const;
  int64_t atom_vector_run(const Staged& s) const;
  int64_t atom_cross_rows(const Staged& s, int64_t width) const;
  // The element index of the atom position (row, col) of a tile made of atoms (from its start).
  UOpRef atom_tile_index(const Staged& s, const UOpRef& row, const UOpRef& col) const;
  // The same for tile coordinates by kernel axis (the layout's row axis and k).
  UOpRef atom_tile_index_axes(const Staged& s, const UOpRef& layout0, const UOpRef& layout1) const;
  std::vector<Staged> staged_;
  UOpRef stage_mul_;                      // the reduce's MUL
  std::vector<int64_t> axis_dim_;         // kernel axis -> reduce input dim (-1: none)
  std::map<size_t, UOpRef> stage_ranges_; // reduce axis -> its loop inside a tile
  std::vector<UOpRef> stage_tile_ranges_; // the loops over tiles
  UOpRef stage_barrier_;                  // after the copies: the reads wait for it
  int64_t stage_half_ = 0;  // double-buffered tiles: where the second set starts (elements), else 0
  int64_t stage_sets_ = 2;  // sets of tiles when stage_half_ is set: 3 for a local-memory unit where they fit
  int64_t stage_ahead_ = 1; // tiles the tile loop copies ahead: stage_prefetch in prefetch + 2 sets
  UOpRef stage_read_offset() const;
  void local_unit_sets(int64_t bytes, int64_t tile_loops, bool same_size);
  int64_t plain_stage_half(int64_t bytes, int64_t tile_loops) const;
  bool plain_vector_copy(const Staged& s, bool contiguous) const;
  void footprint_tile(Staged& s);
  UOpRef stage_buffer_; // DEFINE_LOCAL holding every operand's tile
};

} // namespace tg::lower_detail
