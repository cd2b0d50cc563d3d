#include "test_hooks.hpp"

#include <tg/sdk/plugin.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

namespace tg::cpu::test_hooks {

void rendezvous(const std::string& kernel) {
  if (!kEnabled) return;
  const std::string prefix = "tg_test_rendezvous_";
  if (kernel.rfind(prefix, 0) != 0) return;
  // tg_test_rendezvous_<n>_<group>_<anything>: n compiles of one group meet.
  size_t n_end = kernel.find('_', prefix.size());
  size_t group_end = n_end == std::string::npos ? n_end : kernel.find('_', n_end + 1);
  if (group_end == std::string::npos)
    throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "test rendezvous: expected "
                                                          "tg_test_rendezvous_<n>_<group>_..., got " +
                                                              kernel);
  const int wanted = std::stoi(kernel.substr(prefix.size(), n_end - prefix.size()));
  const std::string group = kernel.substr(0, group_end);
  static std::mutex mutex;
  static std::condition_variable changed;
  static std::map<std::string, int> arrived; // per group; never reset (use a new group per test)
  std::unique_lock lock(mutex);
  ++arrived[group];
  changed.notify_all();
  // Each waits for the n-th arrival, so n arrivals means n compiles were inside at once.
  if (!changed.wait_for(lock, std::chrono::seconds(10), [&] { return arrived[group] >= wanted; }))
    throw tg::sdk::PluginError(TG_ERROR_DEADLINE_EXCEEDED, "test rendezvous: " + std::to_string(wanted) +
                                                               " compiles of " + group +
                                                               " never ran at the same time");
}

} // namespace tg::cpu::test_hooks
