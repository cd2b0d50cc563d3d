// The error of a multi-device operation (MultiTensor and the collectives under it).
#pragma once

#include "kernel/tensor/tensor.hpp"

namespace tg {

// A multi-device operation that does not fit the operands' devices or shard axes; the message
// names the devices, axes and shapes.
struct MultiTensorError : TensorError {
  using TensorError::TensorError;
};

} // namespace tg
