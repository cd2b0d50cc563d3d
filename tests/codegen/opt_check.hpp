// Helpers of the optimization-list tests (opt_test.cpp, stage_test.cpp): kernels lowered from tensor
// expressions over placeholder buffers, run in the SDK's reference interpreter, compared buffer by buffer.
#pragma once

#include <boost/test/unit_test.hpp>

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>

namespace tg::opt_check {

inline Tensor input(Dims shape, DType dt = dtypes::float32) {
  UOpRef buffer = make_buffer("CPU", dt, dims_prod(shape)); // a label: nothing is opened
  UOpRef view = UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), "CPU");
}

// A GPU-like device: work groups of up to 256 threads with 32 KiB of local memory.
inline LowerOptions gpu(uint32_t max_groups = 65535) {
  LowerOptions o;
  o.compute_units = 4;
  o.max_groups = max_groups;
  o.vector_bytes = 16;
  o.max_local_size = {256, 256, 64};
  o.max_local_threads = 256;
  o.local_memory_bytes = 32768;
  o.subgroup_size = 8;
  return o;
}

// A CPU-like device: one thread per work group, no local memory.
inline LowerOptions cpu() {
  LowerOptions o;
  o.compute_units = 8;
  o.vector_bytes = 32;
  return o;
}

using Memory = std::map<const UOp*, std::vector<std::byte>>;
using Chooser = std::function<std::optional<std::vector<Opt>>(const ScheduleItem&, size_t kernel)>;

// Random contents for every buffer, the same for the same seed.
inline Memory fill(const std::vector<ScheduleItem>& items, uint32_t seed) {
  Memory mem;
  std::mt19937 rng(seed);
  for (const auto& item : items)
    for (const auto& b : item.buffers) {
      if (mem.count(b.get())) continue;
      const DType dt = b->dtype();
      const int64_t n = buffer_arg(b).size();
      std::vector<std::byte> bytes(size_t(n * dt.itemsize()));
      for (int64_t i = 0; i < n; ++i) {
        std::byte* p = bytes.data() + i * dt.itemsize();
        if (dt == dtypes::float32) {
          float v = std::uniform_real_distribution<float>(-1, 1)(rng);
          std::memcpy(p, &v, 4);
        } else if (dt == dtypes::int32) {
          auto v = int32_t(rng() % 21) - 10;
          std::memcpy(p, &v, 4);
        } else if (dt == dtypes::bool_) {
          *p = std::byte(rng() & 1);
        } else {
          throw std::logic_error("opt_test: no filler for " + dt.name());
        }
      }
      mem[b.get()] = std::move(bytes);
    }
  return mem;
}

struct Ran {
  Memory memory;
  std::vector<std::string> opts; // per kernel, as lowered
};

// Lowers every kernel of the expression with the chosen options and interprets it.
inline Ran run(const std::vector<ScheduleItem>& items, const LowerOptions& base, const Chooser& choose) {
  Ran out{fill(items, 1234), {}};
  for (size_t k = 0; k < items.size(); ++k) {
    const auto& item = items[k];
    LowerOptions options = base;
    options.opts = choose(item, k);
    LoweredKernel lowered = lower_kernel(item, options);
    LinearKernel linear = linearize(lowered.sink, lowered.name);
    check_loop_limit(linear, lowered.name, lowered.opts, options.max_loop_iterations);
    auto ir = sdk::parse_kernel_ir(linear.ir);
    std::vector<std::span<std::byte>> spans;
    for (const auto& b : item.buffers) spans.emplace_back(out.memory.at(b.get()));
    sdk::interpret(ir, lowered.global, lowered.local, spans, {});
    out.opts.push_back(lowered.opts);
  }
  return out;
}

inline std::vector<ScheduleItem> compute_items(const Tensor& t) {
  std::vector<ScheduleItem> items;
  for (auto& item : t.schedule())
    if (item.ast->src(0)->op() == Ops::STORE) items.push_back(std::move(item));
  return items;
}

// The same buffers after both runs: floats within a tolerance for reordered sums, others exact.
inline void check_same(const std::vector<ScheduleItem>& items, const Ran& got, const Ran& want,
                       const std::string& what) {
  for (const auto& [buffer, bytes] : want.memory) {
    const auto& other = got.memory.at(buffer);
    const DType dt = buffer->dtype();
    size_t bad = 0;
    for (size_t i = 0; i < bytes.size() / size_t(dt.itemsize()); ++i) {
      if (dt == dtypes::float32) {
        float a, b;
        std::memcpy(&a, other.data() + 4 * i, 4);
        std::memcpy(&b, bytes.data() + 4 * i, 4);
        if (!(std::fabs(a - b) <= 1e-4f + 1e-4f * std::fabs(b))) {
          if (bad++ < 3) BOOST_ERROR(what << ": element " << i << " got " << a << " want " << b);
        }
      } else if (std::memcmp(other.data() + i * size_t(dt.itemsize()),
                             bytes.data() + i * size_t(dt.itemsize()), size_t(dt.itemsize())) != 0) {
        if (bad++ < 3) BOOST_ERROR(what << ": element " << i << " differs");
      }
    }
    std::string opts;
    for (const auto& o : got.opts) opts += "\n  " + o;
    BOOST_TEST(bad == 0u, what << ": " << bad << " elements differ; kernels ran with" << opts);
  }
  (void)items;
}

} // namespace tg::opt_check
