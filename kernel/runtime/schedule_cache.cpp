#include "kernel/runtime/schedule_cache.hpp"

#include "kernel/runtime/config.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/realize.hpp"
#include "kernel/runtime/viz_recorder.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/schedule/structure.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace tg {

namespace {

constexpr size_t kMaxEntries = 4096; // a bound for programs whose structures never repeat

// How to replay a schedule: buffers are named by node index (>= 0: an input BUFFER of the
// expression) or by ~j (< 0: the output of the schedule's j-th kernel).
struct Entry {
  StructureKey key;
  std::string device; // ScheduleOptions::device: where kernels reading no buffer run
  bool noopt = false, stage = true;
  int beam = 0;
  struct Output {
    std::string device;
    DType dtype;
    int64_t size = 0;
    Dims shape;
    // The device's allocator, so a replay allocates without looking the device up by name. An
    // entry keeps its device open as its kernels do: forget_kernels drops it on unload.
    std::shared_ptr<Allocator> allocator;
  };
  std::vector<Output> outputs; // one per kernel
  struct Launch {
    std::shared_ptr<PreparedKernel> kernel; // null: an empty output
    std::vector<int32_t> buffers;
  };
  std::vector<Launch> launches;
  std::vector<std::pair<int32_t, int32_t>> becomes; // node index -> output index, or -1: the node itself
  // Hits while TG_EAGER_BATCH=1. From the second on, the kernels go as one launch_batch:
  // the CUDA plugin builds a graph for each new kernel sequence, which an expression replayed
  // once would pay for nothing.
  mutable std::atomic<uint64_t> replays{0};

  bool matches(const Structure& g, const ScheduleOptions& options) const {
    const Config& c = config();
    return device == options.device && noopt == c.noopt && beam == c.beam && stage == c.stage &&
           key.matches(g);
  }
};

// The entry for a schedule just run, or null when it cannot be replayed (a copy between
// devices, a result that is not a kernel's output).
std::shared_ptr<const Entry> make_entry(const Structure& g, const Schedule& s,
                                        const ScheduleOptions& options) {
  std::optional<StructureKey> key = StructureKey::of(g);
  if (!key) return nullptr; // an opaque arg other than a custom gradient's
  auto e = std::make_shared<Entry>();
  e->key = std::move(*key);
  e->device = options.device;
  e->noopt = config().noopt;
  e->beam = config().beam;
  e->stage = config().stage;
  std::unordered_map<const UOp*, int32_t> output_of;
  for (const auto& item : s.items) {
    if (item.ast->src(0)->op() == Ops::COPY) return nullptr;
    const UOpRef& out = item.buffers[0];
    output_of.emplace(out.get(), int32_t(e->outputs.size()));
    e->outputs.push_back({buffer_arg(out).device(), out->dtype(), buffer_arg(out).size(), item.shape,
                          open_device(buffer_arg(out).device()).allocator});
    Entry::Launch l;
    if (dims_prod(item.shape) != 0) l.kernel = prepare_kernel(item); // a kernel-cache hit: it just ran
    for (const auto& b : item.buffers) {
      if (auto o = output_of.find(b.get()); o != output_of.end())
        l.buffers.push_back(~o->second);
      else if (auto n = g.find(b.get()))
        l.buffers.push_back(*n);
      else
        return nullptr;
    }
    e->launches.push_back(std::move(l));
  }
  for (const auto& lazy : s.keep_alive) {
    auto n = g.find(lazy.get());
    if (!n) return nullptr;
    const UOpRef& view = s.becomes.at(lazy.get());
    if (view == lazy) {
      e->becomes.push_back({*n, -1});
      continue;
    }
    const UOpRef& buffer = is_buffer(view) ? view : view->src(0);
    auto o = output_of.find(buffer.get());
    if (o == output_of.end() || buffer_view(buffer, e->outputs[size_t(o->second)].shape) != view)
      return nullptr;
    e->becomes.push_back({*n, o->second});
  }
  return e;
}

std::atomic<uint64_t> batched_replays{0};

Schedule replay(const Entry& e, const Structure& g) {
  std::vector<UOpRef> outputs;
  outputs.reserve(e.outputs.size());
  for (const auto& o : e.outputs) {
    outputs.push_back(make_buffer(o.device, o.dtype, o.size));
    buffer_arg(outputs.back())
        .set_storage(o.allocator->alloc(uint64_t(o.size) * uint64_t(o.dtype.itemsize())));
  }
  std::vector<PreparedLaunch> launches;
  launches.reserve(e.launches.size());
  for (const auto& l : e.launches) {
    PreparedLaunch p{l.kernel, {}};
    p.buffers.reserve(l.buffers.size());
    for (int32_t b : l.buffers) p.buffers.push_back(b >= 0 ? g.order()[size_t(b)] : outputs[size_t(~b)]);
    launches.push_back(std::move(p));
  }
  // (off by default: no count, so the replay path pays nothing for it)
  const bool batch = config().eager_batch && e.replays.fetch_add(1, std::memory_order_relaxed) >= 1;
  if (batch && run_prepared_as_batch(launches))
    ++batched_replays;
  else
    run_prepared(launches);
  Schedule s;
  s.keep_alive.reserve(e.becomes.size());
  for (auto [node, output] : e.becomes) {
    const UOpRef& lazy = g.order()[size_t(node)];
    s.becomes[lazy.get()] =
        output < 0 ? lazy : buffer_view(outputs[size_t(output)], e.outputs[size_t(output)].shape);
    s.keep_alive.push_back(lazy);
  }
  return s;
}

struct ScheduleCache {
  std::mutex mutex;
  std::unordered_multimap<size_t, std::shared_ptr<const Entry>> entries;
  std::atomic<uint64_t> hits{0}, misses{0};
};
ScheduleCache& schedule_cache() {
  static ScheduleCache& cache = *new ScheduleCache; // never destroyed: see open_devices()
  return cache;
}

} // namespace

Schedule realize_schedule(const std::vector<UOpRef>& targets, const ScheduleOptions& options) {
  if (!config().schedule_cache || config().debug >= 3 || viz::recorder()) {
    Schedule s = create_schedule(targets, options);
    run_schedule(s);
    return s;
  }
  ScheduleCache& cache = schedule_cache();
  const Structure g(targets, OpaqueKeying::Presence);
  std::shared_ptr<const Entry> hit;
  {
    std::lock_guard lock(cache.mutex);
    auto [first, last] = cache.entries.equal_range(g.hash());
    for (auto it = first; it != last && !hit; ++it)
      if (it->second->matches(g, options)) hit = it->second;
  }
  if (hit) {
    ++cache.hits;
    return replay(*hit, g);
  }
  ++cache.misses;
  Schedule s = create_schedule(targets, options);
  run_schedule(s);
  if (auto entry = make_entry(g, s, options)) {
    std::lock_guard lock(cache.mutex);
    if (cache.entries.size() >= kMaxEntries) cache.entries.clear();
    cache.entries.emplace(g.hash(), std::move(entry));
  }
  return s;
}

ScheduleCacheStats schedule_cache_stats() {
  ScheduleCache& cache = schedule_cache();
  std::lock_guard lock(cache.mutex);
  return {cache.hits.load(), cache.misses.load(), cache.entries.size(), batched_replays.load()};
}

void forget_schedules() {
  ScheduleCache& cache = schedule_cache();
  std::lock_guard lock(cache.mutex);
  cache.entries.clear();
}

} // namespace tg
