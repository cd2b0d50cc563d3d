// The CPU device: one per process (the host CPU), its properties and attributes, the thread pool
// that runs work groups, and the JIT that holds loaded programs.
#pragma once

#include <tg/abi.h>

#include "thread_pool.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tg::cpu {
class Jit;
}

struct tg_device {
  tg_device();
  ~tg_device();
  tg_device(const tg_device&) = delete;
  tg_device& operator=(const tg_device&) = delete;

  // The JIT, created on first use. Callers hold jit_mutex.
  tg::cpu::Jit& jit();

  tg_device_properties properties{};
  std::vector<std::pair<std::string, std::string>> attributes;
  tg::cpu::ThreadPool pool;
  std::mutex jit_mutex;

private:
  std::unique_ptr<tg::cpu::Jit> jit_;
};

namespace tg::cpu {

// Limits shared by launch validation and the properties.
inline constexpr uint32_t kMaxLocalThreads = 1024;
inline constexpr uint32_t kMaxGlobalSize[3] = {0x7fffffffu, 65535u, 65535u};
inline constexpr uint32_t kMaxBufferArgs = 1024;
inline constexpr uint32_t kMaxScalarArgs = 1024;
inline constexpr uint32_t kBufferAlignment = 64;

// Total physical memory in bytes (sysconf), 0 if unknown.
uint64_t physical_memory_bytes();

tg_error* device_count(int32_t* out_count);
tg_error* device_open(const tg_device_open_args* args, tg_device** out_device);
void device_close(tg_device* device);
tg_error* device_properties(tg_device* device, tg_device_properties* out);
tg_error* device_attribute_count(tg_device* device, int32_t* out_count);
tg_error* device_attribute(tg_device* device, int32_t index, const char** out_key, const char** out_value);
tg_error* synchronize(tg_device* device);

} // namespace tg::cpu
