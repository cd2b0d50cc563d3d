// The Qualcomm Adreno device (QCOM:0..N-1): OpenCL restricted to Qualcomm platforms, with native
// half arithmetic (cl_khr_fp16), work-group limits in whole waves and plain buffers (no images).
// It has never run on Adreno hardware (docs/opencl.md). TG_QCOM_ANY_OPENCL=1 lets it take any
// OpenCL device, so CI runs its code on PoCL; a device without cl_khr_fp16 then computes half in
// float through vload_half/vstore_half and says so in its name and the opencl.half attribute.
#include <tg/sdk/opencl/plugin.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace tg::qcom {
namespace {

bool contains_qualcomm(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s.find("qualcomm") != std::string::npos;
}

bool any_opencl() {
  const char* v = std::getenv("TG_QCOM_ANY_OPENCL");
  return v && std::string(v) == "1";
}

sdk::opencl::Policy policy() {
  sdk::opencl::Policy p;
  p.plugin = "qcom";
  p.version = TG_QCOM_PLUGIN_VERSION;
  p.build_info = "tg_device_qcom " TG_QCOM_PLUGIN_VERSION ", OpenCL C for Adreno via the ICD loader"
#ifdef NDEBUG
                 ", release";
#else
                 ", debug";
#endif
  const bool any = any_opencl();
  p.accepts = [any](const sdk::opencl::PlatformInfo& platform) {
    return any || contains_qualcomm(platform.vendor) || contains_qualcomm(platform.name);
  };
  p.none_reason = any ? "no OpenCL device (TG_QCOM_ANY_OPENCL=1)"
                      : "no Qualcomm Adreno OpenCL device (no platform whose vendor or name contains "
                        "\"Qualcomm\"; TG_QCOM_ANY_OPENCL=1 takes any OpenCL device)";
  p.work_groups_of_whole_waves = true;
  p.without_fp16_note = " [no cl_khr_fp16: half via vload_half/vstore_half]";
  return p;
}

class Plugin final : public sdk::opencl::Plugin {
public:
  Plugin() : sdk::opencl::Plugin(policy()) {}
};

} // namespace
} // namespace tg::qcom

TG_SDK_DEFINE_PLUGIN(tg::qcom::Plugin)
