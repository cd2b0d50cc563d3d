#include "kernel/engine/realize.hpp"

#include "kernel/engine/beam.hpp"
#include "kernel/engine/capture.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/engine/interrupt.hpp"
#include "kernel/engine/launch_counter.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"
#include "kernel/schedule/structure.hpp"

#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace tg {

DeviceStorage& storage_of(const UOpRef& buffer, bool allocate) {
  const BufferArg& arg = buffer_arg(buffer);
  if (BufferStorage* s = arg.storage_if_set()) return static_cast<DeviceStorage&>(*s); // the node holds it
  if (!allocate)
    throw Error("buffer " + arg.str() + " holds no data: it was never written (realize its tensor first)");
  OpenDevice dev = open_device(arg.device());
  auto storage = dev.allocator->alloc(uint64_t(arg.size()) * uint64_t(buffer->dtype().itemsize()));
  arg.set_storage(storage);
  return *storage;
}

namespace {

std::string gflops(double ops, double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%8.2f GFLOPS", ops / (ms * 1e6));
  return buf;
}

// BEAM=N: the searched (or cached) list for this kernel, said at DEBUG>=2.
std::vector<Opt> beam_opts(const ScheduleItem& item, const std::shared_ptr<Device>& device,
                           const LowerOptions& options, int width) {
  BeamSettings settings;
  settings.width = width;
  settings.timeout_s = config().beam_timeout_s;
  BeamResult r = beam_search(item, device, options, settings);
  if (config().debug >= 2) {
    std::string name = "kernel";
    for (auto d : item.shape) name += "_" + std::to_string(d);
    if (r.from_cache)
      std::cout << "beam: " << name << " from the BEAM cache: " << to_string(r.opts) << "\n";
    else if (r.unverifiable)
      std::cout << "beam: " << name
                << " not searched: the heuristic's kernel differs from the unoptimized one ("
                << r.wrong_example << "), so no candidate can be checked; kept " << to_string(r.opts) << "\n";
    else {
      char line[256];
      std::snprintf(line, sizeof line,
                    "beam: %s searched in %.0f ms%s: %d rounds, %d timed, dropped %d refused, %d duplicate, "
                    "%d failed, %d wrong; %.3f ms (heuristic %.3f ms): ",
                    name.c_str(), r.search_ms, r.timed_out ? " (BEAM_TIMEOUT)" : "", r.rounds, r.timed,
                    r.refused, r.duplicate, r.failed, r.wrong, r.best_ns / 1e6, r.heuristic_ns / 1e6);
      std::cout << line << to_string(r.opts) << "\n";
      if (!r.wrong_example.empty()) std::cout << "beam:   wrong, e.g. " << r.wrong_example << "\n";
    }
  }
  return r.opts;
}

} // namespace

LowerOptions kernel_options(const Device& device, bool optimize) {
  LowerOptions options = lower_options(device.properties(), optimize);
  options.staging = config().stage;
  const std::string where = "device " + device.plugin().name() + ":" + std::to_string(device.index());
  bool tc_shape = false, wg_shape = false;
  for (const auto& [key, value] : device.attributes()) {
    if (key == "max_loop_iterations") {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || end != value.data() + value.size() || n == 0)
        throw Error(where + ": attribute max_loop_iterations is \"" + value + "\", not a count > 0");
      options.max_loop_iterations = n;
    } else if (key == "max_local_memory_bytes") {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || end != value.data() + value.size())
        throw Error(where + ": attribute max_local_memory_bytes is \"" + value + "\", not a byte count");
      options.max_local_memory_bytes = options.local_memory_bytes ? n : 0; // none without local memory
    } else if (key == "async_local_copies") {
      if (value != "16")
        throw Error(where + ": attribute async_local_copies is \"" + value + "\", not 16 (bytes)");
      options.async_local_copies = options.local_memory_bytes > 0;
    } else if (key == "lane_gates") {
      if (value != "load") throw Error(where + ": attribute lane_gates is \"" + value + "\", not load");
      options.lane_gates = true;
    } else if (key == "work_group_execution") {
      if (value != "serial" && value != "parallel")
        throw Error(where + ": attribute work_group_execution is \"" + value + "\", not serial or parallel");
      options.serial_work_groups = value == "serial";
    } else if (key == "tensor_cores") { // the WMMA shapes, e.g. "m16n8k16:f16,bf16->f32"
      tc_shape = value.find("m16n8k16") != std::string::npos;
      wg_shape = value.find("m64n128k16:f16,bf16->f32@wg") != std::string::npos;
    }
  }
  options.matrix_units = matrix_unit_choices(device.matrix_units(), device.properties(), tc_shape, wg_shape);
  return options;
}

namespace {

// What graph-building code asks of a device, computed once per open device.
struct DeviceTraits {
  bool parallel = false;
  uint32_t unit_dtypes = 0; // bit d: a matrix unit whose A and B are tg_dtype d
};

DeviceTraits device_traits(const std::string& device) {
  OpenDevice dev = open_device(device);
  // keyed by the open device (a weak reference: a device closed and opened again is asked again)
  static std::mutex mutex;
  static std::map<const Device*, std::pair<std::weak_ptr<Device>, DeviceTraits>> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(dev.device.get()); it != known.end() && !it->second.first.expired())
      return it->second.second;
  }
  const LowerOptions options = kernel_options(*dev.device, true);
  DeviceTraits traits{options.parallel_groups(), 0};
  for (const auto& u : options.matrix_units)
    if (u.unit.a_dtype == u.unit.b_dtype && u.unit.a_dtype < 32) traits.unit_dtypes |= 1u << u.unit.a_dtype;
  std::lock_guard lock(mutex);
  std::erase_if(known, [](const auto& entry) { return entry.second.first.expired(); });
  known[dev.device.get()] = {dev.device, traits};
  return traits;
}

} // namespace

bool parallel_work_groups(const std::string& device) { return device_traits(device).parallel; }

bool has_matrix_units(const std::string& device, DType dtype) {
  const tg_dtype d = to_abi(dtype);
  return d < 32 && (device_traits(device).unit_dtypes >> d & 1u) != 0;
}

namespace {

// A schedule item's place in the kernel cache, and what is there.
struct KernelLookup {
  std::string cache_name;
  UOpRef key;
  bool want_source = false;
  std::shared_ptr<PreparedKernel> hit; // null: it must be built
};

KernelLookup look_up_kernel(const ScheduleItem& item, bool want_source) {
  KernelLookup l;
  const int beam = config().noopt ? 0 : config().beam;
  l.cache_name = buffer_arg(item.buffers[0]).device() + (config().noopt ? "|NOOPT" : "") +
                 (beam ? "|BEAM=" + std::to_string(beam) : ""); // options change the kernel
  l.key = KernelCache::key_of(item);
  l.want_source = want_source || config().debug >= 3 || engine().observer();
  if (auto hit = engine().kernels().find(l.cache_name, l.key);
      hit && (!l.want_source || !hit->program->source.empty()))
    l.hit = std::move(hit);
  return l;
}

// Lowers, compiles and caches a kernel the cache does not hold.
std::shared_ptr<PreparedKernel> build_kernel(const ScheduleItem& item, KernelLookup lookup) {
  Engine& eng = engine();
  const std::string& device_name = buffer_arg(item.buffers[0]).device();
  const int beam = config().noopt ? 0 : config().beam;
  EngineObserver* observer = eng.observer();
  const bool want_source = lookup.want_source;
  OpenDevice dev = open_device(device_name); // after the lookup: a hit needs no device
  LowerOptions options = kernel_options(*dev.device, !config().noopt);
  if (beam) options.opts = beam_opts(item, dev.device, options, beam);
  auto kernel = std::make_shared<PreparedKernel>();
  // The observer (VIZ) sees this kernel's graph rewrites.
  struct Lowering {
    EngineObserver* o;
    explicit Lowering(EngineObserver* observer) : o(observer) {
      if (o) o->begin_lowering();
    }
    ~Lowering() {
      if (o) o->end_lowering();
    }
    Lowering(const Lowering&) = delete;
    Lowering& operator=(const Lowering&) = delete;
  } lowering(observer);
  kernel->lowered = lower_kernel(item, options);
  if (config().debug >= 4)
    std::cout << "=== schedule item\n"
              << item.ast->str() << "\n=== lowered (" << kernel->lowered.opts << ")\n"
              << kernel->lowered.sink->str() << std::endl;
  kernel->linear = linearize(kernel->lowered.sink, kernel->lowered.name);
  check_loop_limit(kernel->linear, kernel->lowered.name, kernel->lowered.opts, options.max_loop_iterations);
  kernel->program =
      eng.programs().get(dev.device, kernel->linear.ir, want_source, kernel->lowered.compile_level);
  eng.kernels().insert(lookup.cache_name, std::move(lookup.key), kernel);
  return kernel;
}

} // namespace

std::shared_ptr<PreparedKernel> prepare_kernel(const ScheduleItem& item, bool want_source) {
  KernelLookup lookup = look_up_kernel(item, want_source);
  if (lookup.hit) return lookup.hit;
  return build_kernel(item, std::move(lookup));
}

namespace {

void run_copy(const ScheduleItem& item) {
  const UOpRef& copy = item.ast->src(0);
  const UOpRef& dst = copy->src(0);
  UOpRef src = copy->src(1);
  if (src->op() == Ops::RESHAPE) src = src->src(0);
  DeviceStorage& from = storage_of(src);
  DeviceStorage& to = storage_of(dst, true);
  std::vector<std::byte> host(from.buffer().size());
  from.buffer().copy_to_host(host);
  to.buffer().copy_from_host(host);
}

} // namespace

namespace {

// What a run launched so far: the DEBUG=1 line's figures.
struct RunTotals {
  double ms = 0;
  int launched = 0;
};

// Launches one prepared kernel on `buffers` (allocated already): records it for a JIT capture,
// counts it, and prints its DEBUG lines. `item` (may be null) is for VIZ.
void launch_kernel(const std::shared_ptr<PreparedKernel>& kernel, std::span<const UOpRef> buffers,
                   const ScheduleItem* item, RunTotals& totals) {
  const int debug = config().debug;
  EngineObserver* viz = engine().observer();
  // The arguments on the stack for the common launch: this runs once per kernel of every realize.
  std::array<tg_buffer_arg, 16> near;
  std::vector<tg_buffer_arg> far;
  tg_buffer_arg* args = near.data();
  if (buffers.size() > near.size()) {
    far.resize(buffers.size());
    args = far.data();
  }
  for (size_t i = 0; i < buffers.size(); ++i) args[i] = {storage_of(buffers[i]).buffer().raw(), 0};
  LaunchDims dims;
  dims.global = kernel->lowered.global;
  dims.local = kernel->lowered.local;
  const std::string& device = buffer_arg(buffers[0]).device();
  // Only DEBUG, VIZ and a LaunchCounter read the time: without them, no device lookup and no clock.
  const bool timed = debug >= 1 || viz || LaunchCounter::counting();
  std::shared_ptr<Device> dev_handle; // for DEBUG and VIZ: the device's features and plugin name
  if (debug >= 1 || viz) dev_handle = open_device(device).device;
  bool measure = dev_handle && (dev_handle->properties().features & TG_FEATURE_TIMING);
  std::chrono::steady_clock::time_point t0;
  if (timed) t0 = std::chrono::steady_clock::now();
  auto elapsed = kernel->program->program.launch(dims, {args, buffers.size()}, {}, measure);
  if (CaptureScope* capture = CaptureScope::active()) { // the JIT records what ran
    std::vector<std::shared_ptr<DeviceStorage>> storages;
    for (const auto& b : buffers)
      storages.push_back(std::static_pointer_cast<DeviceStorage>(buffer_arg(b).storage()));
    capture->record(kernel, storages, dims, device);
  }
  ++totals.launched;
  if (!timed) return;
  double ms = elapsed
                  ? double(*elapsed) / 1e6
                  : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  totals.ms += ms;
  LaunchCounter::note_kernel(kernel->lowered.name, device, ms);
  if (viz && item) viz->on_kernel(*item, *kernel, ms);
  if (debug >= 2)
    std::cout << kernel_line(device, totals.launched, *kernel, buffers.size(), ms,
                             kernel->program->from_disk ? "  (disk cache)" : "")
              << "\n";
  if (debug >= 3) {
    std::cout << "opts " << kernel->lowered.opts << "\n" << kernel->linear.text;
    std::cout << "--- " << dev_handle->plugin().name() << " source\n" << kernel->program->source << "\n";
  }
}

} // namespace

std::string kernel_line(const std::string& device, int index, const PreparedKernel& kernel, size_t args,
                        double ms, const char* note) {
  char line[256];
  std::snprintf(line, sizeof line, "*** %-6s %4d %-28s arg %2zu  tm %9.3f ms  %s  %8.2f GB/s%s",
                device.c_str(), index, kernel.lowered.name.c_str(), args, ms,
                gflops(double(kernel.lowered.ops), ms).c_str(), double(kernel.lowered.bytes) / (ms * 1e6),
                note);
  return line;
}

namespace {

void print_totals(const RunTotals& totals, const char* how) {
  if (config().debug >= 1 && totals.launched)
    std::cout << "realize: " << totals.launched << (totals.launched == 1 ? " kernel" : " kernels") << " in "
              << totals.ms << " ms" << how << "\n";
}

} // namespace

namespace {

// Lowers and compiles a schedule's kernels on all cores before the first launch: a training step's
// first run compiles hundreds of kernels (GPT-2's: 1128, over a minute one at a time through NVRTC).
// A kernel that fails here is prepared again in order by run_schedule, which reports its error
// after the kernels before it ran, as without this. Not under VIZ or DEBUG>=4 (their output
// follows the kernels' order) nor BEAM (which times kernels and uses every core itself).
// Kernels the cache holds are looked up here once; threads start only for two or more to build.
std::vector<std::shared_ptr<PreparedKernel>> prepare_in_parallel(const Schedule& schedule) {
  std::vector<std::shared_ptr<PreparedKernel>> out(schedule.items.size());
  if (engine().observer() || config().debug >= 4 || (config().beam && !config().noopt)) return out;
  std::vector<std::pair<size_t, KernelLookup>> todo;
  for (size_t i = 0; i < schedule.items.size(); ++i) {
    const ScheduleItem& item = schedule.items[i];
    if (item.ast->src(0)->op() == Ops::COPY || dims_prod(item.shape) == 0) continue;
    KernelLookup lookup = look_up_kernel(item, false);
    if (lookup.hit)
      out[i] = std::move(lookup.hit);
    else
      todo.emplace_back(i, std::move(lookup));
  }
  const size_t threads = std::min<size_t>(todo.size(), std::thread::hardware_concurrency());
  if (threads < 2) return out; // run_schedule builds a lone missing kernel itself
  std::atomic<size_t> next{0}, finished{0};
  std::atomic<bool> stop{false};
  // One kernel; the calling thread polls for an interrupt (Ctrl-C) between kernels, as the
  // serial loop does, so the wait for it is the kernels already being built.
  auto build_next = [&]() -> bool {
    const size_t k = next++;
    if (k >= todo.size() || stop) return false;
    try {
      out[todo[k].first] = build_kernel(schedule.items[todo[k].first], std::move(todo[k].second));
    } catch (...) { // reported in order by run_schedule
    }
    return true;
  };
  std::exception_ptr interrupted;
  {
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t)
      pool.emplace_back([&] {
        while (build_next()) {
        }
        ++finished;
      });
    try {
      do InterruptCheck::poll();
      while (build_next());
      while (finished < pool.size()) {
        InterruptCheck::poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    } catch (...) {
      stop = true;
      interrupted = std::current_exception();
    }
  } // joins the pool
  if (interrupted) std::rethrow_exception(interrupted);
  return out;
}

} // namespace

double run_schedule(const Schedule& schedule, std::vector<std::shared_ptr<PreparedKernel>>* kernels) {
  RunTotals totals;
  EngineObserver* viz = engine().observer();
  if (viz) viz->on_schedule();
  if (kernels) kernels->assign(schedule.items.size(), nullptr);
  std::vector<std::shared_ptr<PreparedKernel>> prepared = prepare_in_parallel(schedule);
  for (size_t i = 0; i < schedule.items.size(); ++i) {
    const ScheduleItem& item = schedule.items[i];
    InterruptCheck::poll();
    if (item.ast->src(0)->op() == Ops::COPY) {
      if (CaptureScope::active())
        throw Error("JIT capture: a copy between devices inside a captured function is not supported "
                    "(move the data before calling it)");
      run_copy(item);
      LaunchCounter::note_copy();
      if (viz) viz->on_copy(item, 0);
      continue;
    }
    storage_of(item.buffers[0], true);
    if (dims_prod(item.shape) == 0) continue; // nothing to compute: an empty buffer
    std::shared_ptr<PreparedKernel> kernel = prepared[i] ? std::move(prepared[i]) : prepare_kernel(item);
    launch_kernel(kernel, item.buffers, &item, totals);
    if (kernels) (*kernels)[i] = std::move(kernel);
  }
  print_totals(totals, "");
  return totals.ms;
}

double run_prepared(std::span<const PreparedLaunch> launches) {
  RunTotals totals;
  for (const auto& l : launches) {
    InterruptCheck::poll();
    storage_of(l.buffers[0], true);
    if (l.kernel) launch_kernel(l.kernel, l.buffers, nullptr, totals);
  }
  print_totals(totals, " (schedule cache)");
  return totals.ms;
}

bool run_prepared_as_batch(std::span<const PreparedLaunch> launches) {
  if (!config().eager_batch || launches.size() < 2 || config().debug >= 1 || engine().observer() ||
      LaunchCounter::counting() || CaptureScope::active())
    return false;
  Device* device = nullptr;
  size_t kernels = 0, arg_count = 0;
  for (const auto& l : launches) {
    if (!l.kernel) continue; // an empty output: allocated, nothing to run
    Device* d = l.kernel->program->program.device().get();
    if (device && d != device) return false;
    device = d;
    ++kernels;
    arg_count += l.buffers.size();
  }
  if (kernels < 2 || !device->has_launch_batch()) return false;
  for (const auto& l : launches) storage_of(l.buffers[0], true);
  // The thread's scratch, kept between calls: no allocation per replay once it has grown.
  // launch_batch calls no realize, so one batch at a time per thread uses it.
  thread_local std::vector<tg_buffer_arg> buffers;
  thread_local std::vector<tg_launch_args> args;
  thread_local std::vector<const tg_launch_args*> list;
  buffers.resize(arg_count); // sized up front: args point into it
  args.assign(kernels, tg_launch_args{});
  list.clear();
  size_t at = 0;
  for (const auto& l : launches) {
    if (!l.kernel) continue;
    tg_launch_args& a = args[list.size()];
    a.struct_size = sizeof a;
    a.program = l.kernel->program->program.raw();
    for (size_t axis = 0; axis < 3; ++axis) {
      a.global_size[axis] = l.kernel->lowered.global[axis];
      a.local_size[axis] = l.kernel->lowered.local[axis];
    }
    a.buffers = buffers.data() + at;
    a.buffer_count = uint32_t(l.buffers.size());
    for (const auto& b : l.buffers) buffers[at++] = {storage_of(b).buffer().raw(), 0};
    list.push_back(&a);
  }
  try {
    device->launch_batch(list); // the kernels' programs keep `device` open
  } catch (const DeviceError& e) {
    std::string names;
    for (const auto& l : launches)
      if (l.kernel) names += (names.empty() ? "" : ", ") + l.kernel->lowered.name;
    throw_device_error(e.code(),
                       std::string(e.what()) + "\n(a schedule-cache replay run as one launch_batch of " +
                           std::to_string(kernels) + " kernels, launches[0..] = " + names +
                           "; without TG_EAGER_BATCH=1 they launch one by one)",
                       e.log());
  }
  return true;
}

Schedule realize_schedule(const std::vector<UOpRef>& targets, const ScheduleOptions& asked) {
  Engine& eng = engine();
  ScheduleOptions options = asked;
  options.fuse_softmax |= config().fuse_attention;
  if (!config().schedule_cache || config().debug >= 3 || eng.observer()) {
    Schedule s = create_schedule(targets, options);
    run_schedule(s);
    return s;
  }
  ScheduleCache& cache = eng.schedules();
  const Structure g(targets, OpaqueKeying::Presence);
  if (auto hit = cache.find(g, options)) {
    ScheduleCache::Bound bound = cache.bind(*hit, g);
    if (bound.batch && run_prepared_as_batch(bound.launches))
      cache.note_batched();
    else
      run_prepared(bound.launches);
    return std::move(bound.schedule);
  }
  Schedule s = create_schedule(targets, options);
  std::vector<std::shared_ptr<PreparedKernel>> kernels;
  run_schedule(s, &kernels);
  cache.insert(g, s, kernels, options);
  return s;
}

} // namespace tg
