#include "tools/tg/describe.hpp"

#include "kernel/runtime/devices.hpp"

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

namespace tg::cli {

std::string dtype_list(uint64_t mask) {
  std::string out;
  for (tg_dtype d = 1; d < TG_DTYPE_COUNT; ++d)
    if (mask & TG_DTYPE_BIT(d)) out += (out.empty() ? "" : " ") + std::string(sdk::dtype_name(d));
  return out.empty() ? "none" : out;
}

std::string feature_list(uint64_t features) {
  static const std::pair<uint64_t, const char*> names[] = {{TG_FEATURE_LOCAL_MEMORY, "local_memory"},
                                                           {TG_FEATURE_BARRIER, "barrier"},
                                                           {TG_FEATURE_TIMING, "timing"},
                                                           {TG_FEATURE_HOST_MEMORY, "host_memory"},
                                                           {TG_FEATURE_FP16_MATH, "fp16_math"},
                                                           {TG_FEATURE_TENSOR_CORES, "tensor_cores"},
                                                           {TG_FEATURE_SUBGROUPS, "subgroups"},
                                                           {TG_FEATURE_ASYNC, "async"}};
  std::string out;
  for (auto [bit, name] : names)
    if (features & bit) out += (out.empty() ? "" : " ") + std::string(name);
  return out.empty() ? "none" : out;
}

namespace {
std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }
std::string dims(const uint32_t (&v)[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}
} // namespace

namespace {

void describe_device(std::ostream& os, const DeviceReport& d, const std::string& indent) {
  const auto& p = d.properties;
  os << indent << "name:            " << p.name << "\n"
     << indent << "vendor:          " << p.vendor << "\n"
     << indent << "arch:            " << p.arch << "\n"
     << indent << "memory:          " << mib(p.memory_bytes) << " (max buffer " << mib(p.max_buffer_bytes)
     << ")\n"
     << indent << "compute units:   " << p.compute_units << "\n"
     << indent << "local size max:  " << dims(p.max_local_size) << " (" << p.max_local_threads
     << " threads)\n"
     << indent << "global size max: " << dims(p.max_global_size) << "\n"
     << indent << "local memory:    " << p.local_memory_bytes << " bytes\n"
     << indent << "args max:        " << p.max_buffer_args << " buffers, " << p.max_scalar_args
     << " scalars\n"
     << indent << "alignment:       " << p.buffer_alignment << " bytes\n"
     << indent << "subgroup/vector: " << p.subgroup_size << " threads, " << p.vector_bytes << " bytes\n"
     << indent << "dtypes:          " << dtype_list(p.dtype_mask) << "\n"
     << indent << "features:        " << feature_list(p.features) << "\n";
  for (const auto& [key, value] : d.attributes) os << indent << key << ": " << value << "\n";
  for (size_t i = 0; i < d.matrix_units.size(); ++i)
    os << indent << "matrix unit " << i << ":   " << sdk::matrix_unit_name(d.matrix_units[i]) << " ("
       << sdk::matrix_unit_summary(d.matrix_units[i]) << ")\n";
}

// What the worker thread and the waiting caller share; the worker may outlive the caller.
struct Query {
  std::mutex mutex;
  std::condition_variable answered;
  bool done = false;
  std::string call = "device_count"; // the call in progress, for the hung message
  PluginReport report;
};

void read_devices(const std::shared_ptr<Plugin>& plugin, Query& query) {
  auto entering = [&](std::string call) {
    std::lock_guard lock(query.mutex);
    query.call = std::move(call);
  };
  PluginReport report;
  try {
    int count = plugin->device_count();
    for (int i = 0; i < count; ++i) {
      DeviceReport d;
      d.index = i;
      try {
        entering("opening device " + std::to_string(i));
        auto device = Device::open(plugin, i);
        d.properties = device->properties();
        d.opened = true;
        entering("device " + std::to_string(i) + "'s attributes");
        d.attributes = device->attributes();
        entering("device " + std::to_string(i) + "'s matrix units");
        d.matrix_units = device->matrix_units();
      } catch (const std::exception& e) {
        d.error = e.what();
      }
      report.devices.push_back(std::move(d));
    }
  } catch (const DeviceUnavailableError& e) {
    report.state = PluginReport::State::unavailable; // hardware absent here: not a failure
    report.message = e.what();
  } catch (const std::exception& e) {
    report.state = PluginReport::State::failed;
    report.message = e.what();
  }
  std::lock_guard lock(query.mutex);
  query.report = std::move(report);
  query.done = true;
  query.answered.notify_all();
}

// The threads that call into plugins for query_plugin_devices. They never return: a thread that
// returns while the process exits races its teardown, and under GCC 12's AddressSanitizer a
// returning thread aborted unmapping its alternate signal stack. A thread stuck in a hung plugin
// stays stuck, so a query finding no idle thread starts another.
class PluginCallers {
public:
  static PluginCallers& get() {
    static PluginCallers& callers = *new PluginCallers; // never destroyed: its threads outlive main
    return callers;
  }
  void run(std::function<void()> job) {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (idle_ == 0)
      std::thread([this] { serve(); }).detach();
    else
      wake_.notify_one();
  }

private:
  [[noreturn]] void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [&] { return !jobs_.empty(); });
      --idle_;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  int idle_ = 0;
};

std::string seconds(std::chrono::milliseconds t) {
  std::ostringstream out;
  out << double(t.count()) / 1000.0 << " s";
  return out.str();
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string human_bytes(uint64_t bytes) {
  if (bytes < (uint64_t(1) << 30)) return mib(bytes);
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << double(bytes) / double(uint64_t(1) << 30) << " GiB";
  return out.str();
}

} // namespace

int PluginReport::failures() const {
  if (state == State::failed || state == State::hung) return 1;
  return int(
      std::count_if(devices.begin(), devices.end(), [](const DeviceReport& d) { return !d.error.empty(); }));
}

PluginReport query_plugin_devices(const std::shared_ptr<Plugin>& plugin, std::chrono::milliseconds deadline) {
  auto query = std::make_shared<Query>();
  PluginCallers::get().run([plugin, query] { read_devices(plugin, *query); });
  std::unique_lock lock(query->mutex);
  if (query->answered.wait_for(lock, deadline, [&] { return query->done; })) return std::move(query->report);
  // Nothing can stop a call into the plugin: its thread stays blocked in it.
  PluginReport hung;
  hung.state = PluginReport::State::hung;
  hung.message = plugin->name() + " (" + plugin->path().string() + "): no answer within " +
                 seconds(deadline) + " (in " + query->call + "); skipped";
  return hung;
}

void describe_plugin_devices(std::ostream& os, const PluginReport& report, const std::string& indent) {
  switch (report.state) {
  case PluginReport::State::unavailable:
    os << indent << "UNAVAILABLE: " << report.message << "\n";
    return;
  case PluginReport::State::failed:
    os << indent << "error: " << report.message << "\n";
    return;
  case PluginReport::State::hung:
    os << indent << "HUNG: " << report.message << "\n";
    return;
  case PluginReport::State::ok:
    break;
  }
  const size_t count = report.devices.size();
  os << indent << count << (count == 1 ? " device" : " devices") << "\n";
  for (const auto& d : report.devices) {
    os << indent << "device " << d.index << ":\n";
    if (d.opened) describe_device(os, d, indent + "  ");
    if (!d.opened)
      os << indent << "  cannot open: " << d.error << "\n";
    else if (!d.error.empty())
      os << indent << "  attributes: " << d.error << "\n";
  }
}

std::vector<DeviceRow> device_rows(const std::string& plugin, const PluginReport& report) {
  const std::string device = DeviceName{plugin, 0}.canonical();
  auto plugin_row = [&](const std::string& status) {
    return std::vector<DeviceRow>{{device, "-", plugin, "-", "-", status}};
  };
  switch (report.state) {
  case PluginReport::State::unavailable:
    return plugin_row("UNAVAILABLE: " + first_line(report.message));
  case PluginReport::State::failed:
    return plugin_row("error: " + first_line(report.message));
  case PluginReport::State::hung:
    return plugin_row("HUNG: " + first_line(report.message));
  case PluginReport::State::ok:
    break;
  }
  if (report.devices.empty()) return plugin_row("no devices");
  std::vector<DeviceRow> rows;
  for (const auto& d : report.devices) {
    DeviceRow row{DeviceName{plugin, d.index}.canonical(), "-", plugin, "-", "-", "ok"};
    if (d.opened) {
      const auto& p = d.properties;
      row.name = p.name;
      row.vendor_arch = p.vendor[0] ? std::string(p.vendor) + " / " + p.arch : std::string(p.arch);
      row.memory = human_bytes(p.memory_bytes);
    }
    if (!d.opened)
      row.status = "cannot open: " + first_line(d.error);
    else if (!d.error.empty())
      row.status = "attributes: " + first_line(d.error);
    rows.push_back(std::move(row));
  }
  return rows;
}

void print_device_table(std::ostream& os, const std::vector<DeviceRow>& rows, const std::string& indent) {
  const DeviceRow header{"DEVICE", "NAME", "PLUGIN", "VENDOR / ARCH", "MEMORY", "STATUS"};
  auto fields = [](const DeviceRow& r) {
    return std::array<const std::string*, 6>{&r.device,      &r.name,   &r.plugin,
                                             &r.vendor_arch, &r.memory, &r.status};
  };
  std::array<size_t, 6> width{};
  auto widen = [&](const DeviceRow& r) {
    for (size_t c = 0; c < 6; ++c) width[c] = std::max(width[c], fields(r)[c]->size());
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  auto print = [&](const DeviceRow& r) {
    os << indent;
    for (size_t c = 0; c < 5; ++c)
      os << *fields(r)[c] << std::string(width[c] - fields(r)[c]->size() + 2, ' ');
    os << r.status << "\n";
  };
  print(header);
  for (const auto& r : rows) print(r);
}

} // namespace tg::cli
