// memory/*: allocation sizes and alignments, copies in every direction with offsets, range
// errors, running out of memory then recovering, and the optional ABI 1.3 entries (a buffer's
// address, a buffer over memory the caller owns).
#include "tools/conform/cases.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace tg::conform {
namespace {

void need_buffers() {
  if (!TG_CONFORM_HAS(buffer_alloc) || !TG_CONFORM_HAS(buffer_copy_from_host) ||
      !TG_CONFORM_HAS(buffer_copy_to_host))
    throw CaseSkipped("the plugin has no buffer_alloc / copy functions");
}

std::vector<std::byte> pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = std::byte(x >> 24);
  }
  return v;
}

// host -> a, a -> b (device copy, when the plugin has it), b -> host; compare.
void round_trip(const Device& device, uint64_t n) {
  auto data = pattern(size_t(n), uint32_t(n));
  Buffer a(device, n), b(device, n);
  a.upload(data);
  const Buffer* from = &a;
  if (TG_CONFORM_HAS(buffer_copy)) {
    check(api().buffer_copy(b.get(), 0, a.get(), 0, n), "buffer_copy(" + std::to_string(n) + " bytes)");
    from = &b;
  }
  auto back = from->download(n);
  auto [at, _] = std::mismatch(data.begin(), data.end(), back.begin());
  expect(at == data.end(), "round trip of " + std::to_string(n) + " bytes differs at byte " +
                               std::to_string(at - data.begin()));
}

void round_trip_small_and_odd(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  for (uint64_t n : {0, 1, 3, 7, 64, 4099, 65537}) round_trip(d, n);
}

void round_trip_large(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  uint64_t n = std::min<uint64_t>(uint64_t(64) << 20, d.properties().max_buffer_bytes / 4);
  round_trip(d, n);
}

void alignments(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  for (uint64_t size : {0, 1, 33, 4099})
    for (uint64_t alignment : {0, 1, 16, 64, 256, 4096}) {
      Buffer b(d, size, alignment);
      if (size > 0) {
        auto data = pattern(size_t(size), uint32_t(alignment));
        b.upload(data);
        expect(b.download(size) == data, "a buffer of " + std::to_string(size) + " bytes aligned to " +
                                             std::to_string(alignment) + " does not keep its contents");
      }
    }
  tg_buffer_alloc_args bad{sizeof(bad), 16, 48, 0, 0};
  tg_buffer* buffer = nullptr;
  expect_code(api().buffer_alloc(d.get(), &bad, &buffer), TG_ERROR_INVALID_ARGUMENT,
              "buffer_alloc with alignment 48 (not a power of two)");
  // A newer host's alloc args (larger struct_size, zeroed tail) must be accepted.
  std::vector<std::byte> raw(sizeof(tg_buffer_alloc_args) + 32, std::byte{0});
  tg_buffer_alloc_args args{raw.size(), 128, 0, 0, 0};
  std::memcpy(raw.data(), &args, sizeof args);
  check(api().buffer_alloc(d.get(), reinterpret_cast<const tg_buffer_alloc_args*>(raw.data()), &buffer),
        "buffer_alloc with struct_size " + std::to_string(raw.size()));
  api().buffer_free(buffer);
}

void offsets(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  Buffer buf(d, 100);
  buf.upload(std::vector<std::byte>(100, std::byte{0}));
  std::vector<std::byte> mid = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};
  buf.upload(mid, 40);
  auto all = buf.download(100);
  for (size_t i = 0; i < 100; ++i)
    expect(all[i] == (i >= 40 && i < 45 ? std::byte(i - 39) : std::byte{0}),
           "after writing 5 bytes at offset 40, byte " + std::to_string(i) + " is wrong");
  auto part = buf.download(3, 41);
  expect(part[0] == std::byte{2} && part[2] == std::byte{4},
         "reading 3 bytes at offset 41 gave the wrong bytes");
  buf.upload(std::vector<std::byte>(10, std::byte{9}), 90); // ends exactly at the end
  buf.download(0, 100);                                     // empty copy at the end
  if (TG_CONFORM_HAS(buffer_copy)) {
    Buffer other(d, 50);
    other.upload(std::vector<std::byte>(50, std::byte{7}));
    check(api().buffer_copy(other.get(), 10, buf.get(), 40, 5), "buffer_copy with offsets");
    auto got = other.download(7, 9);
    std::vector<std::byte> want = {std::byte{7}, std::byte{1}, std::byte{2}, std::byte{3},
                                   std::byte{4}, std::byte{5}, std::byte{7}};
    expect(got == want, "buffer_copy(dst offset 10, src offset 40, 5 bytes) copied the wrong bytes");
  }
}

void out_of_range_copies(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  Buffer a(d, 100), b(d, 50);
  std::vector<std::byte> host(200, std::byte{1});
  const auto invalid = TG_ERROR_INVALID_ARGUMENT;
  expect_code(api().buffer_copy_from_host(a.get(), 90, host.data(), 11), invalid,
              "copy_from_host(90, 11) of 100");
  expect_code(api().buffer_copy_to_host(a.get(), 101, host.data(), 0), invalid,
              "copy_to_host(101, 0) of 100");
  expect_code(api().buffer_copy_to_host(a.get(), 0, host.data(), 101), invalid,
              "copy_to_host(0, 101) of 100");
  expect_code(api().buffer_copy_to_host(a.get(), UINT64_MAX, host.data(), 2), invalid,
              "copy_to_host(UINT64_MAX, 2): offset + size overflows");
  expect_code(api().buffer_copy_from_host(a.get(), 1, host.data(), UINT64_MAX), invalid,
              "copy_from_host(1, UINT64_MAX): offset + size overflows");
  expect_code(api().buffer_copy_from_host(a.get(), 0, nullptr, 4), invalid, "copy_from_host from NULL");
  expect_code(api().buffer_copy_from_host(nullptr, 0, host.data(), 4), invalid,
              "copy_from_host into a NULL buffer");
  if (TG_CONFORM_HAS(buffer_copy)) {
    expect_code(api().buffer_copy(b.get(), 0, a.get(), 0, 51), invalid, "buffer_copy of 51 bytes into 50");
    expect_code(api().buffer_copy(a.get(), 0, b.get(), 10, 41), invalid,
                "buffer_copy(src offset 10, 41) of 50");
  }
}

void exhaustion_then_recovery(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  const tg_device_properties& p = d.properties();
  tg_buffer* buffer = nullptr;
  tg_buffer_alloc_args huge{sizeof(huge), uint64_t(1) << 60, 0, 0, 0};
  Status s = take(api().buffer_alloc(d.get(), &huge, &buffer));
  expect(s.code == TG_ERROR_RESOURCE_EXHAUSTED, "allocating 2^60 bytes: expected RESOURCE_EXHAUSTED, got " +
                                                    (s.ok() ? std::string("success") : s.describe()));
  // Allocate chunks until the plugin says RESOURCE_EXHAUSTED (or 64 chunks: 8x memory_bytes in
  // all, which host-memory plugins may grant through overcommit; nothing is written to them).
  const uint64_t chunk = std::max<uint64_t>(std::min(p.memory_bytes / 8, p.max_buffer_bytes), 1 << 20);
  std::vector<tg_buffer*> held;
  bool exhausted = false;
  for (int i = 0; i < 64 && !exhausted; ++i) {
    tg_buffer_alloc_args args{sizeof(args), chunk, 0, 0, 0};
    tg_buffer* b = nullptr;
    Status r = take(api().buffer_alloc(d.get(), &args, &b));
    if (r.ok()) {
      held.push_back(b);
      continue;
    }
    for (tg_buffer* h : held) api().buffer_free(h);
    held.clear();
    expect(r.code == TG_ERROR_RESOURCE_EXHAUSTED,
           "running out of memory must be RESOURCE_EXHAUSTED, got " + r.describe());
    exhausted = true;
  }
  for (tg_buffer* h : held) api().buffer_free(h);
  round_trip(d, 4096); // and the device still works
}

// --- ABI 1.3 (optional) ---

// The buffer's address, or a skip when the plugin has none to give.
uint64_t address_of(const Buffer& b) {
  if (!TG_CONFORM_HAS(buffer_address))
    throw CaseSkipped("the plugin has no buffer_address (ABI 1.3, optional)");
  uint64_t address = 0;
  Status s = take(api().buffer_address(b.get(), &address));
  if (s.code == TG_ERROR_UNIMPLEMENTED)
    throw CaseSkipped("buffer_address answers UNIMPLEMENTED: " + s.message);
  expect(s.ok(), "buffer_address: " + s.describe());
  return address;
}

void buffer_address(const Context& ctx) {
  need_buffers();
  Device d(ctx.device_index);
  const auto data = pattern(4099, 13);
  Buffer b(d, data.size());
  b.upload(data);
  synchronize(d);
  const uint64_t address = address_of(b);
  const uint32_t alignment = std::max<uint32_t>(d.properties().buffer_alignment, 1);
  expect(address != 0 && address % alignment == 0,
         "buffer_address gave " + std::to_string(address) + ", not a non-zero multiple of buffer_alignment");
  expect(address_of(b) == address, "buffer_address changed between two calls");
  if (!(d.properties().features & TG_FEATURE_HOST_MEMORY)) return;
  // Host memory: the address is a pointer to the buffer's bytes, both ways.
  auto* bytes = reinterpret_cast<std::byte*>(uintptr_t(address));
  expect(std::equal(data.begin(), data.end(), bytes), "the bytes at buffer_address differ from the buffer's");
  bytes[7] = ~bytes[7];
  expect(b.download(8)[7] == bytes[7], "a write through buffer_address does not show in the buffer");
}

struct Releases {
  int count = 0;
  static void call(void* self) { ++static_cast<Releases*>(self)->count; }
};

// Imports `size` bytes at `address`, checks the copies see that memory, then frees the import:
// release must run exactly once, then. Returns after writing `written` through the import.
void import_and_free(const Device& d, uint64_t address, const std::vector<std::byte>& expected,
                     const std::vector<std::byte>& written) {
  Releases releases;
  tg_buffer_import_args args{sizeof(args), address, expected.size(), &Releases::call, &releases};
  tg_buffer* imported = nullptr;
  check(api().buffer_import(d.get(), &args, &imported),
        "buffer_import(" + std::to_string(expected.size()) + " bytes)");
  std::vector<std::byte> seen(expected.size());
  check(api().buffer_copy_to_host(imported, 0, seen.data(), seen.size()),
        "buffer_copy_to_host of the import");
  expect(seen == expected, "the imported buffer does not hold the memory's bytes");
  check(api().buffer_copy_from_host(imported, 0, written.data(), written.size()),
        "buffer_copy_from_host into the import");
  synchronize(d);
  expect(releases.count == 0, "release ran before buffer_free");
  api().buffer_free(imported);
  expect(releases.count == 1,
         "buffer_free of an import ran release " + std::to_string(releases.count) + " times, not once");
  // Misaligned (when the device has an alignment) or NULL: refused, and release never runs.
  Releases none;
  tg_buffer_import_args bad{sizeof(bad), address + 1, 16, &Releases::call, &none};
  if (d.properties().buffer_alignment > 1)
    expect_code(api().buffer_import(d.get(), &bad, &imported), TG_ERROR_INVALID_ARGUMENT,
                "buffer_import at an address off buffer_alignment");
  bad.address = 0;
  expect_code(api().buffer_import(d.get(), &bad, &imported), TG_ERROR_INVALID_ARGUMENT,
              "buffer_import of 16 bytes at address 0");
  expect(none.count == 0, "a failed buffer_import ran release");
}

void buffer_import(const Context& ctx) {
  if (!TG_CONFORM_HAS(buffer_import))
    throw CaseSkipped("the plugin has no buffer_import (ABI 1.3, optional)");
  need_buffers();
  Device d(ctx.device_index);
  const auto data = pattern(4096, 5), written = pattern(4096, 6);
  const uint64_t alignment = std::max<uint64_t>(std::max<uint32_t>(d.properties().buffer_alignment, 1), 64);
  if (d.properties().features & TG_FEATURE_HOST_MEMORY) { // memory the case allocates
    auto* memory = static_cast<std::byte*>(
        std::aligned_alloc(size_t(alignment), size_t((data.size() + alignment - 1) / alignment * alignment)));
    std::copy(data.begin(), data.end(), memory);
    import_and_free(d, reinterpret_cast<uintptr_t>(memory), data, written);
    const bool same = std::equal(written.begin(), written.end(), memory);
    std::free(memory);
    expect(same, "a write through the import did not reach the memory");
    return;
  }
  // Device memory: the memory of one of the device's own buffers, as buffer_address gives it.
  Buffer owner(d, data.size());
  owner.upload(data);
  synchronize(d);
  import_and_free(d, address_of(owner), data, written);
  expect(owner.download(written.size()) == written, "a write through the import did not reach the memory");
}

} // namespace

void add_memory_cases(std::vector<Case>& cases) {
  cases.push_back({"memory/round_trip_small_and_odd_sizes", true, round_trip_small_and_odd});
  cases.push_back({"memory/round_trip_large", true, round_trip_large});
  cases.push_back({"memory/alignments", true, alignments});
  cases.push_back({"memory/offsets", true, offsets});
  cases.push_back({"memory/out_of_range_copies_are_invalid", true, out_of_range_copies});
  cases.push_back({"memory/exhaustion_then_recovery", true, exhaustion_then_recovery});
  cases.push_back({"memory/buffer_address", true, buffer_address});
  cases.push_back({"memory/buffer_import", true, buffer_import});
}

} // namespace tg::conform
