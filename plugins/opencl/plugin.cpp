// The OpenCL device (OPENCL:0..N-1): every device of every OpenCL platform the ICD loader finds,
// running the SDK renderer's OpenCL C. All host code is the SDK's OpenCL component
// (tg/sdk/opencl); this file is only the policy: take every platform.
#include <tg/sdk/opencl/plugin.hpp>

namespace tg::opencl {
namespace {

sdk::opencl::Policy policy() {
  sdk::opencl::Policy p;
  p.plugin = "opencl";
  p.version = TG_OPENCL_PLUGIN_VERSION;
  p.build_info = "tg_device_opencl " TG_OPENCL_PLUGIN_VERSION ", OpenCL C via the ICD loader"
#ifdef NDEBUG
                 ", release";
#else
                 ", debug";
#endif
  p.none_reason = "no OpenCL device";
  return p;
}

class Plugin final : public sdk::opencl::Plugin {
public:
  Plugin() : sdk::opencl::Plugin(policy()) {}
};

} // namespace
} // namespace tg::opencl

TG_SDK_DEFINE_PLUGIN(tg::opencl::Plugin)
