// The tensor suite's kernels, compiled for CPUs we may not have: every op x dtype expression of
// tests/tensor (unary math, binary arithmetic and comparisons, reductions, casts, matmul) is
// scheduled, lowered with each target's vector width, linearized, and compiled through the CPU
// plugin's compile(target). An LLVM instruction-selection failure for any of them (e.g. f16 exp2
// on AVX512-FP16) fails here on any machine.
#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/runtime/errors.hpp"
#include "kernel/runtime/plugin.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using tg::DType;
using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {

const std::vector<DType> kAllDtypes = {dtypes::bool_,  dtypes::int8,    dtypes::uint8,    dtypes::int16,
                                       dtypes::uint16, dtypes::int32,   dtypes::uint32,   dtypes::int64,
                                       dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                                       dtypes::float64};

// An input buffer of zeros (the values do not matter to a compile; a buffer keeps the expression
// from being constant-folded).
Tensor input(const tg::Dims& shape, DType dt) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<std::byte> bytes(size_t(n) * size_t(dt.itemsize()));
  return Tensor::from_bytes(bytes, shape, dt);
}

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

// The unary ops of tests/tensor/elementwise_test.cpp.
std::vector<std::pair<std::string, Unary>> unary_ops() {
  return {
      {"neg", [](auto& x) { return -x; }},
      {"abs", [](auto& x) { return x.abs(); }},
      {"square", [](auto& x) { return x.square(); }},
      {"exp", [](auto& x) { return x.exp(); }},
      {"exp2", [](auto& x) { return x.exp2(); }},
      {"log", [](auto& x) { return x.log(); }},
      {"log2", [](auto& x) { return x.log2(); }},
      {"sqrt", [](auto& x) { return x.sqrt(); }},
      {"rsqrt", [](auto& x) { return x.rsqrt(); }},
      {"reciprocal", [](auto& x) { return x.reciprocal(); }},
      {"sin", [](auto& x) { return x.sin(); }},
      {"cos", [](auto& x) { return x.cos(); }},
      {"tan", [](auto& x) { return x.tan(); }},
      {"tanh", [](auto& x) { return x.tanh(); }},
      {"sigmoid", [](auto& x) { return x.sigmoid(); }},
      {"relu", [](auto& x) { return x.relu(); }},
      {"leaky_relu", [](auto& x) { return x.leaky_relu(0.1); }},
      {"gelu", [](auto& x) { return x.gelu(); }},
      {"silu", [](auto& x) { return x.silu(); }},
      {"softplus", [](auto& x) { return x.softplus(2); }},
      {"sign", [](auto& x) { return x.sign(); }},
      {"trunc", [](auto& x) { return x.trunc(); }},
      {"floor", [](auto& x) { return x.floor(); }},
      {"ceil", [](auto& x) { return x.ceil(); }},
      {"pow3", [](auto& x) { return x.pow(3.0); }},
      {"pow0.5", [](auto& x) { return x.pow(0.5); }},
      {"pow1.5", [](auto& x) { return x.pow(1.5); }},
      {"clip", [](auto& x) { return x.clip(-0.5, 1); }},
      {"logical_not", [](auto& x) { return x.logical_not(); }},
      {"where_scalar", [](auto& x) { return x.gt(x.zeros_like()).where(1.5, -2.0); }},
  };
}

std::vector<std::pair<std::string, Binary>> binary_ops(DType dt) {
  std::vector<std::pair<std::string, Binary>> ops = {
      {"add", [](auto& a, auto& b) { return a + b; }},
      {"sub", [](auto& a, auto& b) { return a - b; }},
      {"mul", [](auto& a, auto& b) { return a * b; }},
      {"div", [](auto& a, auto& b) { return a.div(b); }},
      {"maximum", [](auto& a, auto& b) { return a.maximum(b); }},
      {"minimum", [](auto& a, auto& b) { return a.minimum(b); }},
      {"lt", [](auto& a, auto& b) { return a.lt(b); }},
      {"le", [](auto& a, auto& b) { return a.le(b); }},
      {"eq", [](auto& a, auto& b) { return a.eq(b); }},
      {"ne", [](auto& a, auto& b) { return a.ne(b); }},
      {"where", [](auto& a, auto& b) { return a.lt(b).where(a, b); }},
      {"pow", [](auto& a, auto& b) { return a.pow(b); }},
  };
  if (dt == dtypes::bool_) {
    ops.push_back({"logical_and", [](auto& a, auto& b) { return a.logical_and(b); }});
    ops.push_back({"logical_or", [](auto& a, auto& b) { return a.logical_or(b); }});
  }
  if (dt.is_int()) {
    ops.push_back({"idiv", [](auto& a, auto& b) { return a.idiv(b); }});
    ops.push_back({"mod", [](auto& a, auto& b) { return a.mod(b); }});
    ops.push_back({"xor", [](auto& a, auto& b) { return a.bitwise_xor(b); }});
    ops.push_back({"shifts", [](auto& a, auto&) { return a.lshift(3).add(a.rshift(2)); }});
  }
  return ops;
}

std::vector<std::pair<std::string, Unary>> reduce_ops(DType dt) {
  std::vector<std::pair<std::string, Unary>> ops = {
      {"sum_all", [](auto& x) { return x.sum(); }},     {"sum_rows", [](auto& x) { return x.sum({1}); }},
      {"sum_cols", [](auto& x) { return x.sum({0}); }}, {"prod", [](auto& x) { return x.prod({1}); }},
      {"max", [](auto& x) { return x.max({1}); }},      {"min", [](auto& x) { return x.min({0}); }},
      {"argmax", [](auto& x) { return x.argmax(1); }},  {"cumsum", [](auto& x) { return x.cumsum(1); }},
  };
  if (dt.is_float()) {
    ops.push_back({"mean", [](auto& x) { return x.mean({1}); }});
    ops.push_back({"var", [](auto& x) { return x.var({1}); }});
    ops.push_back({"softmax", [](auto& x) { return x.softmax(1); }});
    ops.push_back({"log_softmax", [](auto& x) { return x.log_softmax(1); }});
    ops.push_back({"logsumexp", [](auto& x) { return x.logsumexp(1); }});
  }
  return ops;
}

// For ints and bool: the ops that keep the dtype, and two that promote to float32 (the other float
// math is the same float32 kernel after the same cast).
const std::set<std::string> kIntUnary = {"neg",  "abs",  "square",      "sign",         "relu", "trunc",
                                         "clip", "pow3", "logical_not", "where_scalar", "exp",  "sqrt"};

// name -> expression, over inputs of 4 x 33 (a tail after any vector width) and transposed views.
// An op the tensor API itself refuses for a dtype (it throws tg::Error) makes no kernel; those are
// listed in `refused`.
std::vector<std::pair<std::string, Tensor>> suite_expressions(std::vector<std::string>& refused) {
  std::vector<std::pair<std::string, Tensor>> out;
  auto add = [&](const std::string& name, const std::function<Tensor()>& make) {
    try {
      out.push_back({name, make()});
    } catch (const tg::Error& e) {
      refused.push_back(name + ": " + e.what());
    }
  };
  for (DType dt : kAllDtypes) {
    const std::string d = std::string(dt.name());
    Tensor x = input({4, 33}, dt), y = input({4, 33}, dt), yt = input({33, 4}, dt).T(), row = input({33}, dt);
    for (auto& [name, op] : unary_ops())
      if (dt.is_float() || kIntUnary.count(name)) add(name + " " + d, [&] { return op(x); });
    // Layouts change index math (int32), not the op's dtype: strided and broadcast inputs are
    // compiled for a float and an int dtype only, which keeps the test under a minute.
    const bool layouts = dt == dtypes::float16 || dt == dtypes::int64;
    for (auto& [name, op] : binary_ops(dt)) {
      add(name + " " + d, [&] { return op(x, y); });
      if (!layouts) continue;
      add(name + " " + d + " transposed", [&] { return op(x, yt); });
      add(name + " " + d + " broadcast", [&] { return op(x, row); });
    }
    for (auto& [name, op] : reduce_ops(dt)) add(name + " " + d, [&] { return op(x); });
    for (DType to : kAllDtypes)
      if (to != dt) add("cast " + d + " -> " + std::string(to.name()), [&] { return x.cast(to); });
    if (dt.is_float()) {
      add("matmul " + d, [&] { return input({16, 24}, dt).matmul(input({24, 20}, dt)); });
      add("matvec " + d, [&] { return input({16, 24}, dt).matmul(input({24}, dt)); });
    }
  }
  return out;
}

struct TargetGroup {
  uint32_t vector_bytes; // the lowering's vector width for these CPUs
  std::vector<std::string> targets;
};

std::shared_ptr<tg::Plugin> cpu_plugin() {
  static std::shared_ptr<tg::Plugin> plugin = tg::Plugin::load(TG_CPU_PLUGIN_PATH);
  return plugin;
}

// Which CPUs, grouped by the vector width the lowering uses for them. This LLVM's gaps are
// reported, never silently skipped (targets_test.cpp also compiles every IR op x dtype, scalar and
// vector, for these CPUs and x86-64-v4).
std::vector<TargetGroup> target_groups() {
  std::vector<std::string> v2 = {"x86-64"}, v3 = {"x86-64-v3"}, v4 = {"sapphirerapids"};
#if TG_TEST_LLVM_VERSION_MAJOR >= 16
  v4.push_back("znver4");
#else
  BOOST_CHECK_THROW(cpu_plugin()->cache_key("znver4"), tg::InvalidArgumentError);
  BOOST_TEST_MESSAGE("LLVM " << TG_TEST_LLVM_VERSION_MAJOR
                             << " does not know znver4 (added in LLVM 16): compiling for znver3 instead");
  v3.push_back("znver3"); // AVX2 only: 32-byte vectors
#endif
#if TG_TEST_LLVM_HAS_AARCH64
  v2.push_back("aarch64");
  v2.push_back("aarch64:neoverse-n1"); // ARMv8.2 with native fp16 arithmetic
#else
  BOOST_CHECK_THROW(cpu_plugin()->cache_key("aarch64"), tg::UnimplementedError);
  BOOST_TEST_MESSAGE("this LLVM was built without the AArch64 target: AArch64 is NOT tested");
#endif
  return {{16, v2}, {32, v3}, {64, v4}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_cross_target)

BOOST_AUTO_TEST_CASE(tensor_suite_kernels_compile_for_every_target) {
  const auto groups = target_groups();
  std::vector<std::string> refused;
  const auto expressions = suite_expressions(refused);
  for (const auto& r : refused) BOOST_TEST_MESSAGE("no kernel (the tensor API refuses it): " << r);

  // Lower everything first (one job per distinct kernel and target), then compile on all cores.
  struct Job {
    std::string what, kernel, target;
    uint32_t vector_bytes, level;
    std::shared_ptr<const std::vector<std::byte>> ir;
  };
  std::vector<Job> jobs;
  std::set<std::string> names;
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& group : groups) {
    tg::LowerOptions options;
    options.compute_units = 16;
    options.vector_bytes = group.vector_bytes;
    std::set<std::string> seen; // IR bytes (a set of byte vectors trips a GCC 12 -O3 false warning)
    for (const auto& [what, tensor] : expressions)
      for (const auto& item : tensor.schedule()) {
        if (item.ast->src(0)->op() == tg::Ops::COPY) continue;
        tg::LoweredKernel lowered = tg::lower_kernel(item, options);
        tg::LinearKernel linear = tg::linearize(lowered.sink, lowered.name);
        if (!seen.insert(std::string(reinterpret_cast<const char*>(linear.ir.data()), linear.ir.size()))
                 .second)
          continue;
        names.insert(what);
        auto ir = std::make_shared<const std::vector<std::byte>>(std::move(linear.ir));
        for (const auto& target : group.targets)
          jobs.push_back({what, lowered.name, target, group.vector_bytes, lowered.compile_level, ir});
      }
  }
  auto t1 = std::chrono::steady_clock::now();

  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t j = next++; j < jobs.size(); j = next++) {
      const Job& job = jobs[j];
      try {
        auto k = cpu_plugin()->compile(*job.ir, 0, job.target.c_str(), job.level);
        if (k.binary.size() <= 64) throw std::runtime_error("empty blob");
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        failures.push_back(job.what + " (kernel " + job.kernel + ", " + std::to_string(job.vector_bytes) +
                           "-byte vectors) for " + job.target + ": " + e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t)
    threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  auto t2 = std::chrono::steady_clock::now();

  for (const auto& f : failures) BOOST_ERROR(f);
  BOOST_CHECK_EQUAL(failures.size(), 0u);
  BOOST_CHECK_GT(names.size(), 400u); // every dtype's unary, binary, reduce and cast expressions
  BOOST_TEST_MESSAGE(jobs.size() << " compiles of the kernels of " << names.size()
                                 << " expressions; lowering "
                                 << std::chrono::duration<double>(t1 - t0).count() << " s, compiling "
                                 << std::chrono::duration<double>(t2 - t1).count() << " s");
}

BOOST_AUTO_TEST_SUITE_END()
