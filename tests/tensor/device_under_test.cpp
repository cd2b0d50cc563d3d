// The device a tensor suite runs on: `<suite> -- --device NAME` sets it, else $TG_DEVICE (the
// default device) is used. Printed once so a log says which device passed or failed.
#include "kernel/runtime/devices.hpp"

#include <boost/test/unit_test.hpp>

#include <iostream>
#include <string>

namespace {

struct DeviceUnderTest {
  DeviceUnderTest() {
    auto& suite = boost::unit_test::framework::master_test_suite();
    for (int i = 1; i + 1 < suite.argc; ++i)
      if (std::string(suite.argv[i]) == "--device") tg::set_default_device(suite.argv[i + 1]);
    std::cout << "device under test: " << tg::default_device() << std::endl;
  }
};

} // namespace

BOOST_TEST_GLOBAL_FIXTURE(DeviceUnderTest);
