// STAGE (operand tiles in local memory, lower_stage.cpp) and the GPU heuristic's staged lists: every
// staged list computes what the unoptimized kernel computes (SDK interpreter), the tiles are laid
// out as documented (sizes, double buffering, footprints), and lists that cannot stage are refused.
#include "opt_check.hpp"

using namespace tg;
using namespace tg::opt_check;

namespace {

// The graphs a GPU-style device builds: the placeholder buffers are labelled CPU, where conv2d
// would otherwise read its weight in 32-channel panels (composite.cpp).
struct GpuGraphs {
  const bool was = config().pack;
  GpuGraphs() { set_pack(false); }
  ~GpuGraphs() { set_pack(was); }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(staged, GpuGraphs)

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
// window per tile), reads the tiles from local memory, and matches NOOPT. An even batch puts two
// images into a work group, with 8 threads x 8 channels (4 adjacent, 4 more 32 apart); an odd one
// keeps one image, 16 threads x 4 channels.
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_conv) {
  const std::vector<Opt> pair{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2}, {OptOp::UPCAST, 3, 2},
                              {OptOp::LOCAL, 1, 8},  {OptOp::LOCAL, 3, 8},  {OptOp::LOCAL, 0, 2},
                              {OptOp::UPCAST, 1, 2}, {OptOp::STAGE, 4, 4},  {OptOp::STAGE, 5, 3},
                              {OptOp::STAGE, 6, 3}};
  const std::vector<Opt> one{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2}, {OptOp::UPCAST, 3, 2},
                             {OptOp::LOCAL, 1, 16}, {OptOp::LOCAL, 3, 8},  {OptOp::STAGE, 4, 4},
                             {OptOp::STAGE, 5, 3},  {OptOp::STAGE, 6, 3}};
  for (const auto& [images, expected] : {std::pair{int64_t(2), pair}, std::pair{int64_t(3), one}}) {
    BOOST_TEST_CONTEXT(images << " images") {
      auto conv = compute_items(input({images, 8, 18, 18}).conv2d(input({64, 8, 3, 3})));
      LoweredKernel c = lower_kernel(conv.back(), gpu());
      BOOST_TEST(to_string(c.applied) == to_string(expected));
      BOOST_TEST((c.local == std::array<uint32_t, 3>{images == 2 ? 8u : 16u, 8, images == 2 ? 2u : 1u}));
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
  }
}

// Rows of more than 32 columns (ResNet's 56) are split among work groups: 40 columns as 2 groups
// of 10 threads x 2 columns, each group's tile the footprint of its own 20 columns (22 with the
// window), the edge groups reading the padding.
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_conv_with_long_rows_in_column_groups) {
  const std::vector<Opt> expected{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2}, {OptOp::UPCAST, 3, 2},
                                  {OptOp::LOCAL, 1, 8},  {OptOp::LOCAL, 3, 10}, {OptOp::LOCAL, 0, 2},
                                  {OptOp::UPCAST, 1, 2}, {OptOp::STAGE, 4, 4},  {OptOp::STAGE, 5, 3},
                                  {OptOp::STAGE, 6, 3}};
  auto conv = compute_items(input({2, 8, 4, 40}).conv2d(input({64, 8, 3, 3}), std::nullopt, 1, 1));
  LoweredKernel c = lower_kernel(conv.back(), gpu());
  BOOST_TEST(to_string(c.applied) == to_string(expected));
  BOOST_TEST((c.local == std::array<uint32_t, 3>{8, 10, 2}));
  Ran plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(conv, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(conv, got, plain, "heuristic " + got.opts.back());
}

// Plain staged tiles whose two sets need more than local_memory_bytes are double-buffered where
// they fit the device's opt-in maximum (CUDA's dynamic shared memory past 48 KiB), single-buffered
// otherwise: a conv's list with 8 input channels per tile (two sets of 22.5 KiB; gpu() has 32 KiB).
// The heuristic still plans with local_memory_bytes (4 channels: 8 measured no faster on an H200,
// heuristic.cpp). Every list against NOOPT in the interpreter.
BOOST_AUTO_TEST_CASE(plain_staged_tiles_double_buffered_past_local_memory_bytes) {
  auto list = [](int64_t step) {
    return std::vector<Opt>{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2},   {OptOp::UPCAST, 3, 2},
                            {OptOp::LOCAL, 1, 8},  {OptOp::LOCAL, 3, 8},    {OptOp::LOCAL, 0, 2},
                            {OptOp::UPCAST, 1, 2}, {OptOp::STAGE, 4, step}, {OptOp::STAGE, 5, 3},
                            {OptOp::STAGE, 6, 3}};
  };
  auto conv = compute_items(input({2, 16, 18, 18}).conv2d(input({64, 16, 3, 3})));
  // one set of 8 channels: both images' windows 2 x 8 x 4 x 18 floats, the weights 8 x 9 x 64
  const int64_t set = 2 * 8 * 4 * 18 + 8 * 9 * 64;
  LowerOptions opt_in = gpu();
  opt_in.max_local_memory_bytes = 232448;
  BOOST_TEST(to_string(lower_kernel(conv.back(), opt_in).applied) == to_string(list(4)));
  Ran plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  for (const LowerOptions& base : {gpu(), opt_in}) {
    BOOST_TEST_CONTEXT("max_local_memory_bytes " << base.max_local_memory_bytes) {
      LowerOptions o = base;
      o.opts = list(8);
      LoweredKernel k = lower_kernel(conv.back(), o);
      const auto ir = sdk::parse_kernel_ir(linearize(k.sink, k.name).ir);
      int64_t local = 0;
      size_t barriers = 0;
      for (const auto& ins : ir.instructions) {
        if (ins.op == TG_OP_DEFINE_LOCAL) local = ins.arg0;
        barriers += ins.op == TG_OP_BARRIER;
      }
      const bool dbl = base.max_local_memory_bytes > 0;
      BOOST_TEST(local == (dbl ? 2 : 1) * set);
      BOOST_TEST(barriers == (dbl ? 1u : 2u));
      if (dbl) BOOST_TEST(uint64_t(local) * 4 > o.local_memory_bytes);
      auto choose = [&](const ScheduleItem&, size_t i) {
        return i + 1 == conv.size() ? std::optional(list(8)) : std::optional(std::vector<Opt>{});
      };
      check_same(conv, run(conv, base, choose), plain, to_string(list(8)));
    }
  }
}

// A device that copies 16 bytes without registers (async_local_copies: CUDA's cp.async): the
// double-buffered conv's 16-byte copies of the next tile lead each step (its stores right after the
// step's barrier, before the step's loops) instead of trailing it; the same results as NOOPT in
// the interpreter, whose barriers order the sets as the GPU's do. Without the attribute the
// stores trail the steps.
BOOST_AUTO_TEST_CASE(plain_staged_copies_lead_with_async_local_copies) {
  const std::vector<Opt> list{{OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 2, 2}, {OptOp::UPCAST, 3, 2},
                              {OptOp::LOCAL, 1, 8},  {OptOp::LOCAL, 3, 8},  {OptOp::LOCAL, 0, 2},
                              {OptOp::UPCAST, 1, 2}, {OptOp::STAGE, 4, 4},  {OptOp::STAGE, 5, 3},
                              {OptOp::STAGE, 6, 3}};
  auto conv = compute_items(input({2, 16, 18, 18}).conv2d(input({64, 16, 3, 3})));
  Ran plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  auto choose = [&](const ScheduleItem&, size_t i) {
    return i + 1 == conv.size() ? std::optional(list) : std::optional(std::vector<Opt>{});
  };
  for (bool async : {false, true}) {
    BOOST_TEST_CONTEXT("async_local_copies " << async) {
      LowerOptions o = gpu();
      o.buffer_alignment = 16; // the 16-byte copies (plain_vector_copy)
      o.async_local_copies = async;
      o.opts = list;
      LoweredKernel k = lower_kernel(conv.back(), o);
      const auto ir = sdk::parse_kernel_ir(linearize(k.sink, k.name).ir);
      // 16-byte local stores between a barrier inside the tile loop and the next loop: leading copies
      int depth = 0, leading = 0, barriers = 0;
      bool after_barrier = false;
      for (const auto& ins : ir.instructions) {
        if (ins.op == TG_OP_RANGE) {
          ++depth;
          after_barrier = false;
        }
        depth -= ins.op == TG_OP_ENDRANGE;
        if (ins.op == TG_OP_BARRIER && depth > 0) {
          ++barriers;
          after_barrier = true;
        }
        if (ins.op == TG_OP_STORE && after_barrier && ir.instructions[ins.src[0]].is_local() &&
            ir.instructions[ins.src[1]].vcount == 4)
          ++leading;
      }
      BOOST_TEST(barriers == 1); // double-buffered: one barrier per step
      if (async)
        BOOST_TEST(leading > 0);
      else
        BOOST_TEST(leading == 0);
      LowerOptions base = gpu();
      base.buffer_alignment = 16;
      base.async_local_copies = async;
      check_same(conv, run(conv, base, choose), plain, to_string(list));
    }
  }
}

// The training step's convolutions: 32 output channels, forward and input gradient (a full
// convolution of the padded output gradient), staged with 8 threads x 4 channels and, the batch
// being even, two images per work group, against NOOPT. Two output rows per image (one work group
// for both: a one-unit device) keep the interpreter quick.
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
                                      {OptOp::LOCAL, 0, 2},
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
                                  {OptOp::LOCAL, 2, 8},  {OptOp::LOCAL, 5, 8},  {OptOp::LOCAL, 0, 2},
                                  {OptOp::STAGE, 8, 4},  {OptOp::STAGE, 9, 3},  {OptOp::STAGE, 10, 3}};
  BOOST_TEST(to_string(c.applied) == to_string(expected));
  Ran plain = run(kept, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(kept, one, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(kept, got, plain, "heuristic " + got.opts.back());
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
  // past local_memory_bytes but within the device's opt-in maximum (CUDA's dynamic shared memory,
  // the attribute max_local_memory_bytes): a named STAGE is valid; beyond it, refused
  LowerOptions opt_in = tiny;
  opt_in.max_local_memory_bytes = 1 << 20;
  {
    LowerOptions o = opt_in;
    o.opts = std::vector<Opt>{{OptOp::STAGE, 2, 16}};
    BOOST_CHECK_NO_THROW((void)lower_kernel(matmul, o));
  }
  opt_in.max_local_memory_bytes = 96;
  refused(matmul, opt_in, {{OptOp::STAGE, 2, 16}}, "the device has 96");
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
// (the f32 conv and matmul): tile 0 is copied before that loop; in it the next tile's
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
  // = 1152 as a view tile, 4 x (2 + 2) x (16 + 2) = 288 as a footprint; two sets (2 tiles
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

// A convolution's weight gradient (Tensor::conv2d's backward: 32 output channels x 8 input channels
// x 3 x 3, a sum over batch x rows x columns of dY (channel-minor) times the window of X): the
// heuristic stages it (staged_weight_gradient_opts): 32 channels x 8 input channels x the window
// per work group, dY's rows (32 x 4 x 8) and X's footprint (8 channels x (4 + 2) x (8 + 2) floats)
// as the tiles, double-buffered (one loop over tiles, the batch); against NOOPT in the interpreter.
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_a_weight_gradient) {
  LowerOptions one = gpu();
  one.compute_units = 1;
  Tensor x = input({2, 8, 6, 10}), w = input({32, 8, 3, 3});
  w.requires_grad_();
  (x.conv2d(w) * input({2, 32, 4, 8})).sum().backward();
  auto items = compute_items(*w.grad());
  int staged = 0;
  for (const auto& item : items) {
    const LoweredKernel c = lower_kernel(item, one);
    if (c.opts.find("STAGE") == std::string::npos) continue;
    ++staged;
    const KernelInfo info = analyze_kernel(item);
    const int o = int(info.output_dims); // co, ci, kh, kw, then batch, rows, columns
    BOOST_TEST_REQUIRE(info.axes.size() == size_t(o) + 3);
    const std::vector<Opt> expected{{OptOp::UPCAST, o - 4, 4}, {OptOp::UPCAST, o - 3, 2},
                                    {OptOp::UPCAST, o - 1, 3}, {OptOp::LOCAL, o - 4, 8},
                                    {OptOp::LOCAL, o - 2, 3},  {OptOp::LOCAL, o - 3, 4},
                                    {OptOp::STAGE, o + 1, 4},  {OptOp::STAGE, o + 2, 8}};
    BOOST_TEST(to_string(c.applied) == to_string(expected));
    const auto ir = sdk::parse_kernel_ir(linearize(c.sink, c.name).ir);
    int64_t local = 0;
    for (const auto& ins : ir.instructions)
      if (ins.op == TG_OP_DEFINE_LOCAL) local = ins.arg0;
    BOOST_TEST(local == 2 * (32 * 4 * 8 + 8 * 6 * 10)); // footprint of X, two sets
  }
  BOOST_TEST(staged == 1);
  Ran plain = run(items, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(items, one, [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(items, got, plain, "heuristic");
  LowerOptions aligned = one;
  aligned.buffer_alignment = 16;
  check_same(items, run(items, aligned, [](const ScheduleItem&, size_t) { return std::nullopt; }), plain,
             "heuristic, 16-byte aligned buffers");
}

// A strided convolution over few input channels (ResNet's stem, small): the GPU's general choice
// tiles 4x4 output pixels per thread, along which only the input varies, and 2 output channels,
// so each window value loaded serves both. Equal to NOOPT.
BOOST_AUTO_TEST_CASE(gpu_heuristic_tiles_a_stem_convolution_over_two_channels) {
  auto conv = compute_items(input({1, 3, 64, 64}).conv2d(input({64, 3, 7, 7}), std::nullopt, 2, 3));
  LoweredKernel c = lower_kernel(conv.back(), gpu());
  const std::string list = to_string(c.applied);
  BOOST_TEST(list.find("[UPCAST(3,4), UPCAST(2,4),") == 0, list);
  BOOST_TEST(list.find("UPCAST(1,2)]") != std::string::npos, list);
  Ran plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(conv, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(conv, got, plain, "heuristic " + got.opts.back());
}

// A stride-1 convolution whose work group holds the whole 7x7 output map: 32 input channels at a
// time staged in local memory (the group's channels and images share each channel's window).
// Equal to NOOPT; TG_STAGE=0 leaves it unstaged, and so does a 14x14 map (slower staged).
BOOST_AUTO_TEST_CASE(gpu_heuristic_stages_input_channels_of_a_7x7_map) {
  auto conv = compute_items(input({8, 64, 7, 7}).conv2d(input({64, 64, 3, 3}), std::nullopt, 1, 1));
  LoweredKernel c = lower_kernel(conv.back(), gpu());
  BOOST_TEST(to_string(c.applied) == "[UPCAST(1,4), LOCAL(3,7), LOCAL(2,7), LOCAL(1,4), STAGE(4,32)]");
  Ran plain = run(conv, cpu(), [](const ScheduleItem&, size_t) { return std::vector<Opt>{}; });
  Ran got = run(conv, gpu(), [](const ScheduleItem&, size_t) { return std::nullopt; });
  check_same(conv, got, plain, "heuristic " + got.opts.back());
  LowerOptions off = gpu();
  off.staging = false;
  BOOST_TEST(to_string(lower_kernel(conv.back(), off).applied).find("STAGE") == std::string::npos);
  auto wider = compute_items(input({8, 64, 14, 14}).conv2d(input({64, 64, 3, 3}), std::nullopt, 1, 1));
  const std::string list = to_string(lower_kernel(wider.back(), gpu()).applied);
  BOOST_TEST(list.find("LOCAL(3,14), LOCAL(2,14)") != std::string::npos, list);
  BOOST_TEST(list.find("STAGE") == std::string::npos, list);
}

BOOST_AUTO_TEST_SUITE_END()
