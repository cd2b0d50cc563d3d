// AMD programs: a loaded kernel (a module/function handle). The adaptor keeps the kernel's
// signature beside it and checks every launch against it.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::amd {

class Program final : public sdk::Program {};

} // namespace tg::amd
