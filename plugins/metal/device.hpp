// The Metal side of the plugin, in Objective-C++ (device.mm, Apple only): devices, shared-storage
// buffers, programs (newLibraryWithSource + compute pipeline) and launches (command buffers with
// GPU start/end times). Everything that is not a Metal call is in plain C++ beside it.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <memory>

namespace tg::metal {

// MTLCopyAllDevices' count; throws PluginError(UNAVAILABLE) when there is none.
int32_t metal_device_count();
std::unique_ptr<sdk::Device> open_metal_device(int32_t index);

} // namespace tg::metal
