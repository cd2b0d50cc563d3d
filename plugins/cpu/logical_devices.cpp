#include "logical_devices.hpp"

#include <tg/sdk/plugin.hpp>

#include <cstdlib>
#include <string>

namespace tg::cpu {

int32_t logical_device_count_from_env() {
  const char* env = std::getenv("TG_CPU_DEVICES");
  if (env == nullptr || *env == '\0') return kDefaultLogicalDevices;
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 1 || n > kMaxLogicalDevices)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "TG_CPU_DEVICES='" + std::string(env) +
                                                          "' is not a device count from 1 to " +
                                                          std::to_string(kMaxLogicalDevices));
  return int32_t(n);
}

std::shared_ptr<ThreadPool> SharedPool::get() {
  std::lock_guard lock(mutex_);
  auto pool = pool_.lock();
  if (!pool) {
    pool = std::make_shared<ThreadPool>();
    pool_ = pool;
  }
  return pool;
}

} // namespace tg::cpu
