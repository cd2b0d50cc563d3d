// Core IR benchmarks: interning rate, symbolic rewrite throughput, ShapeTracker index building.
#include <benchmark/benchmark.h>

#include <random>

#include "kernel/ir/symbolic.hpp"
#include "kernel/shape/shapetracker.hpp"

using namespace tg;

namespace {

// Builds `n` fresh nodes (a chain of distinct adds) and drops them: measures make() + free.
void BM_InternNew(benchmark::State& state) {
  auto x = UOp::variable("x", 0, 100);
  const auto n = state.range(0);
  for (auto _ : state) {
    UOpRef e = x;
    for (std::int64_t i = 0; i < n; ++i) e = e + x;
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations() * n * 2); // each step interns a const and an ADD
}
BENCHMARK(BM_InternNew)->Arg(100000);

// Looks up nodes that already exist: the hash-consing hit path.
void BM_InternHit(benchmark::State& state) {
  auto x = UOp::variable("x", 0, 100);
  std::vector<UOpRef> keep;
  for (int i = 0; i < 1000; ++i) keep.push_back(x * i);
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) benchmark::DoNotOptimize(x * i);
  }
  state.SetItemsProcessed(state.iterations() * 2000);
}
BENCHMARK(BM_InternHit);

// A random index-arithmetic DAG of about `n` nodes over a few bounded variables.
UOpRef random_graph(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::vector<UOpRef> pool{UOp::variable("a", 0, 15), UOp::variable("b", 0, 31), UOp::variable("c", 0, 7),
                           UOp::range(64, 0), UOp::range(16, 1)};
  while (static_cast<std::int64_t>(pool.size()) < n) {
    auto& l = pool[static_cast<std::size_t>(
        pick(std::max<std::int64_t>(0, static_cast<std::int64_t>(pool.size()) - 64),
             static_cast<std::int64_t>(pool.size()) - 1))];
    auto& r = pool[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(pool.size()) - 1))];
    switch (pick(0, 6)) {
    case 0:
      pool.push_back(l + r);
      break;
    case 1:
      pool.push_back(l * pick(1, 8) + pick(0, 7));
      break;
    case 2:
      pool.push_back((l * 4 + r % 4) / 4);
      break;
    case 3:
      pool.push_back(l % pick(1, 16));
      break;
    case 4:
      pool.push_back(maximum(l, r) + 0);
      break;
    case 5:
      pool.push_back((l + 3) + 4);
      break;
    default:
      pool.push_back(where(lt(l, r), l, r * 1));
      break;
    }
  }
  std::vector<UOpRef> roots(pool.end() - 256, pool.end());
  return UOp::sink(std::move(roots));
}

void BM_SymbolicRewrite(benchmark::State& state) {
  auto g = random_graph(state.range(0), 42);
  auto nodes = static_cast<std::int64_t>(toposort(g).size());
  std::size_t out_nodes = 0;
  for (auto _ : state) {
    auto s = simplify(g);
    out_nodes = toposort(s).size();
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * nodes);
  state.counters["graph_nodes"] = static_cast<double>(nodes);
  state.counters["simplified_nodes"] = static_cast<double>(out_nodes);
}
BENCHMARK(BM_SymbolicRewrite)->Arg(100000)->Unit(benchmark::kMillisecond);

Shape S(std::initializer_list<std::int64_t> d) {
  Shape s;
  for (auto x : d) s.emplace_back(x);
  return s;
}

void BM_ShapeTrackerToIndex(benchmark::State& state) {
  std::vector<ShapeTracker> sts{
      ShapeTracker::from_shape(S({64, 128})),
      ShapeTracker::from_shape(S({8, 16, 32})).permute({2, 0, 1}).reshape(S({32, 128})),
      ShapeTracker::from_shape(S({32, 32}))
          .pad({{1, 1}, {2, 2}})
          .shrink({{0, 32}, {1, 33}})
          .flip({true, false}),
      ShapeTracker::from_shape(S({16, 24})).permute({1, 0}).reshape(S({384})).reshape(S({8, 48})),
      ShapeTracker::from_shape(S({1, 64})).expand(S({32, 64})).reshape(S({32, 8, 8})).permute({2, 1, 0}),
  };
  for (auto _ : state)
    for (const auto& st : sts) benchmark::DoNotOptimize(st.to_index());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(sts.size()));
}
BENCHMARK(BM_ShapeTrackerToIndex);

void BM_ShapeTrackerMovement(benchmark::State& state) {
  auto base = ShapeTracker::from_shape(S({8, 16, 32}));
  for (auto _ : state) {
    auto st = base.permute({2, 0, 1}).reshape(S({32, 128})).pad({{1, 1}, {0, 0}}).shrink({{1, 33}, {0, 128}});
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations() * 4);
}
BENCHMARK(BM_ShapeTrackerMovement);

} // namespace

BENCHMARK_MAIN();
