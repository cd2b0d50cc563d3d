#include <boost/test/unit_test.hpp>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "kernel/ir/uop.hpp"

using namespace tg;

BOOST_AUTO_TEST_SUITE(uop)

BOOST_AUTO_TEST_CASE(interning_gives_same_pointer) {
  auto x = UOp::variable("x", 0, 10);
  auto a = x * 4 + 3;
  auto b = x * 4 + 3;
  BOOST_TEST(a.get() == b.get());
  BOOST_TEST((x * 4 + 2).get() != a.get());
  BOOST_TEST(UOp::constant(dtypes::float32, 1.0).get() == UOp::constant(dtypes::float32, 1.0).get());
  BOOST_TEST(UOp::constant(dtypes::float32, 1.0).get() != UOp::constant(dtypes::float64, 1.0).get());
  BOOST_TEST(UOp::constant(dtypes::int32, std::int64_t{1}).get() !=
             UOp::constant(dtypes::float32, 1.0).get());
  auto nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_TEST(UOp::constant(dtypes::float32, nan).get() == UOp::constant(dtypes::float32, nan).get());
  // constants are stored normalized to their dtype
  BOOST_TEST(UOp::constant(dtypes::uint8, std::int64_t{300})->arg_int() == 44);
  BOOST_CHECK_THROW(UOp::make(Ops::ADD, dtypes::int32, {x}), UOpError);
}

BOOST_AUTO_TEST_CASE(interning_across_threads) {
  constexpr int kThreads = 8, kIters = 2000;
  std::vector<std::vector<const UOp*>> seen(kThreads);
  std::vector<UOpRef> keep_alive;
  auto x = UOp::variable("tx", 0, 100);
  std::vector<std::thread> threads;
  std::vector<std::vector<UOpRef>> holders(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        auto u = (x + i) * (i % 7 + 1);
        holders[static_cast<std::size_t>(t)].push_back(u);
        seen[static_cast<std::size_t>(t)].push_back(u.get());
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) BOOST_TEST(seen[static_cast<std::size_t>(t)] == seen[0]);
}

BOOST_AUTO_TEST_CASE(churn_across_threads_is_safe) {
  // Nodes built and dropped concurrently: lookups race with destruction of equal nodes.
  std::vector<std::thread> threads;
  std::atomic<int> bad{0}; // Boost.Test assertions are not thread-safe: count, check after
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&bad] {
      auto y = UOp::variable("churn", 0, 5);
      for (int i = 0; i < 3000; ++i) {
        auto u = (y + i % 13) * 3;
        if (u->src(0)->src(0).get() != y.get()) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  BOOST_TEST(bad.load() == 0);
}

// The intern table's shards are open-addressing tables (uop.cpp): erased entries leave tombstones
// that lookups must probe past, and the tables grow and rehash while nodes live. Every held node
// must come back as itself after its neighbours died, through several rounds of growth and churn.
BOOST_AUTO_TEST_CASE(interning_survives_growth_and_erasure) {
  const std::size_t before = UOp::live_count();
  auto v = UOp::variable("grow", 0, 1 << 20);
  constexpr int kNodes = 40000;
  std::vector<UOpRef> held(kNodes);
  std::vector<const UOp*> first(kNodes);
  for (int i = 0; i < kNodes; ++i) {
    held[size_t(i)] = v * (i + 2);
    first[size_t(i)] = held[size_t(i)].get();
  }
  int moved = 0, duplicated = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = round % 2; i < kNodes; i += 2) held[size_t(i)].reset(); // tombstones between live entries
    for (int i = 0; i < 5000; ++i) (void)(v * (-i - 1));                 // churn: made and freed at once
    for (int i = 0; i < kNodes; ++i) {
      UOpRef again = v * (i + 2);
      if (held[size_t(i)] && again.get() != first[size_t(i)]) ++moved; // a live node must be found
      if (held[size_t(i)] && again != held[size_t(i)]) ++duplicated;
      held[size_t(i)] = again;
      first[size_t(i)] = again.get();
    }
  }
  BOOST_TEST(moved == 0);
  BOOST_TEST(duplicated == 0);
  // each (v * c) is two nodes (the constant and the product), plus v: nothing else is left
  BOOST_TEST(UOp::live_count() <= before + 2 * std::size_t(kNodes) + 1 + 4);
  held.clear();
  BOOST_TEST(UOp::live_count() <= before + 2);
}

BOOST_AUTO_TEST_CASE(unreferenced_nodes_are_freed) {
  std::size_t before = UOp::live_count();
  {
    auto v = UOp::variable("free_me", 0, 3);
    auto e = v;
    for (int i = 0; i < 100000; ++i) e = e + 1; // a long chain: freeing must not recurse
    BOOST_TEST(UOp::live_count() >= before + 100000);
    std::weak_ptr<const UOp> w = e;
    e.reset();
    BOOST_TEST(w.expired());
  }
  BOOST_TEST(UOp::live_count() <= before + 1); // the constant 1 may be shared with others
}

BOOST_AUTO_TEST_CASE(printing_shares_subtrees) {
  auto x = UOp::variable("x", 0, 10);
  auto s = x + 3;
  auto e = s * s;
  std::string p = e->str();
  BOOST_TEST(p.find("UOp(Ops.MUL, dtypes.int, arg=None, src=(") == 0);
  BOOST_TEST(p.find("x1:=UOp(Ops.ADD") != std::string::npos);
  BOOST_TEST(p.find(" x1,") != std::string::npos);
  BOOST_TEST(p.find("arg=('x', 0, 10)") != std::string::npos);
  BOOST_TEST(e->render() == "((x+3)*(x+3))");
  BOOST_TEST(UOp::constant(dtypes::float32, 2.0)->str() == "UOp(Ops.CONST, dtypes.float, arg=2.0, src=())");
  BOOST_TEST(UOp::constant(dtypes::bool_, true)->str() == "UOp(Ops.CONST, dtypes.bool, arg=True, src=())");
}

// A DAG past toposort's small array (its visited set then grows several times): every node once,
// each after its sources, against a host-side count of the distinct nodes built.
BOOST_AUTO_TEST_CASE(toposort_of_a_large_shared_graph) {
  auto v = UOp::variable("wide", 0, 1000);
  std::vector<UOpRef> level{v};
  std::set<const UOp*> built{v.get()};
  for (int i = 1; i < 3000; ++i) { // each node adds two earlier ones: many shared sources
    const UOpRef& a = level[size_t(i) / 2];
    const UOpRef& b = level[size_t(i) - 1];
    UOpRef c = UOp::constant(dtypes::index, std::int64_t{i});
    level.push_back((a + b) * c);
    for (const UOpRef& u : {level.back(), level.back()->src(0), c}) built.insert(u.get());
  }
  std::vector<UOpRef> order = toposort(level.back());
  std::map<const UOp*, size_t> at;
  for (size_t i = 0; i < order.size(); ++i) BOOST_TEST_REQUIRE(at.emplace(order[i].get(), i).second);
  BOOST_TEST(order.size() == built.size());
  BOOST_TEST(order.back().get() == level.back().get());
  int misplaced = 0;
  for (const auto& u : order)
    for (const auto& s : u->src()) misplaced += !at.count(s.get()) || at.at(s.get()) >= at.at(u.get());
  BOOST_TEST(misplaced == 0);
}

// toposort's visited set past 32 nodes is the thread's, kept between walks and told apart by a
// stamp per walk (uop.cpp): a node an earlier walk visited must still be visited by the next one.
// Walks of overlapping large graphs, small ones between them, each against a plain reachability.
BOOST_AUTO_TEST_CASE(toposort_walks_in_turn_see_every_node) {
  auto reachable = [](const UOpRef& root) {
    std::set<const UOp*> seen{root.get()};
    std::vector<const UOp*> stack{root.get()};
    while (!stack.empty()) {
      const UOp* u = stack.back();
      stack.pop_back();
      for (const auto& s : u->src())
        if (seen.insert(s.get()).second) stack.push_back(s.get());
    }
    return seen;
  };
  auto v = UOp::variable("turns", 0, 1000);
  std::vector<UOpRef> chain{v};
  for (int i = 1; i < 1500; ++i) chain.push_back((chain[size_t(i) - 1] + chain[size_t(i) / 3]) * (i + 7));
  std::vector<UOpRef> roots{chain[700], chain[10],      chain.back(), chain[699] + chain[1400],
                            v * 3,      chain[1499] * 2};
  int wrong = 0;
  for (int round = 0; round < 2; ++round)
    for (const UOpRef& root : roots) {
      std::vector<UOpRef> order = toposort(root);
      std::set<const UOp*> got;
      for (const auto& u : order) wrong += !got.insert(u.get()).second; // no node twice
      wrong += got != reachable(root);
      wrong += order.back() != root;
    }
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(toposort_and_exports) {
  auto x = UOp::variable("x", 0, 10);
  auto s = x + 3;
  auto e = s * s;
  auto order = toposort(e);
  BOOST_TEST(order.size() == 4u);
  BOOST_TEST(order.back().get() == e.get());
  for (std::size_t i = 0; i < order.size(); ++i)
    for (const auto& src : order[i]->src()) {
      auto pos = std::find(order.begin(), order.end(), src) - order.begin();
      BOOST_TEST(static_cast<std::size_t>(pos) < i);
    }
  std::string dot = to_dot(e);
  BOOST_TEST(dot.find("digraph") == 0);
  BOOST_TEST(dot.find("-> n3") != std::string::npos);
  std::string json = to_json(e);
  BOOST_TEST(json.find("\"op\": \"MUL\"") != std::string::npos);
  BOOST_TEST(variables(e).size() == 1u);
}

BOOST_AUTO_TEST_CASE(range_analysis) {
  auto x = UOp::variable("x", 2, 10);
  auto y = UOp::variable("y", -3, 4);
  BOOST_TEST((x * y)->vmin() == -30);
  BOOST_TEST((x * y)->vmax() == 40);
  BOOST_TEST((x / 3)->vmax() == 3);
  BOOST_TEST((y % 3)->vmin() == -2);
  BOOST_TEST((x % 4)->vmax() == 3);
  BOOST_TEST(lt(x, UOp::constant(dtypes::int32, std::int64_t{11}))->vmin() == 1);
  auto r = UOp::range(16, 0);
  BOOST_TEST(r->vmin() == 0);
  BOOST_TEST(r->vmax() == 15);
  // wrapping makes an overflowing range the full range of the dtype
  auto big = UOp::variable("big", 0, 2000000000);
  BOOST_TEST((big * 4)->vmin() == dtypes::int32.int_min());
}

BOOST_AUTO_TEST_SUITE_END()
