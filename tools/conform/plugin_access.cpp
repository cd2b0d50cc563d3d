#include "tools/conform/plugin_access.hpp"

#include <dlfcn.h>

#include <cstring>
#include <stdexcept>
#include <utility>

namespace tg::conform {
namespace {
const tg_plugin_api* g_api = nullptr;
} // namespace

tg_host_info host_info() {
  return tg_host_info{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR, TG_ABI_VERSION_MINOR, "tg conform"};
}

RawPlugin open_plugin(const std::filesystem::path& path) {
  RawPlugin p;
  p.path = path;
  p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (p.handle == nullptr) throw std::runtime_error(path.string() + ": cannot load: " + dlerror());
  p.query = reinterpret_cast<tg_plugin_query_fn>(dlsym(p.handle, TG_PLUGIN_QUERY_SYMBOL));
  return p;
}

const char* code_name(tg_error_code code) {
  static const char* const names[] = {"OK",
                                      "INVALID_ARGUMENT",
                                      "NOT_FOUND",
                                      "RESOURCE_EXHAUSTED",
                                      "UNIMPLEMENTED",
                                      "UNAVAILABLE",
                                      "FAILED_PRECONDITION",
                                      "DEADLINE_EXCEEDED",
                                      "INTERNAL"};
  return code >= 0 && code <= TG_ERROR_INTERNAL ? names[code] : "UNKNOWN";
}

std::string Status::describe() const {
  return std::string(code_name(code)) + (message.empty() ? "" : ": " + message);
}

const tg_plugin_api& api() {
  if (g_api == nullptr) throw std::logic_error("tg conform: no plugin table set");
  return *g_api;
}
void set_api(const tg_plugin_api* table) { g_api = table; }

Status take(tg_error* error) {
  Status s;
  if (error == nullptr) return s;
  s.code = api().error_code(error);
  const char* message = api().error_message(error);
  const char* log = api().error_log(error);
  s.message = message ? message : "(NULL message)";
  s.log = log ? log : "";
  api().error_destroy(error);
  if (s.code == TG_OK) s.message = "an error object with code TG_OK (0): " + s.message;
  if (s.code == TG_OK) s.code = -1; // still an error: the call did not succeed cleanly
  return s;
}

void check(tg_error* error, const std::string& what) {
  Status s = take(error);
  if (!s.ok()) throw CaseFailed(what + " failed: " + s.describe());
}

Status expect_code(tg_error* error, tg_error_code want, const std::string& what) {
  Status s = take(error);
  if (s.code != want)
    throw CaseFailed(what + ": expected " + code_name(want) + ", got " + (s.ok() ? "success" : s.describe()));
  if (s.message.empty()) throw CaseFailed(what + ": the " + code_name(want) + " error has an empty message");
  return s;
}

Device::Device(int32_t index) {
  tg_device_open_args args{sizeof(args), index, 0};
  check(api().device_open(&args, &device_), "device_open(" + std::to_string(index) + ")");
  if (device_ == nullptr) throw CaseFailed("device_open succeeded but returned a NULL device");
  properties_.struct_size = sizeof(properties_);
  tg_error* e = api().device_properties(device_, &properties_);
  if (e != nullptr) {
    api().device_close(device_);
    check(e, "device_properties");
  }
}
Device::~Device() { api().device_close(device_); }

Buffer::Buffer(const Device& device, uint64_t size, uint64_t alignment) : size_(size) {
  tg_buffer_alloc_args args{sizeof(args), size, alignment, 0, 0};
  check(api().buffer_alloc(device.get(), &args, &buffer_),
        "buffer_alloc(" + std::to_string(size) + " bytes)");
  if (buffer_ == nullptr) throw CaseFailed("buffer_alloc succeeded but returned a NULL buffer");
}
Buffer::~Buffer() {
  if (buffer_ != nullptr) api().buffer_free(buffer_);
}
Buffer::Buffer(Buffer&& other) noexcept
    : buffer_(std::exchange(other.buffer_, nullptr)), size_(other.size_) {}

void Buffer::upload(std::span<const std::byte> data, uint64_t offset) {
  check(api().buffer_copy_from_host(buffer_, offset, data.data(), data.size()),
        "buffer_copy_from_host(offset " + std::to_string(offset) + ", " + std::to_string(data.size()) +
            " bytes)");
}
std::vector<std::byte> Buffer::download(uint64_t size, uint64_t offset) const {
  std::vector<std::byte> out(size);
  check(api().buffer_copy_to_host(buffer_, offset, out.data(), size),
        "buffer_copy_to_host(offset " + std::to_string(offset) + ", " + std::to_string(size) + " bytes)");
  return out;
}

Compiled compile(std::span<const std::byte> ir, const char* target, uint32_t flags, uint32_t opt_level) {
  Compiled c;
  tg_compile_args args{sizeof(args), ir.data(), ir.size(), target, flags, opt_level};
  tg_compile_result* result = nullptr;
  c.status = take(api().compile(&args, &result));
  if (!c.status.ok()) return c;
  if (result == nullptr) throw CaseFailed("compile succeeded but returned a NULL result");
  tg_compile_output out{};
  out.struct_size = sizeof(out);
  tg_error* e = api().compile_result_get(result, &out);
  if (e == nullptr) {
    const auto* b = static_cast<const std::byte*>(out.binary);
    if (b != nullptr) c.binary.assign(b, b + out.binary_size);
    c.source = out.source ? out.source : "";
    c.log = out.log ? out.log : "";
  }
  api().compile_result_destroy(result);
  check(e, "compile_result_get");
  if (out.log == nullptr) throw CaseFailed("compile_result_get: log is NULL (must be \"\" when empty)");
  return c;
}

std::vector<std::byte> compile_or_fail(std::span<const std::byte> ir, const char* target) {
  Compiled c = compile(ir, target);
  if (!c.status.ok())
    throw CaseFailed("compile failed: " + c.status.describe() +
                     (c.status.log.empty() ? "" : "\n" + c.status.log));
  return std::move(c.binary);
}

Program::Program(const Device& device, std::span<const std::byte> binary) {
  check(api().program_load(device.get(), binary.data(), binary.size(), &program_), "program_load");
  if (program_ == nullptr) throw CaseFailed("program_load succeeded but returned a NULL program");
}
Program::~Program() { api().program_free(program_); }

Status Program::try_launch(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                           const std::vector<tg_buffer_arg>& buffers,
                           const std::vector<tg_scalar_arg>& scalars, uint64_t* elapsed_ns,
                           size_t struct_size) const {
  // A larger struct_size (a newer host) comes with zeroed bytes after the fields this ABI knows.
  std::vector<std::byte> raw(std::max(struct_size, sizeof(tg_launch_args)));
  tg_launch_args args{};
  args.struct_size = struct_size;
  args.program = program_;
  for (size_t a = 0; a < 3; ++a) {
    args.global_size[a] = global[a];
    args.local_size[a] = local[a];
  }
  args.buffers = buffers.data();
  args.buffer_count = uint32_t(buffers.size());
  args.scalars = scalars.data();
  args.scalar_count = uint32_t(scalars.size());
  args.elapsed_ns = elapsed_ns;
  std::memcpy(raw.data(), &args, sizeof(args));
  return take(api().launch(reinterpret_cast<const tg_launch_args*>(raw.data())));
}

void synchronize(const Device& device) {
  if (TG_CONFORM_HAS(synchronize)) check(api().synchronize(device.get()), "synchronize");
}

} // namespace tg::conform
