// Plugins shipped separately keep working: ones built only against the frozen ABI 1.0, 1.1 and 1.2
// headers, and one from an "older minor" whose function table and properties struct are shorter.
#include "kernel/runtime/collective.hpp"
#include "kernel/runtime/device.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <vector>

using namespace tg;

namespace {

// Allocation, copies both ways, a device-side copy, and a launch whose program writes `value`.
void round_trips(const std::shared_ptr<Device>& device) {
  const std::vector<float> data{1.5f, -2.0f, 3.25f, 4.0f};
  const auto bytes = uint64_t(data.size() * sizeof(float));
  Buffer a = device->alloc(bytes), b = device->alloc(bytes);
  a.copy_from_host(std::as_bytes(std::span(data)));
  b.copy_from(a, bytes);
  std::vector<float> back(data.size());
  b.copy_to_host(std::as_writable_bytes(std::span(back)));
  BOOST_TEST(back == data, boost::test_tools::per_element());

  const float value = 7.0f;
  Program program = device->load(std::as_bytes(std::span(&value, 1)));
  tg_buffer_arg arg{b.raw(), 2 * sizeof(float)}; // the last two elements
  program.launch(LaunchDims{}, std::span(&arg, 1));
  device->synchronize();
  b.copy_to_host(std::as_writable_bytes(std::span(back)));
  BOOST_TEST(back == (std::vector<float>{1.5f, -2.0f, 7.0f, 7.0f}), boost::test_tools::per_element());
}

// ABI 1.1 on a 1.0 table: launch_batch is absent, and Device::launch_batch falls back to one
// launch per entry, in order (the second launch overwrites what the first wrote in element 3).
void batch_falls_back_to_launches(const std::shared_ptr<Device>& device) {
  BOOST_TEST(!device->has_launch_batch());
  Buffer b = device->alloc(4 * sizeof(float));
  const float one = 1.0f, two = 2.0f;
  Program first = device->load(std::as_bytes(std::span(&one, 1)));
  Program second = device->load(std::as_bytes(std::span(&two, 1)));
  tg_buffer_arg all{b.raw(), 0}, last{b.raw(), 3 * sizeof(float)};
  tg_launch_args a{}, c{};
  a.struct_size = c.struct_size = sizeof(tg_launch_args);
  a.program = first.raw();
  c.program = second.raw();
  for (int axis = 0; axis < 3; ++axis)
    a.global_size[axis] = a.local_size[axis] = c.global_size[axis] = c.local_size[axis] = 1;
  a.buffers = &all;
  c.buffers = &last;
  a.buffer_count = c.buffer_count = 1;
  const tg_launch_args* list[] = {&a, &c};
  BOOST_TEST(!device->launch_batch(list).has_value());
  device->synchronize();
  std::vector<float> back(4);
  b.copy_to_host(std::as_writable_bytes(std::span(back)));
  BOOST_TEST(back == (std::vector<float>{1.0f, 1.0f, 1.0f, 2.0f}), boost::test_tools::per_element());
}

} // namespace

BOOST_AUTO_TEST_CASE(a_plugin_built_against_the_1_0_header_loads_and_works) {
  auto plugin = Plugin::load(TG_COMPAT_V1_0_PLUGIN);
  BOOST_TEST(plugin->name() == "compat");
  BOOST_TEST(plugin->api().abi_major == 1u);
  BOOST_TEST(plugin->api().abi_minor == 0u);
  BOOST_TEST(plugin->has(&tg_plugin_api::synchronize));
  auto device = Device::open(plugin, 0);
  BOOST_TEST(std::string(device->properties().name) == "compat device");
  BOOST_TEST(device->properties().features == uint64_t(TG_FEATURE_HOST_MEMORY));
  round_trips(device);
  // The 1.1 host reads the 1.0 table (224 bytes) without looking past it for launch_batch.
  BOOST_TEST(plugin->api().struct_size == offsetof(tg_plugin_api, launch_batch));
  BOOST_TEST(!plugin->has(&tg_plugin_api::launch_batch));
  batch_falls_back_to_launches(device);
}

BOOST_AUTO_TEST_CASE(an_older_minor_with_a_shorter_table_and_structs_loads_with_the_rest_absent) {
  auto plugin = Plugin::load(TG_COMPAT_OLDER_MINOR_PLUGIN);
  BOOST_TEST(plugin->api().struct_size == offsetof(tg_plugin_api, synchronize));
  BOOST_TEST(plugin->has(&tg_plugin_api::launch));
  BOOST_TEST(!plugin->has(&tg_plugin_api::synchronize)); // beyond its table, though its memory holds one
  BOOST_TEST(!plugin->has(&tg_plugin_api::compile_cache_key));
  BOOST_CHECK_THROW(plugin->cache_key(), UnimplementedError);
  auto device = Device::open(plugin, 0);
  // Fields beyond the plugin's struct come back zero; the host's copy is complete.
  BOOST_TEST(device->properties().struct_size == sizeof(tg_device_properties));
  BOOST_TEST(device->properties().features == 0u);
  BOOST_TEST(device->properties().dtype_mask == uint64_t(TG_DTYPE_BIT(TG_DTYPE_FLOAT32)));
  round_trips(device); // synchronize is absent: the host treats the plugin as synchronous
  batch_falls_back_to_launches(device);
}

// ABI 1.2 on a 1.1 table: peer_copy and collective are absent, and the collectives run through
// host memory (a group of one device: all-reduce leaves the values, all-gather copies them).
BOOST_AUTO_TEST_CASE(a_plugin_built_against_the_1_1_header_loads_without_the_1_2_entries) {
  auto plugin = Plugin::load(TG_COMPAT_V1_1_PLUGIN);
  BOOST_TEST(plugin->api().abi_minor == 1u);
  BOOST_TEST(plugin->api().struct_size == offsetof(tg_plugin_api, peer_copy));
  BOOST_TEST(!plugin->has(&tg_plugin_api::peer_copy));
  BOOST_TEST(!plugin->has(&tg_plugin_api::collective));
  auto device = Device::open(plugin, 0);
  round_trips(device);
  const std::vector<float> data{1.5f, -2.0f};
  Buffer in = device->alloc(8), out = device->alloc(8);
  in.copy_from_host(std::as_bytes(std::span(data)));
  GroupBuffer one{&in, 0};
  all_reduce(std::span(&one, 1), dtypes::float32, 2, CollectiveReduce::sum);
  GroupBuffer gathered{&out, 0};
  all_gather(std::span(&one, 1), std::span(&gathered, 1), dtypes::float32, 2);
  std::vector<float> back(2);
  out.copy_to_host(std::as_writable_bytes(std::span(back)));
  BOOST_TEST(back == data, boost::test_tools::per_element());
}

// ABI 1.3 on a 1.2 table: buffer_address and buffer_import are absent; the host gives no address
// and cannot import (callers copy instead).
BOOST_AUTO_TEST_CASE(a_plugin_built_against_the_1_2_header_loads_without_the_1_3_entries) {
  auto plugin = Plugin::load(TG_COMPAT_V1_2_PLUGIN);
  BOOST_TEST(plugin->api().abi_minor == 2u);
  BOOST_TEST(plugin->api().struct_size == offsetof(tg_plugin_api, buffer_address));
  BOOST_TEST(!plugin->has(&tg_plugin_api::buffer_address));
  BOOST_TEST(!plugin->has(&tg_plugin_api::buffer_import));
  auto device = Device::open(plugin, 0);
  round_trips(device);
  Buffer b = device->alloc(16);
  BOOST_TEST(!b.address().has_value());
  BOOST_TEST(!device->can_import());
  std::vector<float> memory(4);
  bool released = false;
  BOOST_CHECK_THROW(device->import(reinterpret_cast<uintptr_t>(memory.data()), 16, [&] { released = true; }),
                    UnimplementedError);
  BOOST_TEST(!released);
}
