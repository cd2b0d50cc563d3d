// tinygrad.cpp's public API: the one header a program includes (`#include <tinygrad/tinygrad.hpp>`,
// link tg::core in tree, tinygrad_cpp::tg or `pkg-config tinygrad_cpp` when installed). What it offers:
//   tensors      tg::Tensor (factories, elementwise/reduce/movement ops, autograd, realize,
//                schedule(), to_vector/item), dtypes              kernel/tensor/tensor.hpp
//   models       tg::nn (Module, Linear, Conv2d, BatchNorm, LayerNorm, GELU,
//                MultiheadAttention, ..., losses, clip_grad_norm)                    nn.hpp
//                scaled_dot_product_attention                                        attention.hpp
//                tg::optim (SGD, Adam, AdamW with parameter groups, StepLR,
//                CosineAnnealingLR, WarmupCosineLR)                                  optim.hpp
//                safetensors save/load (safe_save, safe_load)                        state.hpp
//                IDX files and load_mnist                                            datasets.hpp
//                tg::TinyJit (capture and replay a step)                             jit.hpp
//                tg::MultiTensor (sharded/replicated over devices, collectives)      multi.hpp
//                memory_view, tensor_from_memory (zero-copy exchange with numpy,
//                DLPack: a tensor's memory, a tensor over foreign memory)            external.hpp
//   settings     DEBUG, NOOPT, BEAM, ... from the environment, and set_debug_level, set_noopt,
//                set_beam, ... from code                                kernel/engine/config.hpp
//   inspection   tg::LaunchCounter (kernels and copies realizes launch)  kernel/engine/launch_counter.hpp
//                tg::summarize(items) (a schedule, one line per kernel)  kernel/schedule/schedule_summary.hpp
//                tg::inspect_kernel(item) (one kernel lowered and compiled for its device, honouring
//                NOOPT/BEAM: name, opts, applied list, kernel IR, source) kernel/engine/inspect.hpp
//                tg::viz::recorder(), start_recording() (VIZ traces)     kernel/viz/recorder.hpp
//   front ends   tg::InterruptCheck (safe points where long work stops on request, e.g. Ctrl-C)
//                                                                      kernel/engine/interrupt.hpp
//   devices      default_device, set_default_device, open_device        kernel/runtime/devices.hpp
//                list_devices (every plugin's devices, or why none)     kernel/runtime/device_list.hpp
//   plugins      load_plugin(path), unload_plugin(name) at run time      kernel/runtime/plugin_lifetime.hpp
// The headers below and the "kernel/..." headers they include are what `cmake --install` puts
// under include/tinygrad.cpp/ (sdk/cmake/TgInstall.cmake computes that set from this file); the
// rest of kernel/ is internal and may change without notice.
#pragma once

#include "kernel/engine/config.hpp"
#include "kernel/engine/inspect.hpp"
#include "kernel/engine/interrupt.hpp"
#include "kernel/engine/launch_counter.hpp"
#include "kernel/runtime/device_list.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_lifetime.hpp"
#include "kernel/schedule/schedule_summary.hpp"
#include "kernel/tensor/attention.hpp"
#include "kernel/tensor/datasets.hpp"
#include "kernel/tensor/external.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/multi.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"
#include "kernel/tensor/state.hpp"
#include "kernel/tensor/tensor.hpp"
#include "kernel/viz/recorder.hpp"
