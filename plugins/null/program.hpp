// The null programs: a loaded kernel (a module/function handle). The adaptor keeps the kernel's
// signature beside it and checks every launch against it.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::null {

class Program final : public sdk::Program {
  // TODO(copy): hold the loaded module and kernel handle; release them in the destructor.
};

} // namespace tg::null
