// The CPU heuristic's product tile (heuristic_cpu.cpp cpu_product_tile: UPCAST(n,16) UPCAST(m,4) and a
// LOOP over row tiles) on plain and panel-packed matmuls (kernel/tensor/matmul_pack.hpp), its
// convolution tile (cpu_conv_tile), and hand-written lists with ragged loops: each computes what
// the unoptimized kernel computes.
// Kernels run in the SDK's reference interpreter over random inputs (no device).
#include <boost/test/unit_test.hpp>

#include "kernel/codegen/heuristic.hpp"
#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/matmul_pack.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

using namespace tg;

namespace {

Tensor input(Dims shape) {
  UOpRef buffer = make_buffer("CPU", dtypes::float32, dims_prod(shape)); // a label: nothing is opened
  UOpRef view = UOp::make(Ops::RESHAPE, dtypes::float32, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), "CPU");
}

// A CPU-like device: one thread per work group, no local memory, 2 cores.
LowerOptions cpu() {
  LowerOptions o;
  o.compute_units = 2;
  o.vector_bytes = 32;
  return o;
}

using Memory = std::map<const UOp*, std::vector<float>>;

std::vector<ScheduleItem> compute_items(const Tensor& t) {
  std::vector<ScheduleItem> items;
  for (auto& item : t.schedule())
    if (item.ast->src(0)->op() == Ops::STORE) items.push_back(std::move(item));
  return items;
}

// Lowers every kernel (the list from `opts` for the last one, the heuristic's for the others
// when `optimize`) and interprets them over the same random inputs. Returns all buffers and the
// last kernel's applied list.
std::pair<Memory, std::string> run(const std::vector<ScheduleItem>& items, bool optimize,
                                   std::optional<std::vector<Opt>> opts = std::nullopt,
                                   const LowerOptions& device = cpu()) {
  Memory mem;
  std::mt19937 rng(99);
  for (const auto& item : items)
    for (const auto& b : item.buffers)
      if (!mem.count(b.get())) {
        std::vector<float> v(size_t(buffer_arg(b).size()));
        for (auto& x : v) x = std::uniform_real_distribution<float>(-1, 1)(rng);
        mem[b.get()] = std::move(v);
      }
  std::string applied;
  for (size_t k = 0; k < items.size(); ++k) {
    LowerOptions options = device;
    options.optimize = optimize;
    if (k + 1 == items.size()) options.opts = opts;
    LoweredKernel lowered = lower_kernel(items[k], options);
    LinearKernel linear = linearize(lowered.sink, lowered.name);
    auto ir = sdk::parse_kernel_ir(linear.ir);
    std::vector<std::span<std::byte>> spans;
    for (const auto& b : items[k].buffers)
      spans.emplace_back(std::as_writable_bytes(std::span(mem.at(b.get()))));
    sdk::interpret(ir, lowered.global, lowered.local, spans, {});
    applied = to_string(lowered.applied);
  }
  return {std::move(mem), applied};
}

void check_same(const Memory& got, const Memory& want, const std::string& what) {
  for (const auto& [buffer, values] : want) {
    const auto& other = got.at(buffer);
    size_t bad = 0;
    for (size_t i = 0; i < values.size(); ++i)
      if (!(std::fabs(other[i] - values[i]) <= 1e-4f + 1e-4f * std::fabs(values[i])) && bad++ < 3)
        BOOST_ERROR(what << ": element " << i << " got " << other[i] << " want " << values[i]);
    BOOST_TEST(bad == 0u, what << ": " << bad << " elements differ");
  }
}

bool has(const std::string& list, const std::string& opt) { return list.find(opt) != std::string::npos; }

// The input gradient of conv2d(x, w) at stride 1 (its custom gradient: a convolution) when
// `input_gradient`, else the weight gradient.
Tensor conv_gradient(Dims x_shape, Dims w_shape, bool input_gradient) {
  Tensor x = input(x_shape).requires_grad_(), w = input(w_shape).requires_grad_();
  Tensor y = x.conv2d(w);
  (y * input(y.shape())).sum().backward();
  return input_gradient ? *x.grad() : *w.grad();
}

} // namespace

// The heuristic tiles plain and packed products 4x16 and loops over row tiles where enough work
// groups remain; the results equal NOOPT's.
BOOST_AUTO_TEST_CASE(heuristic_product_tile_matches_noopt) {
  struct Case {
    std::string name;
    std::function<Tensor()> build;
    std::string tile, loop; // expected in the last kernel's list ("" = must not appear for loop)
  };
  const std::vector<Case> cases = {
      // 32 row tiles x 4 column tiles: a loop of 4 row tiles leaves 32 work groups
      {"matmul 128x8 @ 8x64",
       [] {
         return input({128, 8}).matmul(input({8, 64}));
       },
       "UPCAST(1,16), UPCAST(0,4)", "LOOP(0,"},
      {"packed 128x8 @ 8x64",
       [] {
         return packed_product(input({128, 8}), input({8, 64}));
       },
       "UPCAST(2,16), UPCAST(0,4)", "LOOP(0,"},
      // batched a; m = 20: 5 row tiles, too few work groups for a loop
      {"packed 3x20x24 @ 24x32",
       [] {
         return packed_product(input({3, 20, 24}), input({24, 32}));
       },
       "UPCAST(3,16), UPCAST(1,4)", ""},
  };
  for (const auto& c : cases) BOOST_TEST_CONTEXT(c.name) {
      auto items = compute_items(c.build());
      auto [plain, none] = run(items, false);
      auto [got, list] = run(items, true);
      BOOST_TEST(has(list, c.tile), list);
      if (c.loop.empty())
        BOOST_TEST(!has(list, "LOOP"), list);
      else
        BOOST_TEST(has(list, c.loop), list);
      check_same(got, plain, c.name + " " + list);
    }
}

// 64-byte vectors (AVX-512): 16 lanes are one register, so the tile takes 8 rows (8 accumulators)
// where m allows, else 4 rows of 32 lanes where n allows and the sum is at least 64 long, else 4
// rows of 16; the results equal NOOPT's.
BOOST_AUTO_TEST_CASE(product_tile_rows_follow_the_vector_width) {
  LowerOptions avx512 = cpu();
  avx512.vector_bytes = 64;
  struct Case {
    std::string name;
    std::function<Tensor()> build;
    std::string tile;
  };
  const std::vector<Case> cases = {
      {"matmul 128x8 @ 8x64",
       [] {
         return input({128, 8}).matmul(input({8, 64}));
       },
       "[UPCAST(1,16), UPCAST(0,8)"},
      {"packed 3x24x24 @ 24x32",
       [] {
         return packed_product(input({3, 24, 24}), input({24, 32}));
       },
       "[UPCAST(3,16), UPCAST(1,8)"},
      {"packed 3x20x24 @ 24x32",
       [] {
         return packed_product(input({3, 20, 24}), input({24, 32}));
       },
       "[UPCAST(3,16), UPCAST(1,4)"}, // m = 20
      {"matmul 20x64 @ 64x32",
       [] {
         return input({20, 64}).matmul(input({64, 32}));
       },
       "[UPCAST(1,32), UPCAST(0,4)"},
      {"matmul 20x32 @ 32x32",
       [] {
         return input({20, 32}).matmul(input({32, 32}));
       },
       "[UPCAST(1,16), UPCAST(0,4)"}, // a short sum
  };
  for (const auto& c : cases) BOOST_TEST_CONTEXT(c.name) {
      auto items = compute_items(c.build());
      auto [plain, none] = run(items, false, std::nullopt, avx512);
      auto [got, list] = run(items, true, std::nullopt, avx512);
      BOOST_TEST(list.rfind(c.tile, 0) == 0u, list);
      check_same(got, plain, c.name + " " + list);
    }
}

// The panel copy (b (k, n) -> (n/16, k, 16)): rows of 16 whose k is too long to loop whole take
// 8 rows per work group as lanes; the copy equals NOOPT's.
BOOST_AUTO_TEST_CASE(panel_copy_takes_8_rows_per_work_group) {
  auto items = compute_items(packed_product(input({8, 512}), input({512, 64})));
  BOOST_TEST_REQUIRE(items.size() == 2u);
  const std::vector<ScheduleItem> copy{items[0]};
  BOOST_TEST(copy[0].shape == (Dims{4, 512, 16}));
  auto [plain, none] = run(copy, false);
  auto [got, list] = run(copy, true);
  BOOST_TEST(list == "[LOOP(2,16), UPCAST(1,8)]");
  check_same(got, plain, "panel copy " + list);
}

// Sizes the tile does not divide: m not a multiple of 4 gets the general lists; a LOOP over row
// tiles that does not divide them runs the last work group's loop short.
BOOST_AUTO_TEST_CASE(ragged_products_match_noopt) {
  auto packed = [](int64_t m) { return packed_product(input({m, 5}), input({5, 48})); };
  struct Case {
    int64_t m;
    std::optional<std::vector<Opt>> opts;
  };
  const std::vector<Case> cases = {
      {42, std::nullopt}, // m % 4 != 0: the heuristic's general choice
      {44, std::vector<Opt>{{OptOp::UPCAST, 2, 16}, {OptOp::UPCAST, 0, 4}, {OptOp::LOOP, 0, 3}}}, // 11 tiles
  };
  for (const auto& c : cases)
    BOOST_TEST_CONTEXT("m " << c.m << " " << (c.opts ? to_string(*c.opts) : "heuristic")) {
      auto items = compute_items(packed(c.m));
      BOOST_TEST_REQUIRE(items.size() == 2u); // the panels and the product; the result is a view
      auto [plain, none] = run(items, false);
      auto [got, list] = run(items, true, c.opts);
      if (!c.opts) BOOST_TEST(!has(list, "UPCAST(0,4)"), list);
      check_same(got, plain, list);
    }
}

// Convolutions (products over several reduce axes) get 16 or 32 output channels times a row of
// outputs, as many rows as the device's vector registers hold (cpu_conv_tile): 32-byte vectors
// (16 registers) and 64-byte ones (32 registers), each work group looping over the rest of its row
// of tiles while 8 groups per core remain; forward passes with stride and padding, and the
// custom gradient's two convolutions. Too few rows for 8 accumulators: the general choice. The
// results equal NOOPT's either way.
BOOST_AUTO_TEST_CASE(conv_tiles_match_noopt) {
  LowerOptions avx512 = cpu();
  avx512.vector_bytes = 64;
  struct Case {
    std::string name;
    std::function<Tensor()> build;
    std::string tile32, tile64; // the last kernel's list ("" = the general choice: not checked)
  };
  // kernel axes: forward and input gradient (N, channels, y, x); weight gradient (co, ci, ky, kx)
  const std::vector<Case> cases = {
      {"forward 2x3x10x10 * 16x3x3x3",
       [] {
         return input({2, 3, 10, 10}).conv2d(input({16, 3, 3, 3}));
       },
       "[UPCAST(1,16), UPCAST(3,4), LOOP(3,2)]", "[UPCAST(1,16), UPCAST(3,8)]"},
      // 6x6 outputs: 3 rows of 2 vectors are too few; 6 rows of one get 2 rows of y too
      {"forward stride 2 padding 1",
       [] {
         return input({1, 4, 11, 11}).conv2d(input({16, 4, 3, 3}), std::nullopt, 2, 1);
       },
       "", "[UPCAST(1,16), UPCAST(3,6), UPCAST(2,2)]"},
      // 5 columns of the window: 32 channels when 16 fill fewer than 8 accumulators
      {"weight gradient 5x5, 32 channels",
       [] {
         return conv_gradient({2, 3, 9, 9}, {32, 3, 5, 5}, false);
       },
       "[UPCAST(0,16), UPCAST(3,5)]", "[UPCAST(0,32), UPCAST(3,5)]"},
      {"input gradient 3x3, 16 channels",
       [] {
         return conv_gradient({1, 16, 9, 9}, {16, 16, 3, 3}, true);
       },
       "", "[UPCAST(1,16), UPCAST(3,9)]"},
      // 128 channels: the weight in 32-channel panels (composite.cpp), the convolution in its own
      // (N, 4, 32, y, x) axes though a bias and ReLU fused after it see (N, 128, y, x); with 16
      // registers a row of 7 does not fit, and the 4 panels take the rows
      {"forward over weight panels, bias and ReLU fused",
       [] {
         Tensor y = input({1, 8, 7, 7}).conv2d(input({128, 8, 3, 3}), std::nullopt, 1, 1);
         return (y + input({1, 128, 1, 1})).relu();
       },
       "[UPCAST(2,16), UPCAST(1,4)]", "[UPCAST(2,32), UPCAST(4,7)]"},
      // a 1x1 convolution over a 7x7 map: one reduce axis, but rows of 7 that the product tile's 4
      // rows do not divide; the convolution tile takes 32 channels x 7 (its panels)
      {"1x1 over a 7x7 map",
       [] {
         return input({1, 16, 7, 7}).conv2d(input({128, 16, 1, 1}));
       },
       "", "[UPCAST(2,32), UPCAST(4,7)]"},
      // 64 channels (two panels), 32 registers: 8 rows of 16 channels, then a second 16 (16
      // accumulators)
      {"forward 64 channels",
       [] {
         return input({1, 16, 6, 8}).conv2d(input({64, 16, 3, 3}), std::nullopt, 1, 1);
       },
       "", "[UPCAST(2,16), UPCAST(4,8), UPCAST(2,2)]"},
      // a short window sum (72) over 16 columns: the columns in lanes, stored as vectors, times 8
      // rows of channels (4 with 32-byte vectors: two registers a row)
      {"forward 64 channels over 16 columns",
       [] {
         return input({1, 8, 6, 16}).conv2d(input({64, 8, 3, 3}), std::nullopt, 1, 1);
       },
       "[UPCAST(4,16), UPCAST(2,4)]", "[UPCAST(4,16), UPCAST(2,8)]"},
      // stride 2 (ResNet-18's stride-2 3x3 layers): 7 columns, whose 15 window inputs per row fit
      // the registers beside 7 accumulators and 3 weight vectors, times two groups of 16 channels
      // (14 accumulators); the 7x7 stem over 3 channels: 4 columns (8 would read 21 inputs per
      // row and spill) times two groups of 16 channels
      {"forward stride 2, 28 columns",
       [] {
         return input({1, 8, 4, 56}).conv2d(input({128, 8, 3, 3}), std::nullopt, 2, 1);
       },
       "", "[UPCAST(2,16), UPCAST(4,7), UPCAST(2,2)]"},
      {"forward stride 2, 7 columns",
       [] {
         return input({1, 8, 4, 14}).conv2d(input({128, 8, 3, 3}), std::nullopt, 2, 1);
       },
       "", "[UPCAST(2,16), UPCAST(4,7), UPCAST(2,2)]"},
      {"forward 7x7 stride 2 over 3 channels",
       [] {
         return input({1, 3, 22, 64}).conv2d(input({64, 3, 7, 7}), std::nullopt, 2, 3);
       },
       "", "[UPCAST(2,16), UPCAST(4,4), UPCAST(2,2), LOOP(4,8)]"},
      // 20 channels: no whole 16-lane vectors
      {"forward 20 channels",
       [] {
         return input({1, 4, 8, 8}).conv2d(input({20, 4, 3, 3}));
       },
       "", ""},
  };
  for (const auto& c : cases)
    for (bool wide : {false, true})
      BOOST_TEST_CONTEXT(c.name << (wide ? ", 64-byte vectors" : ", 32-byte vectors")) {
        const LowerOptions& device = wide ? avx512 : cpu();
        const std::string& tile = wide ? c.tile64 : c.tile32;
        auto items = compute_items(c.build());
        auto [plain, none] = run(items, false, std::nullopt, device);
        auto [got, list] = run(items, true, std::nullopt, device);
        if (!tile.empty()) BOOST_TEST(list == tile);
        check_same(got, plain, c.name + " " + list);
      }
}

// A max pool's backward stores each window's count of maxima in its own kernel: the input gradient
// of the convolution after the pool stays a single reduce (the conv tile; fused with the count, it
// took a second reduce and the general choice). Every kernel of the gradient equals NOOPT's.
BOOST_AUTO_TEST_CASE(pool_count_leaves_the_conv_gradient_one_reduce) {
  LowerOptions avx512 = cpu();
  avx512.vector_bytes = 64;
  Tensor a = input({1, 16, 8, 8}).requires_grad_(), w = input({16, 16, 3, 3});
  Tensor y = a.max_pool2d(2).conv2d(w, std::nullopt, 1, 1);
  (y * input(y.shape())).sum().backward();
  auto items = compute_items(*a.grad());
  int convs = 0;
  for (const auto& item : items) {
    const KernelInfo info = analyze_kernel(item);
    BOOST_TEST(info.reduce_count <= 1, item.str());
    if (info.product && info.axes.size() > info.output_dims + 1) {
      ++convs; // dX of the 3x3 convolution over g padded (6x6 outputs): 16 channels x 6 x 2 rows
      BOOST_TEST(to_string(heuristic_opts(info, avx512)) == "[UPCAST(2,16), UPCAST(5,6), UPCAST(4,2)]");
    }
  }
  BOOST_TEST(convs == 1);
  auto [plain, none] = run(items, false, std::nullopt, avx512);
  auto [got, list] = run(items, true, std::nullopt, avx512);
  check_same(got, plain, "pool then conv, dX");
}

// The packing refuses a b whose columns do not fill 16-wide panels.
BOOST_AUTO_TEST_CASE(packed_product_needs_whole_panels) {
  BOOST_CHECK_THROW(packed_product(input({8, 8}), input({8, 24})), TensorError);
  BOOST_CHECK_THROW(packed_product(input({8, 8}), input({9, 32})), TensorError);
}

// A 3x3 stride-2 max pool over relu(x + bias) (ResNet's stem): the bias is read outside the window,
// so it gives the lanes no reuse, and lanes along the strided columns would gather: 8 channels in
// lanes (the same window bounds for each), each work group looping over a run of outputs. The
// result equals NOOPT's.
BOOST_AUTO_TEST_CASE(pool_loops_over_outputs) {
  Tensor y = (input({1, 16, 20, 20}) + input({1, 16, 1, 1}))
                 .relu()
                 .max_pool(PoolOptions{{3, 3}, {2, 2}, {}, {{1, 1}, {1, 1}}, false});
  auto items = compute_items(y);
  BOOST_TEST_REQUIRE(items.size() == 1u);
  auto [plain, none] = run(items, false);
  auto [got, list] = run(items, true);
  BOOST_TEST(list.rfind("[UPCAST(1,8), LOOP(3,", 0) == 0, list);
  check_same(got, plain, "pool " + list);
}
