// Devices still open when the program exits. A GPU driver may tear itself down from an exit handler
// it registered while a device was opened (NVIDIA's Vulkan driver does; `tg bench ops --device
// VULKAN` crashed at exit there), so the core must not call a plugin from its own static destructors.
// The fixture plugin "exitorder" registers such a handler in device_open and exits the process with
// code 70 if any plugin function is called after it ran: this test fails through its exit code.
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_lifetime.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <vector>

using namespace tg;

BOOST_AUTO_TEST_CASE(a_device_left_open_is_not_called_after_its_driver_tore_down) {
  std::string name = load_plugin(std::filesystem::path(TG_FIXTURE_DIR) / "libtg_device_exitorder.so");
  BOOST_TEST(name == "exitorder");
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4}, {}, "EXITORDER");
  BOOST_TEST(t.to_vector<float>() == (std::vector<float>{1, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(open_device("EXITORDER").device != nullptr);
  // The device stays open (the registry holds it) until the process exits.
}
