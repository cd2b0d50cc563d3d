#include "kernel/engine/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tg {

namespace {
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  try {
    return std::stoi(v);
  } catch (...) {
    return fallback;
  }
}

} // namespace

Config config_from_environment() {
  Config out;
  out.debug = env_int("DEBUG", 0);
  out.noopt = env_int("NOOPT", 0) != 0;
  out.beam = std::max(0, env_int("BEAM", 0));
  if (const char* t = std::getenv("BEAM_TIMEOUT"); t && *t) try {
      out.beam_timeout_s = std::max(0.0, std::stod(t));
    } catch (...) { // a malformed value keeps the default, like the other settings
    }
  out.disk_cache = env_int("DISABLE_COMPILER_CACHE", 0) == 0;
  out.stage = env_int("TG_STAGE", 1) != 0;
  out.schedule_cache = env_int("TG_SCHEDULE_CACHE", 1) != 0;
  out.pack = env_int("TG_PACK", 1) != 0;
  out.realize_early = std::clamp(env_int("TG_REALIZE_EARLY", -1), -1, 1);
  out.eager_batch = env_int("TG_EAGER_BATCH", 0) != 0;
  out.gradient_cache = std::clamp(env_int("TG_GRADIENT_CACHE", 1), 0, 2);
  out.fuse_attention = env_int("FUSE_ATTENTION", 0) != 0;
  out.winograd = std::clamp(env_int("WINO", -1), -1, 1);
  out.space_to_depth = std::clamp(env_int("S2D", -1), -1, 1);
  out.jit = env_int("JIT", 1) != 0;
  if (const char* dir = std::getenv("TG_CACHE_DIR"); dir && *dir)
    out.cache_dir = dir;
  else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    out.cache_dir = std::string(xdg) + "/tinygrad.cpp";
  else if (const char* home = std::getenv("HOME"); home && *home)
    out.cache_dir = std::string(home) + "/.cache/tinygrad.cpp";
  else
    out.disk_cache = false;
  return out;
}

} // namespace tg
