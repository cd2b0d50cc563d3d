// Deep lazy graphs: elementwise chains of 12,000 to 100,000 ops (plain, mixed, through movement
// ops) and gradient chains of 20,000 and 100,000 steps realize on the CPU plugin and match their
// closed forms. Every walk over such a graph must be iterative (or bounded by the scheduler's
// kernel depth), so each case runs on a thread with the main thread's usual 8 MiB stack: the
// result does not depend on the shell's `ulimit -s`.
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/gradient_cache.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <pthread.h>

#include <cmath>
#include <exception>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using tg::Tensor;

// The main thread's usual 8 MiB. Under AddressSanitizer every frame carries redzones (ASan's
// documentation: about 3x the stack), so that build gets 4x the stack for the same graph depth.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kStack = std::size_t{32} << 20;
#else
constexpr std::size_t kStack = std::size_t{8} << 20;
#endif

// Runs fn on a thread with a stack of kStack bytes; rethrows what it threw.
void on_stack(const std::function<void()>& fn) {
  struct Job {
    const std::function<void()>* fn;
    std::exception_ptr error;
  } job{&fn, nullptr};
  pthread_attr_t attr;
  BOOST_TEST_REQUIRE(pthread_attr_init(&attr) == 0);
  BOOST_TEST_REQUIRE(pthread_attr_setstacksize(&attr, kStack) == 0);
  pthread_t thread;
  auto body = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    try {
      (*j->fn)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  BOOST_TEST_REQUIRE(pthread_create(&thread, &attr, body, &job) == 0);
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

// The most nodes on a path from a leaf to the root of a kernel's stored value.
int depth_of(const tg::ScheduleItem& item) {
  std::unordered_map<const tg::UOp*, int> depth;
  int deepest = 0;
  for (const auto& u : tg::toposort(item.ast->src(0)->src(1))) {
    int d = 0;
    for (const auto& s : u->src()) d = std::max(d, depth.at(s.get()));
    depth[u.get()] = d + 1;
    deepest = std::max(deepest, d + 1);
  }
  return deepest;
}

// SINK(STORE(out, ((x + 1) * 0.5 + 1) * 0.5 ...)) with `ops` ops over a 4-float input, built by
// hand (no rule folds such a chain).
tg::ScheduleItem chain_kernel(int ops) {
  using namespace tg;
  UOpRef out = make_buffer("CPU", dtypes::float32, 4), in = make_buffer("CPU", dtypes::float32, 4);
  UOpRef v = in;
  for (int i = 0; i < ops; ++i) v = i % 2 ? v * 0.5 : v + 1.0;
  ScheduleItem item;
  item.ast = UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {out, v})});
  item.buffers = {out, in};
  item.shape = {4};
  return item;
}

void check_all(const std::vector<float>& got, double want, double rel) {
  for (float v : got)
    BOOST_TEST(std::abs(double(v) - want) <= rel * std::abs(want) + 1e-4, v << " vs " << want);
}

void add_chain(int n) {
  on_stack([n] {
    Tensor t = Tensor::ones({4});
    for (int i = 0; i < n; ++i) t = t + 1.0f;
    check_all(t.to_vector<float>(), 1.0 + n, 0);
  });
}

// x * c, n times, against c^n with the float constant's exact value.
void mul_chain(int n) {
  on_stack([n] {
    Tensor t = Tensor::full({3}, 2.0);
    for (int i = 0; i < n; ++i) t = t * 1.0001f;
    check_all(t.to_vector<float>(), 2.0 * std::pow(double(1.0001f), n), 1e-3);
  });
}

// Five steps in turn, (x + 3) * 0.5 - 1 = (x + 1) / 2 with a float16 round trip and exp(log x):
// each round halves the distance to 1, so after r rounds x = 1 + (x0 - 1) / 2^r.
void mixed_chain(int n) {
  on_stack([n] {
    Tensor t = Tensor::full({2, 3}, 0.5);
    for (int i = 0; i < n; ++i) {
      switch (i % 5) {
      case 0:
        t = t + 3.0f;
        break;
      case 1:
        t = t * 0.5f;
        break;
      case 2:
        t = t - 1.0f;
        break;
      case 3:
        t = t.cast(tg::dtypes::float16).cast(tg::dtypes::float32);
        break;
      default:
        t = t.log().exp();
        break;
      }
    }
    check_all(t.to_vector<float>(), 1.0 - 0.5 * std::pow(0.5, n / 5), 1e-3);
  });
}

// A 2x3 value transposed, flipped and reshaped between additions (each pair undoes itself, so
// the views merge): every fused kernel of the chain reads its input through ~500 movement ops.
void movement_chain(int n) {
  on_stack([n] {
    Tensor t = Tensor::zeros({2, 3});
    for (int i = 0; i < n; ++i) {
      switch (i % 6) {
      case 0:
      case 1:
        t = t.permute({1, 0}) + 1.0f;
        break;
      case 2:
      case 3:
        t = t.flip({0}) + 1.0f;
        break;
      case 4:
        t = t.reshape({6}) + 1.0f;
        break;
      default:
        t = t.reshape({2, 3}) + 1.0f;
        break;
      }
    }
    check_all(t.to_vector<float>(), double(n), 0);
  });
}

// y = x * c^steps through a chain of multiplications: dy/dx = c^steps. Over `rounds` fresh
// leaves of one structure: the gradient cache records the second and rebuilds the third.
void gradient_chain(int n, int rounds) {
  on_stack([n, rounds] {
    const auto before = tg::detail::gradient_cache_stats();
    for (int round = 0; round < rounds; ++round) {
      Tensor x = Tensor::from_vector(std::vector<float>{1, 1, 1, 1}, {4});
      x.requires_grad_();
      Tensor y = x;
      for (int i = 0; i < n; ++i) y = y * 1.0001f;
      y.sum().backward();
      check_all(x.grad()->to_vector<float>(), std::pow(double(1.0001f), n), 1e-3);
    }
    if (rounds >= 3) BOOST_TEST(tg::detail::gradient_cache_stats().hits > before.hits);
  });
}

// y = y + x, n times: x's gradient accumulates over a chain of n additions, n + 1 in all.
void gradient_sum_chain(int n) {
  on_stack([n] {
    Tensor x = Tensor::full({4}, 0.5);
    x.requires_grad_();
    Tensor y = x;
    for (int i = 0; i < n; ++i) y = y + x;
    y.sum().backward();
    check_all(x.grad()->to_vector<float>(), n + 1.0, 0);
    check_all(y.to_vector<float>(), 0.5 * (n + 1), 0);
  });
}

} // namespace

BOOST_AUTO_TEST_SUITE(deep_graph)

BOOST_AUTO_TEST_CASE(add_chain_12k) { add_chain(12'000); }
BOOST_AUTO_TEST_CASE(mul_chain_20k) { mul_chain(20'000); }
BOOST_AUTO_TEST_CASE(mixed_chain_20k) { mixed_chain(20'000); }
BOOST_AUTO_TEST_CASE(movement_chain_12k) { movement_chain(12'000); }
BOOST_AUTO_TEST_CASE(gradient_chain_20k) { gradient_chain(20'000, 3); }
BOOST_AUTO_TEST_CASE(gradient_sum_chain_20k) { gradient_sum_chain(20'000); }
// The slowest cases (about a minute each under ASan): ctest runs them as deep_graph_100k_test.
BOOST_AUTO_TEST_CASE(add_chain_100k, *boost::unit_test::label("deep100k")) { add_chain(100'000); }
BOOST_AUTO_TEST_CASE(gradient_chain_100k, *boost::unit_test::label("deep100k")) {
  gradient_chain(100'000, 1);
}

// The scheduler cuts a fused chain into kernels at most 1000 nodes deep; the chain's value is unchanged.
BOOST_AUTO_TEST_CASE(scheduler_bounds_kernel_depth) {
  on_stack([] {
    Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
    for (int i = 0; i < 2500; ++i) t = t + 1.0f;
    const auto items = t.schedule();
    BOOST_TEST(items.size() == 3u);
    for (const auto& item : items) BOOST_TEST(depth_of(item) <= 1000);
    check_all({t.to_vector<float>().at(0)}, 2501.0, 0);
    Tensor u = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
    for (int i = 0; i < 450; ++i) u = u * 0.5f + 1.0f; // 901 deep: one kernel
    BOOST_TEST(u.schedule().size() == 1u);
    for (int i = 0; i < 450; ++i) u = u * 0.5f + 1.0f; // 1801 deep: two
    BOOST_TEST(u.schedule().size() == 2u);
  });
}

// lower_kernel refuses a hand-built kernel deeper than its limit with a typed error, and lowers one
// just under it.
BOOST_AUTO_TEST_CASE(lowerer_refuses_too_deep_kernels) {
  on_stack([] {
    tg::LowerOptions options;
    try {
      (void)tg::lower_kernel(chain_kernel(2000), options); // 2001 nodes with the input
      BOOST_ERROR("no error for a kernel 2001 nodes deep");
    } catch (const tg::UOpError& e) {
      BOOST_TEST(std::string(e.what()).find("deeper than 2000 nodes") != std::string::npos, e.what());
    }
    BOOST_TEST(!tg::lower_kernel(chain_kernel(1999), options).name.empty());
  });
}

BOOST_AUTO_TEST_SUITE_END()
