// The ABI entries of the adaptor (see tg/sdk/adaptor.hpp); launch validation is in launch.cpp.
#include "build_id.hpp"
#include "handles.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tg::sdk {

Buffer& buffer_object(tg_buffer* handle) { return *require(handle, "buffer")->impl; }

std::unique_ptr<Buffer> Device::import_buffer(uint64_t, uint64_t, std::function<void()>) {
  throw PluginError(TG_ERROR_UNIMPLEMENTED, "this plugin cannot import memory");
}

namespace detail {
namespace {

// guard() with the message prefix "<plugin>.<entry>", built only when something failed.
template <class Body> tg_error* entry(const PluginState& s, const char* name, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    std::string call;
    try {
      call = s.info.name + "." + name;
    } catch (...) {
    }
    return guard(call.c_str(), [] { throw; }); // rethrows the exception being handled
  }
}

[[noreturn]] void invalid(const std::string& why) { throw PluginError(TG_ERROR_INVALID_ARGUMENT, why); }

// Throws INVALID_ARGUMENT unless [offset, offset + size) lies inside the buffer.
void check_range(const tg_buffer& buffer, uint64_t offset, uint64_t size, const char* which) {
  if (offset > buffer.size || size > buffer.size - offset)
    invalid(std::string(which) + " range [offset " + std::to_string(offset) + ", size " +
            std::to_string(size) + ") lies outside the buffer of " + std::to_string(buffer.size) + " bytes");
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
  return text;
}

template <class T> std::unique_ptr<T> made(std::unique_ptr<T> object, const char* what) {
  if (!object) throw PluginError(TG_ERROR_INTERNAL, std::string(what) + " returned nothing");
  return object;
}

} // namespace

bool host_is_compatible(const tg_host_info* host) noexcept {
  return host != nullptr && host->struct_size >= offsetof(tg_host_info, abi_minor) + sizeof(uint32_t) &&
         host->abi_major == TG_ABI_VERSION_MAJOR;
}

tg_plugin_api make_api(const PluginState& state, const Entries& e) {
  tg_plugin_api api{};
  api.struct_size = sizeof(api);
  api.abi_major = TG_ABI_VERSION_MAJOR;
  api.abi_minor = TG_ABI_VERSION_MINOR;
  api.plugin_name = state.info.name.c_str();
  api.plugin_version = state.info.version.c_str();
  api.build_info = state.info.build_info.c_str();
  set_error_functions(api);
  api.device_count = e.device_count;
  api.device_open = e.device_open;
  api.device_close = e.device_close;
  api.device_properties = e.device_properties;
  api.device_attribute_count = e.device_attribute_count;
  api.device_attribute = e.device_attribute;
  api.buffer_alloc = e.buffer_alloc;
  api.buffer_free = e.buffer_free;
  api.buffer_copy_from_host = e.buffer_copy_from_host;
  api.buffer_copy_to_host = e.buffer_copy_to_host;
  api.buffer_copy = e.buffer_copy;
  api.compile = e.compile;
  api.compile_result_get = e.compile_result_get;
  api.compile_result_destroy = e.compile_result_destroy;
  api.compile_cache_key = e.compile_cache_key;
  api.program_load = e.program_load;
  api.program_free = e.program_free;
  api.launch = e.launch;
  api.synchronize = e.synchronize;
  api.launch_batch = state.plugin->provides_launch_batch() ? e.launch_batch : nullptr;
  api.peer_copy = state.plugin->provides_peer_copy() ? e.peer_copy : nullptr;
  api.collective = state.plugin->provides_collective() ? e.collective : nullptr;
  api.buffer_address = state.plugin->provides_buffer_address() ? e.buffer_address : nullptr;
  api.buffer_import = state.plugin->provides_buffer_import() ? e.buffer_import : nullptr;
  api.device_matrix_unit_count = e.device_matrix_unit_count;
  api.device_matrix_unit = e.device_matrix_unit;
  const bool comms = state.plugin->provides_comm();
  api.comm_unique_id = comms ? e.comm_unique_id : nullptr;
  api.comm_init = comms ? e.comm_init : nullptr;
  api.comm_destroy = comms ? e.comm_destroy : nullptr;
  return api;
}

// --- devices ---

tg_error* device_count(PluginState& s, int32_t* out_count) {
  return entry(s, "device_count", [&] {
    require(out_count, "out_count");
    int32_t count = s.plugin->device_count();
    if (count < 0) throw PluginError(TG_ERROR_INTERNAL, "device_count returned " + std::to_string(count));
    *out_count = count;
  });
}

tg_error* device_open(PluginState& s, const tg_device_open_args* args, tg_device** out_device) {
  return entry(s, "device_open", [&] {
    auto a = read_args(args, "args");
    require(out_device, "out_device");
    int32_t count = s.plugin->device_count();
    if (a.index < 0 || a.index >= count)
      invalid("device index " + std::to_string(a.index) + " out of range (this plugin has " +
              std::to_string(count) + (count == 1 ? " device)" : " devices)"));
    auto device = std::make_unique<tg_device>();
    device->plugin = &s;
    device->impl = made(s.plugin->open_device(a.index), "open_device");
    device->properties = device->impl->properties();
    device->properties.struct_size = sizeof(tg_device_properties);
    device->attributes = device->impl->attributes();
    device->matrix_units = device->impl->matrix_units();
    for (tg_matrix_unit& u : device->matrix_units) {
      if (const std::string why = matrix_unit_error(u); !why.empty())
        throw PluginError(TG_ERROR_INTERNAL,
                          "device " + std::to_string(a.index) + " declares a malformed " + why);
      u.struct_size = sizeof(tg_matrix_unit);
    }
    device->target = device->impl->target();
    const char* arch = device->properties.arch;
    if (device->target.empty()) device->target.assign(arch, strnlen(arch, sizeof(device->properties.arch)));
    *out_device = device.release();
  });
}

void device_close(PluginState&, tg_device* device) { delete device; }

tg_error* device_properties(PluginState& s, tg_device* device, tg_device_properties* out) {
  return entry(s, "device_properties", [&] { write_out(out, require(device, "device")->properties, "out"); });
}

tg_error* device_attribute_count(PluginState& s, tg_device* device, int32_t* out_count) {
  return entry(s, "device_attribute_count", [&] {
    require(device, "device");
    *require(out_count, "out_count") = int32_t(device->attributes.size());
  });
}

tg_error* device_attribute(PluginState& s, tg_device* device, int32_t index, const char** out_key,
                           const char** out_value) {
  return entry(s, "device_attribute", [&] {
    require(device, "device");
    require(out_key, "out_key");
    require(out_value, "out_value");
    const auto& attributes = device->attributes;
    if (index < 0 || size_t(index) >= attributes.size())
      throw PluginError(TG_ERROR_NOT_FOUND, "attribute index " + std::to_string(index) + " out of range (" +
                                                std::to_string(attributes.size()) + " attributes)");
    *out_key = attributes[size_t(index)].key.c_str();
    *out_value = attributes[size_t(index)].value.c_str();
  });
}

tg_error* device_matrix_unit_count(PluginState& s, tg_device* device, int32_t* out_count) {
  return entry(s, "device_matrix_unit_count", [&] {
    require(device, "device");
    *require(out_count, "out_count") = int32_t(device->matrix_units.size());
  });
}

tg_error* device_matrix_unit(PluginState& s, tg_device* device, int32_t index, tg_matrix_unit* out) {
  return entry(s, "device_matrix_unit", [&] {
    require(device, "device");
    const auto& units = device->matrix_units;
    if (index < 0 || size_t(index) >= units.size())
      throw PluginError(TG_ERROR_NOT_FOUND, "matrix unit index " + std::to_string(index) + " out of range (" +
                                                std::to_string(units.size()) + " units)");
    write_out(out, units[size_t(index)], "out");
  });
}

tg_error* synchronize(PluginState& s, tg_device* device) {
  return entry(s, "synchronize", [&] { require(device, "device")->impl->synchronize(); });
}

// --- buffers ---

tg_error* buffer_alloc(PluginState& s, tg_device* device, const tg_buffer_alloc_args* args,
                       tg_buffer** out_buffer) {
  return entry(s, "buffer_alloc", [&] {
    require(device, "device");
    auto a = read_args(args, "args");
    require(out_buffer, "out_buffer");
    if ((a.alignment & (a.alignment - 1)) != 0)
      invalid("alignment " + std::to_string(a.alignment) + " is not a power of two");
    uint64_t limit = device->properties.max_buffer_bytes;
    if (limit != 0 && a.size > limit)
      throw PluginError(TG_ERROR_RESOURCE_EXHAUSTED, "cannot allocate " + std::to_string(a.size) +
                                                         " bytes: the device's largest buffer is " +
                                                         std::to_string(limit) + " bytes");
    auto buffer = std::make_unique<tg_buffer>();
    buffer->device = device;
    buffer->size = a.size;
    buffer->impl = made(device->impl->alloc(a.size, a.alignment, a.flags), "alloc");
    *out_buffer = buffer.release();
  });
}

void buffer_free(PluginState&, tg_buffer* buffer) {
  if (buffer == nullptr) return;
  auto release = std::move(buffer->release);
  delete buffer; // the plugin's Buffer first: the memory is no longer used once it is gone
  if (release) release->run();
}

tg_error* buffer_copy_from_host(PluginState& s, tg_buffer* dst, uint64_t dst_offset, const void* src,
                                uint64_t size) {
  return entry(s, "buffer_copy_from_host", [&] {
    require(dst, "dst");
    if (size != 0) require(src, "src");
    check_range(*dst, dst_offset, size, "destination");
    if (size != 0) dst->impl->copy_from_host(dst_offset, src, size);
  });
}

tg_error* buffer_copy_to_host(PluginState& s, tg_buffer* src, uint64_t src_offset, void* dst, uint64_t size) {
  return entry(s, "buffer_copy_to_host", [&] {
    require(src, "src");
    if (size != 0) require(dst, "dst");
    check_range(*src, src_offset, size, "source");
    if (size != 0) src->impl->copy_to_host(src_offset, dst, size);
  });
}

tg_error* buffer_copy(PluginState& s, tg_buffer* dst, uint64_t dst_offset, tg_buffer* src,
                      uint64_t src_offset, uint64_t size) {
  return entry(s, "buffer_copy", [&] {
    require(dst, "dst");
    require(src, "src");
    if (dst->device != src->device) invalid("source and destination belong to different devices");
    check_range(*dst, dst_offset, size, "destination");
    check_range(*src, src_offset, size, "source");
    if (size != 0) dst->impl->copy_from(dst_offset, *src->impl, src_offset, size);
  });
}

// --- memory shared with other libraries (1.3) ---

tg_error* buffer_address(PluginState& s, tg_buffer* buffer, uint64_t* out_address) {
  return entry(s, "buffer_address", [&] {
    require(buffer, "buffer");
    require(out_address, "out_address");
    std::optional<uint64_t> address = buffer->impl->address();
    if (!address) throw PluginError(TG_ERROR_UNIMPLEMENTED, "this plugin does not give buffer addresses");
    *out_address = *address;
  });
}

tg_error* buffer_import(PluginState& s, tg_device* device, const tg_buffer_import_args* args,
                        tg_buffer** out_buffer) {
  return entry(s, "buffer_import", [&] {
    require(device, "device");
    auto a = read_args(args, "args");
    require(out_buffer, "out_buffer");
    if (a.address == 0 && a.size != 0) invalid("address is 0 for " + std::to_string(a.size) + " bytes");
    if (a.address + a.size < a.address)
      invalid("the range of " + std::to_string(a.size) + " bytes wraps around");
    const uint64_t alignment = device->properties.buffer_alignment;
    if (alignment > 1 && a.address % alignment != 0)
      invalid("address 0x" + hex(a.address) + " is not aligned to the device's buffer_alignment (" +
              std::to_string(alignment) + " bytes)");
    auto release = std::make_shared<ImportRelease>();
    release->fn = a.release;
    release->context = a.release_context;
    auto buffer = std::make_unique<tg_buffer>();
    buffer->device = device;
    buffer->size = a.size;
    buffer->impl =
        made(device->impl->import_buffer(a.address, a.size, [release] { release->run(); }), "import_buffer");
    release->armed = true; // from here on the buffer owns the callback
    buffer->release = std::move(release);
    *out_buffer = buffer.release();
  });
}

// --- compilation ---

tg_error* compile(PluginState& s, const tg_compile_args* args, tg_compile_result** out_result) {
  return entry(s, "compile", [&] {
    auto a = read_args(args, "args");
    require(out_result, "out_result");
    require(a.ir, "args->ir");
    KernelIR ir;
    try {
      ir = parse_kernel_ir(a.ir, a.ir_size);
    } catch (const IRError& e) {
      invalid(std::string("malformed kernel IR: ") + e.what());
    }
    bool want_source = (a.flags & TG_COMPILE_WANT_SOURCE) != 0;
    CompileOutput out = s.plugin->compiler().compile(
        {ir, a.target != nullptr ? a.target : "", want_source, std::min(a.opt_level, 3u)});
    auto result = std::make_unique<tg_compile_result>();
    result->binary = seal_blob({s.info.name, out.target, Signature::of(ir), std::move(out.payload)});
    if (want_source) result->source = std::move(out.source);
    result->log = std::move(out.log);
    *out_result = result.release();
  });
}

tg_error* compile_result_get(PluginState& s, const tg_compile_result* result, tg_compile_output* out) {
  return entry(s, "compile_result_get", [&] {
    require(result, "result");
    tg_compile_output full{};
    full.struct_size = sizeof(full);
    full.binary = result->binary.data();
    full.binary_size = result->binary.size();
    full.source = result->source.empty() ? nullptr : result->source.c_str();
    full.log = result->log.c_str();
    write_out(out, full, "out");
  });
}

void compile_result_destroy(PluginState&, tg_compile_result* result) { delete result; }

tg_error* compile_cache_key(PluginState& s, const char* target, char* buf, size_t buf_size,
                            size_t* out_length) {
  return entry(s, "compile_cache_key", [&] {
    // the plugin binary's build id: a rebuilt plugin (another renderer, the same version string)
    // does not load what its predecessor compiled
    static const std::string build = build_identity(reinterpret_cast<const void*>(&compile_cache_key));
    std::string key = "tg_device_" + s.info.name + " " + s.info.version + ";build " + build + ";envelope " +
                      std::to_string(kBlobEnvelopeVersion) + ";" +
                      s.plugin->compiler().cache_key(target != nullptr ? target : "");
    if (out_length != nullptr) *out_length = key.size();
    if (buf == nullptr || buf_size < key.size() + 1)
      invalid("buffer of " + std::to_string(buf_size) + " bytes is too small for the " +
              std::to_string(key.size() + 1) + "-byte cache key");
    std::memcpy(buf, key.c_str(), key.size() + 1);
  });
}

// --- programs ---

tg_error* program_load(PluginState& s, tg_device* device, const void* binary, size_t binary_size,
                       tg_program** out_program) {
  return entry(s, "program_load", [&] {
    require(device, "device");
    require(out_program, "out_program");
    require(binary, "binary");
    Blob blob = open_blob({static_cast<const std::byte*>(binary), binary_size}, s.info.name, device->target);
    const tg_device_properties& p = device->properties;
    if (blob.signature.buffers.size() > p.max_buffer_args ||
        blob.signature.scalars.size() > p.max_scalar_args)
      invalid("kernel '" + blob.signature.kernel_name + "' takes " +
              std::to_string(blob.signature.buffers.size()) + " buffers and " +
              std::to_string(blob.signature.scalars.size()) + " scalars, the device allows " +
              std::to_string(p.max_buffer_args) + " and " + std::to_string(p.max_scalar_args));
    auto program = std::make_unique<tg_program>();
    program->device = device;
    program->impl = made(device->impl->load_program(blob), "load_program");
    program->signature = std::move(blob.signature);
    *out_program = program.release();
  });
}

void program_free(PluginState&, tg_program* program) { delete program; }

tg_error* launch(PluginState& s, const tg_launch_args* args) {
  return entry(s, "launch", [&] { validate_and_launch(read_args(args, "args")); });
}

tg_error* launch_batch(PluginState& s, const tg_launch_batch_args* args) {
  return entry(s, "launch_batch", [&] { validate_and_launch_batch(read_args(args, "args")); });
}

// --- several devices (1.2; validation in multi_device.cpp) ---

tg_error* peer_copy(PluginState& s, const tg_peer_copy_args* args) {
  return entry(s, "peer_copy", [&] { validate_and_peer_copy(s, read_args(args, "args")); });
}

tg_error* collective(PluginState& s, const tg_collective_args* args) {
  return entry(s, "collective", [&] { validate_and_run_collective(s, read_args(args, "args")); });
}

// --- ranks in several processes (1.6; validation in multi_device.cpp) ---

tg_error* comm_unique_id(PluginState& s, uint8_t* out_id, size_t id_size) {
  return entry(s, "comm_unique_id", [&] {
    require(out_id, "out_id");
    if (id_size != TG_COMM_ID_BYTES)
      invalid("id_size is " + std::to_string(id_size) + ", not TG_COMM_ID_BYTES (" +
              std::to_string(TG_COMM_ID_BYTES) + ")");
    const std::array<std::byte, TG_COMM_ID_BYTES> id = s.plugin->comm_unique_id();
    std::memcpy(out_id, id.data(), id.size());
  });
}

tg_error* comm_init(PluginState& s, const tg_comm_init_args* args, tg_comm** out_comm) {
  return entry(s, "comm_init",
               [&] { *require(out_comm, "out_comm") = validate_and_init_comm(s, read_args(args, "args")); });
}

void comm_destroy(PluginState&, tg_comm* comm) { delete comm; }

} // namespace detail
} // namespace tg::sdk
