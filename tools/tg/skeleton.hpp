// The null plugin's sources (plugins/null), embedded in `tg` at build time so `tg plugin new`
// works from an installed tool with no source tree around.
#pragma once

#include <span>
#include <string_view>

namespace tg::cli {

struct SkeletonFile {
  std::string_view name; // e.g. "device.cpp"
  std::string_view text;
};

std::span<const SkeletonFile> skeleton_files();

} // namespace tg::cli
