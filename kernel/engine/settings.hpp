// The engine's settings, read from the environment when the engine is made, with tinygrad's
// names and meanings:
// DEBUG=1..4, NOOPT=1, TG_CACHE_DIR (default ~/.cache/tinygrad.cpp), DISABLE_COMPILER_CACHE=1,
// BEAM=N (search each kernel's optimizations, beam width N; kernel/engine/beam.hpp) and
// BEAM_TIMEOUT=seconds (the search's bound per kernel, default 20), TG_STAGE=0, TG_PACK=0,
// TG_SCHEDULE_CACHE=0 (realize schedules every expression: kernel/engine/schedule_cache.hpp),
// TG_REALIZE_EARLY=0/1 (Tensor::backward realizes its root first and Optimizer::step_and_realize
// the gradients before building the update; default: on devices that queue launches,
// TG_FEATURE_ASYNC, so the device runs each part while the host builds the next),
// TG_EAGER_BATCH=1 (a schedule-cache replay launches its kernels as one launch_batch instead of
// one by one: kernel/engine/realize.hpp, run_prepared_as_batch; off by default, see there),
// TG_GRADIENT_CACHE=0 (gradient() runs its rules every time: kernel/tensor/gradient_cache.hpp;
// =2 also runs them on every hit and checks that the cached graph is the same),
// FUSE_ATTENTION=1 (ScheduleOptions::fuse_softmax: attention's softmax(q k^T) v as one kernel),
// WINO=0/1 (3x3 stride-1 convolutions through Winograd's F(4x4, 3x3): kernel/tensor/winograd.hpp;
// default: inference on CPU-style devices and on GPUs from 128 input channels),
// S2D=0/1 (stride-2 convolutions over few channels as stride-1 ones over the input's space-to-depth
// rearrangement: kernel/tensor/composite.cpp; default: inference on GPU-style devices),
// JIT=0 (tg::TinyJit and tg::onnx::Model's replays run every call eagerly).
#pragma once

#include <string>

namespace tg {

struct Config {
  int debug = 0;
  bool noopt = false;
  int beam = 0;               // 0: the heuristic's optimizations
  double beam_timeout_s = 20; // per kernel
  bool disk_cache = true;
  bool stage = true;           // TG_STAGE=0: the heuristic stages no operands in local memory (codegen STAGE)
  bool schedule_cache = true;  // TG_SCHEDULE_CACHE=0: no replay of schedules by structure
  bool pack = true;            // TG_PACK=0: CPU matmuls read b in place (kernel/tensor/matmul_pack.hpp)
  int realize_early = -1;      // TG_REALIZE_EARLY: 1 always, 0 never, -1 on async devices
  bool eager_batch = false;    // TG_EAGER_BATCH=1: replayed schedules launch as one launch_batch
  int gradient_cache = 1;      // TG_GRADIENT_CACHE: 0 off, 1 on, 2 on and checked on every hit
  bool fuse_attention = false; // FUSE_ATTENTION=1: a softmax only a reduce reads is computed in its kernel
  int winograd = -1;           // WINO: 1 always where it applies, 0 never, -1 inference (winograd.hpp)
  int space_to_depth = -1;     // S2D: 1 always where it applies, 0 never, -1 inference on GPU-style devices
  bool jit = true;             // JIT=0: no captures, no replays
  std::string cache_dir;
};

// The settings as the environment gives them (malformed values keep the defaults).
Config config_from_environment();

} // namespace tg
