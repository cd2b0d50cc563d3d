// The CPU heuristic's product tile (heuristic.cpp cpu_product_tile: UPCAST(n,16) UPCAST(m,4) and a
// LOOP over row tiles) on plain and panel-packed matmuls (kernel/tensor/matmul_pack.hpp), and
// hand-written lists with ragged loops: each computes what the unoptimized kernel computes.
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
                                   std::optional<std::vector<Opt>> opts = std::nullopt) {
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
    LowerOptions options = cpu();
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

// The packing refuses a b whose columns do not fill 16-wide panels.
BOOST_AUTO_TEST_CASE(packed_product_needs_whole_panels) {
  BOOST_CHECK_THROW(packed_product(input({8, 8}), input({8, 24})), TensorError);
  BOOST_CHECK_THROW(packed_product(input({8, 8}), input({9, 32})), TensorError);
}
