// Compiled programs, cached in memory (per device) and on disk (per plugin). The disk key is
// hash(ABI major, plugin name, plugin cache key, kernel IR bytes), so a new
// compiler version, target or flag never reuses a stale blob.
#pragma once

#include "kernel/engine/settings.hpp"
#include "kernel/runtime/device.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

namespace tg {

struct CachedProgram {
  Program program;
  std::string source; // rendered source, when it was asked for (DEBUG>=3)
  double compile_ms = 0;
  bool from_disk = false;
};

// The memory cache of compiled programs (one per engine), in front of the disk cache. It holds
// one future per kernel: the first caller compiles (outside any lock) and fulfils it, callers of
// the same kernel meanwhile wait on it, other kernels compile in parallel.
class ProgramCache {
public:
  // `settings`: its engine's (the disk cache's folder, and whether it is on).
  explicit ProgramCache(const Config& settings) : settings_(settings) {}
  // Returns the loaded program for `ir` on `device`, compiling at most once per cache (and once
  // per machine when the disk cache is on). Thread-safe: callers of the same kernel wait for one
  // compile, different kernels compile in parallel (loads on one device are serialized). A compile
  // that throws caches nothing: its waiters get the same exception, the next call compiles again.
  std::shared_ptr<CachedProgram> get(const std::shared_ptr<Device>& device, std::span<const std::byte> ir,
                                     bool want_source, uint32_t opt_level = 2);
  // Drops the programs for `device`, which they keep alive (tg::unload_plugin). Callers still
  // holding one keep it; nothing is compiled or freed on disk.
  void forget(const Device& device);
  void clear();
  // How many times get has called a plugin's compile (for tests).
  uint64_t compile_count() const { return compiles_.load(); }

private:
  const Config& settings_;
  using ProgramFuture = std::shared_future<std::shared_ptr<CachedProgram>>;
  using Key = std::pair<const Device*, std::string>; // the whole IR: no hash collision can mix programs up
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<ProgramFuture>> entries_;
  std::atomic<uint64_t> compiles_{0};
};

// Compiles and loads `ir` without caching it in memory or on disk (BEAM's candidates: most are
// timed once and thrown away). Thread-safe like get_program.
Program compile_uncached(const std::shared_ptr<Device>& device, std::span<const std::byte> ir,
                         uint32_t opt_level);

// The disk cache's files, for the other caches beside it (beam.cpp). A file is named by the hash
// of its key and sealed: "TGKC", uint32 format version, uint64 check of the key (a hash seeded
// apart from the name's), uint64 payload size, the payload, uint64 fnv1a64 of every byte before.
// read_cache_file returns the payload only when the file is whole and was written for `key`: a
// missing, unreadable, truncated, corrupt, renamed or swapped file is a miss (nullopt), which the
// caller fills by compiling again and overwriting. A write goes through a temporary file and a
// rename, and a failure is no error (the cache is an optimization).
std::optional<std::vector<std::byte>> read_cache_file(const std::filesystem::path& p,
                                                      std::span<const std::byte> key);
void write_cache_file(const std::filesystem::path& p, std::span<const std::byte> key,
                      std::span<const std::byte> payload);

// FNV-1a 64 of bytes, as 16 hex digits.
std::string hash_hex(std::span<const std::byte> bytes);

} // namespace tg
