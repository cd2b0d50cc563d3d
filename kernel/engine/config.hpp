// The default engine's settings (settings.hpp: what each one means and its environment variable),
// and the calls that change them from code.
#pragma once

#include "kernel/engine/settings.hpp"

namespace tg {

// The default engine's settings.
const Config& config();

// Tests and tools may override the environment for this process (not thread-safe with realize).
void set_debug_level(int level);
void set_noopt(bool noopt);
void set_schedule_cache(bool on);
void set_beam(int width, double timeout_s = 20);
void set_realize_early(int mode); // 1 always, 0 never, -1 on async devices (the default)
void set_eager_batch(bool on);
void set_gradient_cache(int mode); // 0 off, 1 on, 2 checked
void set_fuse_attention(bool on);
void set_winograd(int mode);       // 1 always, 0 never, -1 the default (winograd.hpp)
void set_space_to_depth(int mode); // 1 always, 0 never, -1 the default (S2D: composite.cpp)
void set_pack(bool on);            // CPU weight panels and packed matmuls (TG_PACK)

} // namespace tg
