// BEAM search (kernel/engine/beam.hpp) on the CPU plugin: the winner is stored and reused without
// a search, a candidate that computes a wrong result is never chosen, and BEAM's results equal the
// unoptimized kernels' (and a host reference) on a matmul and reductions.
#include <boost/test/unit_test.hpp>

#include "kernel/engine/beam.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/tensor.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <unistd.h>

using namespace tg;
namespace fs = std::filesystem;

namespace {

// A fresh disk cache for this process, set before anything reads the configuration.
struct FreshCache {
  fs::path dir;
  FreshCache() {
    dir = fs::temp_directory_path() / ("tg_beam_test_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ::setenv("TG_CACHE_DIR", dir.c_str(), 1);
    ::unsetenv("DISABLE_COMPILER_CACHE");
  }
  ~FreshCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(FreshCache);

// Sets BEAM for one test case (a short bound: these kernels are small) and turns it off after.
struct BeamOn {
  explicit BeamOn(int width) { set_beam(width, 0.5); }
  ~BeamOn() {
    set_beam(0);
    set_noopt(false);
  }
};

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

Tensor input(const std::vector<float>& v, Dims shape) {
  return Tensor::from_vector(v, std::move(shape)).realize();
}

// The same expression computed three ways: BEAM, NOOPT (fresh tensors each time: nothing cached).
template <class F> std::pair<std::vector<float>, std::vector<float>> beam_and_noopt(F build, int width) {
  BeamOn on(width);
  std::vector<float> beam = build().template to_vector<float>();
  set_beam(0);
  set_noopt(true);
  std::vector<float> noopt = build().template to_vector<float>();
  return {beam, noopt};
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_REQUIRE_MESSAGE(std::fabs(double(got[i]) - want[i]) <= tol * (1 + std::fabs(want[i])),
                          "element " << i << ": " << got[i] << " vs " << want[i]);
}

// Row sums of a random 4 x 8 matrix, and row maxima of the same matrix: a kernel with the same
// buffers and axes but other values, for hooks that swap a candidate's kernel.
struct SumAndMax {
  ScheduleItem sum, max;
  OpenDevice dev;
  LowerOptions base;
  std::vector<Opt> heuristic; // the heuristic's list for the sum
};

SumAndMax sum_and_max(uint32_t seed) {
  const int64_t R = 4, C = 8;
  Tensor x = input(random_values(size_t(R * C), seed), {R, C});
  std::vector<ScheduleItem> sum_items = x.sum({1}).schedule(), max_items = x.max({1}).schedule();
  BOOST_REQUIRE_EQUAL(sum_items.size(), 1u);
  BOOST_REQUIRE_EQUAL(max_items.size(), 1u);
  OpenDevice dev = open_device("CPU");
  const LowerOptions base = lower_options(dev.device->properties(), true);
  std::vector<Opt> heuristic = lower_kernel(sum_items[0], base).applied;
  return {sum_items[0], max_items[0], std::move(dev), base, std::move(heuristic)};
}

} // namespace

BOOST_AUTO_TEST_CASE(cache_round_trip_reuses_the_stored_list) {
  const int64_t M = 16, K = 32, N = 16;
  auto a = random_values(size_t(M * K), 1), b = random_values(size_t(K * N), 2);
  BeamOn on(2);
  const uint64_t searches = beam_search_count(), hits = beam_cache_hit_count();
  std::vector<float> first = input(a, {M, K}).matmul(input(b, {K, N})).to_vector<float>();
  BOOST_TEST(beam_search_count() == searches + 1); // one kernel, searched once
  BOOST_TEST(beam_cache_hit_count() == hits);
  BOOST_TEST(fs::exists(fs::path(config().cache_dir) / "cpu" / "beam"));

  // the same kernel again in this process: the kernel cache, no search and no disk read
  input(a, {M, K}).matmul(input(b, {K, N})).realize();
  BOOST_TEST(beam_search_count() == searches + 1);
  BOOST_TEST(beam_cache_hit_count() == hits);

  // a cleared memory cache (as in a new process): the list comes from disk, no search
  engine().schedules().clear(); // replayed schedules hold prepared kernels too
  engine().kernels().forget_device("CPU");
  std::vector<float> again = input(a, {M, K}).matmul(input(b, {K, N})).to_vector<float>();
  BOOST_TEST(beam_search_count() == searches + 1);
  BOOST_TEST(beam_cache_hit_count() == hits + 1);
  BOOST_TEST(first == again, boost::test_tools::per_element());

  // another beam width is another entry
  set_beam(1, 0.5);
  input(a, {M, K}).matmul(input(b, {K, N})).realize();
  BOOST_TEST(beam_search_count() == searches + 2);
}

BOOST_AUTO_TEST_CASE(a_wrong_candidate_is_never_chosen) {
  // the kernel: row sums; every candidate but [] and the heuristic's list is swapped for row maxima
  // (same buffers and axes, wrong values) and reported as the fastest by far. Small axes: few
  // actions, so the search ends (no round improves on 1 ns) long before its time bound.
  SumAndMax k = sum_and_max(3);
  const std::vector<Opt>& heuristic = k.heuristic;
  std::mutex mutex; // replace_item runs on the compile threads
  std::set<std::string> replaced;
  auto faked = [&](const std::vector<Opt>& opts) {
    std::lock_guard lock(mutex);
    return replaced.count(to_string(opts)) > 0;
  };
  BeamHooks hooks;
  hooks.replace_item = [&](const std::vector<Opt>& opts) -> std::optional<ScheduleItem> {
    if (opts.empty() || opts == heuristic) return std::nullopt;
    std::lock_guard lock(mutex);
    replaced.insert(to_string(opts));
    return k.max;
  };
  hooks.time = [&](const std::vector<Opt>& opts, double ns) { return faked(opts) ? 1.0 : ns + 1e6; };
  BeamSettings settings;
  settings.width = 1;
  settings.timeout_s = 60;
  settings.hooks = &hooks;
  BeamResult r = beam_search(k.sum, k.dev.device, k.base, settings);
  BOOST_TEST_MESSAGE("chosen " << to_string(r.opts) << ", " << r.wrong << " wrong, " << r.timed << " timed");
  BOOST_TEST(r.wrong > 0);
  BOOST_TEST(!replaced.empty());
  BOOST_TEST(!faked(r.opts), "a wrong candidate was chosen: " << to_string(r.opts));
  BOOST_TEST(!r.from_cache);
  BOOST_TEST(!r.timed_out);
}

BOOST_AUTO_TEST_CASE(a_heuristic_kernel_the_reference_disagrees_with_is_kept_unsearched) {
  // the heuristic's own list computes something else (row maxima for row sums), as a long float sum
  // in another order can beyond the tolerance: nothing can be checked, so no candidate is timed and
  // its list is kept, marked for the disk cache instead of being searched again on every run.
  SumAndMax k = sum_and_max(5);
  const std::vector<Opt>& heuristic = k.heuristic;
  BOOST_REQUIRE(!heuristic.empty());
  BeamHooks hooks;
  hooks.replace_item = [&](const std::vector<Opt>& opts) -> std::optional<ScheduleItem> {
    if (opts == heuristic) return k.max;
    return std::nullopt;
  };
  BeamSettings settings;
  settings.width = 1;
  settings.timeout_s = 60;
  settings.hooks = &hooks;
  BeamResult r = beam_search(k.sum, k.dev.device, k.base, settings);
  BOOST_TEST(r.unverifiable);
  BOOST_TEST(to_string(r.opts) == to_string(heuristic));
  BOOST_TEST(r.rounds == 0);
  BOOST_TEST(r.wrong >= 1);
  BOOST_TEST(r.wrong_example.starts_with(to_string(heuristic)));

  // without the swap the same kernel is searched as usual
  hooks.replace_item = nullptr;
  BeamResult normal = beam_search(k.sum, k.dev.device, k.base, settings);
  BOOST_TEST(!normal.unverifiable);
  BOOST_TEST(normal.rounds > 0);
}

BOOST_AUTO_TEST_CASE(beam_equals_noopt_on_matmul_and_reductions) {
  const int64_t M = 12, K = 20, N = 9;
  auto a = random_values(size_t(M * K), 4), b = random_values(size_t(K * N), 5);
  auto [mm, mm_noopt] = beam_and_noopt([&] { return input(a, {M, K}).matmul(input(b, {K, N})); }, 2);
  std::vector<double> want(size_t(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        want[size_t(i * N + j)] += double(a[size_t(i * K + k)]) * double(b[size_t(k * N + j)]);
  check_close(mm, want, 1e-4);
  check_close(mm_noopt, want, 1e-4);

  const int64_t R = 6, C = 50; // no power of two: PADTO and ragged splits get tried
  auto x = random_values(size_t(R * C), 6);
  auto [sums, sums_noopt] = beam_and_noopt([&] { return input(x, {R, C}).sum({1}); }, 2);
  auto [cols, cols_noopt] = beam_and_noopt([&] { return input(x, {R, C}).max({0}); }, 1);
  std::vector<double> want_sums(size_t(R), 0.0), want_cols(size_t(C), -INFINITY);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      want_sums[size_t(i)] += double(x[size_t(i * C + j)]);
      want_cols[size_t(j)] = std::max(want_cols[size_t(j)], double(x[size_t(i * C + j)]));
    }
  check_close(sums, want_sums, 1e-4);
  check_close(sums_noopt, want_sums, 1e-4);
  check_close(cols, want_cols, 0);
  check_close(cols_noopt, want_cols, 0);
}
