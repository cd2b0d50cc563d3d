// Plugins added and dropped while the program runs. load_plugin registers a plugin file so its
// devices can be named ("MY", "MY:1"); unload_plugin drops every reference the runtime keeps
// (registry entry, open devices, allocator caches, program and kernel caches). The library is
// closed when the last Device, Buffer, Program or tensor storage using it is gone: each holds
// its device, and a device holds its plugin.
#pragma once

#include <filesystem>
#include <string>

namespace tg {

// Loads `path` and registers it under the name from its file name (libtg_device_<name>.so; else
// the name the plugin reports). Throws the plugin's load error (PluginLoadError subclasses), or
// PluginNameClashError naming both paths when a plugin of that name is already registered.
// Returns the plugin name (lower case); its devices are named in upper case, e.g. "MY:0".
std::string load_plugin(const std::filesystem::path& path);

// Forgets plugin `name` (any origin: discovered or loaded) and everything the runtime caches for
// its devices. Live tensors, buffers and programs keep working and keep the library loaded until
// they die; new work on its devices fails with UnknownPluginError. Returns false if no plugin of
// that name was registered. (PluginRegistry::rescan discovers it again.)
bool unload_plugin(const std::string& name);

} // namespace tg
