#include "kernel/engine/beam.hpp"

#include "kernel/codegen/linearize.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/engine/program_cache.hpp"
#include "kernel/schedule/buffer.hpp"

#include <tg/sdk/interpreter.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace tg {

namespace {

// Counts for tests and tools, per engine.
struct BeamCounts {
  std::atomic<uint64_t> searches{0};
  std::atomic<uint64_t> cache_hits{0};
};
BeamCounts& counts() { return engine().extension<BeamCounts>(); }

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "4096,64r,..." : the axes an optimization list names, part of the cache key (two kernels with
// the same unoptimized code can still have different axes).
std::string axes_text(const KernelInfo& info) {
  std::string s;
  for (const auto& a : info.axes) s += std::to_string(a.size) + (a.reduce ? "r," : ",");
  return s;
}

// The BEAM cache's file and key: the same kernel (its unoptimized IR and axes) on the same
// plugin, compiler and target at the same width.
struct CacheEntry {
  std::filesystem::path path;
  std::vector<std::byte> key;
};

CacheEntry cache_entry(const Device& device, int width, const KernelInfo& info,
                       std::span<const std::byte> noopt_ir) {
  const Plugin& plugin = device.plugin();
  std::string key = std::to_string(TG_ABI_VERSION_MAJOR) + "|" + plugin.name() + "|" +
                    plugin.cache_key(device.properties().arch) + "|BEAM=" + std::to_string(width) + "|" +
                    axes_text(info) + "|";
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(key.data()),
                               reinterpret_cast<const std::byte*>(key.data()) + key.size());
  bytes.insert(bytes.end(), noopt_ir.begin(), noopt_ir.end());
  auto path =
      std::filesystem::path(config().cache_dir) / plugin.name() / "beam" / (hash_hex(bytes) + ".opts");
  return {std::move(path), std::move(bytes)};
}

// Random contents for one buffer: floats in [-1, 1], integers in [1, 4] (no division by zero),
// booleans 0/1. The same seed gives the same data.
std::vector<std::byte> random_bytes(DType dt, int64_t count, std::mt19937& rng) {
  const size_t n = size_t(count), size = size_t(dt.itemsize());
  std::vector<std::byte> out(n * size);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  std::uniform_int_distribution<int> small(1, 4);
  for (size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * size;
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (dt.scalar) {
    case Scalar::Float32:
      put(real(rng));
      break;
    case Scalar::Float64:
      put(double(real(rng)));
      break;
    case Scalar::Float16:
      put(sdk::float_to_half_bits(real(rng)));
      break;
    case Scalar::BFloat16:
      put(sdk::float_to_bfloat16_bits(real(rng)));
      break;
    case Scalar::Bool:
      put(uint8_t(small(rng) & 1));
      break;
    default: { // integers, little-endian: the low byte holds the value
      const auto v = uint64_t(small(rng));
      std::memcpy(p, &v, std::min(size, sizeof v));
    }
    }
  }
  return out;
}

double element(DType dt, const std::byte* p) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (dt.scalar) {
  case Scalar::Float32:
    return get(float{});
  case Scalar::Float64:
    return get(double{});
  case Scalar::Float16:
    return sdk::half_bits_to_double(get(uint16_t{}));
  case Scalar::BFloat16:
    return sdk::bfloat16_bits_to_double(get(uint16_t{}));
  default:
    return 0;
  }
}

// Where `got` differs from the reference, or "" when it matches: integers and booleans exactly,
// floats within a tolerance for reordered sums (relative to the element and to the output's scale).
std::string compare(DType dt, std::span<const std::byte> got, std::span<const std::byte> want) {
  if (!dt.is_float()) {
    if (std::memcmp(got.data(), want.data(), want.size()) == 0) return "";
    size_t i = 0;
    while (got[i] == want[i]) ++i;
    return "byte " + std::to_string(i) + " differs";
  }
  const size_t size = size_t(dt.itemsize()), n = want.size() / size;
  const double rtol = size == 2 ? 1e-2 : 1e-3;
  double scale = 0;
  for (size_t i = 0; i < n; ++i)
    if (double w = std::fabs(element(dt, want.data() + i * size)); std::isfinite(w))
      scale = std::max(scale, w);
  for (size_t i = 0; i < n; ++i) {
    const double g = element(dt, got.data() + i * size), w = element(dt, want.data() + i * size);
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    if (std::fabs(g - w) <= rtol * (std::fabs(w) + 0.1 * scale)) continue;
    return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return "";
}

// Upcast x unrolled lanes a candidate may have (lower_kernel allows 256 x 64).
constexpr int64_t kMaxLanes = 256;

constexpr double kLongRunNs = 3e8; // a run this long is timed once

enum class State { New, Refused, Duplicate, Failed, Built };

struct Candidate {
  std::vector<Opt> opts;
  State state = State::New; // New after build_all: not built before the deadline
  LoweredKernel lowered;
  std::vector<std::byte> ir;
  Program program;
  double ns = 0;
  double lower_ms = 0, compile_ms = 0;
};

// One search: scratch buffers, the reference output, and the candidates seen so far.
class Search {
public:
  Search(const ScheduleItem& item, std::shared_ptr<Device> device, const LowerOptions& base,
         const BeamSettings& settings, BeamResult& result)
      : item_(item), device_(std::move(device)), base_(base), settings_(settings), result_(result),
        timing_(device_->properties().features & TG_FEATURE_TIMING) {}

  void run(const KernelInfo& info, std::span<const std::byte> noopt_ir) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(settings_.timeout_s));
    LowerOptions heuristic = base_;
    heuristic.optimize = true;
    const std::vector<Opt> default_opts = lower_kernel(item_, heuristic).applied;
    result_.opts = default_opts;
    std::optional<Candidate> reference = make_reference(info, noopt_ir);
    if (!reference) return;

    // the heuristic's list first, always timed (BEAM keeps it unless something beats it): its time
    // lets slower candidates stop after one run; [] itself is timed only where it is the reference
    // (CPU-style devices: the looped reference stands for it)
    const bool time_empty = reference->opts.empty();
    std::vector<Candidate> beam = evaluate(time_empty ? std::vector<std::vector<Opt>>{default_opts, {}}
                                                      : std::vector<std::vector<Opt>>{default_opts},
                                           Clock::time_point::max()); // whatever the bound
    for (const auto& c : beam)
      if (c.opts == default_opts) result_.heuristic_ns = c.ns;
    // The heuristic's own kernel differs from the reference beyond the tolerance (a long float sum
    // in another order can): no candidate can be checked, so its list is kept without a search (and
    // cached: searching again would drop everything again).
    if (result_.unverifiable) return;
    // the reference joins unless a timed candidate is the same kernel (the heuristic's list can be)
    seen_lists_.insert(to_string(reference->opts));
    if (!time_empty &&
        seen_kernels_.emplace(reinterpret_cast<const char*>(reference->ir.data()), reference->ir.size())
            .second)
      beam.push_back(std::move(*reference));
    bool first_round = true;
    const std::vector<Opt> actions = beam_actions(info, base_);
    while (!beam.empty() && Clock::now() < deadline) {
      keep_best(beam);
      const double best = beam.front().ns;
      std::vector<std::vector<Opt>> starts; // the best lists, and [] in the first round
      for (const auto& c : beam) starts.push_back(c.opts);
      if (first_round) starts.emplace_back();
      first_round = false;
      std::vector<std::vector<Opt>> next;
      for (const auto& start : starts)
        for (const Opt& a : actions) {
          std::vector<Opt> opts = start;
          opts.push_back(a);
          next.push_back(std::move(opts));
        }
      ++result_.rounds;
      std::vector<Candidate> timed = evaluate(next, deadline);
      if (timed.empty()) break;
      for (auto& c : timed) beam.push_back(std::move(c));
      keep_best(beam);
      if (beam.front().ns >= best) break; // this round improved nothing
    }
    result_.timed_out = Clock::now() >= deadline;
    keep_best(beam);
    // never worse than the default: the heuristic's list unless something timed faster than it
    if (beam.empty() || result_.heuristic_ns == 0 || beam.front().ns >= result_.heuristic_ns) {
      result_.best_ns = result_.heuristic_ns;
      return;
    }
    result_.opts = beam.front().opts;
    result_.best_ns = beam.front().ns;
  }

private:
  // Sorted by time, the first `width` kept.
  void keep_best(std::vector<Candidate>& beam) const {
    std::stable_sort(beam.begin(), beam.end(),
                     [](const Candidate& a, const Candidate& b) { return a.ns < b.ns; });
    if (beam.size() > size_t(settings_.width)) beam.resize(size_t(settings_.width));
  }

  // The reference: the unoptimized kernel. On CPU-style devices up to 256 of its outputs are looped
  // per work group (LOOP over the last output axis: the same arithmetic per output, in the same
  // order), since one work group per output can take seconds there (matmul 1024: 1M groups); on
  // work-group devices it is the NOOPT kernel. It stands for [] in the beam.
  static std::vector<Opt> reference_opts(const KernelInfo& info, const DeviceLimits& device) {
    if (device.parallel_groups()) return {};
    for (int a = int(info.output_dims) - 1; a >= 0; --a)
      if (info.axes[size_t(a)].size > 1)
        return {{OptOp::LOOP, a, std::min<int64_t>(info.axes[size_t(a)].size, 256)}};
    return {};
  }

  // Allocates the scratch buffers, fills them with random data and runs the reference kernel once
  // for the reference output; returns it, timed by that run. Nothing when that fails (no search:
  // the heuristic stays).
  std::optional<Candidate> make_reference(const KernelInfo& info, std::span<const std::byte> noopt_ir) {
    std::mt19937 rng(12345);
    try {
      for (const auto& b : item_.buffers) {
        const int64_t count = std::max<int64_t>(1, buffer_arg(b).size());
        initial_.push_back(random_bytes(b->dtype(), count, rng));
        buffers_.push_back(device_->alloc(initial_.back().size()));
        buffers_.back().copy_from_host(initial_.back());
        args_.push_back({buffers_.back().raw(), 0});
      }
      Candidate ref;
      LowerOptions o = base_;
      o.opts = reference_opts(info, base_);
      try {
        ref.lowered = lower_kernel(item_, o);
        ref.ir = linearize(ref.lowered.sink, ref.lowered.name).ir;
        ref.opts = *o.opts;
      } catch (const OptError&) { // the plain NOOPT kernel then
        o.optimize = false;
        o.opts.reset();
        ref.lowered = lower_kernel(item_, o);
        ref.ir.assign(noopt_ir.begin(), noopt_ir.end());
      }
      ref.program = compile_uncached(device_, ref.ir, ref.lowered.compile_level);
      const auto t0 = Clock::now();
      reference_ = output_of(ref);
      ref.ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); // with the copies
      if (settings_.hooks && settings_.hooks->time) ref.ns = settings_.hooks->time(ref.opts, ref.ns);
      ref.program = Program{};
      return ref;
    } catch (const std::exception&) { // no memory for the scratch buffers, or no reference kernel
      return std::nullopt;
    }
  }

  LaunchDims dims_of(const Candidate& c) const {
    LaunchDims d;
    d.global = c.lowered.global;
    d.local = c.lowered.local;
    return d;
  }

  // The candidate's output from the initial contents (the output may also be an input).
  std::vector<std::byte> output_of(const Candidate& c) {
    buffers_[0].copy_from_host(initial_[0]);
    c.program.launch(dims_of(c), args_);
    device_->synchronize();
    std::vector<std::byte> out(initial_[0].size());
    buffers_[0].copy_to_host(out);
    return out;
  }

  // Kernel time in ns: the device's measurement, else host wall time up to synchronize.
  double time_once(const Candidate& c) {
    auto t0 = Clock::now();
    auto ns = c.program.launch(dims_of(c), args_, {}, timing_);
    if (ns) return double(*ns);
    device_->synchronize();
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  }

  // Lowers, linearizes and compiles the new lists on all cores (dropping refused lists and
  // kernels already seen), then checks and times each one in turn. Returns the correct, timed
  // candidates.
  std::vector<Candidate> evaluate(const std::vector<std::vector<Opt>>& lists, Clock::time_point deadline) {
    std::vector<Candidate> cands;
    for (const auto& opts : lists) {
      if (lanes(opts) > kMaxLanes || !seen_lists_.insert(to_string(opts)).second) continue;
      cands.emplace_back().opts = opts;
    }
    build_all(cands, deadline);

    std::vector<Candidate> timed;
    double best = std::numeric_limits<double>::infinity();
    for (auto& c : cands) {
      if (Clock::now() >= deadline) break;
      if (c.state == State::Refused || c.state == State::Duplicate) {
        ++(c.state == State::Refused ? result_.refused : result_.duplicate);
        continue;
      }
      if (c.state != State::Built) {
        ++result_.failed;
        continue;
      }
      try {
        if (std::string why = compare(item_.buffers[0]->dtype(), output_of(c), reference_); !why.empty()) {
          ++result_.wrong;
          // result_.opts is the heuristic's list until the search ends
          if (c.opts == result_.opts) result_.unverifiable = true;
          if (result_.wrong_example.empty()) result_.wrong_example = to_string(c.opts) + ": " + why;
          continue;
        }
        // a few runs, the minimum; one when the candidate is far slower than the round's best or
        // takes long anyway (noise is small next to it)
        c.ns = time_once(c);
        for (int run = 1; run < 3 && c.ns < 3 * best && c.ns < kLongRunNs; ++run)
          c.ns = std::min(c.ns, time_once(c));
      } catch (const std::exception&) {
        ++result_.failed;
        continue;
      }
      if (settings_.hooks && settings_.hooks->time) c.ns = settings_.hooks->time(c.opts, c.ns);
      if (config().debug >= 3)
        std::printf("beam:   %-40s %9.3f ms  (lower %.0f ms, compile %.0f ms)\n", to_string(c.opts).c_str(),
                    c.ns / 1e6, c.lower_ms, c.compile_ms);
      best = std::min(best, c.ns);
      ++result_.timed;
      c.program = Program{}; // only the winner's list is kept: its program is built again by the caller
      timed.push_back(std::move(c));
    }
    return timed;
  }

  // Upcast and unrolled lanes: lowering emits each lane, so its time grows with them.
  static int64_t lanes(const std::vector<Opt>& opts) {
    int64_t n = 1;
    for (const Opt& o : opts)
      if (o.op == OptOp::UPCAST || o.op == OptOp::UNROLL) n *= o.amount;
    return n;
  }

  // Lowers, linearizes and compiles (through the plugin) every candidate, on up to
  // hardware_concurrency threads; lowering is pure and the plugin's compile thread-safe.
  void build_all(std::vector<Candidate>& cands, Clock::time_point deadline) {
    std::atomic<size_t> next{0};
    std::mutex seen_mutex;
    auto build = [&](Candidate& c) {
      const auto t0 = Clock::now();
      try {
        LowerOptions o = base_;
        o.opts = c.opts;
        std::optional<ScheduleItem> other;
        if (settings_.hooks && settings_.hooks->replace_item) other = settings_.hooks->replace_item(c.opts);
        c.lowered = lower_kernel(other ? *other : item_, o);
        LinearKernel linear = linearize(c.lowered.sink, c.lowered.name);
        check_loop_limit(linear, c.lowered.name, c.lowered.opts, o.max_loop_iterations); // else wrong there
        c.ir = std::move(linear.ir);
        c.lower_ms = ms_since(t0);
      } catch (const std::exception&) { // OptError, or a grid the device cannot launch
        c.state = State::Refused;
        return;
      }
      {
        std::lock_guard lock(seen_mutex);
        if (!seen_kernels_.emplace(reinterpret_cast<const char*>(c.ir.data()), c.ir.size()).second) {
          c.state = State::Duplicate;
          return;
        }
      }
      try {
        const auto t1 = Clock::now();
        c.program = compile_uncached(device_, c.ir, c.lowered.compile_level);
        c.compile_ms = ms_since(t1);
        c.state = State::Built;
      } catch (const std::exception&) {
        c.state = State::Failed;
      }
    };
    auto worker = [&] {
      for (size_t i = next++; i < cands.size() && Clock::now() < deadline; i = next++) {
        build(cands[i]);
        if (config().debug >= 4)
          std::printf("beam:   built %s: state %d, lower %.0f ms, compile %.0f ms\n",
                      to_string(cands[i].opts).c_str(), int(cands[i].state), cands[i].lower_ms,
                      cands[i].compile_ms);
      }
    };
    const size_t n = std::min<size_t>(cands.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < n; ++t) pool.emplace_back(worker);
    worker();
  }

  const ScheduleItem& item_;
  std::shared_ptr<Device> device_;
  const LowerOptions& base_;
  const BeamSettings& settings_;
  BeamResult& result_;
  const bool timing_;
  std::vector<std::vector<std::byte>> initial_;
  std::vector<Buffer> buffers_;
  std::vector<tg_buffer_arg> args_;
  std::vector<std::byte> reference_;
  std::set<std::string> seen_lists_;
  std::set<std::string> seen_kernels_; // IR bytes (a string: GCC 12 -O3 warns on set<vector<byte>>)
};

} // namespace

std::vector<Opt> beam_actions(const KernelInfo& kernel, const DeviceLimits& device) {
  std::vector<Opt> out;
  const bool groups = device.parallel_groups();
  for (int a = 0; a < int(kernel.axes.size()); ++a) {
    const int64_t size = kernel.axes[size_t(a)].size;
    auto add = [&](OptOp op, std::initializer_list<int64_t> amounts) {
      for (int64_t n : amounts)
        if (n <= size) out.push_back({op, a, n});
    };
    if (size_t(a) < kernel.output_dims) {
      add(OptOp::UPCAST, {2, 3, 4, 8, 16});
      if (groups)
        add(OptOp::LOCAL, {2, 4, 8, 16, 32, 64});
      else
        add(OptOp::LOOP, {4, 16, 64, 256, 1024});
    } else {
      add(OptOp::UNROLL, {2, 4, 8, 16});
      if (groups && kernel.reduce_count == 1) {
        add(OptOp::GROUP, {8, 16, 32, 64, 128});
        add(OptOp::GROUPTOP, {16, 64, 256});
      }
      if (groups && kernel.product) add(OptOp::STAGE, {2, 4, 8, 16, 32});
    }
    for (int64_t pad : {16, 32}) // an axis with no useful divisor: pad it (before other splits)
      if (size > pad && size % pad != 0) out.push_back({OptOp::PADTO, a, pad});
  }
  for (int unit : fitting_units(kernel, device))
    out.push_back({OptOp::TC, kernel.matmul->k, unit}); // first only
  return out;
}

BeamResult beam_search(const ScheduleItem& item, const std::shared_ptr<Device>& device,
                       const LowerOptions& base, const BeamSettings& settings) {
  const auto t0 = Clock::now();
  BeamResult result;
  const KernelInfo info = analyze_kernel(item);
  LowerOptions noopt = base;
  noopt.optimize = false;
  noopt.opts.reset();
  const LinearKernel reference = [&] {
    LoweredKernel k = lower_kernel(item, noopt);
    return linearize(k.sink, k.name);
  }();
  const bool disk = settings.use_cache && config().disk_cache && !settings.hooks;
  const CacheEntry entry = cache_entry(*device, settings.width, info, reference.ir);
  if (disk) {
    if (auto text = read_cache_file(entry.path, entry.key)) try {
        LowerOptions o = base;
        o.opts = parse_opts(std::string(reinterpret_cast<const char*>(text->data()), text->size()));
        lower_kernel(item, o); // still valid for this kernel and device
        result.opts = *o.opts;
        result.from_cache = true;
        ++counts().cache_hits;
        result.search_ms = ms_since(t0);
        return result;
      } catch (const std::exception&) { // stale or corrupt: search again and overwrite
      }
  }
  ++counts().searches;
  Search(item, device, base, settings, result).run(info, reference.ir);
  result.search_ms = ms_since(t0);
  if (disk && (result.best_ns > 0 || result.unverifiable)) {
    const std::string text = to_string(result.opts);
    write_cache_file(entry.path, entry.key, std::as_bytes(std::span(text)));
  }
  return result;
}

uint64_t beam_search_count() { return counts().searches.load(); }
uint64_t beam_cache_hit_count() { return counts().cache_hits.load(); }

} // namespace tg
