// The engine: what executes work, and the state that execution keeps. It owns the caches (kernels,
// replayable schedules, compiled programs, realized values), the observer (VIZ) and the per-engine
// state of the rings outside it (autograd's registries, the random state: extension<T>()). The
// functions that run work (realize.hpp, beam.hpp, capture.hpp) read and fill this state; the
// caches themselves call nothing back.
//
// One default engine per process (engine()). It is never destroyed: at exit a driver may already
// have torn itself down from its own exit handler, so releasing programs and buffers from a static
// destructor could crash it; the process's exit reclaims the memory. clear() releases everything
// it holds, in a fixed order, while the devices are still up.
#pragma once

#include "kernel/engine/kernel_cache.hpp"
#include "kernel/engine/observer.hpp"
#include "kernel/engine/program_cache.hpp"
#include "kernel/engine/realized_cache.hpp"
#include "kernel/engine/schedule_cache.hpp"
#include "kernel/engine/settings.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

namespace tg {

class Engine {
public:
  Engine();
  // Destroys the extensions (newest first), then clear(); detaches from the device registry.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Its settings (DEBUG, NOOPT, BEAM, ...: settings.hpp), read from the environment when it is
  // made; config.hpp's set_* change the default engine's.
  Config& settings() { return settings_; }
  const Config& settings() const { return settings_; }
  KernelCache& kernels() { return kernels_; }
  ScheduleCache& schedules() { return schedules_; }
  ProgramCache& programs() { return programs_; }
  RealizedCache& realized() { return realized_; }

  // The observer (VIZ), or null. Attached for the rest of the engine's life.
  EngineObserver* observer() const { return observer_.load(std::memory_order_acquire); }
  void set_observer(EngineObserver* o) { observer_.store(o, std::memory_order_release); }

  // The engine's instance of T, made on first use with T(engine) where T has that constructor,
  // else T(): the state an outer ring keeps per engine. Lock-free after the first call for a type.
  template <class T> T& extension() {
    static const std::size_t slot = next_extension_slot();
    if (void* p = extensions_.at(slot).load(std::memory_order_acquire)) return *static_cast<T*>(p);
    return *static_cast<T*>(make_extension(slot, [](Engine& e) {
      if constexpr (std::is_constructible_v<T, Engine&>)
        return std::shared_ptr<void>(std::make_shared<T>(e));
      else
        return std::shared_ptr<void>(std::make_shared<T>());
    }));
  }

  // Releases the caches, in this order: the realized values, the replayable schedules, the
  // prepared kernels, the compiled programs. Their buffers go back to the allocators (those that no
  // tensor holds) and their programs release their devices; the next realize compiles again (or
  // reads the disk cache). Extensions are kept.
  void clear();
  // Drops what refers to the device named `name` (canonical): its prepared kernels, the
  // schedules that launch them and its programs (called when its plugin is unloaded).
  void forget_device(const std::string& name, const Device& device);

private:
  static constexpr std::size_t kMaxExtensions = 32;
  static std::size_t next_extension_slot();
  void* make_extension(std::size_t slot, std::shared_ptr<void> (*make)(Engine&));

  Config settings_ = config_from_environment(); // first: the caches below read it
  KernelCache kernels_;
  ScheduleCache schedules_{settings_};
  ProgramCache programs_{settings_};
  RealizedCache realized_;
  std::atomic<EngineObserver*> observer_{nullptr};
  std::array<std::atomic<void*>, kMaxExtensions> extensions_{};
  std::recursive_mutex extensions_mutex_; // recursive: an extension's constructor may make another
  std::vector<std::shared_ptr<void>> extension_owners_; // in creation order
  std::size_t close_listener_ = 0;                      // the device registry's handle for forget_device
};

// The process's default engine.
Engine& engine();

// The default engine's caches, by their older names (tests, tools).
std::shared_ptr<CachedProgram> get_program(const std::shared_ptr<Device>& device,
                                           std::span<const std::byte> ir, bool want_source,
                                           uint32_t opt_level = 2);
void forget_programs(const Device& device);
uint64_t program_compile_count();
ScheduleCacheStats schedule_cache_stats();
void forget_schedules();

} // namespace tg
