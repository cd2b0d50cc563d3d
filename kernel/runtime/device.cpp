#include "kernel/runtime/device.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <atomic>

namespace tg {

namespace {
// A plugin may fill a text field to the brim without a NUL; the host's copy always ends in one.
void terminate_strings(tg_device_properties& p) {
  p.name[TG_NAME_MAX - 1] = '\0';
  p.vendor[TG_NAME_MAX - 1] = '\0';
  p.arch[TG_NAME_MAX - 1] = '\0';
}
} // namespace

std::shared_ptr<Device> Device::open(std::shared_ptr<Plugin> plugin, int index) {
  int count = plugin->device_count();
  if (index < 0 || index >= count)
    throw InvalidArgumentError(TG_ERROR_INVALID_ARGUMENT, plugin->name() + ": no device " +
                                                              std::to_string(index) + " (the plugin has " +
                                                              std::to_string(count) + ")");
  tg_device_open_args args{};
  args.struct_size = sizeof args;
  args.index = index;
  tg_device* raw = nullptr;
  plugin->check(plugin->api().device_open(&args, &raw), "device_open");
  auto device = std::shared_ptr<Device>(new Device(plugin, index, raw)); // closes raw if we throw
  tg_device_properties props{};
  props.struct_size = sizeof props;
  plugin->check(device->serialized([&] { return plugin->api().device_properties(raw, &props); }),
                "device_properties");
  props.struct_size = sizeof props; // the host's copy is always complete (zero-filled beyond the plugin's)
  terminate_strings(props);
  device->properties_ = props;
  return device;
}

Device::Device(std::shared_ptr<Plugin> plugin, int index, tg_device* device)
    : plugin_(std::move(plugin)), index_(index), device_(device) {}

Device::~Device() {
  if (device_) plugin_->api().device_close(device_);
}

std::vector<std::pair<std::string, std::string>> Device::attributes() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!plugin_->has(&tg_plugin_api::device_attribute_count) ||
      !plugin_->has(&tg_plugin_api::device_attribute))
    return out;
  const auto& api = plugin_->api();
  int32_t count = 0;
  plugin_->check(serialized([&] { return api.device_attribute_count(device_, &count); }),
                 "device_attribute_count");
  for (int32_t i = 0; i < count; ++i) {
    std::pair<std::string, std::string> entry;
    tg_error* err = serialized([&] {
      const char* key = nullptr;
      const char* value = nullptr;
      tg_error* e = api.device_attribute(device_, i, &key, &value);
      if (!e) entry = {plugin_string(key, kMaxPluginTextLength), plugin_string(value, kMaxPluginTextLength)};
      return e;
    });
    plugin_->check(err, "device_attribute");
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<tg_matrix_unit> Device::matrix_units() const {
  std::vector<tg_matrix_unit> out;
  if (!plugin_->has(&tg_plugin_api::device_matrix_unit_count) ||
      !plugin_->has(&tg_plugin_api::device_matrix_unit))
    return out;
  const auto& api = plugin_->api();
  int32_t count = 0;
  plugin_->check(serialized([&] { return api.device_matrix_unit_count(device_, &count); }),
                 "device_matrix_unit_count");
  for (int32_t i = 0; i < count; ++i) {
    tg_matrix_unit u{}; // zero beyond what the plugin fills
    u.struct_size = sizeof u;
    plugin_->check(serialized([&] { return api.device_matrix_unit(device_, i, &u); }), "device_matrix_unit");
    u.struct_size = sizeof u;
    if (const std::string why = sdk::matrix_unit_error(u);
        !why.empty() &&
        (u.operand_source == TG_MATRIX_SOURCE_REGISTERS || u.operand_source == TG_MATRIX_SOURCE_LOCAL))
      throw PluginContractError("plugin " + plugin_->name() + ", device " + std::to_string(index_) +
                                ", unit " + std::to_string(i) + ": " + why);
    out.push_back(u);
  }
  return out;
}

Buffer Device::alloc(uint64_t size, uint64_t alignment, uint32_t flags) {
  auto alloc_fn = plugin_->fn(&tg_plugin_api::buffer_alloc, "buffer_alloc");
  plugin_->fn(&tg_plugin_api::buffer_free, "buffer_free");
  tg_buffer_alloc_args args{};
  args.struct_size = sizeof args;
  args.size = size;
  args.alignment = alignment;
  args.flags = flags;
  tg_buffer* raw = nullptr;
  plugin_->check(serialized([&] { return alloc_fn(device_, &args, &raw); }),
                 "buffer_alloc(" + std::to_string(size) + " bytes)");
  return Buffer(shared_from_this(), raw, size);
}

Program Device::load(std::span<const std::byte> binary) {
  auto load_fn = plugin_->fn(&tg_plugin_api::program_load, "program_load");
  plugin_->fn(&tg_plugin_api::program_free, "program_free");
  tg_program* raw = nullptr;
  plugin_->check(serialized([&] { return load_fn(device_, binary.data(), binary.size(), &raw); }),
                 "program_load");
  return Program(shared_from_this(), raw);
}

void Device::synchronize() {
  if (!plugin_->has(&tg_plugin_api::synchronize)) return; // synchronous plugins may omit it
  plugin_->check(serialized([&] { return plugin_->api().synchronize(device_); }), "synchronize");
}

// An imported buffer's release, shared by the Buffer and the callback handed to the plugin. The
// plugin calls back from buffer_free, inside the device's call lock, where the owner's release
// must not run (dropping the last reference to another buffer of this device would wait for that
// lock). So the release runs once both the plugin has called back and buffer_free has returned,
// by whichever comes second; that one also deletes this.
struct Buffer::ImportRelease {
  static constexpr unsigned kPluginCalled = 1, kFreeReturned = 2;
  std::function<void()> fn;
  std::atomic<unsigned> state{0};

  void arrive(unsigned who) noexcept {
    if ((state.fetch_or(who) | who) != (kPluginCalled | kFreeReturned)) return;
    try {
      if (fn) fn();
    } catch (...) { // runs from a destructor or a C callback: nothing can be reported
    }
    delete this;
  }
  static void plugin_called(void* self) noexcept { static_cast<ImportRelease*>(self)->arrive(kPluginCalled); }
};

Buffer Device::import(uint64_t address, uint64_t size, std::function<void()> release) {
  auto import_fn = plugin_->fn(&tg_plugin_api::buffer_import, "buffer_import");
  plugin_->fn(&tg_plugin_api::buffer_free, "buffer_free");
  auto pending = std::make_unique<Buffer::ImportRelease>();
  pending->fn = std::move(release);
  tg_buffer_import_args args{};
  args.struct_size = sizeof args;
  args.address = address;
  args.size = size;
  args.release = &Buffer::ImportRelease::plugin_called;
  args.release_context = pending.get();
  tg_buffer* raw = nullptr;
  plugin_->check(serialized([&] { return import_fn(device_, &args, &raw); }),
                 "buffer_import(" + std::to_string(size) + " bytes)"); // on failure `pending` dies unrun
  Buffer buffer(shared_from_this(), raw, size);
  buffer.release_ = pending.release();
  return buffer;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::move(other.device_);
    buffer_ = std::exchange(other.buffer_, nullptr);
    size_ = std::exchange(other.size_, 0);
    release_ = std::exchange(other.release_, nullptr);
  }
  return *this;
}

namespace {
// An asynchronous device may still be using the object: wait before freeing it.
void settle(Device& device) noexcept {
  if (!(device.properties().features & TG_FEATURE_ASYNC)) return;
  try {
    device.synchronize();
  } catch (...) { // freeing must not throw; nothing can be reported from here
  }
}
} // namespace

void Buffer::reset() noexcept {
  if (buffer_) settle(*device_); // takes and releases the call lock itself
  if (buffer_) device_->serialized([&] { device_->plugin().api().buffer_free(buffer_); });
  if (release_) std::exchange(release_, nullptr)->arrive(ImportRelease::kFreeReturned); // outside the lock
  buffer_ = nullptr;
  device_.reset();
}

std::optional<uint64_t> Buffer::address() const {
  if (!buffer_) return std::nullopt;
  const Plugin& p = device_->plugin();
  if (!p.has(&tg_plugin_api::buffer_address)) return std::nullopt;
  uint64_t address = 0;
  tg_error* err = device_->serialized([&] { return p.api().buffer_address(buffer_, &address); });
  if (err && p.api().error_code(err) == TG_ERROR_UNIMPLEMENTED) {
    p.api().error_destroy(err);
    return std::nullopt;
  }
  p.check(err, "buffer_address");
  return address;
}

void Buffer::copy_from_host(std::span<const std::byte> src, uint64_t offset) {
  const Plugin& p = device_->plugin();
  auto fn = p.fn(&tg_plugin_api::buffer_copy_from_host, "buffer_copy_from_host");
  p.check(device_->serialized([&] { return fn(buffer_, offset, src.data(), src.size()); }),
          "buffer_copy_from_host");
}

void Buffer::copy_to_host(std::span<std::byte> dst, uint64_t offset) const {
  const Plugin& p = device_->plugin();
  auto fn = p.fn(&tg_plugin_api::buffer_copy_to_host, "buffer_copy_to_host");
  p.check(device_->serialized([&] { return fn(buffer_, offset, dst.data(), dst.size()); }),
          "buffer_copy_to_host");
}

void Buffer::copy_from(const Buffer& src, uint64_t size, uint64_t dst_offset, uint64_t src_offset) {
  const Plugin& p = device_->plugin();
  auto fn = p.fn(&tg_plugin_api::buffer_copy, "buffer_copy");
  // One device's lock covers the call only if both buffers are on that device (the ABI's rule).
  if (src.device_ != device_)
    throw InvalidArgumentError(TG_ERROR_INVALID_ARGUMENT,
                               p.name() +
                                   ".buffer_copy: the source buffer is on another device (copy through "
                                   "the host instead)");
  p.check(device_->serialized([&] { return fn(buffer_, dst_offset, src.buffer_, src_offset, size); }),
          "buffer_copy");
}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::move(other.device_);
    program_ = std::exchange(other.program_, nullptr);
  }
  return *this;
}

void Program::reset() noexcept {
  if (program_) settle(*device_); // takes and releases the call lock itself
  if (program_) device_->serialized([&] { device_->plugin().api().program_free(program_); });
  program_ = nullptr;
  device_.reset();
}

std::optional<uint64_t> Program::launch(const LaunchDims& dims, std::span<const tg_buffer_arg> buffers,
                                        std::span<const tg_scalar_arg> scalars, bool measure) const {
  const Plugin& p = device_->plugin();
  auto fn = p.fn(&tg_plugin_api::launch, "launch");
  tg_launch_args args{};
  args.struct_size = sizeof args;
  args.program = program_;
  for (int axis = 0; axis < 3; ++axis) {
    args.global_size[axis] = dims.global[size_t(axis)];
    args.local_size[axis] = dims.local[size_t(axis)];
  }
  args.buffers = buffers.data();
  args.buffer_count = uint32_t(buffers.size());
  args.scalars = scalars.data();
  args.scalar_count = uint32_t(scalars.size());
  uint64_t elapsed = 0;
  args.elapsed_ns = measure ? &elapsed : nullptr;
  p.check(device_->serialized([&] { return fn(&args); }), "launch");
  if (!measure) return std::nullopt;
  return elapsed;
}

std::optional<uint64_t> Device::launch_batch(std::span<const tg_launch_args* const> launches, bool measure) {
  const Plugin& p = *plugin_;
  uint64_t total = 0;
  if (has_launch_batch()) {
    tg_launch_batch_args args{};
    args.struct_size = sizeof args;
    args.device = device_;
    args.launches = launches.data();
    args.launch_count = uint32_t(launches.size());
    args.elapsed_ns = measure ? &total : nullptr;
    auto fn = p.api().launch_batch;
    p.check(serialized([&] { return fn(&args); }), "launch_batch");
  } else { // a 1.0 plugin: one call per kernel
    auto fn = p.fn(&tg_plugin_api::launch, "launch");
    for (const tg_launch_args* one : launches) {
      tg_launch_args a = *one;
      uint64_t elapsed = 0;
      a.elapsed_ns = measure ? &elapsed : nullptr;
      p.check(serialized([&] { return fn(&a); }), "launch");
      total += elapsed;
    }
  }
  if (!measure) return std::nullopt;
  return total;
}

} // namespace tg
