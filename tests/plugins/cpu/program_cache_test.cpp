// The host's program cache (kernel/engine/program_cache) over the test-hooks build of the CPU
// plugin: one compile per kernel however many threads ask, different kernels compile in parallel,
// and a failed compile (here an LLVM fatal error) caches nothing and blocks nothing.
#include "kernel/engine/engine.hpp"
#include "kernel/runtime/errors.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <thread>

using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

std::shared_ptr<tg::Device> hooks_device() {
  static std::shared_ptr<tg::Device> device = tg::Device::open(tg::Plugin::load(TG_CPU_PLUGIN_PATH));
  return device;
}

std::vector<std::byte> add_constant(const std::string& name, float constant) {
  KernelBuilder k(name);
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  k.store(k.index(out, i), k.add(k.load(k.index(in, i)), k.f32(constant)));
  return k.serialize();
}

// Runs out[i] = in[i] + c through a cached program.
std::vector<float> run(const tg::CachedProgram& cached, const std::vector<float>& input) {
  auto device = hooks_device();
  tg::Buffer in = device->alloc(input.size() * 4), out = device->alloc(input.size() * 4);
  in.copy_from_host(std::as_bytes(std::span(input)));
  tg_buffer_arg args[] = {{in.raw(), 0}, {out.raw(), 0}};
  tg::LaunchDims dims;
  dims.global = {uint32_t(input.size()), 1, 1};
  cached.program.launch(dims, args);
  std::vector<float> result(input.size());
  out.copy_to_host(std::as_writable_bytes(std::span(result)));
  return result;
}

} // namespace

BOOST_AUTO_TEST_SUITE(program_cache)

BOOST_AUTO_TEST_CASE(same_kernel_from_many_threads_compiles_once) {
  auto ir = add_constant("cache_same_kernel", 2);
  const uint64_t before = tg::program_compile_count();
  constexpr int kThreads = 6;
  std::vector<std::shared_ptr<tg::CachedProgram>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { got[size_t(t)] = tg::get_program(hooks_device(), ir, false); });
  for (auto& th : threads) th.join();
  BOOST_CHECK_EQUAL(tg::program_compile_count() - before, 1u);
  for (const auto& p : got) BOOST_CHECK(p == got[0]);
  BOOST_CHECK(run(*got[0], {1, 2}) == (std::vector<float>{3, 4}));
}

BOOST_AUTO_TEST_CASE(different_kernels_compile_in_parallel) {
  // Each rendezvous kernel's compile waits (up to 10 s) until all three are compiling at once:
  // under one process-wide lock they would fail with DEADLINE_EXCEEDED.
  constexpr int kKernels = 3;
  std::vector<std::shared_ptr<tg::CachedProgram>> got(kKernels);
  std::vector<std::string> errors(kKernels);
  std::vector<std::thread> threads;
  for (int t = 0; t < kKernels; ++t)
    threads.emplace_back([&, t] {
      try {
        got[size_t(t)] = tg::get_program(
            hooks_device(), add_constant("tg_test_rendezvous_3_parallel_" + std::to_string(t), float(t)),
            false);
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kKernels; ++t) {
    BOOST_REQUIRE_MESSAGE(errors[size_t(t)].empty(), errors[size_t(t)]);
    BOOST_CHECK(run(*got[size_t(t)], {10}) == (std::vector<float>{10.f + float(t)}));
  }
}

BOOST_AUTO_TEST_CASE(failed_compile_caches_nothing_and_blocks_nothing) {
  auto bad = add_constant("tg_test_fatal_cache", 1);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const uint64_t before = tg::program_compile_count();
    try {
      tg::get_program(hooks_device(), bad, false);
      BOOST_ERROR("an LLVM fatal error must fail the compile");
    } catch (const tg::DeviceError& e) {
      BOOST_CHECK_EQUAL(e.code(), TG_ERROR_INTERNAL);
      BOOST_CHECK_MESSAGE(std::string(e.what()).find("Cannot select") != std::string::npos, e.what());
    }
    BOOST_CHECK_EQUAL(tg::program_compile_count() - before, 1u); // compiled again, not a cached failure
  }
  // No deadlock: the next kernel compiles at once (the failure held no lock).
  auto good = tg::get_program(hooks_device(), add_constant("cache_after_failure", 5), false);
  BOOST_CHECK(run(*good, {1}) == (std::vector<float>{6}));
}

BOOST_AUTO_TEST_CASE(waiters_of_a_failing_compile_get_its_error) {
  auto bad = add_constant("tg_test_fatal_waiters", 1);
  constexpr int kThreads = 4;
  std::vector<int> internal(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        tg::get_program(hooks_device(), bad, false);
      } catch (const tg::DeviceError& e) {
        internal[size_t(t)] = e.code() == TG_ERROR_INTERNAL;
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) BOOST_CHECK_EQUAL(internal[size_t(t)], 1);
}

BOOST_AUTO_TEST_CASE(asking_for_source_recompiles_once) {
  auto ir = add_constant("cache_source", 3);
  const uint64_t before = tg::program_compile_count();
  auto plain = tg::get_program(hooks_device(), ir, false);
  BOOST_CHECK(plain->source.empty());
  auto with_source = tg::get_program(hooks_device(), ir, true);
  BOOST_CHECK(with_source->source.find("define") != std::string::npos);
  BOOST_CHECK(tg::get_program(hooks_device(), ir, true) == with_source);
  BOOST_CHECK(tg::get_program(hooks_device(), ir, false) == with_source);
  BOOST_CHECK_EQUAL(tg::program_compile_count() - before, 2u);
}

BOOST_AUTO_TEST_SUITE_END()
