// The schedule cache (kernel/engine/schedule_cache.hpp) on the CPU plugin: a repeated
// expression over new buffers replays the cached schedule (the hit counter says so) and gives
// the new buffers' results, computed here on the host; expressions that differ in shape, dtype,
// constant, buffer sharing or targets are not hits; multi-kernel expressions, several targets,
// views, constants-only kernels and concurrent realizes stay correct.
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <thread>

using namespace tg;

namespace {

std::vector<float> values(int64_t n, float seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed + float(i)) * 3.0f;
  return v;
}

Tensor input(const std::vector<float>& v, Dims shape) { return Tensor::from_vector(v, shape).realize(); }

uint64_t hits() { return schedule_cache_stats().hits; }
uint64_t misses() { return schedule_cache_stats().misses; }

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));
}

} // namespace

BOOST_AUTO_TEST_CASE(repeated_expression_on_new_buffers_hits_and_gives_new_results) {
  for (int round = 0; round < 3; ++round) {
    const auto va = values(16, float(round)), vb = values(16, 10.0f + float(round));
    Tensor a = input(va, {16}), b = input(vb, {16});
    const uint64_t h = hits(), m = misses();
    Tensor c = ((a + b) * 2.5f).realize();
    if (round > 0) { // the first round may be the first time this process sees the structure
      BOOST_TEST(hits() == h + 1);
      BOOST_TEST(misses() == m);
    }
    std::vector<float> want(16);
    for (size_t i = 0; i < 16; ++i) want[i] = (va[i] + vb[i]) * 2.5f;
    check_close(c.to_vector<float>(), want);
  }
}

BOOST_AUTO_TEST_CASE(other_shapes_dtypes_constants_and_sharing_do_not_hit) {
  const auto v = values(24, 1.0f);
  Tensor a = input(v, {24}), b = input(values(24, 2.0f), {24});
  (a * 3.0f).realize();
  const uint64_t h = hits();
  Tensor other_const = (a * 4.0f).realize();
  Tensor other_shape = (input(values(12, 3.0f), {12}) * 3.0f).realize();
  Tensor other_dtype = (a.cast(dtypes::float16) * 3.0f).realize();
  BOOST_TEST(hits() == h);
  std::vector<float> want(24);
  for (size_t i = 0; i < 24; ++i) want[i] = v[i] * 4.0f;
  check_close(other_const.to_vector<float>(), want);

  // a+b and a+a differ only in which buffers they share: each is its own structure.
  (a + b).realize();
  const uint64_t h2 = hits();
  Tensor twice = (a + a).realize();
  BOOST_TEST(hits() == h2);
  for (size_t i = 0; i < 24; ++i) want[i] = v[i] + v[i];
  check_close(twice.to_vector<float>(), want);
}

BOOST_AUTO_TEST_CASE(multi_kernel_expressions_and_several_targets_replay_correctly) {
  for (int round = 0; round < 2; ++round) {
    const auto v = values(4 * 8, float(round) + 0.5f);
    Tensor x = input(v, {4, 8});
    const uint64_t h = hits();
    Tensor s = x.softmax(); // max, sum, divide: three kernels with intermediates
    Tensor t = (x * 2.0f).sum({1});
    Tensor view = x.permute({1, 0}); // a target that is already a view: no kernel
    Tensor::realize_all({&s, &t, &view});
    if (round > 0) BOOST_TEST(hits() == h + 1);
    std::vector<float> want_s(32), want_t(4);
    for (size_t r = 0; r < 4; ++r) {
      float mx = -1e30f, sum = 0;
      for (size_t c = 0; c < 8; ++c) mx = std::max(mx, v[r * 8 + c]);
      for (size_t c = 0; c < 8; ++c) sum += std::exp(v[r * 8 + c] - mx);
      for (size_t c = 0; c < 8; ++c) want_s[r * 8 + c] = std::exp(v[r * 8 + c] - mx) / sum;
      want_t[r] = 0;
      for (size_t c = 0; c < 8; ++c) want_t[r] += 2.0f * v[r * 8 + c];
    }
    check_close(s.to_vector<float>(), want_s);
    check_close(t.to_vector<float>(), want_t);
    std::vector<float> want_view(32);
    for (size_t r = 0; r < 4; ++r)
      for (size_t c = 0; c < 8; ++c) want_view[c * 4 + r] = v[r * 8 + c];
    check_close(view.to_vector<float>(), want_view);
    // an intermediate of this realize is reused by a later expression
    check_close((s * 1.0f).to_vector<float>(), want_s);
  }
}

BOOST_AUTO_TEST_CASE(constant_only_and_view_inputs_replay) {
  for (int round = 0; round < 2; ++round) {
    const uint64_t h = hits();
    Tensor ones = Tensor::ones({5}).sum().realize();
    if (round > 0) BOOST_TEST(hits() == h + 1);
    check_close(ones.to_vector<float>(), {5.0f});

    const auto v = values(6, float(round));
    Tensor x = input(v, {2, 3});
    Tensor y = (x.permute({1, 0}) + 1.0f).realize(); // a strided read of a new buffer
    std::vector<float> want(6);
    for (size_t r = 0; r < 2; ++r)
      for (size_t c = 0; c < 3; ++c) want[c * 2 + r] = v[r * 3 + c] + 1.0f;
    check_close(y.to_vector<float>(), want);
  }
}

BOOST_AUTO_TEST_CASE(switched_off_it_never_hits) {
  const auto v = values(8, 4.0f);
  Tensor a = input(v, {8});
  (a - 7.0f).realize();
  set_schedule_cache(false);
  const uint64_t h = hits();
  Tensor r = (a - 7.0f).realize();
  set_schedule_cache(true);
  BOOST_TEST(hits() == h);
  std::vector<float> want(8);
  for (size_t i = 0; i < 8; ++i) want[i] = v[i] - 7.0f;
  check_close(r.to_vector<float>(), want);
}

BOOST_AUTO_TEST_CASE(concurrent_realizes_of_one_structure_are_correct) {
  constexpr int kThreads = 4, kRounds = 20;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < kRounds; ++i) {
        const auto v = values(32, float(t * 100 + i));
        Tensor a = Tensor::from_vector(v, {32}).realize();
        const auto got = ((a * a) + 1.0f).to_vector<float>();
        for (size_t k = 0; k < 32; ++k)
          if (std::abs(got[k] - (v[k] * v[k] + 1.0f)) > 1e-3f) ++wrong[size_t(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int w : wrong) BOOST_TEST(w == 0);
}

// A custom gradient's function (an opaque arg on a NOOP, made anew for every expression) is not
// kept by the cache: what it captures (in training, a step's activations, which kept alive would
// reach 7.5 GB over 24 steps of `tg train mnist`) is freed with the expression. The key records
// only that a function is there, so the second round hits (a training step through conv2d is such
// an expression), and its backward pass calls that round's function, not the first one's.
BOOST_AUTO_TEST_CASE(custom_gradient_expressions_hit_and_keep_no_capture_alive) {
  auto token = std::make_shared<int>(1);
  std::weak_ptr<int> watch = token;
  for (int round = 0; round < 3; ++round) {
    const auto va = values(16, float(round));
    Tensor a = input(va, {16});
    a.requires_grad_();
    const float slope = 3.0f + float(round); // not the true derivative 2: shows which function ran
    Tensor y = Tensor::with_custom_gradient(a * 2.0f, [token, a, slope](const Tensor& g) {
      return std::vector<std::pair<Tensor, Tensor>>{{a, g * slope}};
    });
    const uint64_t h = hits(), m = misses();
    y.realize();
    if (round > 0) {
      BOOST_TEST(hits() == h + 1);
      BOOST_TEST(misses() == m);
    }
    std::vector<float> want(va.size());
    for (size_t i = 0; i < va.size(); ++i) want[i] = va[i] * 2.0f;
    check_close(y.to_vector<float>(), want);
    (y * 1.5f).sum().backward();
    BOOST_REQUIRE(a.grad().has_value());
    check_close(a.grad()->to_vector<float>(), std::vector<float>(16, 1.5f * slope));
  }
  token.reset();
  (input(values(4, 1.0f), {4}) + 1.0f).realize(); // a realize releases the results of dead expressions
  BOOST_TEST(watch.expired());
}

// The custom gradient's place is part of the structure: the same ops with the function on
// another node, or with none, do not hit, and each gives its own values.
BOOST_AUTO_TEST_CASE(a_custom_gradient_elsewhere_is_another_structure) {
  auto vjp = [](const Tensor&) { return std::vector<std::pair<Tensor, Tensor>>{}; };
  const auto va = values(16, 7.0f);
  Tensor a = input(va, {16});
  (Tensor::with_custom_gradient(a * 2.0f, vjp) + 1.0f).realize();
  const uint64_t h = hits();
  Tensor other = Tensor::with_custom_gradient(a * 2.0f + 1.0f, vjp).realize();
  Tensor plain = (a * 2.0f + 1.0f).realize();
  BOOST_TEST(hits() == h);
  std::vector<float> want(va.size());
  for (size_t i = 0; i < va.size(); ++i) want[i] = va[i] * 2.0f + 1.0f;
  check_close(other.to_vector<float>(), want);
  check_close(plain.to_vector<float>(), want);
}

// A hit reads its input buffers when it runs: a buffer assigned in place between two realizes of
// one structure gives the second its new values.
BOOST_AUTO_TEST_CASE(a_hit_sees_a_buffer_assigned_in_place) {
  const auto v1 = values(16, 20.0f), v2 = values(16, 30.0f);
  Tensor a = input(v1, {16});
  Tensor first = (a * 3.0f - 1.0f).realize();
  a.assign(input(v2, {16})).realize();
  const uint64_t h = hits();
  Tensor second = (a * 3.0f - 1.0f).realize();
  BOOST_TEST(hits() == h + 1);
  std::vector<float> want1(16), want2(16);
  for (size_t i = 0; i < 16; ++i) {
    want1[i] = v1[i] * 3.0f - 1.0f;
    want2[i] = v2[i] * 3.0f - 1.0f;
  }
  check_close(first.to_vector<float>(), want1);
  check_close(second.to_vector<float>(), want2);
}

// With TG_EAGER_BATCH=1 (set_eager_batch), from an entry's second hit on, its kernels run as one
// launch_batch (the CPU plugin has it; run_prepared_as_batch). Each round binds new inputs: a batch that kept
// an earlier round's buffers, bound a kernel's arguments to another kernel or dropped one would give other
// numbers than the host reference, and other bits than the same kernels launched one by one (the default
// path). The batched counter says the batch path ran.
BOOST_AUTO_TEST_CASE(replays_as_one_launch_batch_match_the_launches_one_by_one) {
  auto step = [](int round) {
    const auto v = values(4 * 8, float(round) * 0.75f + 0.125f), w = values(8, float(round) + 20.0f);
    Tensor x = input(v, {4, 8}), y = input(w, {8});
    Tensor s = (x * y).softmax(); // max, sum, divide: three kernels with intermediates
    Tensor t = (x - y).sum({1}) * 0.5f;
    Tensor::realize_all({&s, &t});
    std::vector<float> want_s(32), want_t(4);
    for (size_t r = 0; r < 4; ++r) {
      float mx = -1e30f, sum = 0;
      for (size_t c = 0; c < 8; ++c) mx = std::max(mx, v[r * 8 + c] * w[c]);
      for (size_t c = 0; c < 8; ++c) sum += std::exp(v[r * 8 + c] * w[c] - mx);
      for (size_t c = 0; c < 8; ++c) want_s[r * 8 + c] = std::exp(v[r * 8 + c] * w[c] - mx) / sum;
      want_t[r] = 0;
      for (size_t c = 0; c < 8; ++c) want_t[r] += (v[r * 8 + c] - w[c]) * 0.5f;
    }
    auto got_s = s.to_vector<float>(), got_t = t.to_vector<float>();
    check_close(got_s, want_s);
    check_close(got_t, want_t);
    got_s.insert(got_s.end(), got_t.begin(), got_t.end());
    return got_s;
  };
  std::vector<std::vector<float>> batched, one_by_one;
  const bool was = config().eager_batch;
  set_eager_batch(true);
  const uint64_t b0 = schedule_cache_stats().batched;
  for (int round = 0; round < 5; ++round) batched.push_back(step(round));
  const uint64_t b1 = schedule_cache_stats().batched;
  BOOST_TEST(b1 >= b0 + 3); // rounds 2..4 at least (rounds 0 and 1: a miss and the first hit)
  set_eager_batch(false);
  for (int round = 0; round < 5; ++round) one_by_one.push_back(step(round));
  set_eager_batch(true);
  BOOST_TEST(schedule_cache_stats().batched == b1);
  for (size_t round = 0; round < 5; ++round) {
    BOOST_REQUIRE_EQUAL(batched[round].size(), one_by_one[round].size());
    for (size_t i = 0; i < batched[round].size(); ++i) BOOST_TEST(batched[round][i] == one_by_one[round][i]);
  }

  // Threads replaying the same entry at once: each batch uses its own thread's scratch.
  constexpr int kThreads = 4, kRounds = 10;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < kRounds; ++i) {
        const auto v = values(4 * 8, float(t * 100 + i));
        const auto got = Tensor::from_vector(v, {4, 8}).softmax().to_vector<float>();
        for (size_t r = 0; r < 4; ++r) {
          float mx = -1e30f, sum = 0;
          for (size_t c = 0; c < 8; ++c) mx = std::max(mx, v[r * 8 + c]);
          for (size_t c = 0; c < 8; ++c) sum += std::exp(v[r * 8 + c] - mx);
          for (size_t c = 0; c < 8; ++c)
            if (std::abs(got[r * 8 + c] - std::exp(v[r * 8 + c] - mx) / sum) > 1e-5f) ++wrong[size_t(t)];
        }
      }
    });
  for (auto& th : threads) th.join();
  for (int w : wrong) BOOST_TEST(w == 0);
  BOOST_TEST(schedule_cache_stats().batched >= b1 + 10); // most of the 40 softmax replays
  set_eager_batch(was);
}
