#include "kernel/engine/program_cache.hpp"

#include <tg/sdk/bytes.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string_view>
#include <unistd.h>

namespace tg {

namespace fs = std::filesystem;

std::string hash_hex(std::span<const std::byte> bytes) { return sdk::hex64(sdk::fnv1a64(bytes)); }

namespace {

constexpr char kCacheMagic[4] = {'T', 'G', 'K', 'C'};
constexpr uint32_t kCacheFormat = 1;

// The key's check: FNV-1a over a prefix and the key, so it is independent of the file's name
// (the unprefixed hash): a file moved under another key's name fails it.
uint64_t key_check(std::span<const std::byte> key) {
  std::vector<std::byte> bytes;
  constexpr std::string_view prefix = "tinygrad.cpp disk cache key\n";
  bytes.reserve(prefix.size() + key.size());
  for (char c : prefix) bytes.push_back(std::byte(c));
  bytes.insert(bytes.end(), key.begin(), key.end());
  return sdk::fnv1a64(bytes);
}

void put_u64(std::vector<std::byte>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xff));
}

uint64_t get_u64(std::span<const std::byte> in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(in[at + size_t(i)]) << (8 * i);
  return v;
}

} // namespace

std::optional<std::vector<std::byte>> read_cache_file(const fs::path& p, std::span<const std::byte> key) {
  std::vector<std::byte> file;
  try {
    file = sdk::read_file(p);
  } catch (const sdk::FileError&) { // missing or unreadable: a miss
    return std::nullopt;
  }
  constexpr size_t head = 4 + 4 + 8 + 8, tail = 8;
  if (file.size() < head + tail || std::memcmp(file.data(), kCacheMagic, 4) != 0) return std::nullopt;
  uint32_t format = 0;
  for (int i = 0; i < 4; ++i) format |= uint32_t(file[4 + size_t(i)]) << (8 * i);
  const uint64_t size = get_u64(file, 16);
  if (format != kCacheFormat || size != file.size() - head - tail) return std::nullopt;
  const std::span<const std::byte> sealed(file.data(), file.size() - tail);
  if (get_u64(file, file.size() - tail) != sdk::fnv1a64(sealed)) return std::nullopt; // truncated or corrupt
  if (get_u64(file, 8) != key_check(key)) return std::nullopt;                        // another key's file
  return std::vector<std::byte>(file.begin() + std::ptrdiff_t(head), file.end() - std::ptrdiff_t(tail));
}

// Writes via a temporary file and rename, so a concurrent reader never sees half a file.
void write_cache_file(const fs::path& p, std::span<const std::byte> key, std::span<const std::byte> payload) {
  std::vector<std::byte> file;
  for (char c : kCacheMagic) file.push_back(std::byte(c));
  for (int i = 0; i < 4; ++i) file.push_back(std::byte((kCacheFormat >> (8 * i)) & 0xff));
  put_u64(file, key_check(key));
  put_u64(file, payload.size());
  file.insert(file.end(), payload.begin(), payload.end());
  put_u64(file, sdk::fnv1a64(file));
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return; // the cache is an optimization: a read-only home is not an error
    out.write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

Program compile_uncached(const std::shared_ptr<Device>& device, std::span<const std::byte> ir,
                         uint32_t opt_level) {
  const char* target = device->properties().arch;
  CompiledKernel k = device->plugin().compile(ir, 0, target, opt_level);
  return device->load(k.binary);
}

namespace {

std::shared_ptr<CachedProgram> build_program(const std::shared_ptr<Device>& device,
                                             std::span<const std::byte> ir, bool want_source,
                                             uint32_t opt_level, std::atomic<uint64_t>& compiles,
                                             const Config& settings) {
  const Plugin& plugin = device->plugin();
  const char* target = device->properties().arch;
  std::string plugin_key = plugin.cache_key(target);
  std::string disk_key_text = std::to_string(TG_ABI_VERSION_MAJOR) + "|" + plugin.name() + "|" + plugin_key +
                              "|O" + std::to_string(opt_level) + "|";
  std::vector<std::byte> disk_key_bytes(reinterpret_cast<const std::byte*>(disk_key_text.data()),
                                        reinterpret_cast<const std::byte*>(disk_key_text.data()) +
                                            disk_key_text.size());
  disk_key_bytes.insert(disk_key_bytes.end(), ir.begin(), ir.end());
  fs::path disk_path = fs::path(settings.cache_dir) / plugin.name() / (hash_hex(disk_key_bytes) + ".blob");

  auto cached = std::make_shared<CachedProgram>();
  auto t0 = std::chrono::steady_clock::now();
  if (settings.disk_cache && !want_source) {
    if (auto blob = read_cache_file(disk_path, disk_key_bytes)) {
      try {
        cached->program = device->load(*blob);
        cached->from_disk = true;
      } catch (const DeviceError&) { // corrupt or stale: recompile and overwrite
        cached->from_disk = false;
      }
    }
  }
  if (!cached->from_disk) {
    ++compiles;
    CompiledKernel k = plugin.compile(ir, want_source ? TG_COMPILE_WANT_SOURCE : 0, target, opt_level);
    cached->source = k.source;
    cached->program = device->load(k.binary); // Device serializes calls on one device (docs/abi.md)
    if (settings.disk_cache) write_cache_file(disk_path, disk_key_bytes, k.binary);
  }
  cached->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return cached;
}

} // namespace

std::shared_ptr<CachedProgram> ProgramCache::get(const std::shared_ptr<Device>& device,
                                                 std::span<const std::byte> ir, bool want_source,
                                                 uint32_t opt_level) {
  Key key(device.get(),
          std::to_string(opt_level) + std::string(reinterpret_cast<const char*>(ir.data()), ir.size()));
  std::unique_lock lock(mutex_);
  for (;;) {
    auto it = entries_.find(key);
    if (it == entries_.end()) break;
    std::shared_ptr<ProgramFuture> entry = it->second;
    lock.unlock();
    std::shared_ptr<CachedProgram> program = entry->get(); // rethrows the compiling caller's error
    if (!want_source || !program->source.empty()) return program;
    lock.lock();
    // Compiled without the source this caller wants: replace the entry, unless someone already did.
    it = entries_.find(key);
    if (it != entries_.end() && it->second == entry) {
      entries_.erase(it);
      break;
    }
  }
  std::promise<std::shared_ptr<CachedProgram>> promise;
  auto entry = std::make_shared<ProgramFuture>(promise.get_future().share());
  entries_[key] = entry;
  lock.unlock();

  try {
    std::shared_ptr<CachedProgram> program =
        build_program(device, ir, want_source, opt_level, compiles_, settings_);
    promise.set_value(program);
    return program;
  } catch (...) {
    promise.set_exception(std::current_exception());
    lock.lock();
    if (auto it = entries_.find(key); it != entries_.end() && it->second == entry) entries_.erase(it);
    throw;
  }
}

void ProgramCache::forget(const Device& device) {
  std::vector<std::shared_ptr<ProgramFuture>> dropped; // released after the lock
  {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->first.first != &device) {
        ++it;
        continue;
      }
      dropped.push_back(std::move(it->second));
      it = entries_.erase(it);
    }
  }
}

void ProgramCache::clear() {
  std::map<Key, std::shared_ptr<ProgramFuture>> dropped; // released after the lock
  std::lock_guard lock(mutex_);
  dropped.swap(entries_);
}

} // namespace tg
