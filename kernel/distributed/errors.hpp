// The error of kernel/distributed: a rank, the launcher or the rendezvous failed (the message
// says which rank waited for what).
#pragma once

#include "kernel/ir/errors.hpp"

namespace tg::distributed {

class DistributedError : public Error {
public:
  using Error::Error;
};

} // namespace tg::distributed
