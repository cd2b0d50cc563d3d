#include "device.hpp"

#include "buffer.hpp"
#include "program.hpp"

namespace tg::amd {
namespace {

[[noreturn]] void unimplemented(const char* what) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                         std::string("amd plugin: ") + what + " is not written yet (docs/amd.md)");
}

} // namespace

Device::Device(int32_t) { unimplemented("opening a device"); }

// launch limits, dtype_mask and features. The adaptor validates every launch against them.
tg_device_properties Device::properties() const { unimplemented("properties"); }

std::vector<sdk::Attribute> Device::attributes() const { return {}; }

// Out of memory is PluginError(TG_ERROR_RESOURCE_EXHAUSTED) so the host can free and retry.
std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t, uint64_t, uint32_t) { unimplemented("alloc"); }

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob&) { unimplemented("load_program"); }

// work groups of launch.local work items. When launch.timed, finish and return the run time in ns.
uint64_t Device::launch(const sdk::Launch&) { unimplemented("launch"); }

void Device::synchronize() {}

} // namespace tg::amd
