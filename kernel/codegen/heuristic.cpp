#include "kernel/codegen/heuristic.hpp"

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <optional>

namespace tg {

int64_t KernelInfo::output_count() const {
  int64_t n = 1;
  for (size_t a = 0; a < output_dims; ++a) n *= axes[a].size;
  return n;
}

int64_t KernelInfo::reduce_count_elems() const {
  int64_t n = 1;
  for (size_t a = output_dims; a < axes.size(); ++a) n *= axes[a].size;
  return n;
}

namespace heuristic_detail {

// The largest divisor of n that is at most cap.
int64_t largest_divisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d >= 2; --d)
    if (n % d == 0) return d;
  return 1;
}

// A selection sum (KernelInfo::selection; an embedding's gradient: 50304 x 768 outputs, each a
// sum over 8192 tokens of the token's gradient row where the token is the output's row) costs
// each thread the condition's read and compare per step, whatever it computes; the reads and adds
// under IF(c) run on the few steps c selects. So a thread takes up to `most` outputs along an axis
// c does not vary along (they share its compare and its IF), the contiguous one first, while
// `least_items` threads remain. Nothing where no axis qualifies.
std::optional<Opt> selection_upcast(const KernelInfo& k, int64_t most, int64_t least_items) {
  if (!k.selection) return std::nullopt;
  int best = -1;
  for (int a = 0; a < int(k.output_dims); ++a) {
    const AxisInfo& x = k.axes[size_t(a)];
    if (x.selects || x.size < 2) continue;
    if (best < 0 || x.contiguous > k.axes[size_t(best)].contiguous ||
        (x.contiguous == k.axes[size_t(best)].contiguous && x.size > k.axes[size_t(best)].size))
      best = a;
  }
  if (best < 0) return std::nullopt;
  int64_t u = largest_divisor(k.axes[size_t(best)].size, most);
  while (u > 1 && k.output_count() / u < least_items) u = largest_divisor(k.axes[size_t(best)].size, u - 1);
  if (u < 2) return std::nullopt;
  return Opt{OptOp::UPCAST, best, u};
}

// An elementwise kernel's small axes along which reads are valid only in part (the pieces of a
// stack: Winograd's transforms, kernel/tensor/winograd.cpp), upcast whole while the lanes stay
// <= 49: each lane's gates are then constants and fold, so a lane computes its own piece only,
// from loads the lanes share (tinygrad's rule for stacked axes). The pieces' axes first, from the
// innermost; then other gated axes (a padded window's), from the outermost.
std::vector<Opt> masked_upcasts(const KernelInfo& k) {
  std::vector<Opt> o;
  int64_t lanes = 1;
  if (k.axes.size() != k.output_dims) return o;
  auto take = [&](int a) {
    const AxisInfo& x = k.axes[size_t(a)];
    if (x.size < 2 || x.size > 7 || lanes * x.size > 49) return;
    for (const Opt& p : o)
      if (p.axis == a) return;
    o.push_back({OptOp::UPCAST, a, x.size});
    lanes *= x.size;
  };
  for (int a = int(k.output_dims) - 1; a >= 0; --a)
    if (k.axes[size_t(a)].masked) take(a);
  if (o.empty()) return o;
  for (int a = 0; a < int(k.output_dims); ++a)
    if (k.axes[size_t(a)].gated) take(a);
  // innermost first: the leading upcast becomes the vector lanes where an input is contiguous
  std::sort(o.begin(), o.end(), [](const Opt& x, const Opt& y) { return x.axis > y.axis; });
  return o;
}

} // namespace heuristic_detail

namespace {

using namespace heuristic_detail;

// Add LOCAL splits over the output axes (last first: neighbouring threads touch neighbouring
// outputs) until the work group holds up to `threads` threads; sizes must divide the axis (after
// `done`, the splits already made); a long axis with no useful divisor is padded first. A work
// group has 3 dimensions: where taking every axis leaves fewer than 64 threads (a max pool's
// gradient, (N, C, 10, 10, 2, 2): 2 x 2 x 10 = 40 threads per group, 0.10 ms on an H100 for 26 MB),
// axes that add fewer than 4 threads are passed over after the first one taken.
void fill_locals(const KernelInfo& k, const DeviceLimits& d, int64_t threads, std::vector<int64_t>& done,
                 std::vector<Opt>& opts) {
  int used = 0;
  for (const auto& o : opts) used += o.op == OptOp::LOCAL || o.op == OptOp::GROUP || o.op == OptOp::GROUPTOP;
  auto plan = [&](bool skip_small, std::vector<int64_t>& dn, std::vector<Opt>& out) {
    int64_t left = threads, taken = 1;
    int local_dims = used;
    for (int a = int(k.output_dims) - 1; a >= 0 && left >= 2 && local_dims < 3; --a) {
      const int64_t rest = k.axes[size_t(a)].size / dn[size_t(a)];
      if (rest < 2) continue;
      const int64_t cap = std::min<int64_t>(left, d.max_local_size[size_t(local_dims)]);
      int64_t l = largest_divisor(rest, cap);
      bool pad = false;
      if (l < 8 && dn[size_t(a)] == 1 && rest >= 4 * cap && cap >= 16) { // a prime-ish long axis
        pad = true;
        l = cap;
      }
      if (l < 2 || (skip_small && l < 4 && local_dims > used)) continue;
      if (pad) out.push_back({OptOp::PADTO, a, cap});
      out.push_back({OptOp::LOCAL, a, l});
      dn[size_t(a)] *= l;
      left /= l;
      taken *= l;
      ++local_dims;
    }
    return taken;
  };
  std::vector<int64_t> done_all = done, done_skip = done;
  std::vector<Opt> all, skip;
  const int64_t n_all = plan(false, done_all, all);
  const bool prefer_skip = n_all < std::min<int64_t>(64, threads) && plan(true, done_skip, skip) > n_all;
  done = prefer_skip ? done_skip : done_all;
  opts.insert(opts.end(), prefer_skip ? skip.begin() : all.begin(), prefer_skip ? skip.end() : all.end());
}

// Whether unit u's atom for an operand runs along the axis the operand is contiguous in (its
// 16-byte copies then move whole rows of the atom), K where it is contiguous in none or the device
// has no 16-byte vectors.
bool atom_agrees(const tg_matrix_atom& atom, bool is_a, const MatmulAxes& mm, const DeviceLimits& d) {
  const int inner = is_a ? mm.a_inner : mm.b_inner;
  const int want = inner >= 0 && d.vector_bytes >= 16 ? inner : mm.k;
  // bit 0 of the atom's offset moves along its rows (A: m, B: k) or its columns (A: k, B: n)
  const int along = atom.row[0] != 0 ? (is_a ? mm.m : mm.k) : (is_a ? mm.k : mm.n);
  return along == want;
}

// A matmul on a unit that reads A and B from local memory (ABI 1.5; Hopper's warpgroup wgmma):
// each work group takes 2 unit tiles along m and one along n (2 x 2 groups of a 128-wide unit,
// 512 threads, fail to launch on CUDA once an epilogue is fused: too many registers; blocks under
// 128 wide are left to BEAM),
// the operands staged 4 unit k steps at a time where three sets of tiles fit the device's opt-in
// maximum (the MMAs then defer their reads, lower_stage.cpp), else 2, the tiles made of the unit's
// atoms. The units are tried in the device's order, those whose atoms agree with the operands'
// contiguous axes first (docs/cuda.md, "Tensor cores": 128-byte swizzled tiles, B n-major, 64 x 256
// per warpgroup is the fastest form measured on an H100). Only with at least one work group per
// compute unit: each takes a whole one. lower_kernel falls back to the register units where the
// kernel refuses the list.
std::vector<Opt> local_unit_opts(const KernelInfo& k, const DeviceLimits& d) {
  const MatmulAxes mm = *k.matmul;
  const int64_t ms = k.axes[size_t(mm.m)].size, ns = k.axes[size_t(mm.n)].size,
                kr = k.axes[size_t(mm.k)].size;
  if (!d.staging || k.axes.size() != k.output_dims + 1 || d.max_local_size[1] < 2) return {};
  std::vector<int> order;
  for (bool agree : {true, false})
    for (int ui : fitting_units(k, d)) {
      const tg_matrix_unit& u = d.matrix_units[size_t(ui)].unit;
      if (sdk::matrix_local(u) &&
          (atom_agrees(u.a_atom, true, mm, d) && atom_agrees(u.b_atom, false, mm, d)) == agree)
        order.push_back(ui);
    }
  for (int ui : order) {
    const tg_matrix_unit& u = d.matrix_units[size_t(ui)].unit;
    const int64_t items = int64_t(1) << u.item_bits;
    if (items > int64_t(d.max_local_size[0]) || 2 * items > int64_t(d.max_local_threads) ||
        kr % (2 * u.k) != 0)
      continue;
    const int64_t bm = 2 * u.m, bn = u.n;
    // work groups over every output axis (a batch of matmuls counts too); with a transcendental
    // epilogue (GELU's derivative on a gradient) at most 128 wide: a 256-wide unit's 128
    // accumulators per thread leave its temporaries no registers
    if (bn < 128 || (k.transcendental > 0 && bn > 128) || ms % bm != 0 || ns % bn != 0 ||
        k.output_count() / (bm * bn) < int64_t(d.compute_units))
      continue;
    const uint64_t isz = sdk::dtype_size(u.a_dtype);
    const int64_t steps =
        kr % (4 * u.k) == 0 && 3 * uint64_t(bm + bn) * 4 * u.k * isz <= d.local_memory_limit() ? 4 : 2;
    // whole atoms: A bm x k, B k x bn
    const sdk::MatrixElement ea = sdk::atom_extent(u.a_atom), eb = sdk::atom_extent(u.b_atom);
    const int64_t kt = steps * u.k;
    if (bm % ea.row != 0 || kt % ea.col != 0 || kt % eb.row != 0 || bn % eb.col != 0) continue;
    return {{OptOp::TC, mm.k, ui}, {OptOp::LOCAL, mm.m, 2}, {OptOp::STAGE, mm.k, steps}};
  }
  return {};
}

// A matmul-shaped float16/bfloat16 reduce on a device with tensor cores: TC, then a register tile
// of fragments per warp (A fragments serve every n fragment, B every m) and 4 warps per block.
std::vector<Opt> tc_opts(const KernelInfo& k, const DeviceLimits& d) {
  const MatmulAxes mm = *k.matmul;
  const int64_t kr = k.axes[size_t(mm.k)].size;
  const int64_t ms = k.axes[size_t(mm.m)].size, ns = k.axes[size_t(mm.n)].size;
  if (auto local = local_unit_opts(k, d); !local.empty()) return local;
  // The first declared unit whose shape divides the matmul and whose items fit a work group.
  for (int ui : fitting_units(k, d)) {
    const tg_matrix_unit& u = d.matrix_units[size_t(ui)].unit;
    const int64_t items = int64_t(1) << u.item_bits;
    if (sdk::matrix_local(u) || ms % u.m != 0 || ns % u.n != 0 || kr % u.k != 0 ||
        items > int64_t(d.max_local_size[0]) || items > int64_t(d.max_local_threads))
      continue;
    int64_t mr = ms / u.m, nr = ns / u.n;
    const bool stage = d.staging && d.local_memory_bytes > 0 && d.parallel_groups() &&
                       k.axes.size() == k.output_dims + 1 && kr % (2 * u.k) == 0;
    std::vector<Opt> opts{{OptOp::TC, mm.k, ui}};
    auto take = [&](OptOp op, int axis, int64_t& left, std::initializer_list<int64_t> amounts) {
      for (int64_t a : amounts)
        if (left % a == 0) {
          opts.push_back({op, axis, a});
          left /= a;
          return;
        }
    };
    // Each work group of items computes several unit tiles (A fragments serve every n tile, B every
    // m tile). With the tiles staged: 8x4 tiles per item group (for m16n8k16: 64x64 per warp, 128
    // accumulators per thread), 2x2 groups, a 128x128 block tile, the fastest block and warp shapes
    // measured on an H200; without: 4x2, 2x2 groups. Two k steps per tile: two sets of 18 KiB
    // tiles fit 48 KiB, so the next tile's copy overlaps this tile's mma (lower_stage.cpp:
    // plan_stage; 8192 f16 on an H200: ~1.25x one set of 64 k).
    if (stage) {
      take(OptOp::UPCAST, mm.n, nr, {8, 4, 2});
      take(OptOp::UPCAST, mm.m, mr, {4, 2});
    } else {
      take(OptOp::UPCAST, mm.n, nr, {4, 2});
      take(OptOp::UPCAST, mm.m, mr, {2});
    }
    if (items * 2 <= int64_t(d.max_local_threads) && d.max_local_size[1] >= 2)
      take(OptOp::LOCAL, mm.m, mr, {2});
    if (items * 4 <= int64_t(d.max_local_threads) && d.max_local_size[2] >= 2)
      take(OptOp::LOCAL, mm.n, nr, {2});
    // the work group's A and B tiles through local memory, two k steps at a time
    if (stage) opts.push_back({OptOp::STAGE, mm.k, 2});
    return opts;
  }
  return {};
}

// A sum of products over one reduce axis, reused along two output axes (a matmul), on a GPU:
// 16x16 threads, each computing a register tile of adjacent outputs (UPCAST on both axes, then
// LOCAL: a thread's reads of a tile row are adjacent words the compiler may merge into 128-bit
// loads; 2-3% faster on an H200 than threads interleaved inside the tile), from operand tiles the
// work group copies to local memory a few reduce steps at a time (STAGE). Convolutions (several
// reduce axes): staged_conv_opts below.
std::vector<Opt> staged_opts(const KernelInfo& k, const DeviceLimits& d) {
  const MatmulAxes mm = *k.product;
  if (k.axes.size() != k.output_dims + 1 || d.max_local_threads < 256 || d.max_local_size[0] < 16 ||
      d.max_local_size[1] < 16)
    return {};
  const int n = mm.n, kr = mm.k;
  for (int64_t area : {64, 32, 16}) // outputs per thread, most first
    for (int64_t un : {8, 4})
      for (int m = 0; m < int(k.output_dims); ++m) {
        const int64_t um = area / un;
        if (m == n || k.axes[size_t(m)].reuse == 0 || (um != 4 && um != 8)) continue;
        const int64_t tm = 16 * um, tn = 16 * un;
        if (k.axes[size_t(m)].size % tm != 0 || k.axes[size_t(n)].size % tn != 0 ||
            k.output_count() / (tm * tn) < int64_t(d.compute_units))
          continue;
        for (int64_t step : {16, 8, 4, 2}) {
          const uint64_t bytes = uint64_t((tm + tn + 8) * step) * uint64_t(k.itemsize); // + padding
          if (k.axes[size_t(kr)].size % step != 0 || bytes > d.local_memory_bytes) continue;
          // 4 adjacent outputs per axis innermost (one 16-byte read of each tile), the rest of a
          // thread's outputs 64 apart: a warp's 16-byte reads of a tile row are conflict-free
          std::vector<Opt> o{
              {OptOp::UPCAST, n, 4}, {OptOp::UPCAST, m, 4}, {OptOp::LOCAL, n, 16}, {OptOp::LOCAL, m, 16}};
          if (un > 4) o.push_back({OptOp::UPCAST, n, un / 4});
          if (um > 4) o.push_back({OptOp::UPCAST, m, um / 4});
          o.push_back({OptOp::STAGE, kr, step});
          return o;
        }
      }
  return {};
}

// A 2-D convolution (outputs batch x channels x rows x columns, a sum over input channels x window
// rows x window columns) on a GPU: a work group takes 64 (or 32) output channels x 2 rows x all
// columns of one image (two images where the batch is even); threads along the channels times
// half the columns (2 each) [times the 2 images], and the input channels 4 at a time with the
// whole window as the staged tile, so that the copies read whole rows of the input image. Output
// axes of size 1 are skipped: a convolution with a custom gradient (Tensor::conv2d) stores (N,
// groups, C, 1, H, W, 1, 1). Channels per thread: 4 adjacent ones, 16 (or 8) threads; with two
// images and 64 channels, 8 threads x 8 channels (4 adjacent, 4 more 32 apart: a warp's 16-byte
// reads of the weight tile then cover 8 x 16 distinct bytes, and each window value read from local
// memory serves 8 outputs instead of 4).
// Why (docs/cuda.md, "Shared-memory tiles (STAGE) on CUDA"): staged, 256x32x28x28 -> 64 3x3 beats
// the unstaged kernel on an H200 (~1.2x, the kernel alone) and the training step's 32-channel 5x5
// convolutions run 3-4x faster; staging batch x channels instead gathers 3-float rows and loses,
// so other shapes keep the unstaged choices. Two images per work group with 8 channels per
// thread beat the other layouts measured (16 x 4 channels, one image, four images,
// the images on LOCAL_ID 0, two images per thread). With the window staged as its footprint
// (lower_stage.cpp: footprint_tile) two sets of 8 input channels fit 48 KiB but gain nothing over
// 4, and neither do 8 per tile double-buffered in dynamic shared memory (128 registers instead of
// 96, 2 groups per SM instead of 3).
std::vector<Opt> staged_conv_opts(const KernelInfo& k, const DeviceLimits& d) {
  const MatmulAxes mm = *k.product;
  std::vector<int> out; // the output axes of more than one index: batch, channels, rows, columns
  for (int a = 0; a < int(k.output_dims); ++a)
    if (k.axes[size_t(a)].size > 1) out.push_back(a);
  if (out.size() != 4 || k.axes.size() != k.output_dims + 3 || std::min(mm.m, mm.n) != out[1] ||
      std::max(mm.m, mm.n) != out[3])
    return {};
  const int n = out[0], c = out[1], r = out[2], w = out[3], ci = int(k.output_dims);
  const AxisInfo &co = k.axes[size_t(c)], &oh = k.axes[size_t(r)], &ow = k.axes[size_t(w)];
  const int64_t kh = k.axes[size_t(ci) + 1].size, kw = k.axes[size_t(ci) + 2].size;
  // threads along the columns, 2 columns each: all of them, or where a row has more than 32
  // columns (56, 112) the largest part of 8 to 16 threads that divides it
  int64_t cols = ow.size / 2;
  for (int64_t t = 16; cols > 16 && t >= 8; --t)
    if ((ow.size / 2) % t == 0) cols = t;
  const int64_t lco = co.size % 64 == 0 ? 16 : 8; // threads along the channels, 4 channels each
  if (!ow.contiguous || co.size % 32 != 0 || oh.size % 2 != 0 || ow.size % 2 != 0 || cols < 8 || cols > 16 ||
      k.axes[size_t(ci)].size % 4 != 0 || kh > 7 || kw > 7 || d.max_local_size[0] < uint32_t(lco) ||
      d.max_local_size[1] < uint32_t(cols) || d.max_local_threads < lco * cols)
    return {};
  const int64_t images = k.axes[size_t(n)].size;
  const int64_t col_groups = ow.size / (2 * cols);
  if (images * (oh.size / 2) * col_groups * (co.size / (4 * lco)) < int64_t(d.compute_units)) return {};
  // Two images per work group: 8 threads along the channels, times 8 channels each where there are
  // 64 per group. The tiles: both images' windows (2 x 4 channels x (kh + 1) rows x (2 cols + kw -
  // 1) columns) and the weights of 4 input channels.
  const int64_t group_co = 4 * lco;
  const int64_t floats =
      2 * 4 * (kh + 1) * (2 * cols + kw - 1) + 4 * kh * kw * group_co + 4; // + 16-byte rounding
  const bool pair =
      images % 2 == 0 && d.max_local_size[2] >= 2 && d.max_local_threads >= 16 * cols &&
      uint64_t(floats) * uint64_t(k.itemsize) <= d.local_memory_bytes &&
      (images / 2) * (oh.size / 2) * col_groups * (co.size / group_co) >= int64_t(d.compute_units);
  std::vector<Opt> o{{OptOp::UPCAST, c, 4},
                     {OptOp::UPCAST, r, 2},
                     {OptOp::UPCAST, w, 2},
                     {OptOp::LOCAL, c, pair ? 8 : lco},
                     {OptOp::LOCAL, w, cols}};
  if (pair) o.push_back({OptOp::LOCAL, n, 2});
  if (pair && group_co == 64) o.push_back({OptOp::UPCAST, c, 2});
  o.insert(o.end(), {{OptOp::STAGE, ci, 4}, {OptOp::STAGE, ci + 1, kh}, {OptOp::STAGE, ci + 2, kw}});
  return o;
}

// A convolution's weight gradient (outputs [batch slice x] co x ci x kh x kw, a sum over [batch x]
// rows x columns of dY[.., co, oh, ow] * X[.., ci, oh + kh, ow + kw]; dY is stored channel-minor, so
// co is contiguous) on a GPU: a work group takes 32 output channels x 8 input channels x the whole
// window, 8 x kh x 4 threads, each a register tile of 4 co x 2 ci x a row of kw; per tile it stages
// `rows` output rows of dY (32 co x rows x ow) and X's footprint (8 ci x (rows + kh - 1) x (ow + kw
// - 1): lower_stage.cpp, footprint_tile), so each value read from global memory serves the
// threads of every (kh, kw) it meets, and a thread's kw lanes read neighbouring columns of one
// footprint row (the reads of neighbouring oh steps overlap: nvcc may keep them). The training
// step's 32x32x5x5 weight gradient on an H200: 0.371 ms vs 0.945 as a 4x4 register tile of strided
// global loads. Slower when measured: 4 co x 4 ci per thread with kw over threads (4 or 2 rows),
// or the batch slice staged too, double-buffered.
std::vector<Opt> staged_weight_gradient_opts(const KernelInfo& k, const DeviceLimits& d) {
  const MatmulAxes mm = *k.product;
  std::vector<int> out, red; // axes of more than one index
  for (int a = 0; a < int(k.axes.size()); ++a)
    if (k.axes[size_t(a)].size > 1) (a < int(k.output_dims) ? out : red).push_back(a);
  if (out.size() < 4 || red.size() < 2 || red.size() > 3) return {};
  const int c = out[out.size() - 4], ci = out[out.size() - 3], kh = out[out.size() - 2], kw = out.back();
  const int oh = red[red.size() - 2], ow = red.back();
  if (mm.n != c || mm.m != kw || mm.m2 != kh || mm.k != ow || !k.axes[size_t(c)].contiguous) return {};
  const int64_t nco = k.axes[size_t(c)].size, nci = k.axes[size_t(ci)].size, h = k.axes[size_t(kh)].size,
                w = k.axes[size_t(kw)].size, out_rows = k.axes[size_t(oh)].size,
                cols = k.axes[size_t(ow)].size;
  if (nco % 32 != 0 || nci % 8 != 0 || h > 7 || w > 7 || cols > 32 || d.max_local_size[0] < 8 ||
      d.max_local_size[1] < uint32_t(h) || d.max_local_size[2] < 4 || d.max_local_threads < 32 * h)
    return {};
  if (k.output_count() / (32 * 8 * h * w) < int64_t(d.compute_units)) return {};
  for (int64_t rows : {4, 2}) {
    const int64_t floats = 32 * rows * cols + 8 * (rows + h - 1) * (cols + w - 1) + 8; // + alignment
    if (out_rows % rows != 0 || uint64_t(floats) * uint64_t(k.itemsize) > d.local_memory_bytes) continue;
    return {{OptOp::UPCAST, c, 4},    {OptOp::UPCAST, ci, 2},  {OptOp::UPCAST, kw, w},
            {OptOp::LOCAL, c, 8},     {OptOp::LOCAL, kh, h},   {OptOp::LOCAL, ci, 4},
            {OptOp::STAGE, oh, rows}, {OptOp::STAGE, ow, cols}};
  }
  return {};
}

// GPU-style devices: LOCAL threads over the outputs; a reduce whose outputs are too few to fill the
// device shares each reduction among the threads of a work group (GROUP) through local memory.
std::vector<Opt> gpu_opts(const KernelInfo& k, const DeviceLimits& d) {
  if (d.tensor_cores() && k.matmul && !k.selection)
    if (auto tc = tc_opts(k, d); !tc.empty()) return tc;
  if (d.staging && k.product && k.reduce_count == 1) {
    if (auto st = staged_opts(k, d); !st.empty()) return st;
    if (auto st = staged_conv_opts(k, d); !st.empty()) return st;
    if (auto st = staged_weight_gradient_opts(k, d); !st.empty()) return st;
  }
  std::vector<Opt> opts;
  const int64_t threads = std::min<int64_t>(256, d.max_local_threads);
  std::vector<int64_t> done(k.axes.size(), 1);
  if (auto up = selection_upcast(k, 64, threads * int64_t(d.compute_units))) {
    opts.push_back(*up);
    done[size_t(up->axis)] *= up->amount;
    fill_locals(k, d, threads, done, opts);
    return opts;
  }
  const bool has_reduce = k.axes.size() > k.output_dims;
  const int64_t loop_limit =
      d.max_loop_iterations ? int64_t(std::min<uint64_t>(d.max_loop_iterations, uint64_t(1) << 62)) : 0;
  const bool too_long = loop_limit && k.reduce_count_elems() > loop_limit; // for one thread
  // Also a shorter reduce (>= 256 values) with fewer outputs than compute units: one thread's
  // serial chain of dependent loads is then the whole kernel (the training step's loss mean over
  // 512 values in one thread takes 17 us on an H200, as long as a 9 MB elementwise kernel).
  const bool few_short = k.output_count() < int64_t(d.compute_units) && k.reduce_count_elems() >= 256;
  if (has_reduce && k.reduce_count == 1 &&
      ((k.output_count() <= 2048 && k.reduce_count_elems() >= 1024) || few_short || too_long)) {
    // the longest reduced axis; group threads interleaved so neighbours read neighbours
    int axis = int(k.output_dims);
    for (int a = axis; a < int(k.axes.size()); ++a)
      if (k.axes[size_t(a)].size > k.axes[size_t(axis)].size) axis = a;
    int64_t n = k.axes[size_t(axis)].size;
    int64_t g = 1;
    for (int64_t p = threads; p >= 16 && g == 1; p /= 2)
      if (n % p == 0) g = p;
    // Several reduced axes (a split BatchNorm sum: a slice of N, then H*W): the innermost one when
    // it is a contiguous row of >= 32 words, so a warp's reads are one coalesced stretch; grouping
    // a longer N has neighbouring threads a whole C*H*W apart, and a 400-long row got only 16
    // threads. Padded to a multiple of the group where no power of two >= 32 divides the row and
    // the padding is at most 1/8 of it (400 -> 448 for 64 threads).
    const int last = int(k.axes.size()) - 1;
    const AxisInfo& inner = k.axes[size_t(last)];
    int64_t pad = 0;
    if (!too_long && last > int(k.output_dims) && inner.contiguous && inner.size >= 32) {
      int64_t gi = 0;
      for (int64_t p = threads; p >= 32 && gi == 0; p /= 2)
        if (inner.size % p == 0) gi = p;
      for (int64_t p = threads; p >= 32 && gi == 0; p /= 2)
        if ((inner.size + p - 1) / p * p - inner.size <= inner.size / 8) gi = pad = p;
      if (gi > 0) {
        axis = last;
        n = inner.size;
        g = gi;
      }
    }
    if (pad > 0) opts.push_back({OptOp::PADTO, axis, pad});
    // Under a loop limit: each thread's share of the reduce, unrolled u ways, must fit it (the
    // other reduced axes still loop around it); pad so that threads * u divides the axis.
    int64_t u = 1;
    if (too_long) {
      const int64_t others = k.reduce_count_elems() / n, per_thread = loop_limit / (2 * others); // margin
      while (u < 32 && per_thread > 0 && (n + threads * u - 1) / (threads * u) > per_thread) u *= 2;
      if (n % (threads * u) != 0) opts.push_back({OptOp::PADTO, axis, threads * u});
      g = threads;
    }
    // A long axis whose largest power-of-two divisor is under 64 (2048 partial sums
    // of 18864 = 16 x 1179 values) is padded to the full group: 16 threads per output left 2048
    // outputs 128 work groups.
    if (g < 64 && pad == 0 && !too_long && n >= 4 * threads) {
      opts.push_back({OptOp::PADTO, axis, threads});
      g = threads;
    }
    const uint64_t bytes = uint64_t(g) * uint64_t(k.itemsize);
    if (g > 1 && bytes <= d.local_memory_bytes) {
      opts.push_back({OptOp::GROUP, axis, g});
      if (u > 1) opts.push_back({OptOp::UNROLL, axis, u});
      fill_locals(k, d, threads / g, done, opts);
      return opts;
    }
  }
  // Rows, each summed along a contiguous row of >= 256 words, not a sum of products (LayerNorm's
  // mean and variance and their gradients, a softmax's max and sum): one thread per row walks a
  // stretch of its own, so each load of a warp touches 32 cache lines (GPT-2's 8192 x 768
  // LayerNorm rows: ~3 ms per kernel on an H200). 32-128 threads per row read it in coalesced
  // stretches instead.
  if (has_reduce && k.reduce_count == 1 && !too_long && !k.product) {
    const int last = int(k.axes.size()) - 1;
    const AxisInfo& inner = k.axes[size_t(last)];
    if (last >= int(k.output_dims) && inner.contiguous && inner.size >= 256) {
      int64_t g = 0;
      for (int64_t p : {128, 64, 32})
        if (g == 0 && p <= threads && inner.size % p == 0 && inner.size / p >= 4) g = p;
      if (g > 0 && uint64_t(g * k.itemsize) <= d.local_memory_bytes) {
        opts.push_back({OptOp::GROUP, last, g});
        fill_locals(k, d, threads / g, done, opts);
        return opts;
      }
    }
  }
  // Fewer outputs than 256 threads per compute unit and a long reduce whose innermost axis is a
  // contiguous row: 8 threads share each output along that row (neighbours read neighbouring
  // words). The training step's first weight gradient (32x32x1x5x5 outputs of 16x24x24 products,
  // 200 work groups of one thread per output) on an H200: ~1.9x one thread per output, ahead of
  // GROUP over its batch axis or GROUPTOP.
  if (has_reduce && k.reduce_count == 1 && !too_long && k.output_count() < 256 * int64_t(d.compute_units) &&
      k.reduce_count_elems() >= 4096) {
    const int last = int(k.axes.size()) - 1;
    const AxisInfo& inner = k.axes[size_t(last)];
    if (last >= int(k.output_dims) && inner.contiguous && inner.size % 8 == 0 && threads >= 8 &&
        uint64_t(8 * k.itemsize) <= d.local_memory_bytes) {
      opts.push_back({OptOp::GROUP, last, 8});
      fill_locals(k, d, threads / 8, done, opts);
      return opts;
    }
  }
  // The same, summed down columns (a bias gradient: 3072 column sums over 8192 rows, contiguous
  // along the outputs, strided along the reduce): 16 neighbouring columns per warp row (64 bytes
  // read at once) and 16 threads sharing each column's rows, so the grid has output_count / 16
  // work groups; one thread per column left GPT-2's 3072 columns 12 work groups of 256 threads.
  if (has_reduce && k.reduce_count == 1 && !too_long && k.output_count() < 256 * int64_t(d.compute_units) &&
      k.output_dims > 0 && threads >= 256 && !k.product) {
    const int out = int(k.output_dims) - 1;
    int axis = int(k.output_dims);
    for (int a = axis; a < int(k.axes.size()); ++a)
      if (k.axes[size_t(a)].size > k.axes[size_t(axis)].size) axis = a;
    const AxisInfo &cols = k.axes[size_t(out)], &rows = k.axes[size_t(axis)];
    if (cols.contiguous && !k.axes.back().contiguous && cols.size % 16 == 0 && rows.size % 16 == 0 &&
        rows.size >= 1024 && uint64_t(256 * k.itemsize) <= d.local_memory_bytes) {
      opts.push_back({OptOp::LOCAL, out, 16});
      opts.push_back({OptOp::GROUP, axis, 16});
      return opts;
    }
  }
  // many outputs: a small upcast tile where inputs are reused (matmul), then threads over outputs
  if (has_reduce) {
    int upcasts = 0;
    for (int a = int(k.output_dims) - 1; a >= 0 && upcasts < 2; --a) {
      const AxisInfo& x = k.axes[size_t(a)];
      // An axis of 32-63 reused outputs too, where 16 outputs per thread still leave 256 threads per
      // compute unit: the training step's 5x5 weight gradient (32x32x32x5x5 outputs, 32 x 32
      // channels) takes 3.0 ms on an H200 without a register tile, 1.7 ms with 4x4.
      const bool wide =
          x.size >= 64 || (x.size >= 32 && k.output_count() / 16 >= 256 * int64_t(d.compute_units));
      if (x.reuse == 0 || x.size % 4 != 0 || !wide) continue;
      opts.push_back({OptOp::UPCAST, a, 4});
      done[size_t(a)] *= 4;
      ++upcasts;
    }
    // A lone 4-wide tile (one reused axis: its 4 outputs share one load of the other operand but
    // load 4 of their own, 5 loads per 4 products instead of 2 per 1) that leaves fewer threads than
    // two rounds of 256 per compute unit: 2 wide, twice the threads for almost the same reuse (the
    // training step's linear-layer weight gradient on an H200: ~1.6x the 4-wide tile). A 4x4 tile
    // saves far more loads and keeps 4 (halved, a 64x32x3x3 weight gradient runs ~35% slower).
    if (upcasts == 1 && k.output_count() / 4 < 2 * 256 * int64_t(d.compute_units)) {
      const int a = opts.back().axis;
      opts.back().amount = 2;
      done[size_t(a)] = done[size_t(a)] / 4 * 2;
    }
  }
  if (!has_reduce)
    for (const Opt& o : masked_upcasts(k)) {
      opts.push_back(o);
      done[size_t(o.axis)] *= o.amount;
    }
  fill_locals(k, d, threads, done, opts);
  // A register tile over a sum along several axes whose innermost one is a contiguous row of >= 6
  // (a convolution's weight gradient: batch x rows x columns): that row unrolled by its largest
  // divisor <= 8, so each thread has several independent loads in flight (the training step's
  // 32x32x5x5 weight gradient on an H200, 20 columns unrolled by 5: ~1.9x the rolled loop).
  const size_t last = k.axes.size() - 1;
  if (has_reduce && k.reduce_count == 1 && !too_long && !opts.empty() && opts[0].op == OptOp::UPCAST &&
      last >= k.output_dims + 1 && k.axes[last].contiguous && k.axes[last].size >= 6) {
    const int64_t u = largest_divisor(k.axes[last].size, 8);
    if (u >= 3) opts.push_back({OptOp::UNROLL, int(last), u});
  }
  // A convolution whose register tile took two axes only its input varies along (ResNet's stem:
  // 4x4 output pixels of a 7x7 stride-2 window over 3 channels): 2 output channels per thread too,
  // so each window value loaded serves both (the stem at batch 64 on an H100: 3.64 -> 1.93 ms;
  // BEAM's choice)
  if (has_reduce && k.product && k.reduce_count == 1 && last >= k.output_dims + 1 && opts.size() >= 2 &&
      opts[0].op == OptOp::UPCAST && opts[1].op == OptOp::UPCAST) {
    const MatmulAxes mm = *k.product;
    auto input_only = [&](int a) { return a == mm.m || a == mm.m2; };
    if (input_only(opts[0].axis) && input_only(opts[1].axis) && opts[0].axis != opts[1].axis &&
        k.axes[size_t(mm.n)].size % 2 == 0 && k.output_count() / 32 >= 256 * int64_t(d.compute_units))
      opts.push_back({OptOp::UPCAST, mm.n, 2});
  }
  // A stride-1 convolution whose work group holds its whole output map of at most 64 pixels (7x7:
  // ResNet's last layers): the group's images and channels share each input channel's window, so
  // 32 input channels at a time are staged in local memory (16 where 32 do not divide them)
  // instead of read by every thread from L1/L2 (ResNet-18's 7x7 layers at batch 64 on an H100:
  // 1.18 -> 0.80 ms, BEAM's choice; its 14x14 layers staged so ran 0.97 -> 1.40 ms)
  if (has_reduce && d.staging && k.product && k.reduce_count == 1 && k.axes.size() == k.output_dims + 3) {
    const MatmulAxes mm = *k.product;
    auto whole_local = [&](int a) {
      if (a < 0) return false;
      bool local = false, upcast = false;
      for (const Opt& o : opts) {
        local |= o.op == OptOp::LOCAL && o.axis == a && o.amount == k.axes[size_t(a)].size;
        upcast |= o.op == OptOp::UPCAST && o.axis == a;
      }
      return local && !upcast;
    };
    const int64_t ci = k.axes[k.output_dims].size;
    if (whole_local(mm.m) && whole_local(mm.m2) && !k.axes[size_t(mm.m)].every_second && ci % 16 == 0 &&
        k.axes[size_t(mm.m)].size * k.axes[size_t(mm.m2)].size <= 64)
      opts.push_back({OptOp::STAGE, int(k.output_dims), ci % 32 == 0 ? 32 : 16});
  }
  return opts;
}

} // namespace

bool unit_fits(const tg_matrix_unit& u, const MatmulAxes& mm) {
  const bool float_c = u.c_dtype >= TG_DTYPE_FLOAT16 && u.c_dtype <= TG_DTYPE_FLOAT64;
  return u.a_dtype == mm.a && u.b_dtype == mm.b && float_c == mm.float_sum;
}

std::vector<int> fitting_units(const KernelInfo& kernel, const DeviceLimits& device) {
  std::vector<int> out;
  if (!kernel.matmul) return out;
  for (size_t i = 0; i < device.matrix_units.size(); ++i)
    if (unit_fits(device.matrix_units[i].unit, *kernel.matmul)) out.push_back(int(i));
  return out;
}

namespace {

// A kernel with nested reduces (a fused softmax: per output row, loops over the keys whose steps
// run the scores' products) computes its nested reduces once per thread and output row: the
// row's last axis (the value's features) is upcast whole, so each loop runs once per row and not
// once per feature; a GPU groups rows into work-groups along the axis before.
std::vector<Opt> nested_opts(const KernelInfo& k, const DeviceLimits& d) {
  std::vector<Opt> opts;
  std::vector<int> axes; // output axes of size > 1, innermost last
  for (size_t a = 0; a < k.output_dims; ++a)
    if (k.axes[a].size > 1) axes.push_back(int(a));
  if (axes.empty()) return opts;
  const int last = axes.back();
  if (k.axes[size_t(last)].size <= 128) opts.push_back({OptOp::UPCAST, last, k.axes[size_t(last)].size});
  if (d.parallel_groups() && axes.size() >= 2) {
    const int rows = axes[axes.size() - 2];
    for (int64_t l : {64, 32, 16, 8})
      if (k.axes[size_t(rows)].size % l == 0 && uint32_t(l) <= d.max_local_threads) {
        opts.push_back({OptOp::LOCAL, rows, l});
        break;
      }
  }
  return opts;
}

} // namespace

std::vector<Opt> heuristic_opts(const KernelInfo& kernel, const DeviceLimits& device) {
  if (kernel.nested_reduces) return nested_opts(kernel, device);
  if (kernel.one_hot >= 0) { // lowering folds that axis into a load: plan as if it were length 1
    KernelInfo folded = kernel;
    folded.axes[size_t(kernel.one_hot)].size = 1;
    folded.one_hot = -1;
    folded.matmul.reset();
    folded.product.reset();
    return heuristic_opts(folded, device);
  }
  if (!device.parallel_groups() && device.tensor_cores() && !kernel.selection &&
      kernel.matmul) // a matrix unit on a CPU-style device
    if (auto tc = tc_opts(kernel, device); !tc.empty()) return tc;
  return device.parallel_groups() ? gpu_opts(kernel, device) : cpu_opts(kernel, device);
}

} // namespace tg
