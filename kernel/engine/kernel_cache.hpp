// The kernel cache: prepared kernels by (device and options, the schedule item's normalized AST).
// The AST is normalized by replacing its buffers with numbered placeholders, so the same
// computation on other buffers of the same sizes finds the same kernel. Its programs keep their
// device (and plugin) alive: forget_device drops a device's entries when its plugin is unloaded.
// Thread-safe.
#pragma once

#include "kernel/engine/prepared.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace tg {

class KernelCache {
public:
  // The key of `item` (keep it alive while it is used: the cache keys on its address).
  static UOpRef key_of(const ScheduleItem& item);
  // The kernel cached under (`cache_name`, `key`), or null.
  std::shared_ptr<PreparedKernel> find(const std::string& cache_name, const UOpRef& key);
  void insert(const std::string& cache_name, UOpRef key, std::shared_ptr<PreparedKernel> kernel);
  // Drops the entries of the device named `device_name` (canonical; any options).
  void forget_device(const std::string& device_name);
  void clear();

private:
  struct Entry {
    UOpRef key; // keeps the normalized AST (and so its address) alive
    std::shared_ptr<PreparedKernel> kernel;
  };
  std::mutex mutex_;
  std::map<std::pair<std::string, const UOp*>, Entry> entries_;
};

} // namespace tg
