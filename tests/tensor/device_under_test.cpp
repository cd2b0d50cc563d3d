// The device a tensor suite runs on: `<suite> -- --device NAME` sets it, else $TG_DEVICE (the
// default device) is used. Printed once so a log says which device passed or failed. A device
// that is unavailable ends the suite with "skipped: unavailable" (exit 77, ctest's skip code).
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

struct DeviceUnderTest {
  DeviceUnderTest() {
    auto& suite = boost::unit_test::framework::master_test_suite();
    for (int i = 1; i + 1 < suite.argc; ++i)
      if (std::string(suite.argv[i]) == "--device") tg::set_default_device(suite.argv[i + 1]);
    std::cout << "device under test: " << tg::default_device() << std::endl;
    try { // a device whose hardware is absent (CUDA here) skips the suite, never passes it
      (void)tg::open_device(tg::default_device());
    } catch (const tg::DeviceUnavailableError& e) {
      std::cout << "skipped: unavailable: " << e.what() << std::endl;
      std::_Exit(77);
    }
  }
};

} // namespace

BOOST_TEST_GLOBAL_FIXTURE(DeviceUnderTest);
