// The only way MultiTensor data crosses devices (inside the tensor ring): copies, all-reduce and
// all-gather on realized buffers through kernel/runtime/collective.hpp. Each call realizes its
// inputs, runs one collective into fresh buffers and returns tensors over them; when asked, it
// also records itself so MultiTensor::backward() can run its backward (the devices' autograd
// passes cannot see across a collective: its outputs are new buffers).
#pragma once

#include "kernel/runtime/collective.hpp"
#include "kernel/tensor/tensor.hpp"

#include <string>
#include <vector>

namespace tg::detail {

// The device memory of `t`'s value, realized on its device first; a strided or partial view is
// replaced (in `t`) by a contiguous copy. Collectives read and write such buffers.
Buffer& realized_buffer(Tensor& t);

// A realized tensor of `shape` over a new buffer on `device`, and that buffer's memory (nullptr
// when empty): where a collective writes its result.
std::pair<Tensor, Buffer*> fresh_tensor(const std::string& device, DType dt, const Dims& shape);

// out[i] = inputs[i] on devices[i] (same device: a device-local copy).
std::vector<Tensor> copy_to_devices(const std::vector<Tensor>& inputs,
                                    const std::vector<std::string>& devices, bool record = true);

// out[i] (on inputs[i]'s device) = the elementwise sum/max over all inputs; same shapes and
// dtypes, distinct devices.
std::vector<Tensor> all_reduce_values(const std::vector<Tensor>& inputs, CollectiveReduce op,
                                      bool record = true);

// out[i] (on inputs[i]'s device) = the inputs concatenated along axis 0; equal shapes.
std::vector<Tensor> all_gather_rows(const std::vector<Tensor>& inputs, bool record = true);

// Runs the backward of every recorded collective that received output gradients during the
// devices' passes, newest first, continuing each device's pass from the collective's inputs.
void run_collectives_backward();

// Forgets output gradients left by an earlier, unfinished backward.
void clear_collective_gradients();

} // namespace tg::detail
