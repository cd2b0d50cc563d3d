#include "device.hpp"

#include "buffer.hpp"
#include "program.hpp"

namespace tg::null {
namespace {

[[noreturn]] void unimplemented(const char* what) {
  throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, std::string("null plugin: ") + what + " is not written yet");
}

} // namespace

// TODO(copy): create the device's context/queue for `index` here; throw PluginError on failure.
Device::Device(int32_t) { unimplemented("opening a device"); }

// TODO(copy): fill the name, vendor, arch (the compile target Compiler understands), memory and
// launch limits, dtype_mask and features. The adaptor validates every launch against them.
tg_device_properties Device::properties() const { unimplemented("properties"); }

// TODO(copy): extra key/value facts worth showing in `tg devices` (driver version, ...); optional.
std::vector<sdk::Attribute> Device::attributes() const { return {}; }

// TODO(copy): allocate device memory (alignment 0 = the device's default) and return a Buffer.
// Out of memory is PluginError(TG_ERROR_RESOURCE_EXHAUSTED) so the host can free and retry.
std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t, uint64_t, uint32_t) { unimplemented("alloc"); }

// TODO(copy): load blob.payload (what your Compiler made) into the device: a module, a pipeline.
std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob&) { unimplemented("load_program"); }

// TODO(copy): bind launch.buffers/scalars in signature order and run the grid of launch.global
// work groups of launch.local work items. When launch.timed, finish and return the run time in ns.
uint64_t Device::launch(const sdk::Launch&) { unimplemented("launch"); }

// TODO(copy): wait for queued work, if launches or copies are asynchronous (TG_FEATURE_ASYNC).
void Device::synchronize() {}

} // namespace tg::null
