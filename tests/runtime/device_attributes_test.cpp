// The host's reading of device attributes (kernel_options, kernel/engine/realize.cpp) through a
// fixture plugin (named "mock") that reports what $TG_FIXTURE_ATTRIBUTES lists: each known attribute sets its
// option, a malformed value is an Error naming the device, the attribute and the value.
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/device.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

namespace fs = std::filesystem;
using namespace tg;

namespace {

LowerOptions options_with(const std::string& attributes) {
  setenv("TG_FIXTURE_ATTRIBUTES", attributes.c_str(), 1);
  auto device = Device::open(Plugin::load(fs::path(TG_FIXTURE_DIR) / "libtg_device_attributes.so"), 0);
  LowerOptions o = kernel_options(*device, true);
  unsetenv("TG_FIXTURE_ATTRIBUTES");
  return o;
}

void check_refused(const std::string& attributes, const std::string& expected) {
  BOOST_TEST_CONTEXT(attributes) {
    try {
      options_with(attributes);
      BOOST_ERROR("accepted");
    } catch (const Error& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find("device mock:0: ") != std::string::npos, what);
      BOOST_TEST(what.find(expected) != std::string::npos, what);
    }
    unsetenv("TG_FIXTURE_ATTRIBUTES");
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(device_attributes)

BOOST_AUTO_TEST_CASE(absent_attributes_keep_the_properties) {
  LowerOptions o = options_with("");
  BOOST_TEST(o.local_memory_bytes == 49152u);
  BOOST_TEST(o.max_local_memory_bytes == 0u);
  BOOST_TEST(o.local_memory_limit() == 49152u);
  BOOST_TEST(o.max_loop_iterations == 0u);
  BOOST_TEST(!o.serial_work_groups);
}

BOOST_AUTO_TEST_CASE(each_attribute_sets_its_option) {
  LowerOptions o =
      options_with("max_local_memory_bytes=232448;max_loop_iterations=4096;work_group_execution=serial");
  BOOST_TEST(o.local_memory_bytes == 49152u); // the heuristics still plan with this
  BOOST_TEST(o.max_local_memory_bytes == 232448u);
  BOOST_TEST(o.local_memory_limit() == 232448u);
  BOOST_TEST(o.max_loop_iterations == 4096u);
  BOOST_TEST(o.serial_work_groups);
  BOOST_TEST(options_with("work_group_execution=parallel").serial_work_groups == false);
  BOOST_TEST(options_with("some_future_attribute=1").local_memory_limit() == 49152u); // ignored
}

BOOST_AUTO_TEST_CASE(malformed_values_are_refused_with_their_context) {
  check_refused("max_local_memory_bytes=48k",
                "attribute max_local_memory_bytes is \"48k\", not a byte count");
  check_refused("max_local_memory_bytes=", "attribute max_local_memory_bytes is \"\", not a byte count");
  check_refused("max_local_memory_bytes=-1", "not a byte count");
  check_refused("max_loop_iterations=0", "attribute max_loop_iterations is \"0\", not a count > 0");
  check_refused("work_group_execution=sideways", "not serial or parallel");
}

BOOST_AUTO_TEST_SUITE_END()
