#include "kernel/runtime/program_cache.hpp"

#include "kernel/runtime/config.hpp"

#include <tg/sdk/bytes.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <unistd.h>

namespace tg {

namespace fs = std::filesystem;

std::string hash_hex(std::span<const std::byte> bytes) { return sdk::hex64(sdk::fnv1a64(bytes)); }

namespace {

// A missing or unreadable cache file is a cache miss, not an error.
std::vector<std::byte> read_file(const fs::path& p) {
  try {
    return sdk::read_file(p);
  } catch (const sdk::FileError&) {
    return {};
  }
}

// Writes via a temporary file and rename, so a concurrent reader never sees half a blob.
void write_file(const fs::path& p, std::span<const std::byte> bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return; // the cache is an optimization: a read-only home is not an error
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  fs::rename(tmp, p, ec);
}

} // namespace

std::shared_ptr<CachedProgram> get_program(const std::shared_ptr<Device>& device,
                                           std::span<const std::byte> ir, bool want_source,
                                           uint32_t opt_level) {
  static std::mutex mutex;
  static std::map<std::pair<const Device*, std::string>, std::shared_ptr<CachedProgram>> memory;
  const Plugin& plugin = device->plugin();
  std::lock_guard lock(mutex);
  // keyed by the whole IR: no hash collision can hand back the wrong program
  auto key =
      std::make_pair(device.get(), std::to_string(opt_level) +
                                       std::string(reinterpret_cast<const char*>(ir.data()), ir.size()));
  if (auto it = memory.find(key); it != memory.end() && (!want_source || !it->second->source.empty()))
    return it->second;

  const char* target = device->properties().arch;
  std::string plugin_key = plugin.cache_key(target);
  std::string disk_key_text = std::to_string(TG_ABI_VERSION_MAJOR) + "|" + plugin.name() + "|" + plugin_key +
                              "|O" + std::to_string(opt_level) + "|";
  std::vector<std::byte> disk_key_bytes(reinterpret_cast<const std::byte*>(disk_key_text.data()),
                                        reinterpret_cast<const std::byte*>(disk_key_text.data()) +
                                            disk_key_text.size());
  disk_key_bytes.insert(disk_key_bytes.end(), ir.begin(), ir.end());
  fs::path disk_path = fs::path(config().cache_dir) / plugin.name() / (hash_hex(disk_key_bytes) + ".blob");

  auto cached = std::make_shared<CachedProgram>();
  auto t0 = std::chrono::steady_clock::now();
  if (config().disk_cache && !want_source) {
    auto blob = read_file(disk_path);
    if (!blob.empty()) {
      try {
        cached->program = device->load(blob);
        cached->from_disk = true;
      } catch (const DeviceError&) { // corrupt or stale: recompile and overwrite
        cached->from_disk = false;
      }
    }
  }
  if (!cached->from_disk) {
    CompiledKernel k = plugin.compile(ir, want_source ? TG_COMPILE_WANT_SOURCE : 0, target, opt_level);
    cached->source = k.source;
    cached->program = device->load(k.binary);
    if (config().disk_cache) write_file(disk_path, k.binary);
  }
  cached->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  memory[key] = cached;
  return cached;
}

} // namespace tg
