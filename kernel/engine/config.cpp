#include "kernel/engine/config.hpp"

#include "kernel/engine/engine.hpp"

#include <algorithm>

namespace tg {

namespace {
Config& mutable_config() { return engine().settings(); }
} // namespace

const Config& config() { return mutable_config(); }
void set_debug_level(int level) { mutable_config().debug = level; }
void set_noopt(bool noopt) { mutable_config().noopt = noopt; }
void set_schedule_cache(bool on) { mutable_config().schedule_cache = on; }
void set_realize_early(int mode) { mutable_config().realize_early = std::clamp(mode, -1, 1); }
void set_eager_batch(bool on) { mutable_config().eager_batch = on; }
void set_gradient_cache(int mode) { mutable_config().gradient_cache = std::clamp(mode, 0, 2); }
void set_fuse_attention(bool on) { mutable_config().fuse_attention = on; }
void set_winograd(int mode) { mutable_config().winograd = mode; }
void set_space_to_depth(int mode) { mutable_config().space_to_depth = mode; }
void set_pack(bool on) { mutable_config().pack = on; }
void set_beam(int width, double timeout_s) {
  mutable_config().beam = std::max(0, width);
  mutable_config().beam_timeout_s = std::max(0.0, timeout_s);
}

} // namespace tg
