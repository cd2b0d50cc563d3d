// The identity of the shared object that holds this code (a plugin), for compile cache keys: a
// plugin rebuilt from other code (another renderer) must not reuse its predecessor's binaries.
#pragma once

#include <string>

namespace tg::sdk {

// The linker's GNU build id of the object holding `address` (hex), else its file's size and
// modification time, else "" (a static executable without either).
std::string build_identity(const void* address);

} // namespace tg::sdk
