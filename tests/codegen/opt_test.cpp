// Optimization lists (kernel/codegen/opt.hpp): every list that lower_kernel accepts computes what the
// unoptimized kernel computes. Kernels are lowered from tensor expressions over placeholder buffers
// and run in the SDK's reference interpreter (no device), so GPU-style lists (LOCAL, GROUP, local
// memory, barriers) are checked here on any machine; invalid lists are refused with the reason.
#include <boost/test/unit_test.hpp>

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"
#include "opt_check.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>

using namespace tg;
using namespace tg::opt_check;

// The convolutions here are the direct ones whose lists the tests describe: the placeholder
// buffers are labelled CPU, where inference would otherwise take Winograd's transforms.
struct DirectConvolutions {
  DirectConvolutions() { set_winograd(0); }
  ~DirectConvolutions() { set_winograd(-1); }
};
BOOST_TEST_GLOBAL_FIXTURE(DirectConvolutions);

namespace {

struct Case {
  std::string name;
  std::function<Tensor()> build;
  bool heavy = false; // too slow in the interpreter for the random lists' many runs
};

std::vector<Case> cases() {
  return {
      {"elementwise_odd",
       [] {
         return input({7, 33}) * 2.0f + input({7, 33});
       }},
      {"broadcast_add",
       [] {
         return input({64, 48}) + input({1, 48});
       }},
      {"sum_rows",
       [] {
         return input({32, 100}).sum({1});
       }},
      {"sum_all_4096", [] { return input({4096}).sum(); }},
      {"sum_all_prime", [] { return input({1031}).sum(); }},
      {"max_cols",
       [] {
         return input({100, 33}).max({0});
       }},
      {"matmul",
       [] {
         return input({64, 48}).matmul(input({48, 32}));
       }},
      {"matmul_odd",
       [] {
         return input({33, 17}).matmul(input({17, 9}));
       }},
      {"int_sum",
       [] {
         return input({24, 40}, dtypes::int32).sum({0});
       }},
      {"softmax",
       [] {
         return input({16, 70}).softmax(1);
       }},
      {"sum_then_add",
       [] {
         return input({8, 256}).sum({1}) + input({8});
       }},
      {"sum_of_ones_2^25", [] { return Tensor::ones({int64_t(1) << 25}, dtypes::float32, "CPU").sum(); },
       true},
      {"two_reduces",
       [] {
         Tensor x = input({12, 64});
         return x.sum({1}) + x.max({1});
       }},
  };
}
} // namespace

BOOST_AUTO_TEST_CASE(heuristic_lists_match_noopt) {
  for (const auto& c : cases()) {
    BOOST_TEST_CONTEXT(c.name) {
      auto items = compute_items(c.build());
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      LowerOptions serial = gpu();
      serial.serial_work_groups = true;
      for (const auto& [device, options] :
           {std::pair{"cpu", cpu()}, std::pair{"gpu", gpu()}, std::pair{"gpu, 3 work groups", gpu(3)},
            std::pair{"serial work groups", serial}}) {
        Ran got = run(items, options, [](const ScheduleItem&, size_t) { return std::nullopt; });
        check_same(items, got, plain, c.name + " heuristic on " + device);
      }
    }
  }
}

// The partial kernel of a split per-channel sum (kernel/tensor/reduce.cpp: slices of N, then
// H*W): the GPU heuristic groups the contiguous H*W row (neighbouring threads read neighbouring
// words), not the longer N slice axis, padded where no power of two >= 32 divides it; the result
// equals the unoptimized kernel's.
BOOST_AUTO_TEST_CASE(gpu_heuristic_groups_the_contiguous_row_of_a_split_reduce) {
  struct Case {
    Dims shape;
    std::vector<Opt> want; // the reduce-axis opts, in order
  };
  // outputs (slices, 1, channels, 1), reduce axes 4 (the slice of N) and 5 (the row): a 400-long
  // row (16 threads before), and a row shorter than the slice axis (grouped the slice axis before)
  for (const Case& c : {Case{{4, 4, 8, 400}, {{OptOp::PADTO, 5, 64}, {OptOp::GROUP, 5, 64}}},
                        Case{{2, 128, 4, 64}, {{OptOp::GROUP, 5, 64}}}}) {
    BOOST_TEST_CONTEXT(c.shape[1] << "x" << c.shape[3]) {
      auto items = compute_items(input(c.shape).sum({1, 3}, true));
      LoweredKernel k = lower_kernel(items.at(0), gpu());
      std::vector<Opt> reduce_opts;
      for (const Opt& o : k.applied)
        if (o.axis >= 4) reduce_opts.push_back(o);
      BOOST_TEST(reduce_opts == c.want, k.opts);
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
      check_same(items, got, plain, "split partial on gpu");
    }
  }
}

BOOST_AUTO_TEST_CASE(gpu_heuristic_uses_work_groups) {
  // outputs few and a long reduce: the threads of a work group share it through local memory
  auto items = compute_items(input({4096}).sum());
  LoweredKernel k = lower_kernel(items.at(0), gpu());
  BOOST_TEST(k.local[0] > 1u, k.opts);
  BOOST_TEST(
      std::any_of(k.applied.begin(), k.applied.end(), [](const Opt& o) { return o.op == OptOp::GROUP; }),
      k.opts);
  std::string ir = linearize(k.sink, k.name).text;
  BOOST_TEST(ir.find("DEFINE_LOCAL") != std::string::npos, ir);
  BOOST_TEST(ir.find("BARRIER") != std::string::npos, ir);
  // many outputs: threads over them
  auto ew = compute_items(input({64, 48}) + input({1, 48}));
  LoweredKernel e = lower_kernel(ew.at(0), gpu());
  BOOST_TEST(e.local[0] * e.local[1] * e.local[2] > 1u, e.opts);
  // the CPU keeps one thread per work group
  BOOST_TEST(lower_kernel(items.at(0), cpu()).local == (std::array<uint32_t, 3>{1, 1, 1}));
  // and so does a device with local memory whose work groups run serially (a CPU behind OpenCL)
  LowerOptions serial = gpu();
  serial.serial_work_groups = true;
  BOOST_TEST(lower_kernel(items.at(0), serial).local == (std::array<uint32_t, 3>{1, 1, 1}));
  BOOST_TEST(lower_kernel(ew.at(0), serial).local == (std::array<uint32_t, 3>{1, 1, 1}));
}

BOOST_AUTO_TEST_CASE(serial_work_groups_get_lanes_for_transcendentals_only) {
  // PoCL vectorizes exp2 across lanes, not along a work item's loop; plain arithmetic stays scalar
  LowerOptions serial = gpu();
  serial.serial_work_groups = true;
  auto lanes = [&](const Tensor& t) {
    auto items = compute_items(t);
    LoweredKernel k = lower_kernel(items.back(), serial);
    auto up =
        std::find_if(k.applied.begin(), k.applied.end(), [](const Opt& o) { return o.op == OptOp::UPCAST; });
    return up == k.applied.end() ? int64_t(1) : up->amount;
  };
  BOOST_TEST(lanes(input({64, 1024}).exp()) == 8);
  BOOST_TEST(lanes(input({64, 1024}) * 2.0f + 1.0f) == 1);
  BOOST_TEST(lanes(input({64, 1020}).exp()) == 1); // not a multiple of 8
  auto plain = compute_items(input({64, 1024}).exp());
  LoweredKernel on_cpu = lower_kernel(plain.back(), cpu()); // the CPU plugin: unchanged
  BOOST_TEST(std::none_of(on_cpu.applied.begin(), on_cpu.applied.end(),
                          [](const Opt& o) { return o.op == OptOp::UPCAST; }),
             on_cpu.opts);
}

BOOST_AUTO_TEST_CASE(contiguous_partial_sums_are_vector_accumulators) {
  // A per-channel sum over (n, y, x) on a CPU: the heuristic unrolls the contiguous x (and rows of y
  // when x is short) and the lowering keeps the lanes as vector accumulators; lanes whose loads
  // would be gathers (a nearest-upsampled input) stay scalar. Same sums as NOOPT either way.
  auto vector_reduces = [](const ScheduleItem& item, const std::vector<Opt>& expect) {
    LoweredKernel k = lower_kernel(item, cpu());
    BOOST_TEST(to_string(k.applied) == to_string(expect), k.opts);
    int n = 0;
    for (const auto& u : toposort(k.sink)) n += u->op() == Ops::REDUCE && u->dtype().count > 1;
    return n;
  };
  auto map20 = compute_items(input({4, 3, 20, 20}).sum({0, 2, 3}));
  // 20 lanes, and 2 rows of y: 40 lanes, 5 vectors of 8
  BOOST_TEST(vector_reduces(map20.back(), {{OptOp::UNROLL, 3, 20}, {OptOp::UNROLL, 2, 2}}) == 5);
  auto map6 = compute_items(input({4, 3, 6, 6}).sum({0, 2, 3}));
  BOOST_TEST(vector_reduces(map6.back(), {{OptOp::UNROLL, 3, 6}, {OptOp::UNROLL, 2, 6}}) == 9); // 36: 9 of 4
  auto up = input({4, 3, 3, 1, 3, 1}).expand({4, 3, 3, 2, 3, 2}).reshape({4, 3, 6, 6});
  auto gather = compute_items((input({4, 3, 6, 6}) * up).sum({0, 2, 3}));
  BOOST_TEST(vector_reduces(gather.back(), {{OptOp::UNROLL, 3, 6}, {OptOp::UNROLL, 2, 6}}) == 0);
  for (auto* items : {&map20, &map6, &gather}) {
    Ran plain = run(*items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
    Ran tuned = run(*items, cpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
    check_same(*items, tuned, plain, "partial sums");
  }
}

BOOST_AUTO_TEST_CASE(hand_written_lists_match_noopt) {
  struct ListCase {
    std::string expr;
    std::vector<Opt> opts;
  };
  auto matmul = [] { return input({64, 48}).matmul(input({48, 32})); };
  std::vector<std::pair<std::function<Tensor()>, std::vector<Opt>>> lists = {
      {matmul, {{OptOp::LOCAL, 0, 8}, {OptOp::LOCAL, 1, 8}, {OptOp::UPCAST, 1, 4}}},
      {matmul, {{OptOp::UPCAST, 0, 4}, {OptOp::UNROLL, 2, 4}, {OptOp::GROUP, 2, 4}}},
      {matmul, {{OptOp::GROUPTOP, 2, 16}, {OptOp::LOCAL, 1, 16}}},
      {matmul, {{OptOp::PADTO, 2, 32}, {OptOp::GROUP, 2, 32}}},
      {matmul, {{OptOp::PADTO, 0, 48}, {OptOp::LOCAL, 0, 48}, {OptOp::LOOP, 1, 8}}},
      {[] { return input({1031}).sum(); },
       {{OptOp::PADTO, 0, 256}, {OptOp::GROUP, 0, 64}, {OptOp::UNROLL, 0, 4}}},
      {[] { return input({1031}).sum(); }, {{OptOp::PADTO, 0, 32}, {OptOp::GROUPTOP, 0, 32}}},
      {[] {
         return input({100, 33}).max({0});
       },
       {{OptOp::PADTO, 0, 8}, {OptOp::LOCAL, 0, 8}, {OptOp::GROUP, 1, 4}}},
      {[] {
         return input({7, 1000}) * 3.0f;
       },
       {{OptOp::LOOP, 1, 300}}},
      // a loop over vectors of adjacent outputs; the second is ragged (1000 / 8 = 125 steps, 40 each)
      {[] {
         return input({7, 1000}) * 3.0f;
       },
       {{OptOp::UPCAST, 1, 8}, {OptOp::LOOP, 1, 25}}},
      {[] {
         return input({7, 1000}) + input({7, 1000});
       },
       {{OptOp::UPCAST, 1, 8}, {OptOp::LOOP, 1, 40}}},
      {[] {
         return input({7, 1000}) * 3.0f;
       },
       {{OptOp::PADTO, 0, 4}, {OptOp::LOCAL, 0, 4}, {OptOp::UPCAST, 1, 8}}},
      {[] {
         return input({24, 40}, dtypes::int32).sum({0});
       },
       {{OptOp::GROUP, 1, 8}, {OptOp::UPCAST, 0, 2}}},
  };
  for (size_t i = 0; i < lists.size(); ++i) {
    const auto& [build, opts] = lists[i];
    BOOST_TEST_CONTEXT("list " << i << " " << to_string(opts)) {
      auto items = compute_items(build());
      BOOST_TEST_REQUIRE(items.size() == 1u);
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      for (uint32_t max_groups : {65535u, 2u}) { // 2: work groups loop over tiles
        Ran got = run(items, gpu(max_groups), [&](const ScheduleItem&, size_t) { return opts; });
        check_same(items, got, plain, to_string(opts) + " max_groups " + std::to_string(max_groups));
      }
    }
  }
}

// Register tiles over reused output axes of 32 (a weight gradient's 32 x 32 channels) where 16
// outputs per thread still leave 256 threads per compute unit; fewer outputs keep one per thread.
BOOST_AUTO_TEST_CASE(gpu_heuristic_upcasts_32_wide_reused_axes) {
  auto many = compute_items(input({16, 32, 64}).matmul(input({16, 64, 32})));
  LoweredKernel c = lower_kernel(many.back(), gpu());
  const std::vector<Opt> tile{{OptOp::UPCAST, 2, 4}, {OptOp::UPCAST, 1, 4}};
  BOOST_TEST(to_string(c.applied).rfind(to_string(tile).substr(0, to_string(tile).size() - 1), 0) == 0u,
             c.opts);
  Ran plain = run(many, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(many, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(many, got, plain, "heuristic " + got.opts.back());
  auto few = compute_items(input({8, 32, 64}).matmul(input({8, 64, 32}))); // 8192 outputs
  LoweredKernel f = lower_kernel(few.back(), gpu());
  BOOST_TEST(to_string(f.applied).find("UPCAST") == std::string::npos, f.opts);
}

// Fewer outputs than 256 threads per compute unit, each a long sum whose innermost axis is a
// contiguous row (24, as in the first weight gradient) the 16..256-thread GROUP rule does not
// take (no power of two >= 16 divides 180 x 24): 8 threads share each output along the row.
BOOST_AUTO_TEST_CASE(gpu_heuristic_groups_the_row_of_few_long_sums) {
  auto items = compute_items((input({8, 1, 180, 24}) * input({1, 8, 180, 24})).sum({2, 3}));
  LoweredKernel c = lower_kernel(items.back(), gpu());
  BOOST_TEST(to_string(c.applied).rfind("[GROUP(3,8), LOCAL(", 0) == 0u, c.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
  // 2304 outputs: enough for 4 units of 256 threads (lowered, not run)
  auto many = compute_items((input({48, 1, 180, 24}) * input({1, 48, 180, 24})).sum({2, 3}));
  LoweredKernel m = lower_kernel(many.back(), gpu());
  BOOST_TEST(to_string(m.applied).find("GROUP") == std::string::npos, m.opts);
}

// A convolution's weight gradient (a register tile over the channels, a sum over batch x rows x
// columns): the contiguous row of columns is unrolled by its largest divisor <= 8; the forward
// convolution (innermost reduced axis: the 3-wide window) is not.
BOOST_AUTO_TEST_CASE(gpu_heuristic_unrolls_the_row_of_a_weight_gradient) {
  Tensor x = input({2, 8, 10, 10}), w = input({64, 8, 3, 3});
  w.requires_grad_();
  Tensor y = x.conv2d(w);
  (y * input({2, 64, 8, 8})).sum().backward();
  auto items = compute_items(*w.grad());
  int unrolled = 0;
  for (const auto& item : items) {
    const std::string opts = lower_kernel(item, gpu()).opts;
    if (opts.find("UNROLL(") == std::string::npos) continue;
    ++unrolled;
    const KernelInfo info = analyze_kernel(item);
    const std::string want = "UNROLL(" + std::to_string(info.axes.size() - 1) + ",8)";
    BOOST_TEST(info.axes.back().size == 8);
    BOOST_TEST(opts.find("UPCAST(") != std::string::npos, opts);
    BOOST_TEST(opts.find(want) != std::string::npos, opts);
  }
  BOOST_TEST(unrolled == 1);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic");
  for (const auto& item : compute_items(y))
    BOOST_TEST(lower_kernel(item, gpu()).opts.find("UNROLL") == std::string::npos);
}

// A weight gradient whose only tiled axis is its 64 output channels (8 or 24 input channels are
// too narrow to tile): with fewer than two rounds of 256 threads per compute unit left by a 4-wide
// tile (4608 outputs / 4 < 2 x 256 x 4 units), the tile is 2 wide; with more outputs (13824) it
// stays 4 wide. Without STAGE: 24 input channels would take the staged weight-gradient list
// (gpu_heuristic_stages_a_weight_gradient).
BOOST_AUTO_TEST_CASE(gpu_heuristic_halves_a_lone_tile_of_few_threads) {
  LowerOptions unstaged = gpu();
  unstaged.staging = false;
  auto tile_of = [&unstaged](int64_t ci, std::vector<ScheduleItem>* keep) {
    Tensor x = input({2, ci, 10, 10}), w = input({64, ci, 3, 3});
    w.requires_grad_();
    (x.conv2d(w) * input({2, 64, 8, 8})).sum().backward();
    auto items = compute_items(*w.grad());
    std::vector<std::string> upcasts;
    for (const auto& item : items) {
      const LoweredKernel c = lower_kernel(item, unstaged);
      for (const auto& o : c.applied)
        if (o.op == OptOp::UPCAST) upcasts.push_back(to_string(o) + " of " + c.opts);
    }
    if (keep) *keep = items;
    return upcasts;
  };
  std::vector<ScheduleItem> items;
  const auto few = tile_of(8, &items);
  BOOST_TEST_REQUIRE(few.size() == 1u);
  BOOST_TEST(few[0].find(",2) of") != std::string::npos, few[0]);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, unstaged, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic");
  const auto many = tile_of(24, nullptr);
  BOOST_TEST_REQUIRE(many.size() == 1u);
  BOOST_TEST(many[0].find(",4) of") != std::string::npos, many[0]);
}

// Fewer outputs than compute units (4 here) of a 512-value sum, too short for the GROUP rule of
// >= 1024 values: the threads of a work group still share each sum (one thread's serial chain of
// 512 loads was the whole kernel), also along a strided axis; 4 outputs (one per compute unit)
// are left alone.
BOOST_AUTO_TEST_CASE(gpu_heuristic_groups_short_sums_of_few_outputs) {
  auto items = compute_items(input({3, 512}).sum({1}));
  LoweredKernel c = lower_kernel(items.back(), gpu());
  BOOST_TEST(to_string(c.applied).find("GROUP(1,256)") != std::string::npos, c.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
  // 4 outputs are not fewer than the 4 units: not the short-sum rule, but each 512-long row is
  // contiguous and read by one thread, so the row rule groups it by 128
  auto few = compute_items(input({4, 512}).sum({1}));
  BOOST_TEST(lower_kernel(few.back(), gpu()).opts.find("GROUP(1,128)") != std::string::npos,
             lower_kernel(few.back(), gpu()).opts);
  // a linear layer's bias gradient: 10 outputs summed over a batch axis 10 words apart, on a
  // device of 16 units
  LowerOptions wide = gpu();
  wide.compute_units = 16;
  auto bias = compute_items(input({512, 10}).sum({0}));
  BOOST_TEST(lower_kernel(bias.back(), wide).opts.find("GROUP(") != std::string::npos,
             lower_kernel(bias.back(), wide).opts);
  Ran bias_plain = run(bias, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran bias_got = run(bias, wide, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(bias, bias_got, bias_plain, "heuristic " + bias_got.opts.back());
}

// Column sums with more outputs than the GROUP rule for few outputs takes and fewer than 256
// threads per unit (a bias gradient: 2064 columns summed over 1024 rows): 16 neighbouring columns
// per row of threads, 16 threads sharing each column; the result equals the unoptimized kernel's.
BOOST_AUTO_TEST_CASE(gpu_heuristic_groups_column_sums) {
  LowerOptions wide = gpu();
  wide.compute_units = 16;
  auto items = compute_items(input({1024, 2064}).sum({0}));
  LoweredKernel c = lower_kernel(items.back(), wide);
  BOOST_TEST(to_string(c.applied) == "[LOCAL(0,16), GROUP(1,16)]", c.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, wide, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
  // rows summed along their contiguous length are not column sums
  auto rows = compute_items(input({2064, 4096}).sum({1}));
  BOOST_TEST(lower_kernel(rows.back(), wide).opts.find("LOCAL(0,16), GROUP") == std::string::npos,
             lower_kernel(rows.back(), wide).opts);
}

// Few outputs of a long row whose largest power-of-two divisor is under 64 (1104 = 16 x 69):
// the row is padded to a multiple of 256 and grouped by 256 threads, not by 16; the result
// equals the unoptimized kernel's.
BOOST_AUTO_TEST_CASE(gpu_heuristic_pads_rows_with_small_power_of_two_factors) {
  Tensor x = input({64, 1104});
  auto items = compute_items((x * x).sum({1}));
  LoweredKernel k = lower_kernel(items.back(), gpu());
  BOOST_TEST(k.opts.find("PADTO(1,256), GROUP(1,256)") != std::string::npos, k.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
}

// An elementwise kernel whose inner axes are tiny (a max pool's gradient over 2x2 windows: (N, C,
// 10, 10, 2, 2)) passes over an axis of 2 for a larger one, so its work groups hold 200 threads
// instead of 2 x 2 x 10; the result equals the unoptimized kernel's.
BOOST_AUTO_TEST_CASE(gpu_heuristic_fills_work_groups_past_tiny_axes) {
  Tensor x = input({8, 4, 10, 2, 10, 2});
  auto items = compute_items(x.permute({0, 1, 2, 4, 3, 5}) * 2.0f);
  LoweredKernel k = lower_kernel(items.back(), gpu());
  BOOST_TEST(k.local[0] * k.local[1] * k.local[2] >= 64u, k.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
}

// A float sum of products unrolled whole (no loop left: a depthwise window) adds each further
// product as a MULACC, which the CPU renders as a fused multiply-add; the result equals the
// unoptimized kernel's.
BOOST_AUTO_TEST_CASE(unrolled_sums_of_products_accumulate_with_mulacc) {
  auto items = compute_items((input({16, 9}) * input({16, 9})).sum({1}));
  const std::vector<Opt> list{{OptOp::UNROLL, 1, 9}};
  LowerOptions o = cpu();
  o.opts = list;
  LoweredKernel k = lower_kernel(items.back(), o);
  const std::string ir = linearize(k.sink, k.name).text;
  size_t mulaccs = 0;
  for (size_t at = ir.find("MULACC"); at != std::string::npos; at = ir.find("MULACC", at + 1)) ++mulaccs;
  BOOST_TEST(mulaccs == 8u, ir);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, cpu(), [&](const ScheduleItem&, size_t) { return list; });
  check_same(items, got, plain, "unrolled " + got.opts.back());
}

// On a CPU-style device a contiguous output axis of 56 (a 1x1 convolution's columns) takes 8
// lanes, whole vectors, ahead of its largest divisor 14, and leads the tile, so its lanes become
// vector loads and FMAs; the result equals the unoptimized kernel's.
BOOST_AUTO_TEST_CASE(cpu_heuristic_takes_whole_vectors_along_a_contiguous_axis) {
  auto items = compute_items(input({1, 144, 56, 56}).conv2d(input({24, 144, 1, 1})));
  LoweredKernel k = lower_kernel(items.back(), cpu());
  BOOST_TEST_REQUIRE(!k.applied.empty());
  BOOST_TEST(to_string(k.applied.front()) == "UPCAST(3,8)", k.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
}

// Many rows each summed along a contiguous row of >= 256 words (LayerNorm over 768 features):
// 32-128 threads share each row, reading it in coalesced stretches; a row of 200 stays with one
// thread, and a matmul (a sum of products) is not grouped by this rule.
BOOST_AUTO_TEST_CASE(gpu_heuristic_groups_long_contiguous_rows) {
  Tensor x = input({2, 64, 768});
  auto items = compute_items((x - x.mean({-1}, true)).square().mean({-1}));
  BOOST_TEST(items.size() == 2u); // the mean, then the variance (the mean read along its rows)
  for (size_t i = 0; i < items.size(); ++i) {
    const LoweredKernel k = lower_kernel(items[i], gpu());
    const std::string reduce_axis = std::to_string(k.applied.empty() ? -1 : int(items[i].shape.size()));
    BOOST_TEST(k.opts.find("GROUP(" + reduce_axis + ",128)") != std::string::npos, k.opts);
  }
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.back());
  auto rows_288 = compute_items(input({64, 288}).sum({1}));
  BOOST_TEST(lower_kernel(rows_288.back(), gpu()).opts.find("GROUP(1,32)") != std::string::npos,
             lower_kernel(rows_288.back(), gpu()).opts);
  auto short_rows = compute_items(input({64, 200}).sum({1}));
  BOOST_TEST(lower_kernel(short_rows.back(), gpu()).opts.find("GROUP") == std::string::npos,
             lower_kernel(short_rows.back(), gpu()).opts);
  auto matmul = compute_items(input({64, 512}).matmul(input({64, 512}).transpose(0, 1)));
  BOOST_TEST(lower_kernel(matmul.back(), gpu()).opts.find("GROUP") == std::string::npos,
             lower_kernel(matmul.back(), gpu()).opts);
}

// A one-hot sum (Embedding's `(idx == arange) @ w`, gather's `where(idx == arange, x, 0)`) lowers
// to one load of the selected element: no loop over the classes, on either kind of device, and an
// index outside [0, n) gives 0. Checked against values computed here from the same buffers.
BOOST_AUTO_TEST_CASE(one_hot_sums_fold_into_loads) {
  const int64_t vocab = 24, embed = 16, tokens = 40;
  Tensor idx = input({tokens}, dtypes::int32), w = input({vocab, embed});
  Tensor classes = Tensor::arange(0, double(vocab), 1, dtypes::int32, "CPU");
  Tensor embedding = idx.unsqueeze(-1).eq(classes).cast(dtypes::float32).matmul(w);
  Tensor gathered = w.gather(0, idx.reshape({tokens, 1}).expand({tokens, embed}));
  for (const auto& [what, t] : {std::pair{"embedding", embedding}, std::pair{"gather", gathered}}) {
    BOOST_TEST_CONTEXT(what) {
      auto items = compute_items(t);
      BOOST_TEST_REQUIRE(items.size() == 1u);
      const ScheduleItem& item = items[0];
      for (const auto& [device, options] : {std::pair{"cpu", cpu()}, std::pair{"gpu", gpu()}}) {
        LoweredKernel k = lower_kernel(item, options);
        const auto nodes = toposort(k.sink);
        BOOST_TEST(
            std::none_of(nodes.begin(), nodes.end(), [](const UOpRef& u) { return u->op() == Ops::RANGE; }),
            device << ": a loop is left (" << k.opts << ")");
        Ran got = run(items, options, [](const ScheduleItem&, size_t) { return std::nullopt; });
        const UOp *out = item.buffers[0].get(), *ids = nullptr, *table = nullptr;
        for (const auto& b : item.buffers)
          if (b.get() != out) (b->dtype() == dtypes::int32 ? ids : table) = b.get();
        BOOST_TEST_REQUIRE((ids && table));
        auto word = [&](const UOp* b, int64_t i) {
          int32_t v;
          std::memcpy(&v, got.memory.at(b).data() + 4 * i, 4);
          return v;
        };
        auto real = [&](const UOp* b, int64_t i) {
          float v;
          std::memcpy(&v, got.memory.at(b).data() + 4 * i, 4);
          return v;
        };
        int64_t outside = 0, bad = 0;
        const int64_t rows = buffer_arg(item.buffers[0]).size() / embed;
        for (int64_t row = 0; row < rows; ++row) {
          const int32_t e = word(ids, row);
          outside += e < 0 || e >= vocab;
          for (int64_t c = 0; c < embed; ++c) {
            const float want = e >= 0 && e < vocab ? real(table, e * embed + c) : 0.0f;
            if (real(out, row * embed + c) != want && bad++ < 3)
              BOOST_ERROR(device << ": token " << row << " (index " << e << ") column " << c << ": got "
                                 << real(out, row * embed + c) << ", want " << want);
          }
        }
        BOOST_TEST(outside > 0); // the filler's indices -10..10 include negative ones
      }
    }
  }
}

// An embedding's gradient, one_hot(i)^T @ g: every output row sums the rows of g whose index is
// that row. The selection cannot fold into a load (it picks steps of the loop, not one element),
// so g's loads are gated by it: a step whose index is another row reads nothing. The heuristic
// gives each thread several outputs along the embedding axis (the selection does not vary along
// it), and the kernel adds under one IF per step. Also summed transposed, (g^T @ one_hot)^T, as
// autograd does for a weight: the kernel stores the reduce through a permutation.
BOOST_AUTO_TEST_CASE(one_hot_products_gate_their_loads) {
  const int64_t vocab = 128, embed = 64, tokens = 40;
  Tensor idx = input({tokens}, dtypes::int32), g = input({tokens, embed});
  Tensor classes = Tensor::arange(0, double(vocab), 1, dtypes::int32, "CPU");
  Tensor onehot = idx.unsqueeze(-1).eq(classes).cast(dtypes::float32);
  for (const auto& [form, grad] :
       {std::pair{"one_hot^T @ g", onehot.transpose(0, 1).matmul(g)},
        std::pair{"(g^T @ one_hot)^T", g.transpose(0, 1).matmul(onehot).transpose(0, 1)}}) {
    auto items = compute_items(grad);
    BOOST_TEST_REQUIRE(items.size() == 1u);
    const ScheduleItem& item = items[0];
    for (const auto& [device, options] : {std::pair{"cpu", cpu()}, std::pair{"gpu", gpu()}}) {
      BOOST_TEST_CONTEXT(form << " on " << device) {
        LoweredKernel k = lower_kernel(item, options);
        int float_loads = 0, gated = 0;
        for (const auto& u : toposort(k.sink))
          if (u->op() == Ops::LOAD && u->dtype().scalar == Scalar::Float32) {
            ++float_loads;
            gated += u->src().size() == 3;
          }
        BOOST_TEST(float_loads > 0);
        BOOST_TEST(gated == float_loads, "every load of g is gated (" << k.opts << ")");
        BOOST_TEST_REQUIRE(!k.applied.empty());
        const Opt& first = k.applied.front();
        BOOST_TEST((first.op == OptOp::UPCAST && first.axis == 1 && first.amount >= 8), k.opts);
        const std::string ir = linearize(k.sink, k.name).text;
        BOOST_TEST(ir.find(" = IF ") != std::string::npos, "the adds run under IF:\n" << ir);
        Ran got = run(items, options, [](const ScheduleItem&, size_t) { return std::nullopt; });
        const UOp *out = item.buffers[0].get(), *ids = nullptr, *rows = nullptr;
        for (const auto& b : item.buffers)
          if (b.get() != out) (b->dtype() == dtypes::int32 ? ids : rows) = b.get();
        BOOST_TEST_REQUIRE((ids && rows));
        auto at = [&](const UOp* b, int64_t i, auto v) {
          std::memcpy(&v, got.memory.at(b).data() + 4 * i, 4);
          return v;
        };
        std::vector<double> want(size_t(vocab * embed), 0.0); // the scatter, by hand
        int64_t used = 0;
        for (int64_t t = 0; t < tokens; ++t) {
          const int32_t e = at(ids, t, int32_t{});
          if (e < 0 || e >= vocab) continue;
          ++used;
          for (int64_t c = 0; c < embed; ++c)
            want[size_t(e * embed + c)] += double(at(rows, t * embed + c, 0.0f));
        }
        BOOST_TEST(used > 0);
        int bad = 0;
        for (int64_t i = 0; i < vocab * embed; ++i)
          if (std::abs(double(at(out, i, 0.0f)) - want[size_t(i)]) > 1e-4 * (1 + std::abs(want[size_t(i)])) &&
              bad++ < 3)
            BOOST_ERROR("row " << i / embed << " column " << i % embed << ": got " << at(out, i, 0.0f)
                               << ", want " << want[size_t(i)]);
      }
    }
  }
}

// A product stored transposed, as autograd writes an attention's key gradient: the
// kernel is planned in the product's own order (in the stored order the heuristic maps no axis: a
// CPU got one LOOP and no vector lanes, GPT-sized ones no optimization at all) and stores through
// the permutation; the values match the same kernel without optimizations.
BOOST_AUTO_TEST_CASE(transposed_products_plan_in_their_own_order) {
  // dK = dS^T q as autograd sums it: over the queries (a middle axis), (d, key) ordered, stored
  // as (key, d)
  Tensor ds = input({3, 48, 40}), q = input({3, 48, 32});
  auto items =
      compute_items((q.reshape({3, 48, 32, 1}) * ds.reshape({3, 48, 1, 40})).sum({1}).transpose(-1, -2));
  BOOST_TEST_REQUIRE(items.size() == 1u);
  BOOST_TEST(items[0].shape == Dims({3, 40, 32}));
  for (const auto& [device, options] : {std::pair{"cpu", cpu()}, std::pair{"gpu", gpu()}}) {
    BOOST_TEST_CONTEXT(device) {
      LoweredKernel k = lower_kernel(items[0], options);
      BOOST_TEST(k.name == "r_3_32_40_48", "axes in the product's order: " << k.name << " " << k.opts);
      BOOST_TEST(!k.applied.empty(), k.opts);
      Ran got = run(items, options, [](const ScheduleItem&, size_t) { return std::nullopt; });
      Ran want = run(items, options, [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      check_same(items, got, want, std::string(device) + " " + k.opts);
    }
  }
}

// The bfloat16 form (a bfloat16 product summed in float32: a cast around the selection) is gated
// the same way.
BOOST_AUTO_TEST_CASE(bfloat16_one_hot_products_gate_their_loads) {
  Tensor idx = input({40}, dtypes::int32), g = input({40, 16}, dtypes::bfloat16);
  Tensor classes = Tensor::arange(0, 24, 1, dtypes::int32, "CPU");
  Tensor grad = idx.unsqueeze(-1).eq(classes).cast(dtypes::bfloat16).transpose(0, 1).matmul(g);
  auto items = compute_items(grad.cast(dtypes::float32));
  BOOST_TEST_REQUIRE(items.size() == 1u);
  for (const auto& [device, options] : {std::pair{"cpu", cpu()}, std::pair{"gpu", gpu()}}) {
    LoweredKernel k = lower_kernel(items[0], options);
    int loads = 0, gated = 0;
    for (const auto& u : toposort(k.sink))
      if (u->op() == Ops::LOAD && u->dtype().scalar == Scalar::BFloat16) {
        ++loads;
        gated += u->src().size() == 3;
      }
    BOOST_TEST((loads > 0 && gated == loads),
               device << ": " << gated << " of " << loads << " loads of g gated");
  }
}

BOOST_AUTO_TEST_CASE(random_lists_match_noopt) {
  std::mt19937 rng(7);
  const std::vector<OptOp> ops = {OptOp::UPCAST,   OptOp::UNROLL, OptOp::LOCAL, OptOp::GROUP,
                                  OptOp::GROUPTOP, OptOp::LOOP,   OptOp::PADTO};
  const std::vector<int64_t> amounts = {2, 3, 4, 5, 8, 16, 32};
  int accepted = 0, refused = 0;
  for (const auto& c : cases()) {
    if (c.heavy) continue;
    auto items = compute_items(c.build());
    Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
    for (int trial = 0; trial < 8; ++trial) {
      // per kernel: grow a list one random action at a time, keeping the actions lower_kernel accepts
      std::vector<std::vector<Opt>> chosen;
      for (const auto& item : items) {
        const KernelInfo info = analyze_kernel(item);
        std::vector<Opt> list;
        for (int step = 0; step < 4; ++step) {
          Opt o{ops[rng() % ops.size()], int(rng() % info.axes.size()), amounts[rng() % amounts.size()]};
          std::vector<Opt> next = list;
          next.push_back(o);
          LowerOptions options = gpu();
          options.opts = next;
          try {
            (void)lower_kernel(item, options);
            list = next;
            ++accepted;
          } catch (const OptError&) {
            ++refused;
          }
        }
        chosen.push_back(list);
      }
      Ran got =
          run(items, gpu(trial % 2 ? 3 : 65535), [&](const ScheduleItem&, size_t k) { return chosen[k]; });
      check_same(items, got, plain, c.name + " random lists");
    }
  }
  BOOST_TEST_MESSAGE("random lists: " << accepted << " actions accepted, " << refused << " refused");
  BOOST_TEST(accepted >= 100); // the search reached far into the space
  BOOST_TEST(refused >= 20);   // and met its edges
}

BOOST_AUTO_TEST_CASE(invalid_lists_are_refused_with_the_reason) {
  auto matmul = compute_items(input({64, 48}).matmul(input({48, 32}))).at(0);
  auto refused = [&](const LowerOptions& base, std::vector<Opt> opts, const std::string& why) {
    LowerOptions o = base;
    o.opts = std::move(opts);
    try {
      (void)lower_kernel(matmul, o);
      BOOST_ERROR("accepted " << to_string(*o.opts));
    } catch (const OptError& e) {
      BOOST_TEST(std::string(e.what()).find(why) != std::string::npos, e.what());
    }
  };
  refused(cpu(), {{OptOp::GROUP, 2, 4}}, "no work-group local memory");
  refused(gpu(), {{OptOp::LOCAL, 7, 4}}, "no such axis");
  refused(gpu(), {{OptOp::UPCAST, 0, 5}}, "does not divide");
  refused(gpu(), {{OptOp::UPCAST, 2, 4}}, "output-axis optimization on a reduce axis");
  refused(gpu(), {{OptOp::UNROLL, 0, 4}}, "reduce-axis optimization on an output axis");
  refused(gpu(), {{OptOp::LOCAL, 0, 32}, {OptOp::LOCAL, 1, 16}}, "512 threads per work group");
  refused(gpu(), {{OptOp::UPCAST, 0, 4}, {OptOp::PADTO, 0, 8}}, "PADTO must come before");
  refused(gpu(), {{OptOp::LOCAL, 0, 1}}, "at least 2");
  refused(gpu(), {{OptOp::LOOP, 1, 4}, {OptOp::UPCAST, 1, 4}}, "UPCAST after LOOP");
  refused(gpu(), {{OptOp::LOOP, 1, 4}, {OptOp::LOOP, 1, 2}}, "one LOOP");
  refused(gpu(), {{OptOp::GROUP, 2, 16}, {OptOp::GROUPTOP, 2, 3}}, "one GROUP per kernel");
  LowerOptions tiny = gpu();
  tiny.local_memory_bytes = 64;
  refused(tiny, {{OptOp::GROUP, 2, 16}, {OptOp::LOCAL, 0, 2}}, "bytes of local memory");
  Tensor x = input({12, 64});
  bool saw_two_reduces = false;
  for (const auto& item : compute_items(x.sum({1}) + x.max({1})))
    if (analyze_kernel(item).reduce_count > 1) {
      saw_two_reduces = true;
      LowerOptions o = gpu();
      o.opts = std::vector<Opt>{{OptOp::GROUP, 1, 2}};
      BOOST_CHECK_THROW((void)lower_kernel(item, o), OptError);
    }
  BOOST_TEST(saw_two_reduces);
}

BOOST_AUTO_TEST_CASE(opt_lists_print_and_parse) {
  std::vector<Opt> opts = {{OptOp::LOCAL, 0, 16}, {OptOp::GROUPTOP, 2, 8}, {OptOp::PADTO, 1, 32}};
  BOOST_TEST(to_string(opts) == "[LOCAL(0,16), GROUPTOP(2,8), PADTO(1,32)]");
  BOOST_TEST((parse_opts(to_string(opts)) == opts));
  BOOST_TEST(parse_opts("[]").empty());
  BOOST_CHECK_THROW(parse_opts("[FOO(0,1)]"), OptError);
  BOOST_CHECK_THROW(parse_opts("[LOCAL(0 16)]"), OptError);
}

// What one work item loops, counted over nested loops: NOOPT kernels here run one thread per output.
BOOST_AUTO_TEST_CASE(loop_iterations_per_work_item) {
  auto count = [](const Tensor& t) {
    auto items = compute_items(t);
    BOOST_TEST_REQUIRE(items.size() == 1u);
    LowerOptions noopt = cpu();
    noopt.optimize = false;
    LoweredKernel k = lower_kernel(items[0], noopt);
    return int64_t(linearize(k.sink, k.name).loop_iterations.value_or(~uint64_t(0))); // ~0: unknown
  };
  BOOST_TEST(count(input({33, 17}).matmul(input({17, 9}))) == 17);
  BOOST_TEST(count(input({7, 33}) * 2.0f) == 0); // no loop
  Tensor x = input({12, 64});
  BOOST_TEST(count(x.sum({1}) + x.max({1})) == 64 + 64); // two loops in a row
  // a reduce over two axes a permute keeps apart: 5 outer trips, each with 6 inner ones
  BOOST_TEST(count(input({6, 4, 5}).permute({1, 2, 0}).sum({1, 2})) == 5 + 5 * 6);
}

// A device that stops loops after `limit` iterations per work item (lavapipe: 65535): the
// heuristic splits long reduces over threads and unrolls to stay below it, with the same results;
// NOOPT, which cannot, is refused with the counts instead of running wrong.
BOOST_AUTO_TEST_CASE(loop_limit_is_kept_or_refused) {
  const uint64_t limit = 1000;
  LowerOptions limited = gpu();
  limited.max_loop_iterations = limit;
  int refused = 0;
  for (int64_t n : {int64_t(1) << 17, (int64_t(1) << 18) + 1, int64_t(60000)}) {
    BOOST_TEST_CONTEXT("sum of " << n) {
      auto items = compute_items(input({n}).sum());
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      Ran got = run(items, limited, [](const ScheduleItem&, size_t) { return std::nullopt; });
      check_same(items, got, plain, "heuristic under a loop limit " + got.opts.at(0));
      LoweredKernel k = lower_kernel(items[0], limited);
      auto iterations = linearize(k.sink, k.name).loop_iterations;
      BOOST_TEST_REQUIRE(iterations.has_value());
      BOOST_TEST(*iterations <= limit, k.opts);
      LowerOptions noopt = limited;
      noopt.optimize = false;
      LoweredKernel plain_kernel = lower_kernel(items[0], noopt);
      LinearKernel plain_linear = linearize(plain_kernel.sink, plain_kernel.name);
      BOOST_TEST_REQUIRE(plain_linear.loop_iterations.has_value());
      if (*plain_linear.loop_iterations <= limit) { // the scheduler split it short enough
        BOOST_CHECK_NO_THROW(check_loop_limit(plain_linear, plain_kernel.name, plain_kernel.opts, limit));
        continue;
      }
      ++refused;
      BOOST_CHECK_EXCEPTION(check_loop_limit(plain_linear, plain_kernel.name, plain_kernel.opts, limit),
                            OptError, [&](const OptError& e) {
                              std::string m = e.what();
                              BOOST_TEST_MESSAGE(m);
                              return m.find(plain_kernel.name) != std::string::npos &&
                                     m.find("runs " +
                                            std::to_string(plain_linear.loop_iterations.value_or(0)) +
                                            " loop iterations") != std::string::npos &&
                                     m.find("allows 1000 ") != std::string::npos &&
                                     m.find("max_loop_iterations") != std::string::npos;
                            });
    }
  }
  BOOST_TEST(refused == 2); // 2^18 + 1 and 60000: one kernel each over the limit under NOOPT
  // many outputs (no GROUP without the limit), each reduce longer than the limit; small work
  // groups keep the interpreter's thread count down
  LowerOptions small = gpu();
  small.max_local_size = {16, 16, 16};
  small.max_local_threads = 16;
  small.max_loop_iterations = 100;
  auto long_rows = compute_items(input({2100, 150}).sum({1}));
  Ran rows_plain = run(long_rows, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran rows_got = run(long_rows, small, [](const ScheduleItem&, size_t) { return std::nullopt; });
  BOOST_TEST(rows_got.opts.at(0).find("GROUP") != std::string::npos, rows_got.opts.at(0));
  check_same(long_rows, rows_got, rows_plain, "long rows under a loop limit " + rows_got.opts.at(0));
  // a reduce over rows that each fit: untouched by the limit
  auto rows = compute_items(input({4096, 64}).sum({1}));
  BOOST_TEST(run(rows, limited, [](const ScheduleItem&, size_t) { return std::nullopt; }).opts.at(0) ==
             run(rows, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; }).opts.at(0));
}

// A stack of 6 sums of slices (one Winograd transform pass: kernel/tensor/winograd.cpp) upcasts the
// stacked axis whole on both kinds of device, so each lane's pieces are constants that fold; a
// padded axis (valid on most of it) is not one. Both equal the unoptimized kernel.
BOOST_AUTO_TEST_CASE(heuristic_upcasts_stacked_axes) {
  Tensor x = input({16, 6, 32});
  std::vector<Tensor> rows;
  for (int64_t r = 0; r < 6; ++r) {
    auto slice = [&](int64_t i) { return x.shrink({{0, 16}, {i, i + 1}, {0, 32}}); };
    rows.push_back(slice(r) * double(r + 1) - slice((r + 2) % 6));
  }
  auto stacked = compute_items(Tensor::cat(rows, 1).contiguous());
  auto padded = compute_items(input({16, 5, 32}).pad({{0, 0}, {1, 1}, {0, 0}}).contiguous());
  for (const auto& [device, o] : {std::pair{"cpu", cpu()}, std::pair{"gpu", gpu()}}) {
    BOOST_TEST_CONTEXT(device) {
      const LoweredKernel k = lower_kernel(stacked.back(), o);
      BOOST_TEST(k.opts.find("UPCAST(1,6)") != std::string::npos, k.opts);
      Ran plain = run(stacked, o, [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      Ran got = run(stacked, o, [](const ScheduleItem&, size_t) { return std::nullopt; });
      check_same(stacked, got, plain, "stacked heuristic " + got.opts.back());
      const LoweredKernel p = lower_kernel(padded.back(), o);
      BOOST_TEST(p.opts.find("UPCAST(1,") == std::string::npos, p.opts);
    }
  }
}
