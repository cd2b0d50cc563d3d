// OPENCL:N is every device of every platform, in the ICD loader's order, and each device's
// properties are what clGetDeviceInfo says (queried here independently of the plugin).
#include "opencl_fixture.hpp"

#include <CL/cl.h>

#include <string>
#include <vector>

using namespace tgtest;

BOOST_TEST_GLOBAL_FIXTURE(RequireDevice); // once per executable: programs_test.cpp shares it

namespace {

std::vector<cl_device_id> all_devices() {
  cl_uint n = 0;
  BOOST_REQUIRE_EQUAL(clGetPlatformIDs(0, nullptr, &n), CL_SUCCESS);
  std::vector<cl_platform_id> platforms(n);
  BOOST_REQUIRE_EQUAL(clGetPlatformIDs(n, platforms.data(), nullptr), CL_SUCCESS);
  std::vector<cl_device_id> devices;
  for (cl_platform_id p : platforms) {
    cl_uint m = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &m) != CL_SUCCESS) continue;
    std::vector<cl_device_id> some(m);
    BOOST_REQUIRE_EQUAL(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, m, some.data(), nullptr), CL_SUCCESS);
    devices.insert(devices.end(), some.begin(), some.end());
  }
  return devices;
}

std::string info_string(cl_device_id d, cl_device_info what) {
  char text[1024] = {};
  BOOST_REQUIRE_EQUAL(clGetDeviceInfo(d, what, sizeof text - 1, text, nullptr), CL_SUCCESS);
  return text;
}

template <class T> T info(cl_device_id d, cl_device_info what) {
  T v{};
  BOOST_REQUIRE_EQUAL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr), CL_SUCCESS);
  return v;
}

} // namespace

BOOST_AUTO_TEST_SUITE(opencl_devices)

BOOST_AUTO_TEST_CASE(every_device_of_every_platform_is_enumerated_in_order) {
  const std::vector<cl_device_id> devices = all_devices();
  int32_t count = -1;
  check(api().device_count(&count), "device_count");
  BOOST_REQUIRE_EQUAL(size_t(count), devices.size());
  for (int32_t i = 0; i < count; ++i) {
    Device device(i);
    BOOST_TEST(
        std::string(device.properties().name).rfind(info_string(devices[size_t(i)], CL_DEVICE_NAME), 0) == 0);
  }
  tg_device_open_args args{sizeof(args), count, 0};
  tg_device* none = nullptr;
  BOOST_TEST(take(api().device_open(&args, &none)).code != TG_OK);
}

BOOST_AUTO_TEST_CASE(properties_come_from_clGetDeviceInfo) {
  cl_device_id d = all_devices().at(0);
  tg_device_properties p = Device(0).properties();
  BOOST_TEST(p.memory_bytes == info<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE));
  BOOST_TEST(p.max_buffer_bytes == info<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  BOOST_TEST(p.local_memory_bytes == info<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE));
  BOOST_TEST(p.max_local_threads == info<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  BOOST_TEST(p.compute_units == info<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
  BOOST_TEST(p.buffer_alignment == info<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
  size_t items[3] = {};
  BOOST_REQUIRE_EQUAL(clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr),
                      CL_SUCCESS);
  for (int axis = 0; axis < 3; ++axis)
    BOOST_TEST(p.max_local_size[axis] == std::min<size_t>(items[axis], p.max_local_threads));
  const std::string extensions = info_string(d, CL_DEVICE_EXTENSIONS);
  BOOST_TEST(bool(p.dtype_mask & TG_DTYPE_BIT(TG_DTYPE_FLOAT64)) == mentions(extensions, "cl_khr_fp64"));
  BOOST_TEST(bool(p.features & TG_FEATURE_FP16_MATH) == mentions(extensions, "cl_khr_fp16"));
  BOOST_TEST(bool(p.dtype_mask & TG_DTYPE_BIT(TG_DTYPE_FLOAT16))); // storage via vload_half at least
  const uint64_t needed = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER | TG_FEATURE_TIMING | TG_FEATURE_ASYNC;
  BOOST_TEST((p.features & needed) == needed);
  BOOST_TEST(p.subgroup_size >= 1u);
}

BOOST_AUTO_TEST_CASE(a_buffer_above_the_largest_allocation_is_resource_exhausted) {
  Device device;
  tg_buffer_alloc_args args{sizeof(args), device.properties().max_buffer_bytes + 1, 0, 0, 0};
  tg_buffer* buffer = nullptr;
  Status s = take(api().buffer_alloc(device.get(), &args, &buffer));
  BOOST_TEST(s.code == TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_TEST(mentions(s.message, "largest buffer"), s.message);
}

BOOST_AUTO_TEST_SUITE_END()
