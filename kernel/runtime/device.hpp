// RAII handles over the ABI's device, buffer and program objects.
// A Buffer or Program keeps its Device open; a Device keeps its Plugin loaded.
// Every ABI call that takes one device (or its buffers or programs) goes through
// Device::serialized, so the plugin never sees two calls on one device at once (abi.h,
// "Thread safety"); calls on different devices still run concurrently.
#pragma once

#include "kernel/runtime/plugin.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tg {

class Buffer;
class Program;

class Device : public std::enable_shared_from_this<Device> {
public:
  // Opens device `index` of the plugin. Throws DeviceUnavailableError when the hardware is absent.
  static std::shared_ptr<Device> open(std::shared_ptr<Plugin> plugin, int index = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Plugin& plugin() const { return *plugin_; }
  int index() const { return index_; }
  // Copied at open; every char array is NUL-terminated by the host, whatever the plugin wrote.
  const tg_device_properties& properties() const { return properties_; }
  std::vector<std::pair<std::string, std::string>> attributes() const;
  // ABI 1.4: the matrix units the device declares, in its order (MMA names one by index); empty
  // for a plugin without the entries. A unit that is not well formed throws PluginError naming it.
  std::vector<tg_matrix_unit> matrix_units() const;

  Buffer alloc(uint64_t size, uint64_t alignment = 0, uint32_t flags = 0);
  Program load(std::span<const std::byte> binary);
  void synchronize();

  // ABI 1.1: whether the plugin's table has launch_batch (a 1.0 table never does).
  bool has_launch_batch() const { return plugin_->has(&tg_plugin_api::launch_batch); }
  // Runs `launches` (programs of this device, each elapsed_ns NULL) in order: one launch_batch
  // call when the plugin has it, else one launch per entry. Returns the total kernel time in ns
  // when `measure` (the device must have TG_FEATURE_TIMING).
  std::optional<uint64_t> launch_batch(std::span<const tg_launch_args* const> launches, bool measure = false);

  // ABI 1.3: whether the plugin can wrap memory someone else owns (buffer_import).
  bool can_import() const { return plugin_->has(&tg_plugin_api::buffer_import); }
  // A buffer over `size` bytes at `address` (a host pointer on a TG_FEATURE_HOST_MEMORY device,
  // else the device's native address) without a copy; freeing it frees none of that memory and
  // then runs `release` once. When import throws (UnimplementedError without the entry,
  // InvalidArgumentError for a misaligned or unreachable address), `release` never runs. It runs
  // outside the device's call lock, so it may free buffers of this device.
  Buffer import(uint64_t address, uint64_t size, std::function<void()> release);

  tg_device* raw() const { return device_; }

  // Runs `call` (one ABI call on this device, its buffers or programs) holding the device's
  // call lock. `call` must not call back into this Device: the lock is not recursive.
  template <class F> decltype(auto) serialized(F&& call) const {
    std::lock_guard lock(calls_);
    return std::forward<F>(call)();
  }
  // Runs `call` (one ABI call naming several devices of one plugin: 1.2 peer_copy, collective)
  // holding the call lock of each device (repeats allowed), taken in address order so two such
  // calls never deadlock. The same rule as serialized: `call` must not call back into them.
  template <class F> static decltype(auto) serialized_all(std::vector<const Device*> devices, F&& call) {
    std::sort(devices.begin(), devices.end(), std::less<const Device*>());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(devices.size());
    for (const Device* d : devices) locks.emplace_back(d->calls_);
    return std::forward<F>(call)();
  }

private:
  Device(std::shared_ptr<Plugin> plugin, int index, tg_device* device);
  std::shared_ptr<Plugin> plugin_;
  int index_;
  tg_device* device_;
  tg_device_properties properties_{};
  mutable std::mutex calls_; // held only around a single ABI call, never while calling out
};

class Buffer {
public:
  Buffer() = default; // empty: holds nothing
  Buffer(std::shared_ptr<Device> device, tg_buffer* buffer, uint64_t size)
      : device_(std::move(device)), buffer_(buffer), size_(size) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size() const { return size_; }
  tg_buffer* raw() const { return buffer_; }
  const std::shared_ptr<Device>& device() const { return device_; } // null for an empty Buffer
  void copy_from_host(std::span<const std::byte> src, uint64_t offset = 0);
  void copy_to_host(std::span<std::byte> dst, uint64_t offset = 0) const;
  void copy_from(const Buffer& src, uint64_t size, uint64_t dst_offset = 0, uint64_t src_offset = 0);
  // ABI 1.3: the base address (a host pointer on a TG_FEATURE_HOST_MEMORY device, else the
  // device's native address), valid while the buffer lives; nullopt when the plugin lacks
  // buffer_address or answers UNIMPLEMENTED. Read or write through it only after
  // Device::synchronize, and never while a launch may use the buffer.
  std::optional<uint64_t> address() const;

  struct ImportRelease; // device.cpp

private:
  friend class Device; // import
  void reset() noexcept;
  std::shared_ptr<Device> device_;
  tg_buffer* buffer_ = nullptr;
  uint64_t size_ = 0;
  ImportRelease* release_ = nullptr; // imported buffers: the owner's release (device.cpp)
};

struct LaunchDims {
  std::array<uint32_t, 3> global{1, 1, 1}; // work groups per axis
  std::array<uint32_t, 3> local{1, 1, 1};  // threads per work group
};

class Program {
public:
  Program() = default; // empty: holds nothing
  Program(std::shared_ptr<Device> device, tg_program* program)
      : device_(std::move(device)), program_(program) {}
  ~Program() { reset(); }
  Program(Program&& other) noexcept { *this = std::move(other); }
  Program& operator=(Program&& other) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Launches; returns the kernel's elapsed nanoseconds when `measure` is set.
  std::optional<uint64_t> launch(const LaunchDims& dims, std::span<const tg_buffer_arg> buffers,
                                 std::span<const tg_scalar_arg> scalars = {}, bool measure = false) const;
  tg_program* raw() const { return program_; }
  const std::shared_ptr<Device>& device() const { return device_; } // null for an empty Program

private:
  void reset() noexcept;
  std::shared_ptr<Device> device_;
  tg_program* program_ = nullptr;
};

} // namespace tg
