// The CPU plugin's logical devices: CPU:0 .. CPU:N-1, all the same host CPU and host memory, so
// multi-device code (sharded tensors, collectives) runs here without a second accelerator. N is
// $TG_CPU_DEVICES (1..64, default 4), read by every device_count. Opened devices share one
// thread pool (created with the first, gone with the last), so an unused device costs nothing
// and N devices never oversubscribe the cores.
#pragma once

#include "thread_pool.hpp"

#include <cstdint>
#include <memory>
#include <mutex>

namespace tg::cpu {

inline constexpr int32_t kDefaultLogicalDevices = 4;
inline constexpr int32_t kMaxLogicalDevices = 64;

// The count $TG_CPU_DEVICES asks for; PluginError(INVALID_ARGUMENT) naming the variable when it
// is not a number in 1..kMaxLogicalDevices.
int32_t logical_device_count_from_env();

class SharedPool {
public:
  // The pool of every open device; made on first use.
  std::shared_ptr<ThreadPool> get();

private:
  std::mutex mutex_;
  std::weak_ptr<ThreadPool> pool_;
};

} // namespace tg::cpu
