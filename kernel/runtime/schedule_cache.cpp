#include "kernel/runtime/schedule_cache.hpp"

#include "kernel/runtime/config.hpp"
#include "kernel/runtime/realize.hpp"
#include "kernel/runtime/viz_recorder.hpp"
#include "kernel/schedule/buffer.hpp"

#include <atomic>
#include <bit>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace tg {

namespace {

constexpr size_t kMaxEntries = 4096; // a bound for programs whose structures never repeat

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t dtype_hash(DType d) {
  return size_t(d.scalar) | size_t(d.count) << 8 | size_t(d.ptr) << 24 | size_t(d.local) << 25;
}

// A NOOP with an opaque arg carries a custom gradient's function (autograd.cpp). Scheduling and
// codegen treat every NOOP as its source's value, so the key records only that the function is
// there, not which: a training step (conv2d's gradient is one) then hits like any expression,
// and the entry keeps no function, so nothing it captures stays alive.
bool opaque_noop(const UOp& u) {
  return u.op() == Ops::NOOP && std::holds_alternative<OpaqueArgRef>(u.arg());
}
constexpr size_t kOpaqueNoopHash = 0x6f70617175654e4fULL;

// The expression to realize, children first (the target, or the SINK over several, last), with each node's
// sources as indices into that order and a hash of the structure.
struct Graph {
  std::vector<UOpRef> order;
  std::vector<int32_t> src;   // every node's source indices, one after another
  std::vector<uint32_t> srcs; // where node i's indices start in `src` (one extra at the end)
  // node -> its index in `order`; only for large graphs: a small one (the tiny op's 4 nodes) is
  // searched in `order`, which saves the map's allocations on every realize. A flat
  // open-addressing table (at most half full): one allocation instead of one per node (a training
  // step's realize walks ~1000 nodes; docs/cuda.md session 19).
  std::vector<std::pair<const UOp*, int32_t>> large_index;
  int index_bits = 0;
  size_t hash = 0;
  static constexpr size_t kSmall = 16;

  // One target is walked from itself: a SINK node would be made and freed on every realize of
  // the tiny op (two intern-table locks, two allocations). Several targets get their SINK last.
  explicit Graph(const std::vector<UOpRef>& targets)
      : order(toposort(targets.size() == 1 ? targets[0] : UOp::sink(targets))) {
    if (order.size() > kSmall) {
      index_bits = std::bit_width(2 * order.size() - 1);
      large_index.assign(size_t(1) << index_bits, {nullptr, 0});
    }
    srcs.reserve(order.size() + 1);
    src.reserve(2 * order.size()); // most nodes have one or two sources: one allocation
    for (size_t i = 0; i < order.size(); ++i) {
      const UOp& u = *order[i];
      if (order.size() > kSmall) large_index[slot(&u)] = {&u, int32_t(i)};
      srcs.push_back(uint32_t(src.size()));
      size_t h = mix(size_t(u.op()), dtype_hash(u.dtype()));
      for (const auto& s : u.src()) {
        src.push_back(find(s.get()).value()); // toposort: every source comes before its user
        h = mix(h, size_t(src.back()));
      }
      if (u.op() == Ops::BUFFER) { // a placeholder: what it holds, not which buffer
        const BufferArg& b = buffer_arg(order[i]);
        h = mix(mix(h, std::hash<int64_t>{}(b.size())), std::hash<std::string>{}(b.device()));
      } else if (opaque_noop(u)) {
        h = mix(h, kOpaqueNoopHash);
      } else {
        h = mix(h, arg_hash(u.arg()));
      }
      hash = mix(hash, h);
    }
    srcs.push_back(uint32_t(src.size()));
  }
  // The index of node u in `order`, if it is there.
  std::optional<int32_t> find(const UOp* u) const {
    if (order.size() > kSmall) {
      const auto& [node, index] = large_index[slot(u)];
      return node ? std::optional<int32_t>(index) : std::nullopt;
    }
    for (size_t i = order.size(); i-- > 0;) // from the end: a node's sources are mostly just before it
      if (order[i].get() == u) return int32_t(i);
    return std::nullopt;
  }
  // u's slot in large_index, or the empty one where it would go (linear probing from a
  // multiplicative hash's high bits: node addresses share their low bits).
  size_t slot(const UOp* u) const {
    const size_t mask = large_index.size() - 1;
    size_t i = (reinterpret_cast<std::uintptr_t>(u) * 0x9e3779b97f4a7c15ULL) >> (64 - index_bits);
    while (large_index[i].first && large_index[i].first != u) i = (i + 1) & mask;
    return i;
  }
  std::span<const int32_t> sources(size_t i) const {
    return {src.data() + srcs[i], src.data() + srcs[i + 1]};
  }
};

// One node of a cached expression: its fields without its sources' identities.
struct NodeKey {
  Ops op;
  DType dtype;
  Arg arg; // empty for a BUFFER and an opaque NOOP
  bool opaque_noop = false;
  std::vector<int32_t> src;
  int64_t size = 0;   // a BUFFER's elements
  std::string device; // a BUFFER's device
};

// How to replay a schedule: buffers are named by node index (>= 0: an input BUFFER of the
// expression) or by ~j (< 0: the output of the schedule's j-th kernel).
struct Entry {
  size_t hash = 0;
  std::string device; // ScheduleOptions::device: where kernels reading no buffer run
  bool noopt = false, stage = true;
  int beam = 0;
  std::vector<NodeKey> nodes;
  struct Output {
    std::string device;
    DType dtype;
    int64_t size = 0;
    Dims shape;
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

  bool matches(const Graph& g, const ScheduleOptions& options) const {
    const Config& c = config();
    if (hash != g.hash || nodes.size() != g.order.size() || device != options.device || noopt != c.noopt ||
        beam != c.beam || stage != c.stage)
      return false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeKey& k = nodes[i];
      const UOp& u = *g.order[i];
      if (k.op != u.op() || !(k.dtype == u.dtype())) return false;
      auto src = g.sources(i);
      if (!std::equal(src.begin(), src.end(), k.src.begin(), k.src.end())) return false;
      if (k.op == Ops::BUFFER) {
        const BufferArg& b = buffer_arg(g.order[i]);
        if (b.size() != k.size || b.device() != k.device) return false;
      } else if (k.opaque_noop != opaque_noop(u)) {
        return false;
      } else if (!k.opaque_noop && !arg_equal(k.arg, u.arg())) {
        return false;
      }
    }
    return true;
  }
};

// The entry for a schedule just run, or null when it cannot be replayed (a copy between
// devices, a result that is not a kernel's output).
std::shared_ptr<const Entry> make_entry(const Graph& g, const Schedule& s, const ScheduleOptions& options) {
  auto e = std::make_shared<Entry>();
  e->hash = g.hash;
  e->device = options.device;
  e->noopt = config().noopt;
  e->beam = config().beam;
  e->stage = config().stage;
  e->nodes.reserve(g.order.size());
  for (size_t i = 0; i < g.order.size(); ++i) {
    const UOpRef& u = g.order[i];
    auto src = g.sources(i);
    NodeKey k{u->op(), u->dtype(), {}, false, {src.begin(), src.end()}, 0, {}};
    if (u->op() == Ops::BUFFER) {
      k.size = buffer_arg(u).size();
      k.device = buffer_arg(u).device();
    } else if (opaque_noop(*u)) {
      k.opaque_noop = true; // the function is not kept (see opaque_noop)
    } else if (std::holds_alternative<OpaqueArgRef>(u->arg())) {
      // Any other opaque arg may change what runs and may keep what it refers to alive in the
      // cache: such expressions are not cached.
      return nullptr;
    } else {
      k.arg = u->arg();
    }
    e->nodes.push_back(std::move(k));
  }
  std::unordered_map<const UOp*, int32_t> output_of;
  for (const auto& item : s.items) {
    if (item.ast->src(0)->op() == Ops::COPY) return nullptr;
    const UOpRef& out = item.buffers[0];
    output_of.emplace(out.get(), int32_t(e->outputs.size()));
    e->outputs.push_back({buffer_arg(out).device(), out->dtype(), buffer_arg(out).size(), item.shape});
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

Schedule replay(const Entry& e, const Graph& g) {
  std::vector<UOpRef> outputs;
  outputs.reserve(e.outputs.size());
  for (const auto& o : e.outputs) outputs.push_back(make_buffer(o.device, o.dtype, o.size));
  std::vector<PreparedLaunch> launches;
  launches.reserve(e.launches.size());
  for (const auto& l : e.launches) {
    PreparedLaunch p{l.kernel, {}};
    p.buffers.reserve(l.buffers.size());
    for (int32_t b : l.buffers) p.buffers.push_back(b >= 0 ? g.order[size_t(b)] : outputs[size_t(~b)]);
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
    const UOpRef& lazy = g.order[size_t(node)];
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
  const Graph g(targets);
  std::shared_ptr<const Entry> hit;
  {
    std::lock_guard lock(cache.mutex);
    auto [first, last] = cache.entries.equal_range(g.hash);
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
    cache.entries.emplace(g.hash, std::move(entry));
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
