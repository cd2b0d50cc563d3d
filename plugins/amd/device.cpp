#include "device.hpp"

#include "buffer.hpp"
#include "program.hpp"
#include "unwritten.hpp"

namespace tg::amd {

// The HIP runtime path (hipModuleLoadData, hipModuleLaunchKernel, events) is not written: with a
// ROCm GPU present, opening a device says so instead of pretending (docs/amd.md).
Device::Device(int32_t) { unwritten("opening a device"); }

tg_device_properties Device::properties() const { unwritten("properties"); }

std::vector<sdk::Attribute> Device::attributes() const { return {}; }

std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t, uint64_t, uint32_t) { unwritten("alloc"); }

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob&) { unwritten("load_program"); }

uint64_t Device::launch(const sdk::Launch&) { unwritten("launch"); }

void Device::synchronize() {}

} // namespace tg::amd
