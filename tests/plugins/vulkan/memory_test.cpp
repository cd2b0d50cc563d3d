// Buffers: maxStorageBufferRange is the largest buffer (a shader binds a whole buffer), and a
// buffer of exactly that size works at both ends.
#include "vulkan_fixture.hpp"

#include <string>
#include <vector>

using namespace tgtest;

BOOST_AUTO_TEST_CASE(a_buffer_beyond_max_storage_buffer_range_is_refused_clearly) {
  Device device;
  const tg_device_properties p = device.properties();
  tg_buffer_alloc_args args{sizeof(args), p.max_buffer_bytes + 1, 0, 0, 0};
  tg_buffer* buffer = nullptr;
  Status s = take(api().buffer_alloc(device.get(), &args, &buffer));
  BOOST_TEST(s.code == TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_TEST(s.message.find(std::to_string(p.max_buffer_bytes + 1)) != std::string::npos, s.message);
  BOOST_TEST(s.message.find(std::to_string(p.max_buffer_bytes)) != std::string::npos, s.message);
}

BOOST_AUTO_TEST_CASE(a_buffer_of_the_largest_size_keeps_both_ends) {
  Device device;
  const uint64_t size = device.properties().max_buffer_bytes;
  Buffer b(device, size);
  b.upload(std::vector<uint32_t>{0xdeadbeefu}, 0);
  b.upload(std::vector<uint32_t>{0x12345678u}, size - 4);
  BOOST_TEST(b.download<uint32_t>(1, 0)[0] == 0xdeadbeefu);
  BOOST_TEST(b.download<uint32_t>(1, size - 4)[0] == 0x12345678u);
}
