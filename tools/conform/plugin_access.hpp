// The plugin under test through its raw C table: opened with plain dlopen (the loader cases look
// at the table as the plugin wrote it, not through the host's checks), and RAII wrappers for
// devices, buffers and programs whose unexpected errors fail the running case.
#pragma once

#include "tools/conform/outcome.hpp"

#include <tg/abi.h>

#include <array>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tg::conform {

struct RawPlugin {
  std::filesystem::path path;
  void* handle = nullptr;             // from dlopen, never closed (plugins may keep process state)
  tg_plugin_query_fn query = nullptr; // NULL when the entry symbol is missing
  const tg_plugin_api* api = nullptr; // query(host) of a well-formed v1 host; NULL if refused
};

// dlopen(RTLD_NOW | RTLD_LOCAL) + dlsym + one query. Throws std::runtime_error when dlopen fails.
RawPlugin open_plugin(const std::filesystem::path& path);

// A well-formed host description for this ABI version.
tg_host_info host_info();

// An error taken out of a tg_error* (which is destroyed with the plugin's error_destroy).
struct Status {
  tg_error_code code = TG_OK;
  std::string message;
  std::string log;
  bool ok() const { return code == TG_OK; }
  std::string describe() const; // "INVALID_ARGUMENT: <message>"
};

const char* code_name(tg_error_code code); // "INVALID_ARGUMENT", or "UNKNOWN"

// The table every case uses; set once in each process before cases run.
const tg_plugin_api& api();
void set_api(const tg_plugin_api* table);
// True when the table holds function `member` (non-NULL and inside struct_size).
#define TG_CONFORM_HAS(member)                                                                               \
  (offsetof(tg_plugin_api, member) + sizeof(void*) <= ::tg::conform::api().struct_size &&                    \
   ::tg::conform::api().member != nullptr)

Status take(tg_error* error);
// Fails the case naming `what` unless error is NULL.
void check(tg_error* error, const std::string& what);
// Fails unless the call failed with `want`; the status is returned for further checks.
Status expect_code(tg_error* error, tg_error_code want, const std::string& what);

class Device {
public:
  explicit Device(int32_t index);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  tg_device* get() const { return device_; }
  const tg_device_properties& properties() const { return properties_; }

private:
  tg_device* device_ = nullptr;
  tg_device_properties properties_{};
};

class Buffer {
public:
  Buffer(const Device& device, uint64_t size, uint64_t alignment = 0);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept;
  tg_buffer* get() const { return buffer_; }
  uint64_t size() const { return size_; }
  void upload(std::span<const std::byte> data, uint64_t offset = 0);
  std::vector<std::byte> download(uint64_t size, uint64_t offset = 0) const;

private:
  tg_buffer* buffer_ = nullptr;
  uint64_t size_ = 0;
};

// compile() of serialized kernel IR; the blob (and source/log) copied out of the result.
struct Compiled {
  Status status;
  std::vector<std::byte> binary;
  std::string source;
  std::string log;
};
Compiled compile(std::span<const std::byte> ir, const char* target, uint32_t flags = 0,
                 uint32_t opt_level = 2);
// Same, failing the case when compile fails.
std::vector<std::byte> compile_or_fail(std::span<const std::byte> ir, const char* target);

class Program {
public:
  Program(const Device& device, std::span<const std::byte> binary);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  tg_program* get() const { return program_; }
  Status try_launch(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                    const std::vector<tg_buffer_arg>& buffers, const std::vector<tg_scalar_arg>& scalars,
                    uint64_t* elapsed_ns = nullptr, size_t struct_size = sizeof(tg_launch_args)) const;

private:
  tg_program* program_ = nullptr;
};

// Waits for the device when the plugin has synchronize (absent = synchronous).
void synchronize(const Device& device);

} // namespace tg::conform
