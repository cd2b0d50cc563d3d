// device/*: device_count, open and close, properties (sanity and struct_size both ways) and
// attributes.
#include "tools/conform/cases.hpp"

#include "kernel/runtime/plugin_file.hpp"

#include <bit>
#include <cstring>
#include <set>

namespace tg::conform {
namespace {

std::string text_of(const char (&field)[TG_NAME_MAX], const char* what) {
  size_t n = strnlen(field, TG_NAME_MAX);
  expect(n < TG_NAME_MAX, std::string(what) + " is not NUL-terminated");
  return std::string(field, n);
}

void count_and_open_bad_index(const Context& ctx) {
  int32_t count = -1;
  check(api().device_count(&count), "device_count");
  const std::string problem = tg::device_count_problem(count); // the host's rule
  expect(problem.empty(), problem);
  expect(count == ctx.device_count, "device_count changed between calls: " +
                                        std::to_string(ctx.device_count) + " then " + std::to_string(count));
  tg_device* device = nullptr;
  tg_device_open_args args{sizeof(args), count, 0};
  Status s = take(api().device_open(&args, &device));
  expect(!s.ok(),
         "device_open(" + std::to_string(count) + ") of " + std::to_string(count) + " devices succeeded");
  args.index = -1;
  expect(!take(api().device_open(&args, &device)).ok(), "device_open(-1) succeeded");
  expect_code(api().device_open(nullptr, &device), TG_ERROR_INVALID_ARGUMENT, "device_open(NULL args)");
}

void open_close_repeatedly(const Context& ctx) {
  for (int round = 0; round < 3; ++round) {
    Device d(ctx.device_index);
    expect(std::strcmp(d.properties().name, ctx.properties.name) == 0,
           "the device's name changed after reopening");
  }
  // A newer host's open args (larger struct_size, zeroed tail) must be accepted.
  std::vector<std::byte> raw(sizeof(tg_device_open_args) + 32, std::byte{0});
  tg_device_open_args args{raw.size(), ctx.device_index, 0};
  std::memcpy(raw.data(), &args, sizeof args);
  tg_device* device = nullptr;
  check(api().device_open(reinterpret_cast<const tg_device_open_args*>(raw.data()), &device),
        "device_open with struct_size " + std::to_string(raw.size()));
  api().device_close(device);
}

void properties_sane(const Context& ctx) {
  Device d(ctx.device_index);
  const tg_device_properties& p = d.properties();
  expect(p.struct_size == sizeof(tg_device_properties),
         "device_properties changed struct_size to " + std::to_string(p.struct_size));
  expect(!text_of(p.name, "name").empty(), "name is empty");
  text_of(p.vendor, "vendor");
  expect(!text_of(p.arch, "arch").empty(), "arch (the compile target) is empty");
  expect(p.memory_bytes > 0, "memory_bytes is 0");
  expect(p.max_buffer_bytes > 0 && p.max_buffer_bytes <= p.memory_bytes,
         "max_buffer_bytes " + std::to_string(p.max_buffer_bytes) + " is 0 or above memory_bytes " +
             std::to_string(p.memory_bytes));
  uint64_t product = 1;
  for (int a = 0; a < 3; ++a) {
    expect(p.max_local_size[a] >= 1, "max_local_size[" + std::to_string(a) + "] is 0");
    expect(p.max_global_size[a] >= 1, "max_global_size[" + std::to_string(a) + "] is 0");
    product *= p.max_local_size[a];
  }
  expect(p.max_local_threads >= 1 && p.max_local_threads <= product,
         "max_local_threads " + std::to_string(p.max_local_threads) +
             " is 0 or above the product of max_local_size");
  expect(p.max_buffer_args >= 1, "max_buffer_args is 0");
  expect(std::has_single_bit(p.buffer_alignment),
         "buffer_alignment " + std::to_string(p.buffer_alignment) + " is not a power of two");
  expect(p.compute_units >= 1, "compute_units is 0");
  expect(p.subgroup_size >= 1, "subgroup_size is 0 (1 when there are no subgroups)");
  expect(p.reserved0 == 0, "reserved0 is not 0");
  expect((p.dtype_mask & ~((uint64_t(1) << TG_DTYPE_COUNT) - 1)) == 0,
         "dtype_mask has bits beyond the dtypes");
  expect((p.dtype_mask & TG_DTYPE_BIT(TG_DTYPE_VOID)) == 0, "dtype_mask declares VOID");
  expect(p.dtype_mask != 0, "dtype_mask declares no dtype");
  expect((p.features >> 8) == 0, "features has unknown bits");
  const bool local = (p.features & TG_FEATURE_LOCAL_MEMORY) != 0;
  expect(local == (p.local_memory_bytes > 0), "TG_FEATURE_LOCAL_MEMORY and local_memory_bytes disagree (" +
                                                  std::to_string(p.local_memory_bytes) + ")");
}

void properties_smaller_struct(const Context& ctx) {
  Device d(ctx.device_index);
  std::vector<unsigned char> raw(sizeof(tg_device_properties) + 64, 0xAB);
  const size_t small = offsetof(tg_device_properties, vendor); // struct_size + name: an older host
  std::memcpy(raw.data(), &small, sizeof small);
  std::memset(raw.data() + sizeof(size_t), 0, small - sizeof(size_t));
  check(api().device_properties(d.get(), reinterpret_cast<tg_device_properties*>(raw.data())),
        "device_properties with struct_size " + std::to_string(small));
  size_t size_after = 0;
  std::memcpy(&size_after, raw.data(), sizeof size_after);
  expect(size_after == small,
         "device_properties changed the caller's struct_size to " + std::to_string(size_after));
  for (size_t i = small; i < raw.size(); ++i)
    expect(raw[i] == 0xAB, "device_properties wrote byte " + std::to_string(i) + " beyond struct_size " +
                               std::to_string(small));
}

void properties_larger_struct(const Context& ctx) {
  Device d(ctx.device_index);
  std::vector<unsigned char> raw(sizeof(tg_device_properties) + 64, 0);
  const size_t large = raw.size(); // a newer host's struct: the plugin fills what it knows
  std::memcpy(raw.data(), &large, sizeof large);
  for (size_t i = sizeof(tg_device_properties); i < raw.size(); ++i) raw[i] = 0xCD;
  check(api().device_properties(d.get(), reinterpret_cast<tg_device_properties*>(raw.data())),
        "device_properties with struct_size " + std::to_string(large));
  tg_device_properties p;
  std::memcpy(&p, raw.data(), sizeof p);
  expect(std::strcmp(p.name, d.properties().name) == 0, "the name differs from a same-size query");
  expect(p.dtype_mask == d.properties().dtype_mask, "dtype_mask differs from a same-size query");
  for (size_t i = sizeof(tg_device_properties); i < raw.size(); ++i)
    expect(raw[i] == 0xCD, "device_properties wrote byte " + std::to_string(i) + " beyond its own struct");
}

void attributes(const Context& ctx) {
  if (!TG_CONFORM_HAS(device_attribute_count) || !TG_CONFORM_HAS(device_attribute))
    throw CaseSkipped("the plugin has no attribute functions");
  Device d(ctx.device_index);
  int32_t count = -1;
  check(api().device_attribute_count(d.get(), &count), "device_attribute_count");
  expect(count >= 0, "device_attribute_count is negative");
  std::set<std::string> keys;
  for (int32_t i = 0; i < count; ++i) {
    const char* key = nullptr;
    const char* value = nullptr;
    check(api().device_attribute(d.get(), i, &key, &value), "device_attribute(" + std::to_string(i) + ")");
    expect(key != nullptr && value != nullptr, "attribute " + std::to_string(i) + " has a NULL key or value");
    expect(strnlen(key, 4096) <= 4095 && strnlen(value, 4096) <= 4095,
           "attribute " + std::to_string(i) + " is longer than 4095 bytes");
    expect(*key != '\0', "attribute " + std::to_string(i) + " has an empty key");
    expect(keys.insert(key).second, std::string("attribute key '") + key + "' appears twice");
  }
  const char* key = nullptr;
  const char* value = nullptr;
  expect_code(api().device_attribute(d.get(), count, &key, &value), TG_ERROR_NOT_FOUND,
              "device_attribute(count)");
  expect_code(api().device_attribute(d.get(), -1, &key, &value), TG_ERROR_NOT_FOUND, "device_attribute(-1)");
}

} // namespace

void add_device_cases(std::vector<Case>& cases) {
  cases.push_back({"device/count_and_bad_index", true, count_and_open_bad_index});
  cases.push_back({"device/open_close_repeatedly", true, open_close_repeatedly});
  cases.push_back({"device/properties_sane", true, properties_sane});
  cases.push_back({"device/properties_older_host_struct", true, properties_smaller_struct});
  cases.push_back({"device/properties_newer_host_struct", true, properties_larger_struct});
  cases.push_back({"device/attributes", true, attributes});
}

} // namespace tg::conform
