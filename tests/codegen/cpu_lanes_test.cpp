// The CPU heuristic's convolution, pool and short-row tiles (kernel/codegen/heuristic_cpu.cpp) and the lanes
// they become (kernel/codegen/vectorize.cpp): which list a convolution gets, how its lanes load and
// store (with and without lane_gates, the CPU plugin's masked loads), and that each list computes
// what the unoptimized kernel computes in the SDK's reference interpreter. Part of opt_test (its
// global fixture keeps these convolutions direct, not Winograd's).
#include <boost/test/unit_test.hpp>

#include "kernel/codegen/lower.hpp"
#include "kernel/ir/uop.hpp"
#include "kernel/tensor/tensor.hpp"
#include "opt_check.hpp"

#include <functional>
#include <string>

using namespace tg;
using namespace tg::opt_check;

namespace {

// Lowers the last kernel of `items` with the heuristic on a CPU-style device (`vector_bytes`
// registers) without and with lane_gates, hands each lowered kernel to `check`, and checks both
// against the unoptimized kernel.
void check_with_and_without_lane_gates(const std::vector<ScheduleItem>& items, int64_t vector_bytes,
                                       const std::function<void(const LoweredKernel&, bool)>& check) {
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  for (bool lane_gates : {false, true}) {
    BOOST_TEST_CONTEXT("lane_gates " << lane_gates) {
      LowerOptions o = cpu();
      o.vector_bytes = vector_bytes;
      o.lane_gates = lane_gates;
      check(lower_kernel(items.back(), o), lane_gates);
      Ran got = run(items, o, [](const ScheduleItem&, size_t) { return std::nullopt; });
      check_same(items, got, plain, "heuristic " + got.opts.back());
    }
  }
}

// Runs `items` unoptimized and with the heuristic under `o` (the last kernel's list) in the
// interpreter and checks that both compute the same.
void check_heuristic_equals_noopt(const std::vector<ScheduleItem>& items, const LowerOptions& o = cpu()) {
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, o, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
}

} // namespace

// A padded depthwise convolution along contiguous output columns: only the edge lanes' loads
// carry the column bounds. On a device that gates lanes one by one (lane_gates) each row's lanes
// become one vector load with a gate per lane; elsewhere the lanes between the edges still load
// as one vector under the row's gate. Both compute what the unoptimized kernel computes.
BOOST_AUTO_TEST_CASE(padded_convolution_lanes_load_as_vectors) {
  Tensor x = input({1, 8, 20, 32}), w = input({8, 1, 3, 3});
  auto items = compute_items(x.conv2d(w, std::nullopt, 1, 1, 1, 8));
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  for (bool lane_gates : {false, true}) {
    BOOST_TEST_CONTEXT("lane_gates " << lane_gates) {
      LowerOptions o = cpu();
      o.lane_gates = lane_gates;
      LoweredKernel k = lower_kernel(items.back(), o);
      int per_lane = 0, vector_gated = 0;
      for (const auto& u : toposort(k.sink)) {
        if (u->op() != Ops::LOAD || u->src().size() != 3 || u->dtype().count == 1) continue;
        (u->src(1)->dtype().count > 1 ? per_lane : vector_gated) += 1;
      }
      BOOST_TEST((lane_gates ? per_lane > 0 : per_lane == 0),
                 k.opts << ": " << per_lane << " loads gated per lane");
      BOOST_TEST((lane_gates || vector_gated > 0), k.opts << ": no vector load under a row's gate");
      Ran got = run(items, o, [](const ScheduleItem&, size_t) { return std::nullopt; });
      check_same(items, got, plain, "heuristic " + got.opts.back());
    }
  }
}

// A stride-2 max pool (3x3 window, padded) on a CPU-style device. On a device whose lanes load as
// one wider vector (lane_gates): lanes along the output columns, stored as one vector. Without
// lane_gates the column lanes would gather: 8 channels in lanes (every lane has the same window
// bounds, one check per window step), each group looping over a run of columns and rows; with no
// 8 channels (4 here) the pool only loops. Each computes what the unoptimized kernel computes.
BOOST_AUTO_TEST_CASE(cpu_heuristic_pools_stride_two_windows_in_lanes) {
  for (int64_t channels : {16, 4}) {
    auto items = compute_items(input({2, channels, 32, 32}).max_pool2d(3, 2, 1));
    Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
    for (bool lane_gates : {false, true}) {
      BOOST_TEST_CONTEXT(channels << " channels, lane_gates " << lane_gates) {
        LowerOptions o = cpu();
        o.lane_gates = lane_gates;
        const LoweredKernel k = lower_kernel(items.back(), o);
        if (lane_gates) {
          BOOST_TEST(k.opts.rfind("[UPCAST(3,", 0) == 0, k.opts);
        } else if (channels == 16) {
          BOOST_TEST(k.opts.rfind("[UPCAST(1,8), LOOP(3,", 0) == 0, k.opts);
        } else {
          BOOST_TEST(k.opts.find("UPCAST") == std::string::npos, k.opts);
          BOOST_TEST(k.opts.find("LOOP") != std::string::npos, k.opts);
        }
        Ran got = run(items, o, [](const ScheduleItem&, size_t) { return std::nullopt; });
        check_same(items, got, plain, "heuristic " + got.opts.back());
      }
    }
  }
}

// A depthwise 3x3 convolution on a CPU-style device: a tile of vector lanes (8 columns x 8 rows)
// whose work group loops over the rest of its row of tiles, so the group's index and edge-mask
// set-up is paid once per row, and runs its window unrolled. A 14x14 map's 14 x 2 tile loops over
// the map's rows (then over channels where enough work groups remain) and keeps its window's
// loops. Both equal the unoptimized
// kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_loops_depthwise_tiles) {
  for (int64_t side : {56, 14}) {
    BOOST_TEST_CONTEXT(side << "x" << side) {
      const int64_t c = side == 14 ? 384 : 48; // (enough work groups to loop over rows)
      Tensor x = input({1, c, side, side}), w = input({c, 1, 3, 3});
      auto items = compute_items(x.conv2d(w, std::nullopt, 1, 1, 1, c));
      const LoweredKernel k = lower_kernel(items.back(), cpu());
      if (side == 56) {
        BOOST_TEST(k.opts.find("UPCAST(3,8)") != std::string::npos, k.opts);
        BOOST_TEST(k.opts.find("LOOP(3,7)") != std::string::npos, k.opts);
        BOOST_TEST(k.opts.find("UNROLL(4,3), UNROLL(5,3)") != std::string::npos, k.opts);
      } else {
        BOOST_TEST(k.opts.find("UPCAST(2,2), LOOP(2,7)") != std::string::npos, k.opts);
        BOOST_TEST(k.opts.find("UNROLL") == std::string::npos, k.opts);
      }
      check_heuristic_equals_noopt(items);
    }
  }
}

// A stem-like convolution (3 input channels, 3x3, stride 2, padded) on a CPU-style device that
// gates lanes one by one: 16 output columns in lanes, each window row's inputs one wider load of
// every second element (the last lane's neighbour under a false gate), times rows of output
// channels. Without lane_gates the columns would gather: the channel tile. Both equal the
// unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_tiles_short_convolutions_along_columns) {
  Tensor x = input({1, 3, 20, 64}), w = input({16, 3, 3, 3});
  check_with_and_without_lane_gates(
      compute_items(x.conv2d(w, std::nullopt, 2, 1)), 32, [](const LoweredKernel& k, bool lane_gates) {
        BOOST_TEST((k.opts.rfind("[UPCAST(3,16), UPCAST(1,", 0) == 0) == lane_gates, k.opts);
        if (!lane_gates) return;
        int wide = 0;
        for (const auto& u : toposort(k.sink))
          wide += u->op() == Ops::LOAD && u->dtype().count == 32 && u->src().size() == 3;
        BOOST_TEST(wide > 0, k.opts << ": no 32-wide gated load for 16 lanes two apart");
      });
}

// A depthwise 3x3 convolution over a batch of 14x14 maps on a CPU-style device: the tile's second
// upcast takes rows of the map (they share the window's loads), not images; with stride 2 (rows
// sharing a third of their inputs) images. Each equals the unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_tiles_depthwise_rows_before_images) {
  for (int64_t stride : {1, 2}) {
    BOOST_TEST_CONTEXT("stride " << stride) {
      Tensor x = input({8, 16, 14 * stride, 14 * stride}), w = input({16, 1, 3, 3});
      auto items = compute_items(x.conv2d(w, std::nullopt, stride, 1, 1, 16));
      LowerOptions o = cpu();
      o.vector_bytes = 64;
      o.lane_gates = true;
      const LoweredKernel k = lower_kernel(items.back(), o);
      BOOST_TEST(k.opts.rfind("[UPCAST(3,14)", 0) == 0, k.opts);
      BOOST_TEST((k.opts.find("UPCAST(2,") != std::string::npos) == (stride == 1), k.opts);
      BOOST_TEST((k.opts.find("UPCAST(0,") != std::string::npos) == (stride == 2), k.opts);
      check_heuristic_equals_noopt(items, o);
    }
  }
}

// A stride-2 depthwise 3x3 convolution (28 output columns) on a CPU-style device with 16-float
// registers: where lanes two elements apart load as one vector (lane_gates), as many columns as
// one register holds (14), not 8 or 7. Equals the unoptimized kernel either way.
BOOST_AUTO_TEST_CASE(cpu_heuristic_fills_a_register_with_stride_two_lanes) {
  Tensor x = input({1, 16, 56, 56}), w = input({16, 1, 3, 3});
  check_with_and_without_lane_gates(
      compute_items(x.conv2d(w, std::nullopt, 2, 1, 1, 16)), 64, [](const LoweredKernel& k, bool lane_gates) {
        BOOST_TEST((k.opts.rfind("[UPCAST(3,14)", 0) == 0) == lane_gates, k.opts);
      });
}

// A depthwise 3x3 convolution over a 28x28 map: tiles of 14 columns. On a device that gates lanes
// one by one, a run of 14 lanes loads as one vector of 16 whose last two elements are gated off
// (no 14-wide load, which LLVM splits into loads of 8, 4 and 2); elsewhere nothing is padded.
// Both equal the unoptimized kernel.
BOOST_AUTO_TEST_CASE(lane_runs_load_as_power_of_two_vectors) {
  Tensor x = input({1, 16, 28, 28}), w = input({16, 1, 3, 3});
  check_with_and_without_lane_gates(
      compute_items(x.conv2d(w, std::nullopt, 1, 1, 1, 16)), 32, [](const LoweredKernel& k, bool lane_gates) {
        BOOST_TEST(k.opts.rfind("[UPCAST(3,14)", 0) == 0, k.opts);
        int of14 = 0, of16 = 0;
        for (const auto& u : toposort(k.sink)) {
          if (u->op() != Ops::LOAD) continue;
          of14 += u->dtype().count == 14;
          of16 += u->dtype().count == 16;
        }
        BOOST_TEST((lane_gates ? of14 == 0 && of16 > 0 : of16 == 0),
                   k.opts << ": " << of14 << " loads of 14, " << of16 << " of 16");
      });
}

// A 1x1 convolution over a 7x7 map on a CPU-style device: the tile's lanes run along the output
// channels, each lane stored to another NCHW plane, while the tile's 7 columns are consecutive.
// On a device that gates lanes one by one (the LLVM CPU targets, which store any vector width)
// each channel's 7 columns are stored as one vector (the tile transposed), elsewhere lane by lane.
// Both equal the unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_channel_tiles_store_their_columns_as_vectors) {
  Tensor x = input({1, 16, 7, 7}), w = input({128, 16, 1, 1});
  // (64-byte vectors: with 32-byte ones the 7 columns fill most of a register and take the lanes)
  check_with_and_without_lane_gates(
      compute_items(x.conv2d(w)), 64, [](const LoweredKernel& k, bool lane_gates) {
        int rows = 0, scalars = 0;
        for (const auto& u : toposort(k.sink)) {
          if (u->op() != Ops::STORE) continue;
          const int count = u->src(1)->dtype().count;
          rows += count == 7;
          scalars += count == 1;
        }
        BOOST_TEST(k.opts.find("UPCAST(4,7)") != std::string::npos, k.opts);
        if (lane_gates) {
          BOOST_TEST(rows > 0, k.opts << ": no store of 7 columns");
          BOOST_TEST(scalars == 0, k.opts << ": " << scalars << " scalar stores");
        } else {
          BOOST_TEST(rows == 0, k.opts);
        }
      });
}

// A 1x1 convolution stored NCHW on a CPU-style device: lanes along the map's columns (the store's
// and the input's contiguous axis) times rows of output channels; not lanes along the channels,
// which would store every lane to another plane. A projection's group loops over the rest of the
// output channels, an expansion's along its row (storing to few planes at a time). Each equals the
// unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_tiles_pointwise_convolutions_along_columns) {
  struct Case {
    int64_t in, out;
    const char* loop;
  };
  for (const Case c : {Case{16, 48, "LOOP(3,2)"}, Case{64, 16, "LOOP(1,"}}) {
    Tensor x = input({1, c.in, 32, 32}), w = input({c.out, c.in, 1, 1});
    auto items = compute_items(x.conv2d(w));
    const LoweredKernel k = lower_kernel(items.back(), cpu());
    BOOST_TEST(k.opts.rfind("[UPCAST(3,16), UPCAST(1,", 0) == 0, k.opts);
    BOOST_TEST(k.opts.find(c.loop) != std::string::npos, c.in << " -> " << c.out << ": " << k.opts);
    check_heuristic_equals_noopt(items);
  }
}

// A 1x1 projection over a 56-wide map with 16-float registers: 8 lanes along the columns fill half
// a register, so all 24 output channels take rows (each step's input vector serves every
// channel). Equals the unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_gives_a_narrow_projection_all_its_channels) {
  Tensor x = input({1, 96, 4, 56}), w = input({24, 96, 1, 1});
  auto items = compute_items(x.conv2d(w));
  LowerOptions o = cpu();
  o.vector_bytes = 64;
  const LoweredKernel k = lower_kernel(items.back(), o);
  BOOST_TEST(k.opts.rfind("[UPCAST(3,8), UPCAST(1,24)", 0) == 0, k.opts);
  check_heuristic_equals_noopt(items, o);
}

// A sum over short contiguous rows (a softmax's 32 keys, exp2 inlined) on a CPU-style device: 16
// partial sums per row (not 32: the inlined exponent's vectors spill), and each work group loops
// over a run of rows instead of taking one. Equals the unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_sums_short_rows_in_runs) {
  Tensor x = input({512, 32});
  auto items = compute_items(x.exp2().sum({1}));
  const LoweredKernel k = lower_kernel(items.back(), cpu());
  BOOST_TEST(k.opts.rfind("[UNROLL(1,16), LOOP(0,", 0) == 0, k.opts);
  check_heuristic_equals_noopt(items);
}

// A global average pool (a mean over 7x7 maps, too short a row for partial sums) on a CPU-style
// device: 4 channels per work item, four independent chains of adds, and runs of them per work
// group. Equals the unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_sums_a_pool_in_four_chains) {
  Tensor x = input({8, 512, 7, 7});
  auto items = compute_items(x.mean({2, 3}));
  const LoweredKernel k = lower_kernel(items.back(), cpu());
  BOOST_TEST(k.opts.rfind("[UPCAST(1,4), LOOP(1,", 0) == 0, k.opts);
  check_heuristic_equals_noopt(items);
}

// A matrix-vector product over a weight read along its rows (a Linear layer at batch 1, x @ w.T):
// eight rows per work item, each summed in eight partial-sum lanes, so every row is read as a
// stream of vectors. A product with a second reusing axis (two rows of x) keeps its register
// tile. Both equal the unoptimized kernel.
BOOST_AUTO_TEST_CASE(cpu_heuristic_reads_a_matrix_vector_product_along_rows) {
  Tensor w = input({128, 512});
  auto items = compute_items(input({1, 512}).matmul(w.T()));
  const LoweredKernel k = lower_kernel(items.back(), cpu());
  BOOST_TEST(k.opts.rfind("[UPCAST(1,8), UNROLL(2,8)]", 0) == 0, k.opts);
  check_heuristic_equals_noopt(items);

  auto two_rows = compute_items(input({16, 512}).matmul(w.T()));
  const LoweredKernel t = lower_kernel(two_rows.back(), cpu());
  BOOST_TEST(t.opts.find("UNROLL(2,8)") == std::string::npos, t.opts);
  check_heuristic_equals_noopt(two_rows);
}
