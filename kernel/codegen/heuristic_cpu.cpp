// The CPU-style devices' optimization lists (work groups as tasks of a thread pool): register
// tiles for products and convolutions, lanes and loops for the rest.
#include "kernel/codegen/heuristic.hpp"

#include <algorithm>

namespace tg::heuristic_detail {

namespace {

// Lanes of the kernel's dtype in one vector register, and the vector registers (x86: AVX-512
// doubles them).
int64_t lanes_per_register(const KernelInfo& k, const DeviceLimits& d) {
  return std::max<int64_t>(1, d.vector_bytes / std::max(1, k.itemsize));
}
int64_t vector_registers(const DeviceLimits& d) { return d.vector_bytes >= 64 ? 32 : 16; }

// A convolution tile's work group loops over the rest of its row of tiles (`rest` along m), then
// over up to 4 rows along m2 where `rows_too`, while 8 groups per core remain: one group reads
// its weights from L1/L2 for all of them (BEAM's choice for ResNet-18's 3x3 layers).
void loop_row_of_tiles(const KernelInfo& k, const DeviceLimits& d, const MatmulAxes& mm, int64_t rest,
                       int64_t groups, bool rows_too, std::vector<Opt>& opts) {
  const int64_t target = int64_t(d.compute_units) * 8;
  if (rest < 2 || groups / rest < target) return;
  opts.push_back({OptOp::LOOP, mm.m, rest});
  groups /= rest;
  if (!rows_too || mm.m2 < 0) return;
  const int64_t rows = k.axes[size_t(mm.m2)].size;
  int64_t l = largest_divisor(rows, 4);
  while (l > 1 && groups / l < target) l = largest_divisor(rows, l - 1);
  if (l > 1) opts.push_back({OptOp::LOOP, mm.m2, l});
}

// A sum of products over one reduce axis whose b operand is contiguous along n (a matmul, or one
// over b packed into 16-wide panels: kernel/tensor/matmul_pack.hpp): a register tile of 4 rows x
// 16 lanes (8 accumulating vector FMAs per reduce step, b's 16 values loaded once for 4 rows of
// a), and a LOOP over up to 64 row tiles, so a work group reuses one panel of b from L2 while a's
// rows stream past. At least 8 work groups per core remain for the thread pool to balance. With
// 64-byte vectors (AVX-512) 16 lanes are one register: 8 rows keep 8 accumulators in flight
// (matmul 1024 / 2048 on Zen 5: 0.63x / 0.61x the process CPU time of 4 rows).
std::vector<Opt> cpu_product_tile(const KernelInfo& k, const DeviceLimits& d) {
  if (!k.product || k.reduce_count != 1 || k.axes.size() != k.output_dims + 1) return {};
  const MatmulAxes mm = *k.product;
  const AxisInfo &n = k.axes[size_t(mm.n)], &m = k.axes[size_t(mm.m)];
  if (!n.contiguous || n.size % 16 != 0 || m.size % 4 != 0) return {};
  // (with 64-byte vectors and rows that 8 do not divide, 32 lanes of n keep 8 accumulators over a
  // long sum: a 1x1 convolution over 28x28 maps at batch 32, 192 -> 32 channels: 2.8 -> 2.1 ms; a
  // 32-long sum, 32 -> 192 channels, gained nothing at batch 32 and lost 7% at batch 1)
  const bool wide = d.vector_bytes >= 64 && k.itemsize <= 4;
  const int64_t r = wide && m.size % 8 == 0 ? 8 : 4,
                w = wide && r == 4 && n.size % 32 == 0 && k.reduce_count_elems() >= 64 ? 32 : 16;
  std::vector<Opt> opts{{OptOp::UPCAST, mm.n, w}, {OptOp::UPCAST, mm.m, r}};
  const int64_t tiles = k.output_count() / (w * r), rows = m.size / r;
  for (int64_t l = std::min<int64_t>(rows, 64); l >= 2; --l)
    if (rows % l == 0 && tiles / l >= int64_t(d.compute_units) * 8) {
      opts.push_back({OptOp::LOOP, mm.m, l});
      break;
    }
  return opts;
}

// A sum of products over one reduce axis stored contiguous along m, the axis a varies along (a
// 1x1 convolution in NCHW: out[c, y, x] = sum_k w[c, k] * in[k, y, x]): lanes along m, so a's
// values load and the outputs store as whole vectors, times r rows along n whose b values are
// broadcast; each work group loops over the rest of n, reusing its panel of a from L1 (or along
// its row of tiles, below). The matmul tile's lanes along n would store every lane to a different
// plane (MobileNetV2's 16 -> 96 expansion over a 112x112 map: 128 scalar stores per 128 outputs,
// 0.41 ms).
std::vector<Opt> cpu_column_tile(const KernelInfo& k, const DeviceLimits& d) {
  if (!k.product || k.reduce_count != 1 || k.axes.size() != k.output_dims + 1 || k.itemsize > 4) return {};
  const MatmulAxes mm = *k.product;
  if (k.store_inner != mm.m) return {};
  const AxisInfo &n = k.axes[size_t(mm.n)], &m = k.axes[size_t(mm.m)];
  if (!m.contiguous) return {};
  // 16 or 8 lanes, or a short axis whole where it fills most of one register (a 14-wide map with
  // 16-lane registers: 0.7x the time of the matmul tile; 28- and 7-wide ones took 1.5-2.8x)
  const int64_t per_register = lanes_per_register(k, d);
  const int64_t lanes = m.size % 16 == 0                                      ? 16
                        : m.size % 8 == 0                                     ? 8
                        : m.size <= per_register && 2 * m.size > per_register ? m.size
                                                                              : 0;
  // (the part-filled register pays more than the scattered stores once the sum is long: a 14-wide
  // map's 384 -> 64 projection took 1.1x the matmul tile's time)
  if (lanes == 0 || (lanes % 8 != 0 && k.reduce_count_elems() > 64)) return {};
  const int64_t vectors = (lanes + per_register - 1) / per_register; // per row
  // A projection whose lanes fill half a register or less takes all its output channels where they
  // fit beside 4 registers, so each step's input vector serves every channel (MobileNetV2's 144 ->
  // 24 over 56x56 on Zen 4: 24 rows of 8 lanes 0.150 -> 0.126 ms at batch 1, 6.6 -> 5.5 ms at
  // batch 32; 16 full-register rows over 112 columns, 32 -> 16, lost 1.4x)
  const bool all_rows = lanes < per_register && n.size <= k.reduce_count_elems() &&
                        n.size * vectors <= vector_registers(d) - 4 && m.size / lanes >= 2;
  const int64_t r =
      all_rows ? n.size : largest_divisor(n.size, std::min<int64_t>(8, (vector_registers(d) - 4) / vectors));
  if (r * vectors < 4) return {};
  std::vector<Opt> opts{{OptOp::UPCAST, mm.m, lanes}, {OptOp::UPCAST, mm.n, r}};
  int64_t groups = k.output_count() / (lanes * r);
  // An expansion (more output channels than the sum) loops along its row: looping over the
  // channels, a group stores to every output plane at once (MobileNetV2's 16 -> 96 over 112x112 on
  // Zen 4: 0.39 -> 0.25 ms at batch 1, 11 -> 8.4 ms at batch 32); a projection keeps the channel
  // loop, since each group along the row would re-read the whole long input (24 of 96: 1.2x slower)
  if (all_rows || (m.size / lanes >= 2 && n.size > k.reduce_count_elems())) {
    loop_row_of_tiles(k, d, mm, m.size / lanes, groups, false, opts);
    return opts;
  }
  const int64_t rest = n.size / r, target = int64_t(d.compute_units) * 8;
  int64_t l = rest;
  while (l > 1 && groups / l < target) l = largest_divisor(rest, l - 1);
  if (l > 1) opts.push_back({OptOp::LOOP, mm.n, l});
  return opts;
}

// A convolution with a short window sum (at most 128 products per output: a 3x3 stem over 3 input
// channels) stored contiguous along m, its columns, where 16 lanes of them load as one vector (the
// input contiguous along m, or every second element of it on a device that gates lanes one by
// one: lane_gates): 16 columns x up to 8 rows of output channels whose weights are broadcast, each
// work group looping over the rest of its row of columns and over up to 4 rows. The channel tile
// (below) stores its lanes to 16 NCHW planes (lane by lane, or transposed through shuffles on a
// lane_gates device): with a short sum those stores take most of its time (MobileNetV2's 3x3
// stride-2 stem on Zen 4: 0.43 -> 0.20 ms at batch 1, 8.4 -> 5.3 ms at batch 32; 0.36 -> 0.16-0.22
// against the transposed stores). ResNet-18's 7x7 stem (147 products) stays with the channel tile:
// even at batch 1, 42 -> 52 ms at batch 32 along the columns (each of 8 groups of channels
// re-reads the input).
std::vector<Opt> cpu_column_conv_tile(const KernelInfo& k, const DeviceLimits& d) {
  if (!k.product || k.reduce_count != 1 || k.axes.size() <= k.output_dims + 1 || k.itemsize > 4) return {};
  const MatmulAxes mm = *k.product;
  if (k.store_inner != mm.m || k.reduce_count_elems() > 128) return {};
  const AxisInfo &n = k.axes[size_t(mm.n)], &m = k.axes[size_t(mm.m)];
  if (m.size % 16 != 0 || !(m.contiguous || (d.lane_gates && m.every_second))) return {};
  // rows: up to 8, as many as the registers hold beside 4 for the loads (AVX2: 16 lanes are two
  // registers a row)
  const int64_t vectors = (16 + lanes_per_register(k, d) - 1) / lanes_per_register(k, d);
  const int64_t r = largest_divisor(n.size, std::min<int64_t>(8, (vector_registers(d) - 4) / vectors));
  if (r * vectors < 4) return {};
  std::vector<Opt> opts{{OptOp::UPCAST, mm.m, 16}, {OptOp::UPCAST, mm.n, r}};
  loop_row_of_tiles(k, d, mm, m.size / 16, k.output_count() / (16 * r), true, opts);
  return opts;
}

// A sum of products over several reduce axes (a convolution: the weight's output channels n,
// stored channel-minor, times the input's window along m, usually the output's x): a register
// tile of 16 (or 32) lanes of n times u outputs along m, sized to the device's registers. The
// reduce (channels x window) re-reads the weight and the window from L2 for every tile, so more
// rows per weight load pay: at least 8 vector accumulators (two FMA pipes of 4-cycle latency;
// AVX-512's 16 lanes are one vector per row, so 4 rows kept half the pipes busy), and at most
// what the registers hold beside the weights and the window's broadcasts, which LLVM keeps
// across the unrolled window (16 vector registers below 64-byte vectors, 32 with AVX-512; 6
// rows of 2 vectors spilled under AVX2). A short m (a 5x5 weight gradient's x) takes 32 lanes,
// or rows along the axis before it (its y). Measured on beautiful_mnist's 5x5 convolution (Zen 5,
// process CPU time): forward 0.55x the general choice's (16 channels x 4 images) with AVX-512,
// 0.87x with AVX2 only.
std::vector<Opt> cpu_conv_tile(const KernelInfo& k, const DeviceLimits& d) {
  if (!k.product || k.reduce_count != 1 || d.vector_bytes < 16 || k.itemsize > 8) return {};
  const MatmulAxes mm = *k.product;
  const AxisInfo &n = k.axes[size_t(mm.n)], &m = k.axes[size_t(mm.m)];
  if (!n.contiguous || n.size % 16 != 0) return {};
  const int64_t lanes = lanes_per_register(k, d), registers = vector_registers(d);
  for (int64_t width : {16, 32}) { // 16 lanes first: half the weight per tile
    if (n.size % width != 0) continue;
    const int64_t vectors = (width + lanes - 1) / lanes; // per row
    // rows: the registers' share, and codegen's 256 lanes
    const int64_t most = std::min({int64_t(12), (registers - vectors - 4) / vectors, 256 / width});
    if (most < 1) continue;
    int64_t u = largest_divisor(m.size, most);
    // A stride-2 window's columns share no inputs: u outputs read (u - 1) * 2 + kw of them per
    // window row, each broadcast into a register of its own beside the u accumulators and the
    // window row's kw weights; fewer columns where they would not fit the registers, as long as 8
    // accumulators remain, counting a second group of 16 channels (below) where 32 registers take
    // one: ResNet-18's 7x7 stem, 32 channels x 4 columns (BEAM's choice; 8 columns spilled: 2.4 ->
    // 1.4 ms on Zen 4), its stride-2 3x3 layers 32 channels x 7 columns as two groups of 16 (a
    // 14-wide map: 1.5 -> 0.57 ms against one 32-lane vector)
    bool pair_only = false; // the stride-2 columns take the second group of channels, not rows
    if (m.every_second) {
      const int64_t kw = k.axes.size() > k.output_dims + 1 ? k.axes.back().size : 1;
      int64_t f = u;
      while (f > 1 && (f + kw) * vectors + (f - 1) * 2 + kw > registers) f = largest_divisor(m.size, f - 1);
      const bool doubles = registers >= 32 && width == 16 && vectors == 1 && n.size % 32 == 0;
      if (f * vectors >= 8) {
        u = f;
      } else if (doubles && f * vectors * 2 >= 8) {
        u = f;
        pair_only = true;
      }
    }
    int64_t v = 1;
    if (u * vectors < 8 && mm.m2 >= 0 && !pair_only)
      v = largest_divisor(k.axes[size_t(mm.m2)].size, most / u);
    const int64_t acc = u * v * vectors;
    if (acc * (pair_only ? 2 : 1) < 8 || k.output_count() / (width * u * v) < int64_t(d.compute_units))
      continue;
    std::vector<Opt> opts{{OptOp::UPCAST, mm.n, width}};
    if (u > 1) opts.push_back({OptOp::UPCAST, mm.m, u}); // (a row of 7, 32-byte vectors: 1 x 2 rows)
    if (v > 1) opts.push_back({OptOp::UPCAST, mm.m2, v});
    // 32 registers and at most 8 accumulators: a second group of 16 channels doubles them, each
    // input broadcast then serving two vectors (ResNet-18's 64-channel layers and stem: BEAM's
    // choice, 0.7-0.8x the time on Sapphire Rapids)
    int64_t groups = k.output_count() / (width * u * v);
    if (registers >= 32 && width == 16 && acc <= 8 && n.size % 32 == 0 && vectors == 1 &&
        groups / 2 >= int64_t(d.compute_units)) {
      opts.push_back({OptOp::UPCAST, mm.n, 2});
      groups /= 2;
    }
    loop_row_of_tiles(k, d, mm, m.size / u, groups, v == 1, opts);
    return opts;
  }
  return {}; // too few rows for the pipes (AVX2, a 3x3 weight gradient): the general choice
}

} // namespace

// CPU-style devices: work groups are tasks of a thread pool. An elementwise kernel loops over a
// chunk of its last dim in each group (more chunks when there are too few rows to share); a reduce
// computes a tile of outputs as lanes sharing one reduce loop.
std::vector<Opt> cpu_opts(const KernelInfo& k, const DeviceLimits& d) {
  std::vector<Opt> opts;
  if (auto up = selection_upcast(k, 32, int64_t(d.compute_units) * 8)) return {*up};
  const auto ndim = int64_t(k.output_dims);
  if (k.axes.size() == k.output_dims) {
    if (ndim == 0) return opts;
    if (auto up = masked_upcasts(k); !up.empty()) {
      // each work group then loops over the innermost axes left whole, up to ~4096 elements, while
      // 32 groups per core remain (a group per row of 14 left 170k tasks of 84 elements)
      auto upcast = [&](int axis) {
        return std::any_of(up.begin(), up.end(), [&](const Opt& o) { return o.axis == axis; });
      };
      int64_t per_group = 1;
      for (const Opt& o : up) per_group *= o.amount;
      int64_t groups = k.output_count() / per_group;
      const int64_t target_groups = int64_t(d.compute_units) * 32;
      bool first = true;
      for (int a = int(ndim) - 1; a >= 0; --a) {
        const int64_t n = k.axes[size_t(a)].size;
        if (upcast(a) || n < 2) continue;
        if (!first && (per_group * n > 4096 || groups / n < target_groups)) break;
        up.push_back({OptOp::LOOP, a, n});
        per_group *= n;
        groups /= n;
        first = false;
      }
      return up;
    }
    // A CPU behind OpenCL (PoCL) vectorizes a transcendental function (exp2 of a softmax) only
    // across lanes, not along a work item's loop: 8 adjacent outputs per step. Plain arithmetic
    // stays scalar there (measured slower with lanes).
    int64_t lanes = 1;
    if (d.serial_work_groups && k.transcendental > 0 && k.axes.back().contiguous &&
        k.axes.back().size % 8 == 0) {
      lanes = 8;
      opts.push_back({OptOp::UPCAST, int(ndim - 1), lanes});
    }
    const int64_t L = k.axes.back().size / lanes, outer = k.output_count() / lanes / std::max<int64_t>(L, 1);
    const int64_t target_groups = int64_t(d.compute_units) * 32;
    int64_t chunk = L;
    if (outer < target_groups && L * lanes > 1024) {
      chunk = std::max<int64_t>(1024 / lanes, (L * outer + target_groups - 1) / target_groups);
      chunk = std::min((chunk + 15) / 16 * 16, L);
    }
    if (chunk > 1) opts.push_back({OptOp::LOOP, int(ndim - 1), chunk});
    // A short last dim (a 20x20 feature map): loop over whole outer dims too, so each work group
    // covers a few thousand elements and its index arithmetic (divisions) is paid once per group.
    int64_t per_group = chunk * lanes, groups = k.output_count() / lanes / std::max<int64_t>(chunk, 1);
    const size_t looped = opts.size();
    for (int a = int(ndim) - 2; a >= 0 && chunk == L; --a) {
      const int64_t n = k.axes[size_t(a)].size;
      if (n < 2) continue;
      if (per_group * n > 4096 || groups / n < target_groups) break;
      opts.push_back({OptOp::LOOP, a, n});
      per_group *= n;
      groups /= n;
    }
    // A row of 8-16 whose outer dim is too long to loop whole (the matmul's panel copy, 1024 x 16
    // per panel): 8 rows per work group as lanes, 8x fewer tasks (BEAM's choice; matmul 1024 on
    // Zen 5: -0.4 ms of 17 ms CPU time).
    if (opts.size() == looped && chunk == L && per_group >= 8 && per_group <= 16 && ndim >= 2) {
      const int a = int(ndim) - 2;
      if (k.axes[size_t(a)].size % 8 == 0 && groups / 8 >= target_groups)
        opts.push_back({OptOp::UPCAST, a, 8});
    }
    return opts;
  }
  if (auto tile = cpu_column_tile(k, d); !tile.empty()) return tile;
  if (auto tile = cpu_column_conv_tile(k, d); !tile.empty()) return tile;
  if (auto tile = cpu_product_tile(k, d); !tile.empty()) return tile;
  // (also a product over one reduce axis whose rows the 4-row tile does not divide: a 1x1
  // convolution over a 7- or 14-wide map)
  if (auto tile = cpu_conv_tile(k, d); !tile.empty()) return tile;
  // Upcast dims along which some input does not vary (their loads are reused by every lane: matmul
  // A along j, B along i); a dim along which an input is contiguous gets the wide factor, so its
  // lanes load consecutive elements (and become vectors).
  struct Candidate {
    int dim;
    int64_t reuse;
    bool contiguous;
    int64_t best;
    bool strided = false; // every second element, loaded as one vector (lane_gates)
  };
  std::vector<Candidate> cands;
  const int64_t per_register = std::min<int64_t>(lanes_per_register(k, d), 16);
  const int window_axes = int(k.axes.size() - k.output_dims); // output axes a window moves along
  for (int a = 0; a < ndim; ++a) {
    const AxisInfo& x = k.axes[size_t(a)];
    if (x.size < 2 || x.reuse == 0) continue;
    // Lanes two elements apart on a device that loads them as one vector: as many as one register
    // holds (a stride-2 depthwise 3x3 over 56 output columns: 14 lanes, 0.19-0.21 -> 0.15-0.17 ms
    // against 8)
    if (const int64_t u = largest_divisor(x.size, per_register);
        d.lane_gates && x.every_second && !x.contiguous && u >= 4) {
      cands.push_back({a, x.reuse, false, u, true});
      continue;
    }
    // the largest divisor up to 16 (contiguous lanes) or 8; along a contiguous axis 16 or 8 first
    // where one divides it, so its lanes are whole vectors (56 columns: 8, not 14, which left a
    // 1x1 convolution's 8x14 tile scalar at 15 GFLOPS)
    int64_t best = 1;
    if (x.contiguous) best = x.size % 16 == 0 ? 16 : x.size % 8 == 0 ? 8 : 1;
    for (int64_t u = x.contiguous ? 16 : 8; u >= 2 && best == 1; --u)
      if (x.size % u == 0) {
        best = u;
        break;
      }
    if (best > 1) cands.push_back({a, x.reuse, x.contiguous, best});
  }
  // A matrix-vector product over a weight read along its rows (a Linear layer at batch 1): no
  // output axis is contiguous, the long reduce is. Eight rows per work item, each summed in 8
  // partial-sum lanes: eight streams of whole cache lines sharing the vector's loads (MobileNetV2's
  // 1000 x 1280 classifier on Zen 4: 0.23 ms as 8 strided rows, 0.13 this way; onnxruntime 0.10)
  const int inner_axis = int(k.axes.size()) - 1;
  if (k.reduce_count == 1 && inner_axis >= ndim && k.axes[size_t(inner_axis)].contiguous &&
      k.axes[size_t(inner_axis)].size % 8 == 0 && k.axes[size_t(inner_axis)].size >= 256 &&
      cands.size() == 1 && !cands[0].contiguous && !cands[0].strided) {
    const Candidate& c = cands[0];
    for (int64_t u = 8; u >= 2; --u)
      if (k.axes[size_t(c.dim)].size % u == 0 && k.output_count() / u >= int64_t(d.compute_units)) {
        opts.push_back({OptOp::UPCAST, c.dim, u});
        break;
      }
    opts.push_back({OptOp::UNROLL, inner_axis, 8});
    return opts;
  }
  // Vector-width lanes (8 or 16) first: LLVM's SLP vectorizer turns them into vector FMAs,
  // contiguous ones into vector loads too; then the most reuse, then the widest factor. Where a
  // contiguous axis gives at least 4 lanes, 8 lanes along a strided axis do not count as vector
  // width: a depthwise convolution at batch 32 took 8 images x 7 columns, 56 scalar lanes whose
  // loads were gathers (12 GFLOPS; 14 columns x 4 images: 2.2x faster).
  const bool contiguous_lanes = std::any_of(cands.begin(), cands.end(), [](const Candidate& c) {
    return (c.contiguous || c.strided) && c.best >= 4;
  });
  auto vector_width = [&](const Candidate& c) {
    return c.strided || ((c.best == 8 || c.best == 16) && (c.contiguous || !contiguous_lanes));
  };
  // A short window (a depthwise 3x3): rows along an axis the window moves along one element at a
  // time share its loads, rows of other images or channels share nothing (a 14x14 map at batch 32:
  // 14 columns x 2 rows 0.92-1.02 ms against 14 x 4 images 1.19-1.20; a stride-2 window's rows
  // share a third of theirs, and 4 images measure faster there: 0.6 against 1.2 ms)
  bool strided_window = false; // (along the columns: the rows' stride is not seen per axis)
  for (int a = std::max(0, int(ndim) - window_axes); a < ndim; ++a)
    strided_window |= k.axes[size_t(a)].every_second;
  auto window = [&](const Candidate& c) {
    return k.reduce_count_elems() <= 64 && !strided_window && c.dim >= ndim - window_axes;
  };
  std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
    if (vector_width(a) != vector_width(b)) return vector_width(a);
    if (a.contiguous != b.contiguous) return a.contiguous;
    if (a.strided != b.strided) return a.strided;
    if (window(a) != window(b)) return window(a);
    if (a.reuse != b.reuse) return a.reuse > b.reuse;
    if (a.best != b.best) return a.best > b.best;
    return a.dim > b.dim;
  });
  int64_t lanes = 1, upcasts = 0;
  for (const auto& c : cands) {
    if (upcasts == 2) break;
    for (int64_t u = c.best; u >= 2; --u)
      if (k.axes[size_t(c.dim)].size % u == 0 && lanes * u <= 64 &&
          k.output_count() / (lanes * u) >= int64_t(d.compute_units)) {
        opts.push_back({OptOp::UPCAST, c.dim, u});
        lanes *= u;
        ++upcasts;
        break;
      }
  }
  const int inner = int(k.axes.size()) - 1;
  // no reuse, a strided reduce over a contiguous output axis (a sum over rows): lanes along that
  // axis read each row's stretch at once instead of walking one column each
  if (upcasts == 0 && ndim > 0 && k.axes[size_t(ndim - 1)].contiguous && !k.axes[size_t(inner)].contiguous) {
    const int64_t n = k.axes[size_t(ndim - 1)].size;
    for (int64_t u = 16; u >= 4; --u)
      if (n % u == 0 && k.output_count() / u >= int64_t(d.compute_units)) {
        opts.push_back({OptOp::UPCAST, int(ndim - 1), u});
        ++upcasts;
        break;
      }
  }
  int last = int(ndim) - 1;
  while (last > 0 && k.axes[size_t(last)].size == 1) --last;
  int64_t pool_lanes = 1;
  // No reuse, a window read every second element along the last output axis (a stride-2 pool).
  // On a device that loads such lanes as one wider vector (lane_gates): 16 or 8 lanes along the
  // columns, stored as one vector. Else 8 lanes along an output axis outside the window's (the
  // channels), so every lane has the same window bounds: one check per window step, but each
  // lane's read is from another plane (a gather: ResNet-18's 3x3 stride-2 max pool on Zen 4 took
  // 0.56 ms at batch 1 and 43 ms at batch 32 this way, 0.23 and 10 ms along the columns).
  if (upcasts == 0 && d.lane_gates && last >= 0 && k.axes[size_t(last)].every_second) {
    const int64_t n = k.axes[size_t(last)].size;
    for (int64_t u : {16, 8})
      if (n % u == 0 && k.output_count() / u >= int64_t(d.compute_units)) {
        opts.push_back({OptOp::UPCAST, last, u});
        ++upcasts;
        pool_lanes = u;
        break;
      }
  }
  if (upcasts == 0 && last >= 0 && k.axes[size_t(last)].every_second) {
    for (int a = last - window_axes; a >= 0 && pool_lanes == 1; --a) {
      const AxisInfo& x = k.axes[size_t(a)];
      if (x.size % 8 == 0 && k.output_count() / 8 >= int64_t(d.compute_units)) {
        opts.push_back({OptOp::UPCAST, a, 8});
        ++upcasts;
        pool_lanes = 8;
      }
    }
  }
  // no reuse to exploit: give a contiguous reduction parallel partial sums instead, which the
  // lowering makes vector accumulators: 16 where 16 divide it, else all of a short axis (a 20x20
  // map reduced per channel gets 20 lanes), 8 of a long one; a short axis that continues into the
  // one outside it (6x6) takes rows of that one too, up to 48 lanes in multiples of 4. (32 lanes
  // of a softmax's sum over 32 keys, exp2 inlined: 0.17 ms against 0.037 with 16, batch 32 of the
  // transformer encoder on Zen 4)
  const int64_t n_inner = k.axes[size_t(inner)].size;
  bool partial_sums = false;
  if (upcasts == 0 && k.axes[size_t(inner)].contiguous && n_inner >= 4) {
    const bool sum = k.axes[size_t(inner)].reduce; // (else an elementwise kernel's last axis)
    const int64_t u = (sum || n_inner > 32) && n_inner % 16 == 0 ? 16
                      : n_inner <= 32                            ? n_inner
                      : n_inner % 8 == 0                         ? 8
                                                                 : 1;
    const AxisInfo* outer = inner > ndim ? &k.axes[size_t(inner - 1)] : nullptr;
    int64_t rows = 1;
    if (u == n_inner && u % 8 != 0 && outer && outer->reduce && outer->continues_inner)
      for (int64_t r = 48 / u; r >= 2 && rows == 1; --r)
        if (outer->size % r == 0 && (u * r) % 4 == 0) rows = r;
    if (u > 1 && (u >= 8 || rows > 1)) {
      opts.push_back({OptOp::UNROLL, inner, u});
      if (rows > 1) opts.push_back({OptOp::UNROLL, inner - 1, rows});
      partial_sums = sum;
    }
  }
  // A contiguous reduce partial sums do not fit (7 x 7 steps: a global average pool) and
  // nothing else to tile: 4 outputs of the innermost output axis of > 1 per work item, four
  // independent chains of adds instead of one (MobileNetV2's pool over 1280 x 7 x 7 on Zen 4:
  // 0.024 -> 0.011 ms at batch 1, 0.73 -> 0.31 at batch 32; 8 outputs became gathers: 1.7 ms)
  bool chains = false;
  if (opts.empty() && k.axes[size_t(inner)].reduce && k.axes[size_t(inner)].contiguous &&
      k.reduce_count_elems() >= 16 && k.reduce_count == 1) {
    int a = int(ndim) - 1;
    while (a > 0 && k.axes[size_t(a)].size == 1) --a;
    if (a >= 0 && k.axes[size_t(a)].size % 4 == 0 && k.output_count() / 4 >= int64_t(d.compute_units)) {
      opts.push_back({OptOp::UPCAST, a, 4});
      chains = true;
    }
  }
  // Nothing to tile and a short reduce (a pool's window over strided reads, which lanes would
  // gather): each work group loops over a run of outputs, up to ~1024 of them, so its index math
  // is paid once per run (BEAM's choice for ResNet's 3x3 stride-2 max pool: 2x faster).
  // So do the partial sums of a short reduce (a softmax's rows of 32: one row per group was 4096
  // groups). A tile of vector lanes over a short window (a depthwise convolution's 3x3) loops the
  // same way: its group's index and edge-mask set-up cost as much as the tile itself. Innermost
  // axes first: a 14x14 map's 14 x 2 tile loops over the map's rows, then channels (0.050 -> 0.035
  // ms at batch 1, 1.56 -> 0.94 at batch 32, 576 channels; looping over channels alone, a group
  // stored two rows of each of its planes).
  if ((opts.empty() || pool_lanes > 1 || lanes >= 8 || partial_sums || chains) && ndim > 0 &&
      k.reduce_count_elems() <= 64) {
    auto upcast_of = [&](int a) {
      int64_t u = 1;
      for (const Opt& o : opts)
        if (o.op == OptOp::UPCAST && o.axis == a) u *= o.amount;
      return u;
    };
    const int64_t target_groups = int64_t(d.compute_units) * 32;
    int64_t per_group = 1;
    for (const Opt& o : opts)
      if (o.op == OptOp::UPCAST) per_group *= o.amount;
    int64_t groups = k.output_count() / per_group;
    for (int a = int(ndim) - 1; a >= 0; --a) {
      const int64_t n = k.axes[size_t(a)].size / upcast_of(a);
      if (n < 2) continue;
      int64_t l = largest_divisor(n, std::max<int64_t>(1, 1024 / per_group));
      while (l > 1 && groups / l < target_groups) l = largest_divisor(n, l - 1);
      if (l < 2) break;
      opts.push_back({OptOp::LOOP, a, l});
      per_group *= l;
      groups /= l;
      if (l < n) break; // a partial run: the next axis out would not continue it
    }
    // ... and, over maps at least 28 wide, runs its window unrolled (up to 5x5): rows of a tile
    // then share the loads of the input rows they overlap, and no short loop stays around each
    // tap (MobileNetV2's 3x3 depthwise on Zen 4 at batch 1 / 32: over 28x28 at stride 2 0.063 ->
    // 0.041 / 1.87 -> 1.66 ms, over 56x56 0.127 -> 0.105 / 4.85 -> 3.62; over 14x14 maps it gained
    // 6% at batch 1 and lost 1.5x at batch 32, over 7x7 maps it lost 20%)
    if (k.reduce_count_elems() <= 25 && k.axes[size_t(ndim - 1)].size >= 28 && upcast_of(int(ndim) - 1) >= 8)
      for (size_t a = ndim; a < k.axes.size(); ++a)
        if (k.axes[a].size > 1) opts.push_back({OptOp::UNROLL, int(a), k.axes[a].size});
  }
  return opts;
}

} // namespace tg::heuristic_detail
