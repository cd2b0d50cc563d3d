// The qcom plugin without Adreno hardware: UNAVAILABLE with the reason unless TG_QCOM_ANY_OPENCL=1,
// and with it, the same code on any OpenCL device, saying when half goes through vload_half and
// keeping work groups to whole waves. Registered twice: qcom_plugin_test (variable unset) and
// qcom_plugin_any_opencl_test (TG_QCOM_ANY_OPENCL=1); each case runs in the one it is about.
#include "plugin_fixture.hpp"

#include <cstdlib>
#include <string>

using namespace tgtest;

namespace {

bool any_opencl() {
  const char* v = std::getenv("TG_QCOM_ANY_OPENCL");
  return v && std::string(v) == "1";
}

struct WhenAnyOpenCL {
  bool wanted = true;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result ok(any_opencl() == wanted);
    if (!ok) ok.message() << "skipped: this case runs with TG_QCOM_ANY_OPENCL" << (wanted ? "=1" : " unset");
    return ok;
  }
};

bool is_qualcomm_platform_here() {
  // Probe through the plugin itself: with the variable unset it only sees Qualcomm platforms.
  int32_t count = 0;
  return take(api().device_count(&count)).ok() && count > 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(qcom)

BOOST_AUTO_TEST_CASE(without_adreno_it_is_unavailable_and_says_why,
                     *boost::unit_test::precondition(WhenAnyOpenCL{false})) {
  if (is_qualcomm_platform_here()) {
    BOOST_TEST_MESSAGE("a Qualcomm OpenCL platform is present: nothing to check here");
    return;
  }
  int32_t count = -1;
  Status s = take(api().device_count(&count));
  BOOST_TEST(s.code == TG_ERROR_UNAVAILABLE);
  BOOST_TEST(s.message.find("Qualcomm") != std::string::npos, s.message);
  BOOST_TEST(s.message.find("TG_QCOM_ANY_OPENCL=1") != std::string::npos, s.message);
}

BOOST_AUTO_TEST_CASE(with_any_opencl_it_runs_and_names_its_half_path,
                     *boost::unit_test::precondition(WhenAnyOpenCL{true})) {
  int32_t count = 0;
  Status s = take(api().device_count(&count));
  if (s.code == TG_ERROR_UNAVAILABLE) {
    BOOST_TEST_MESSAGE("skipped: unavailable: " + s.message);
    return;
  }
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
  Device device;
  tg_device_properties p = device.properties();
  const std::string name = p.name;
  const bool native = p.features & TG_FEATURE_FP16_MATH;
  BOOST_TEST((name.find("vload_half") != std::string::npos) == !native, name);
  if (p.subgroup_size > 1) BOOST_TEST(p.max_local_threads % p.subgroup_size == 0u);
  // float16 works on the fallback path too: 1.5 + 2.25 = 3.75.
  tg::sdk::KernelBuilder k("add_half");
  auto out = k.global(0, TG_DTYPE_FLOAT16), a = k.global(1, TG_DTYPE_FLOAT16);
  auto i = k.local_id(0);
  k.store(k.index(out, i), k.add(k.load(k.index(a, i)), k.load(k.index(a, k.i32(1)))));
  Program program(device, k);
  Buffer ba(device, std::vector<uint16_t>{0x3E00, 0x4080}), bo(device, std::vector<uint16_t>(2, 0));
  program.launch({1, 1, 1}, {2, 1, 1}, {bo.arg(), ba.arg()});
  std::vector<uint16_t> got = bo.download<uint16_t>(2);
  BOOST_TEST(got[0] == 0x4380); // 1.5 + 2.25
  BOOST_TEST(got[1] == 0x4480); // 2.25 + 2.25 = 4.5
}

BOOST_AUTO_TEST_SUITE_END()
