// numpy's .npy files (format 1.0-3.0, little-endian, C order): what `tg run --input NAME=FILE.npy`
// reads and `--save-outputs` writes.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <filesystem>

namespace tg::cli {

// Throws tg::Error naming the file for anything but a C-ordered little-endian array of a dtype tg has.
Tensor load_npy(const std::filesystem::path& file, const std::string& device = "");
void save_npy(const std::filesystem::path& file, const Tensor& t);

} // namespace tg::cli
