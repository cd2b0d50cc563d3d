// Test fixture for device plugins: loads a plugin with dlopen(RTLD_NOW | RTLD_LOCAL) and wraps its
// handles in RAII types that check every tg_error*. Deliberately independent of the host's loader.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tgtest {

// The plugin under test, loaded once per process and never unloaded (LLVM inside it keeps
// process-wide state that does not survive dlclose well).
inline const tg_plugin_api& load_plugin(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
  auto query = reinterpret_cast<tg_plugin_query_fn>(dlsym(handle, TG_PLUGIN_QUERY_SYMBOL));
  if (query == nullptr) throw std::runtime_error(std::string("no ") + TG_PLUGIN_QUERY_SYMBOL + " in " + path);
  tg_host_info host{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR, TG_ABI_VERSION_MINOR, "plugin tests"};
  const tg_plugin_api* api = query(&host);
  if (api == nullptr) throw std::runtime_error(std::string(path) + " refused this host");
  return *api;
}

// The plugin under test: TG_PLUGIN_UNDER_TEST, or the CPU plugin's TG_CPU_PLUGIN_PATH.
#if defined(TG_CPU_PLUGIN_PATH) && !defined(TG_PLUGIN_UNDER_TEST)
#define TG_PLUGIN_UNDER_TEST TG_CPU_PLUGIN_PATH
#endif
#ifdef TG_PLUGIN_UNDER_TEST
// TG_TEST_PLUGIN replaces the build's path where the tests run from a copy of the build elsewhere
// (the GPU machine).
inline const char* plugin_under_test() {
  const char* path = std::getenv("TG_TEST_PLUGIN");
  return path && *path ? path : TG_PLUGIN_UNDER_TEST;
}
inline const tg_plugin_api& api() {
  static const tg_plugin_api& instance = load_plugin(plugin_under_test());
  return instance;
}
inline tg_plugin_query_fn query_fn() {
  (void)api(); // loaded (and kept loaded) first
  void* handle = dlopen(plugin_under_test(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<tg_plugin_query_fn>(
      dlsym(handle, TG_PLUGIN_QUERY_SYMBOL)); // one extra reference, never dropped
}
#endif

// An error taken out of a tg_error* (which is destroyed).
struct Status {
  tg_error_code code = TG_OK;
  std::string message;
  std::string log;
  bool ok() const { return code == TG_OK; }
};

inline Status take(tg_error* e) {
  Status s;
  if (e == nullptr) return s;
  s.code = api().error_code(e);
  s.message = api().error_message(e);
  s.log = api().error_log(e);
  api().error_destroy(e);
  return s;
}

// Fails the test (and stops it) when e is an error.
inline void check(tg_error* e, const char* what = "call") {
  Status s = take(e);
  BOOST_REQUIRE_MESSAGE(s.ok(),
                        std::string(what) + " failed (code " + std::to_string(s.code) + "): " + s.message);
}

class Device {
public:
  explicit Device(int32_t index = 0) {
    tg_device_open_args args{sizeof(args), index, 0};
    check(api().device_open(&args, &device_), "device_open");
  }
  ~Device() { api().device_close(device_); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  tg_device* get() const { return device_; }
  tg_device_properties properties() const {
    tg_device_properties p{};
    p.struct_size = sizeof(p);
    check(api().device_properties(device_, &p), "device_properties");
    return p;
  }

private:
  tg_device* device_ = nullptr;
};

class Buffer {
public:
  Buffer(const Device& device, uint64_t size, uint64_t alignment = 0) : size_(size) {
    tg_buffer_alloc_args args{sizeof(args), size, alignment, 0, 0};
    check(api().buffer_alloc(device.get(), &args, &buffer_), "buffer_alloc");
  }
  template <class T>
  Buffer(const Device& device, const std::vector<T>& data) : Buffer(device, data.size() * sizeof(T)) {
    upload(data);
  }
  ~Buffer() { api().buffer_free(buffer_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept : buffer_(std::exchange(other.buffer_, nullptr)), size_(other.size_) {}

  tg_buffer* get() const { return buffer_; }
  uint64_t size() const { return size_; }
  template <class T> void upload(const std::vector<T>& data, uint64_t offset = 0) {
    check(api().buffer_copy_from_host(buffer_, offset, data.data(), data.size() * sizeof(T)),
          "buffer_copy_from_host");
  }
  template <class T> std::vector<T> download(size_t count, uint64_t offset = 0) const {
    std::vector<T> out(count);
    check(api().buffer_copy_to_host(buffer_, offset, out.data(), count * sizeof(T)), "buffer_copy_to_host");
    return out;
  }
  tg_buffer_arg arg(uint64_t offset = 0) const { return {buffer_, offset}; }

private:
  tg_buffer* buffer_ = nullptr;
  uint64_t size_ = 0;
};

struct Compiled {
  std::vector<std::byte> binary;
  std::string source;
  std::string log;
};

inline Status try_compile(std::span<const std::byte> ir, Compiled* out, uint32_t flags = 0,
                          uint32_t opt_level = 2, const char* target = nullptr) {
  tg_compile_args args{sizeof(args), ir.data(), ir.size(), target, flags, opt_level};
  tg_compile_result* result = nullptr;
  Status s = take(api().compile(&args, &result));
  if (!s.ok()) return s;
  tg_compile_output output{};
  output.struct_size = sizeof(output);
  check(api().compile_result_get(result, &output), "compile_result_get");
  if (out != nullptr) {
    const auto* b = static_cast<const std::byte*>(output.binary);
    out->binary.assign(b, b + output.binary_size);
    out->source = output.source ? output.source : "";
    out->log = output.log;
  }
  api().compile_result_destroy(result);
  return s;
}

inline Compiled compile(std::span<const std::byte> ir, uint32_t flags = 0, uint32_t opt_level = 2) {
  Compiled c;
  Status s = try_compile(ir, &c, flags, opt_level);
  BOOST_REQUIRE_MESSAGE(s.ok(),
                        "compile failed (code " + std::to_string(s.code) + "): " + s.message + "\n" + s.log);
  return c;
}

class Program {
public:
  Program(const Device& device, const std::vector<std::byte>& binary) {
    check(api().program_load(device.get(), binary.data(), binary.size(), &program_), "program_load");
  }
  Program(const Device& device, tg::sdk::KernelBuilder& builder, uint32_t opt_level = 2)
      : Program(device, compile(builder.serialize(), 0, opt_level).binary) {}
  ~Program() { api().program_free(program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  tg_program* get() const { return program_; }

  Status try_launch(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                    const std::vector<tg_buffer_arg>& buffers, const std::vector<tg_scalar_arg>& scalars = {},
                    uint64_t* elapsed_ns = nullptr) const {
    tg_launch_args args{};
    args.struct_size = sizeof(args);
    args.program = program_;
    for (int k = 0; k < 3; ++k) {
      args.global_size[k] = global[size_t(k)];
      args.local_size[k] = local[size_t(k)];
    }
    args.buffers = buffers.data();
    args.buffer_count = uint32_t(buffers.size());
    args.scalars = scalars.data();
    args.scalar_count = uint32_t(scalars.size());
    args.elapsed_ns = elapsed_ns;
    return take(api().launch(&args));
  }
  void launch(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
              const std::vector<tg_buffer_arg>& buffers,
              const std::vector<tg_scalar_arg>& scalars = {}) const {
    Status s = try_launch(global, local, buffers, scalars);
    BOOST_REQUIRE_MESSAGE(s.ok(), "launch failed (code " + std::to_string(s.code) + "): " + s.message);
  }

private:
  tg_program* program_ = nullptr;
};

inline tg_scalar_arg scalar_i32(int32_t v) {
  tg_scalar_arg s{};
  s.dtype = TG_DTYPE_INT32;
  s.value.i = v;
  return s;
}
inline tg_scalar_arg scalar_f32(float v) {
  tg_scalar_arg s{};
  s.dtype = TG_DTYPE_FLOAT32;
  s.value.f = double(v);
  return s;
}

} // namespace tgtest
