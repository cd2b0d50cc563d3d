// The engine (kernel/engine/engine.hpp): per-engine extensions destroyed newest first, the
// realized-value cache's listener (the one interface between realization and autograd), clear()
// releasing the caches while realizes keep working, and the observer's notifications.
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using namespace tg;

namespace {

std::vector<std::string>& destroyed() {
  static std::vector<std::string> order;
  return order;
}
struct First {
  int value = 1;
  ~First() { destroyed().push_back("First"); }
};
struct Second {
  explicit Second(Engine& e) : first(e.extension<First>()) {} // made with its engine
  First& first;
  ~Second() { destroyed().push_back("Second:" + std::to_string(first.value)); }
};

struct CountingListener final : RealizationListener {
  std::vector<std::pair<UOpRef, UOpRef>> reads;
  int releases = 0;
  void on_read(const UOpRef& expr, const UOpRef& view) override { reads.emplace_back(expr, view); }
  void before_release() override { ++releases; }
};

struct CountingObserver final : EngineObserver {
  int realizes = 0, schedules = 0, kernels = 0, copies = 0, lowerings = 0, open_lowerings = 0;
  void begin_realize(const std::vector<UOpRef>&) override { ++realizes; }
  void on_schedule() override { ++schedules; }
  void on_kernel(const ScheduleItem&, const PreparedKernel&, double) override { ++kernels; }
  void on_copy(const ScheduleItem&, double) override { ++copies; }
  void begin_lowering() override {
    ++lowerings;
    ++open_lowerings;
  }
  void end_lowering() override { --open_lowerings; }
};

} // namespace

BOOST_AUTO_TEST_CASE(extensions_are_per_engine_and_destroyed_newest_first) {
  destroyed().clear();
  {
    Engine fresh; // Second's constructor makes the First it uses
    BOOST_TEST(fresh.extension<Second>().first.value == 1);
  }
  BOOST_TEST(destroyed() == (std::vector<std::string>{"Second:1", "First"}),
             boost::test_tools::per_element());
  destroyed().clear();
  {
    Engine a;
    Engine b;
    First& first = a.extension<First>();
    BOOST_TEST(&a.extension<First>() == &first); // one per engine
    BOOST_TEST(&b.extension<First>() != &first);
    first.value = 7;
    Second& second = a.extension<Second>();
    BOOST_TEST(&second.first == &first);
  }
  // b destroyed first (its First), then a: Second before the First it uses
  BOOST_TEST(destroyed() == (std::vector<std::string>{"First", "Second:7", "First"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(realized_cache_tells_its_listener) {
  RealizedCache cache;
  CountingListener listener;
  cache.set_listener(&listener);
  UOpRef buffer = make_buffer("CPU", dtypes::float32, 4);
  UOpRef expr = UOp::make(Ops::CONTIGUOUS, dtypes::float32, {make_buffer("CPU", dtypes::float32, 4)});
  BOOST_TEST(!cache.read(expr, "CPU")); // nothing stored: nothing to tell
  BOOST_TEST(listener.reads.empty());

  cache.insert(expr, buffer, /*owned=*/true);
  BOOST_TEST(cache.holds_intermediates());
  BOOST_TEST(!cache.read(expr, "CPU:1")); // stored on another device
  BOOST_TEST(listener.reads.empty());
  auto view = cache.read(expr, "CPU");
  BOOST_REQUIRE(view);
  BOOST_TEST(*view == buffer);
  BOOST_REQUIRE(listener.reads.size() == 1u);
  BOOST_TEST(listener.reads[0].first == expr);
  BOOST_TEST(listener.reads[0].second == buffer);
  BOOST_TEST(cache.find(expr, "CPU").has_value()); // find alone tells nobody
  BOOST_TEST(listener.reads.size() == 1u);

  cache.release_dead(); // the listener first, then the cache: the entry is alive, so it stays
  BOOST_TEST(listener.releases == 1);
  BOOST_TEST(cache.holds_intermediates());
  listener.reads.clear();
  expr.reset(); // the expression dies: its owned result goes at the next release
  cache.release_dead();
  BOOST_TEST(listener.releases == 2);
  BOOST_TEST(!cache.holds_intermediates());
}

BOOST_AUTO_TEST_CASE(stored_buffer_of_views) {
  UOpRef buffer = make_buffer("CPU", dtypes::float32, 6);
  BOOST_TEST(stored_buffer(buffer) == buffer);
  UOpRef reshaped = UOp::make(Ops::RESHAPE, dtypes::float32, {buffer}, std::vector<int64_t>{2, 3});
  BOOST_TEST(stored_buffer(reshaped) == buffer);
  UOpRef computed = UOp::make(Ops::CONTIGUOUS, dtypes::float32, {reshaped});
  BOOST_TEST(stored_buffer(computed) == nullptr);
}

BOOST_AUTO_TEST_CASE(clear_releases_the_caches_and_realizes_still_work) {
  const std::vector<float> x{1, 2, 3, 4}, y{10, 20, 30, 40};
  auto step = [&] {
    Tensor a = Tensor::from_vector<float>(x, {4}), b = Tensor::from_vector<float>(y, {4});
    return ((a + b) * 2).to_vector<float>();
  };
  const std::vector<float> want{22, 44, 66, 88};
  BOOST_TEST(step() == want, boost::test_tools::per_element());
  BOOST_TEST(step() == want, boost::test_tools::per_element()); // a replay
  if (config().schedule_cache) BOOST_TEST(engine().schedules().stats().entries > 0u);
  engine().clear();
  BOOST_TEST(engine().schedules().stats().entries == 0u);
  BOOST_TEST(step() == want, boost::test_tools::per_element()); // prepared again
}

BOOST_AUTO_TEST_CASE(the_observer_hears_realizes_schedules_kernels_and_lowerings) {
  CountingObserver observer;
  engine().set_observer(&observer);
  struct Detach {
    ~Detach() { engine().set_observer(nullptr); }
  } detach;
  // A computation no earlier case prepared: its kernel is lowered here.
  Tensor a = Tensor::from_vector<float>(std::vector<float>{1, 2, 3}, {3});
  std::vector<float> got = ((a * 3 - 1).relu() * 0.5f).to_vector<float>();
  BOOST_TEST(got == (std::vector<float>{1, 2.5f, 4}), boost::test_tools::per_element());
  BOOST_TEST(observer.realizes == 1);
  BOOST_TEST(observer.schedules == 1);
  BOOST_TEST(observer.kernels == 1);
  BOOST_TEST(observer.copies == 0);
  BOOST_TEST(observer.lowerings == 1);
  BOOST_TEST(observer.open_lowerings == 0);
}
