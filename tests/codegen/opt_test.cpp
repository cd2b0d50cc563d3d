// Optimization lists (kernel/codegen/opt.hpp): every list that lower_kernel accepts computes what the
// unoptimized kernel computes. Kernels are lowered from tensor expressions over placeholder buffers
// and run in the SDK's reference interpreter (no device), so GPU-style lists (LOCAL, GROUP, local
// memory, barriers) are checked here on any machine; invalid lists are refused with the reason.
#include <boost/test/unit_test.hpp>

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>

using namespace tg;

namespace {

Tensor input(Dims shape, DType dt = dtypes::float32) {
  UOpRef buffer = make_buffer("CPU", dt, dims_prod(shape)); // a label: nothing is opened
  UOpRef view = UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), "CPU");
}

// A GPU-like device: work groups of up to 256 threads with 32 KiB of local memory.
LowerOptions gpu(uint32_t max_groups = 65535) {
  LowerOptions o;
  o.compute_units = 4;
  o.max_groups = max_groups;
  o.vector_bytes = 16;
  o.max_local_size = {256, 256, 64};
  o.max_local_threads = 256;
  o.local_memory_bytes = 32768;
  o.subgroup_size = 8;
  return o;
}

// A CPU-like device: one thread per work group, no local memory.
LowerOptions cpu() {
  LowerOptions o;
  o.compute_units = 8;
  o.vector_bytes = 32;
  return o;
}

using Memory = std::map<const UOp*, std::vector<std::byte>>;
using Chooser = std::function<std::optional<std::vector<Opt>>(const ScheduleItem&, size_t kernel)>;

// Random contents for every buffer, the same for the same seed.
Memory fill(const std::vector<ScheduleItem>& items, uint32_t seed) {
  Memory mem;
  std::mt19937 rng(seed);
  for (const auto& item : items)
    for (const auto& b : item.buffers) {
      if (mem.count(b.get())) continue;
      const DType dt = b->dtype();
      const int64_t n = buffer_arg(b).size();
      std::vector<std::byte> bytes(size_t(n * dt.itemsize()));
      for (int64_t i = 0; i < n; ++i) {
        std::byte* p = bytes.data() + i * dt.itemsize();
        if (dt == dtypes::float32) {
          float v = std::uniform_real_distribution<float>(-1, 1)(rng);
          std::memcpy(p, &v, 4);
        } else if (dt == dtypes::int32) {
          auto v = int32_t(rng() % 21) - 10;
          std::memcpy(p, &v, 4);
        } else if (dt == dtypes::bool_) {
          *p = std::byte(rng() & 1);
        } else {
          throw std::logic_error("opt_test: no filler for " + dt.name());
        }
      }
      mem[b.get()] = std::move(bytes);
    }
  return mem;
}

struct Ran {
  Memory memory;
  std::vector<std::string> opts; // per kernel, as lowered
};

// Lowers every kernel of the expression with the chosen options and interprets it.
Ran run(const std::vector<ScheduleItem>& items, const LowerOptions& base, const Chooser& choose) {
  Ran out{fill(items, 1234), {}};
  for (size_t k = 0; k < items.size(); ++k) {
    const auto& item = items[k];
    LowerOptions options = base;
    options.opts = choose(item, k);
    LoweredKernel lowered = lower_kernel(item, options);
    LinearKernel linear = linearize(lowered.sink, lowered.name);
    check_loop_limit(linear, lowered.name, lowered.opts, options.max_loop_iterations);
    auto ir = sdk::parse_kernel_ir(linear.ir);
    std::vector<std::span<std::byte>> spans;
    for (const auto& b : item.buffers) spans.emplace_back(out.memory.at(b.get()));
    sdk::interpret(ir, lowered.global, lowered.local, spans, {});
    out.opts.push_back(lowered.opts);
  }
  return out;
}

std::vector<ScheduleItem> compute_items(const Tensor& t) {
  std::vector<ScheduleItem> items;
  for (auto& item : t.schedule())
    if (item.ast->src(0)->op() == Ops::STORE) items.push_back(std::move(item));
  return items;
}

// The same buffers after both runs: floats within a tolerance for reordered sums, others exact.
void check_same(const std::vector<ScheduleItem>& items, const Ran& got, const Ran& want,
                const std::string& what) {
  for (const auto& [buffer, bytes] : want.memory) {
    const auto& other = got.memory.at(buffer);
    const DType dt = buffer->dtype();
    size_t bad = 0;
    for (size_t i = 0; i < bytes.size() / size_t(dt.itemsize()); ++i) {
      if (dt == dtypes::float32) {
        float a, b;
        std::memcpy(&a, other.data() + 4 * i, 4);
        std::memcpy(&b, bytes.data() + 4 * i, 4);
        if (!(std::fabs(a - b) <= 1e-4f + 1e-4f * std::fabs(b))) {
          if (bad++ < 3) BOOST_ERROR(what << ": element " << i << " got " << a << " want " << b);
        }
      } else if (std::memcmp(other.data() + i * size_t(dt.itemsize()),
                             bytes.data() + i * size_t(dt.itemsize()), size_t(dt.itemsize())) != 0) {
        if (bad++ < 3) BOOST_ERROR(what << ": element " << i << " differs");
      }
    }
    std::string opts;
    for (const auto& o : got.opts) opts += "\n  " + o;
    BOOST_TEST(bad == 0u, what << ": " << bad << " elements differ; kernels ran with" << opts);
  }
  (void)items;
}

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

// STAGE (operands of a sum of products copied to local memory per reduce tile) with the work
// groups, lanes and tile sizes that exercise its paths: one thread copying everything, more
// threads than tile elements (guarded copies), a whole reduce in one tile, permuted and batched
// operands, a convolution (operands varying along several axes), work groups looping over tiles.
BOOST_AUTO_TEST_CASE(staged_lists_match_noopt) {
  auto matmul = [] { return input({64, 48}).matmul(input({48, 32})); };
  auto conv = [] { return input({2, 3, 10, 10}).conv2d(input({4, 3, 3, 3})); };
  std::vector<std::pair<std::function<Tensor()>, std::vector<Opt>>> lists = {
      {matmul, {{OptOp::STAGE, 2, 16}}},
      {matmul,
       {{OptOp::LOCAL, 1, 8},
        {OptOp::LOCAL, 0, 8},
        {OptOp::UPCAST, 0, 2},
        {OptOp::UPCAST, 1, 4},
        {OptOp::STAGE, 2, 8}}},
      {matmul, {{OptOp::LOCAL, 1, 16}, {OptOp::LOCAL, 0, 16}, {OptOp::STAGE, 2, 4}}},
      {matmul, {{OptOp::UPCAST, 1, 4}, {OptOp::LOCAL, 1, 4}, {OptOp::LOCAL, 0, 4}, {OptOp::STAGE, 2, 48}}},
      // the heuristic's shape: 4 neighbouring lanes per axis (vector reads of both tiles), and
      // 2 more per axis a whole LOCAL part apart
      {matmul,
       {{OptOp::UPCAST, 1, 4},
        {OptOp::UPCAST, 0, 4},
        {OptOp::LOCAL, 1, 4},
        {OptOp::LOCAL, 0, 4},
        {OptOp::UPCAST, 1, 2},
        {OptOp::UPCAST, 0, 2},
        {OptOp::STAGE, 2, 8}}},
      {[] {
         return input({48, 64}).permute({1, 0}).matmul(input({32, 48}).permute({1, 0}));
       },
       {{OptOp::LOCAL, 1, 8}, {OptOp::LOCAL, 0, 4}, {OptOp::UPCAST, 0, 4}, {OptOp::STAGE, 2, 8}}},
      {[] {
         return input({3, 16, 8}).matmul(input({3, 8, 12}));
       },
       {{OptOp::LOCAL, 2, 4}, {OptOp::LOCAL, 1, 4}, {OptOp::UPCAST, 2, 3}, {OptOp::STAGE, 3, 4}}},
      {conv, {{OptOp::LOCAL, 3, 8}, {OptOp::LOCAL, 1, 4}, {OptOp::STAGE, 4, 3}}},
      {conv,
       {{OptOp::LOCAL, 3, 8},
        {OptOp::UPCAST, 2, 2},
        {OptOp::LOCAL, 2, 4},
        {OptOp::UPCAST, 1, 2},
        {OptOp::STAGE, 5, 3},
        {OptOp::STAGE, 6, 3}}},
  };
  for (size_t i = 0; i < lists.size(); ++i) {
    const auto& [build, opts] = lists[i];
    BOOST_TEST_CONTEXT("list " << i << " " << to_string(opts)) {
      auto items = compute_items(build()); // the reduce last (a convolution pads its input first)
      auto choose = [&](const ScheduleItem&, size_t k) {
        return k + 1 == items.size() ? std::optional(opts) : std::optional(std::vector<Opt>{});
      };
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      for (uint32_t max_groups : {65535u, 2u}) { // 2: work groups loop over tiles (two lists: ASan time)
        if (max_groups == 2 && i != 1 && i != 8) continue;
        Ran got = run(items, gpu(max_groups), choose);
        check_same(items, got, plain, to_string(opts) + " max_groups " + std::to_string(max_groups));
      }
      // buffers 16-byte aligned at launch: the same results
      LowerOptions aligned = gpu();
      aligned.buffer_alignment = 16;
      check_same(items, run(items, aligned, choose), plain, to_string(opts) + " aligned");
      LowerOptions o = gpu();
      o.opts = opts;
      LoweredKernel k = lower_kernel(items.back(), o);
      std::string ir = linearize(k.sink, k.name).text;
      BOOST_TEST(ir.find("DEFINE_LOCAL") != std::string::npos, ir);
      BOOST_TEST(ir.find("BARRIER") != std::string::npos, ir);
      if (i == 4) // the lanes read the tiles 16 bytes at a time
        BOOST_TEST(ir.find("LOAD float32x4") != std::string::npos, ir);
      if (i == 4) { // aligned: float32 copies stay scalar (measured slower as float4; lower_stage.cpp)
        aligned.opts = opts;
        LoweredKernel ka = lower_kernel(items.back(), aligned);
        const auto pir = sdk::parse_kernel_ir(linearize(ka.sink, ka.name).ir);
        BOOST_TEST(pir.buffer_alignments == (std::vector<uint32_t>{4, 4, 4}));
      }
    }
  }
}

// The GPU heuristic stages a matmul big enough to fill the device (and not when told not to).
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_matmul) {
  auto items = compute_items(input({128, 32}).matmul(input({32, 128})));
  auto has_stage = [](const LoweredKernel& k) {
    return std::any_of(k.applied.begin(), k.applied.end(), [](const Opt& o) { return o.op == OptOp::STAGE; });
  };
  LoweredKernel k = lower_kernel(items.at(0), gpu());
  BOOST_TEST(has_stage(k), k.opts);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic " + got.opts.at(0));
  LowerOptions off = gpu();
  off.staging = false;
  BOOST_TEST(!has_stage(lower_kernel(items.at(0), off)));
  // a convolution with rows too short for the staged one (2 columns) is not staged, and still
  // matches NOOPT
  auto conv = compute_items(input({64, 2, 4, 4}).conv2d(input({64, 2, 3, 3})));
  BOOST_TEST_REQUIRE(analyze_kernel(conv.back()).product.has_value());
  LoweredKernel c = lower_kernel(conv.back(), gpu());
  BOOST_TEST(!has_stage(c), c.opts);
  Ran conv_plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran conv_got = run(conv, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(conv, conv_got, conv_plain, "heuristic " + conv_got.opts.back());
}

// A convolution with 64 output channels and rows of 16 to 32 columns is staged by the GPU
// heuristic (64 channels x 2 rows x all columns per work group, 4 input channels and the whole
// window per tile), reads the tiles from local memory, and matches NOOPT.
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_conv) {
  auto conv = compute_items(input({2, 8, 18, 18}).conv2d(input({64, 8, 3, 3})));
  LoweredKernel c = lower_kernel(conv.back(), gpu());
  const std::vector<Opt> expected{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2}, {OptOp::UPCAST, 3, 2},
                                  {OptOp::LOCAL, 1, 16}, {OptOp::LOCAL, 3, 8},  {OptOp::STAGE, 4, 4},
                                  {OptOp::STAGE, 5, 3},  {OptOp::STAGE, 6, 3}};
  BOOST_TEST(to_string(c.applied) == to_string(expected));
  std::string ir = linearize(c.sink, c.name).text;
  BOOST_TEST(ir.find("DEFINE_LOCAL") != std::string::npos, ir);
  Ran plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(conv, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  BOOST_TEST(got.opts.back().find("STAGE") != std::string::npos, got.opts.back());
  check_same(conv, got, plain, "heuristic " + got.opts.back());
  LowerOptions off = gpu(); // TG_STAGE=0
  off.staging = false;
  LoweredKernel unstaged = lower_kernel(conv.back(), off);
  BOOST_TEST(to_string(unstaged.applied).find("STAGE") == std::string::npos, unstaged.opts);
}

// The training step's convolutions: 32 output channels, forward and input gradient (a full
// convolution of the padded output gradient), staged with 8 threads x 4 channels, against NOOPT.
// Two output rows per image (one work group each: a one-unit device) keep the interpreter quick.
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_32_channel_conv_and_its_input_gradient) {
  LowerOptions one = gpu();
  one.compute_units = 1;
  Tensor x = input({2, 32, 4, 18}), w = input({32, 32, 3, 3});
  x.requires_grad_();
  w.requires_grad_();
  Tensor y = x.conv2d(w, input({32}));
  (y * input({2, 32, 2, 16})).sum().backward();
  auto list = [](int64_t cols) {
    return to_string(std::vector<Opt>{{OptOp::UPCAST, 1, 4},
                                      {OptOp::UPCAST, 2, 2},
                                      {OptOp::UPCAST, 3, 2},
                                      {OptOp::LOCAL, 1, 8},
                                      {OptOp::LOCAL, 3, cols},
                                      {OptOp::STAGE, 4, 4},
                                      {OptOp::STAGE, 5, 3},
                                      {OptOp::STAGE, 6, 3}});
  };
  for (const auto& [t, cols] : {std::pair{y, int64_t(8)}, std::pair{*x.grad(), int64_t(9)}}) {
    auto items = compute_items(t);
    std::vector<std::string> lists;
    for (const auto& item : items) lists.push_back(to_string(lower_kernel(item, one).applied));
    BOOST_TEST(std::count(lists.begin(), lists.end(), list(cols)) == 1, list(cols));
    Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
    Ran got = run(items, one, [](const ScheduleItem&, size_t) { return std::nullopt; });
    check_same(items, got, plain, "heuristic");
  }
  // the same sum stored with its size-1 axes (N, 1, C, 1, H, W, 1, 1), as the training step's
  // custom-gradient node is: those axes are skipped
  Tensor win = input({2, 32, 4, 18}).pool({3, 3}, {1, 1}, {1, 1}).reshape({2, 1, 1, 32, 2, 16, 3, 3});
  auto kept =
      compute_items((win * input({32, 32, 3, 3}).reshape({1, 1, 32, 32, 1, 1, 3, 3})).sum({3, 6, 7}, true));
  LoweredKernel c = lower_kernel(kept.back(), one);
  const std::vector<Opt> expected{{OptOp::UPCAST, 2, 4}, {OptOp::UPCAST, 4, 2}, {OptOp::UPCAST, 5, 2},
                                  {OptOp::LOCAL, 2, 8},  {OptOp::LOCAL, 5, 8},  {OptOp::STAGE, 8, 4},
                                  {OptOp::STAGE, 9, 3},  {OptOp::STAGE, 10, 3}};
  BOOST_TEST(to_string(c.applied) == to_string(expected));
  Ran plain = run(kept, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(kept, one, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(kept, got, plain, "heuristic " + got.opts.back());
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
// stays 4 wide.
BOOST_AUTO_TEST_CASE(gpu_heuristic_halves_a_lone_tile_of_few_threads) {
  auto tile_of = [](int64_t ci, std::vector<ScheduleItem>* keep) {
    Tensor x = input({2, ci, 10, 10}), w = input({64, ci, 3, 3});
    w.requires_grad_();
    (x.conv2d(w) * input({2, 64, 8, 8})).sum().backward();
    auto items = compute_items(*w.grad());
    std::vector<std::string> upcasts;
    for (const auto& item : items) {
      const LoweredKernel c = lower_kernel(item, gpu());
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
  Ran got = run(items, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
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
  auto few = compute_items(input({4, 512}).sum({1}));
  BOOST_TEST(lower_kernel(few.back(), gpu()).opts.find("GROUP") == std::string::npos);
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

BOOST_AUTO_TEST_CASE(staged_lists_refused_with_reason) {
  auto matmul = compute_items(input({64, 48}).matmul(input({48, 32}))).at(0);
  auto refused = [&](const ScheduleItem& item, LowerOptions o, std::vector<Opt> opts,
                     const std::string& why) {
    o.opts = std::move(opts);
    try {
      (void)lower_kernel(item, o);
      BOOST_ERROR("accepted " << to_string(*o.opts));
    } catch (const OptError& e) {
      BOOST_TEST(std::string(e.what()).find(why) != std::string::npos, e.what());
    }
  };
  refused(matmul, cpu(), {{OptOp::STAGE, 2, 8}}, "no work-group local memory");
  refused(matmul, gpu(), {{OptOp::STAGE, 0, 8}}, "reduce-axis optimization on an output axis");
  refused(matmul, gpu(), {{OptOp::GROUP, 2, 4}, {OptOp::STAGE, 2, 4}}, "does not combine with GROUP");
  refused(matmul, gpu(), {{OptOp::STAGE, 2, 8}, {OptOp::UNROLL, 2, 2}}, "only UPCAST, LOCAL and STAGE");
  refused(matmul, gpu(), {{OptOp::STAGE, 2, 8}, {OptOp::STAGE, 2, 2}}, "one STAGE");
  refused(matmul, gpu(), {{OptOp::STAGE, 2, 5}}, "does not divide");
  LowerOptions tiny = gpu();
  tiny.local_memory_bytes = 64;
  refused(matmul, tiny, {{OptOp::STAGE, 2, 16}}, "bytes of local memory");
  refused(compute_items(input({64, 48}).sum({1})).at(0), gpu(), {{OptOp::STAGE, 1, 8}},
          "not a sum of products");
  Tensor x = input({12, 64});
  int two_reduces = 0;
  for (const auto& item : compute_items((x * x).sum({1}) + x.max({1})))
    if (analyze_kernel(item).reduce_count > 1) {
      refused(item, gpu(), {{OptOp::STAGE, 1, 8}}, "needs exactly one");
      ++two_reduces;
    }
  BOOST_TEST(two_reduces == 1);
}

// Plain (non-TC) staged tiles are double-buffered where two sets fit and one loop runs over tiles
// (issue 13, the f32 conv and matmul): tile 0 is copied before that loop; in it the next tile's
// global loads come before the first read of this tile from local memory, and its stores into the
// other set after the last read: one BARRIER per step (two with one set), a local buffer twice the
// size. A copy whose contiguous global axis is not the tile's innermost (the matmul's A) gathers
// 4 floats per thread into one 16-byte STORE with one 16-byte STORE (gated in a last round that
// the threads do not fill); one whose tile row is contiguous in global memory (the conv's
// weights, stored channel-minor; the matmul's B) loads 16 bytes at once where the buffers are
// aligned, and a conv window's rows (starting at kw) stay scalar. Values vs NOOPT in the interpreter: a conv
// and a matmul, each with tiles that divide evenly and with a size-1 output axis, with work groups looping
// over output tiles too (max_groups 2: each output tile's prologue waits for the previous tile's reads).
BOOST_AUTO_TEST_CASE(plain_staged_tiles_are_double_buffered) {
  struct Shape {
    int64_t local = 0;
    size_t barriers = 0, loop = 0, first_read = 0, last_read = 0, vector_loads = 0, gated = 0, pair_reads = 0;
    std::vector<size_t> global_loads, local_stores;
  };
  auto shape = [](const LoweredKernel& k) {
    const auto ir = sdk::parse_kernel_ir(linearize(k.sink, k.name).ir);
    Shape out;
    for (size_t i = 0; i < ir.instructions.size(); ++i) {
      const auto& ins = ir.instructions[i];
      if (ins.op == TG_OP_DEFINE_LOCAL) out.local = ins.arg0;
      if (ins.op == TG_OP_BARRIER) ++out.barriers;
      if (ins.op == TG_OP_RANGE && !out.loop) out.loop = i; // the loop over tiles
      const bool local =
          (ins.op == TG_OP_LOAD || ins.op == TG_OP_STORE) && ir.instructions[ins.src[0]].is_local();
      if (ins.op == TG_OP_LOAD && local) {
        out.pair_reads += ins.vcount == 2;
        if (!out.first_read) out.first_read = i;
        out.last_read = i;
      }
      if (ins.op == TG_OP_LOAD && !local) {
        out.global_loads.push_back(i);
        out.vector_loads += ins.vcount == 4 && ins.arg0 == 16;
      }
      if (ins.op == TG_OP_STORE && local) {
        out.local_stores.push_back(i);
        const auto& value = ir.instructions[ins.src[1]];
        out.gated += value.vcount == 4 && ins.arg0 == 16 && ins.src.size() == 3;
      }
    }
    return out;
  };
  struct List {
    std::string name;
    std::function<Tensor()> build;
    std::vector<Opt> opts;
    bool vector_copy; // 16-byte copies (a conv's weights)
    bool gated;       // a 16-byte store in a last round the threads do not fill
    bool pairs;       // 2 window columns read at once (a view tile, not a footprint)
  };
  const std::vector<List> lists = {
      {"matmul 48x48x32, 8 tiles of 6",
       [] {
         return input({48, 48}).matmul(input({48, 32}));
       },
       {{OptOp::UPCAST, 1, 4},
        {OptOp::UPCAST, 0, 4},
        {OptOp::LOCAL, 1, 4},
        {OptOp::LOCAL, 0, 3},
        {OptOp::STAGE, 2, 6}},
       false,
       false,
       false},
      {"matmul 1x48x32 (a size-1 axis)",
       [] {
         return input({1, 48}).matmul(input({48, 32}));
       },
       {{OptOp::UPCAST, 1, 4}, {OptOp::LOCAL, 1, 8}, {OptOp::STAGE, 2, 8}},
       false,
       false,
       false},
      {"conv 2x8x10x10 -> 16 3x3, 2 tiles of 4 channels",
       [] {
         return input({2, 8, 10, 10}).conv2d(input({16, 8, 3, 3}));
       },
       {{OptOp::UPCAST, 1, 4},
        {OptOp::UPCAST, 2, 2},
        {OptOp::UPCAST, 3, 2},
        {OptOp::LOCAL, 1, 4},
        {OptOp::LOCAL, 3, 4},
        {OptOp::STAGE, 4, 4},
        {OptOp::STAGE, 5, 3},
        {OptOp::STAGE, 6, 3}},
       true,
       false,
       false},
      {"conv 1x4x6x10 -> 8 3x3 (batch 1), 4 tiles of 1 channel",
       [] {
         return input({1, 4, 6, 10}).conv2d(input({8, 4, 3, 3}));
       },
       {{OptOp::UPCAST, 1, 4},
        {OptOp::LOCAL, 1, 2},
        {OptOp::LOCAL, 3, 8},
        {OptOp::STAGE, 5, 3},
        {OptOp::STAGE, 6, 3}},
       true,
       true,
       false},
  };
  for (const List& l : lists) {
    BOOST_TEST_CONTEXT(l.name << " " << to_string(l.opts)) {
      auto items = compute_items(l.build());
      LowerOptions o = gpu();
      o.buffer_alignment = 16; // contiguous copies may load 16 bytes at once
      o.opts = l.opts;
      const LoweredKernel dbl = lower_kernel(items.back(), o);
      LowerOptions one = o;
      one.local_memory_bytes = uint64_t(shape(dbl).local) * 4 / 2 + 16; // room for one set only
      const LoweredKernel single = lower_kernel(items.back(), one);
      const Shape d = shape(dbl), s = shape(single);
      BOOST_TEST(d.local == 2 * s.local);
      BOOST_TEST(d.barriers == 1u);
      BOOST_TEST(s.barriers == 2u);
      BOOST_TEST(d.local_stores.size() == 2 * s.local_stores.size()); // the prologue's and the next tile's
      size_t ahead_loads = 0, late_stores = 0, prologue_stores = 0;
      for (size_t i : d.global_loads) ahead_loads += i > d.loop && i < d.first_read;
      for (size_t i : d.local_stores) {
        late_stores += i > d.last_read;
        prologue_stores += i < d.loop;
      }
      BOOST_TEST(ahead_loads * 2 == d.global_loads.size());
      BOOST_TEST(late_stores == s.local_stores.size());
      BOOST_TEST(prologue_stores == s.local_stores.size());
      BOOST_TEST((d.vector_loads > 0) == l.vector_copy);
      BOOST_TEST((d.gated > 0) == l.gated);
      BOOST_TEST((d.pair_reads > 0) == l.pairs);
      // the window's footprint rows (10 columns) are no whole 16-byte blocks: its copy stays scalar
      if (l.vector_copy) BOOST_TEST(d.local_stores.size() > d.vector_loads);
      auto choose = [&](const ScheduleItem&, size_t k) {
        return k + 1 == items.size() ? std::optional(l.opts) : std::optional(std::vector<Opt>{});
      };
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      for (uint32_t max_groups : {65535u, 2u})
        check_same(items, run(items, gpu(max_groups), choose), plain,
                   l.name + " max_groups " + std::to_string(max_groups));
      check_same(items, run(items, o, choose), plain, l.name + " aligned");
      check_same(items, run(items, one, choose), plain, l.name + " aligned, one set");
    }
  }
}

// Footprint tiles (lower_stage.cpp: footprint_tile): a window x[.., oh + kh, ow + kw] is staged as
// input rows x columns (4 x (cols + 2) floats per input channel for 2 output rows, a 3x3 window),
// not per (kh, kw, oh, ow); a padded window too (its masks read oh + kh and ow + kw). A stride-2
// window (2 oh + kh) and a matmul keep the view tile. Every list matches NOOPT in the interpreter.
BOOST_AUTO_TEST_CASE(footprint_tiles_match_noopt) {
  const std::vector<Opt> conv_list{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2}, {OptOp::UPCAST, 3, 2},
                                   {OptOp::LOCAL, 1, 16}, {OptOp::LOCAL, 3, 8},  {OptOp::STAGE, 4, 4},
                                   {OptOp::STAGE, 5, 3},  {OptOp::STAGE, 6, 3}};
  // tiles of 4 input channels: weights 64 x 4 x 3 x 3 = 2304 floats, the window 4 x 3 x 3 x 2 x 16
  // = 1152 as a view (main's tile), 4 x (2 + 2) x (16 + 2) = 288 as a footprint; two sets (2 tiles
  // of 4 channels). The stride-2 view's rows (16 columns 2 apart) are padded by 4 floats: 1440.
  const int64_t footprint = 2 * (2304 + 288);
  struct Case {
    std::string name;
    std::function<Tensor()> build;
    std::vector<Opt> opts;
    int64_t local;       // floats of local memory
    size_t vector_loads; // 16-byte global loads with 16-byte aligned buffers (both sets' copies)
  };
  const std::vector<Case> cases = {
      {"conv 2x8x18x18 -> 64 3x3",
       [] {
         return input({2, 8, 18, 18}).conv2d(input({64, 8, 3, 3}));
       },
       conv_list, footprint, 2 * 5},
      // rows of 10 + 2 columns, 16-byte aligned (12 x 12 images): the window's copy is 16 bytes per
      // thread too (48 chunks for 80 threads, the weights' 576 in 8 rounds)
      {"conv 2x8x12x12 -> 64 3x3",
       [] {
         return input({2, 8, 12, 12}).conv2d(input({64, 8, 3, 3}));
       },
       {{OptOp::UPCAST, 1, 4},
        {OptOp::UPCAST, 2, 2},
        {OptOp::UPCAST, 3, 2},
        {OptOp::LOCAL, 1, 16},
        {OptOp::LOCAL, 3, 5},
        {OptOp::STAGE, 4, 4},
        {OptOp::STAGE, 5, 3},
        {OptOp::STAGE, 6, 3}},
       2 * (2304 + 4 * 4 * 12),
       2 * (8 + 1)},
      {"conv 2x8x16x16 -> 64 3x3, padding 1",
       [] {
         return input({2, 8, 16, 16}).conv2d(input({64, 8, 3, 3}), std::nullopt, 1, 1);
       },
       conv_list, footprint, 2 * 5},
      {"conv 2x8x33x33 -> 64 3x3, stride 2",
       [] {
         return input({2, 8, 33, 33}).conv2d(input({64, 8, 3, 3}), std::nullopt, 2);
       },
       conv_list, 2 * (2304 + 1440), 2 * 5},
      // a 16 x 16 tile of outputs, 8 steps: a (16 x 8) and b (8 x 16), a padded by 4 floats
      {"matmul 32x48x32",
       [] {
         return input({32, 48}).matmul(input({48, 32}));
       },
       {{OptOp::LOCAL, 1, 16}, {OptOp::LOCAL, 0, 16}, {OptOp::STAGE, 2, 8}},
       2 * (8 * 20 + 8 * 16),
       0},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name << " " << to_string(c.opts)) {
      auto items = compute_items(c.build());
      LowerOptions o = gpu();
      o.opts = c.opts;
      const LoweredKernel k = lower_kernel(items.back(), o);
      const auto ir = sdk::parse_kernel_ir(linearize(k.sink, k.name).ir);
      int64_t local = 0;
      for (const auto& ins : ir.instructions)
        if (ins.op == TG_OP_DEFINE_LOCAL) local = ins.arg0;
      BOOST_TEST(local == c.local);
      auto choose = [&](const ScheduleItem&, size_t i) {
        return i + 1 == items.size() ? std::optional(c.opts) : std::optional(std::vector<Opt>{});
      };
      Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
      check_same(items, run(items, gpu(), choose), plain, c.name);
      LowerOptions aligned = gpu(); // 16-byte copies of the footprint's rows where they are aligned
      aligned.buffer_alignment = 16;
      check_same(items, run(items, aligned, choose), plain, c.name + " aligned");
      check_same(items, run(items, gpu(2), choose), plain, c.name + " max_groups 2");
      aligned.opts = c.opts;
      const LoweredKernel ka = lower_kernel(items.back(), aligned);
      const auto air = sdk::parse_kernel_ir(linearize(ka.sink, ka.name).ir);
      size_t vector_loads = 0;
      for (const auto& ins : air.instructions)
        vector_loads += ins.op == TG_OP_LOAD && !air.instructions[ins.src[0]].is_local() && ins.vcount == 4;
      BOOST_TEST(vector_loads == c.vector_loads);
    }
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
