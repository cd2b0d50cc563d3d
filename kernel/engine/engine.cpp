#include "kernel/engine/engine.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"

namespace tg {

Engine::Engine() {
  close_listener_ = add_device_close_listener(
      [this](const std::string& name, const OpenDevice& device) { forget_device(name, *device.device); });
}

Engine::~Engine() {
  remove_device_close_listener(close_listener_);
  std::vector<std::shared_ptr<void>> owners;
  owners.swap(extension_owners_);
  while (!owners.empty()) owners.pop_back(); // newest first: a later extension may use an earlier one
  clear();
}

std::size_t Engine::next_extension_slot() {
  static std::atomic<std::size_t> next{0};
  const std::size_t slot = next.fetch_add(1);
  if (slot >= kMaxExtensions)
    throw Error("Engine: more than " + std::to_string(kMaxExtensions) +
                " extension types (raise kMaxExtensions)");
  return slot;
}

void* Engine::make_extension(std::size_t slot, std::shared_ptr<void> (*make)(Engine&)) {
  // Made under the lock, so no type is made twice (a constructor may register itself somewhere).
  std::lock_guard lock(extensions_mutex_);
  if (void* p = extensions_[slot].load(std::memory_order_acquire)) return p; // another thread made it
  std::shared_ptr<void> owner = make(*this);
  void* p = owner.get();
  extension_owners_.push_back(std::move(owner));
  extensions_[slot].store(p, std::memory_order_release);
  return p;
}

void Engine::clear() {
  realized_.clear();
  schedules_.clear();
  kernels_.clear();
  programs_.clear();
}

void Engine::forget_device(const std::string& name, const Device& device) {
  schedules_.clear(); // replayed schedules hold prepared kernels too
  kernels_.forget_device(name);
  programs_.forget(device);
}

Engine& engine() {
  static Engine& e = *new Engine; // never destroyed: see the header
  return e;
}

std::shared_ptr<CachedProgram> get_program(const std::shared_ptr<Device>& device,
                                           std::span<const std::byte> ir, bool want_source,
                                           uint32_t opt_level) {
  return engine().programs().get(device, ir, want_source, opt_level);
}
void forget_programs(const Device& device) { engine().programs().forget(device); }
uint64_t program_compile_count() { return engine().programs().compile_count(); }
ScheduleCacheStats schedule_cache_stats() { return engine().schedules().stats(); }
void forget_schedules() { engine().schedules().clear(); }

} // namespace tg
