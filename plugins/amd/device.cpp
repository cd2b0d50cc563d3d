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

// The HIP runtime path (hipModuleLoadData, hipModuleLaunchKernel, events) is not written: with a
// ROCm GPU present, opening a device says so instead of pretending (docs/amd.md).
Device::Device(int32_t) { unimplemented("opening a device"); }

tg_device_properties Device::properties() const { unimplemented("properties"); }

std::vector<sdk::Attribute> Device::attributes() const { return {}; }

std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t, uint64_t, uint32_t) { unimplemented("alloc"); }

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob&) { unimplemented("load_program"); }

uint64_t Device::launch(const sdk::Launch&) { unimplemented("launch"); }

void Device::synchronize() {}

} // namespace tg::amd
