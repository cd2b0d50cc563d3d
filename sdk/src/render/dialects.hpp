// One entry per dialect (each in its own file); render() in render.cpp picks one.
#pragma once

#include <tg/sdk/render/render.hpp>

namespace tg::sdk::render {

Source render_c(const KernelIR& ir, const Options& options);
Source render_opencl(const KernelIR& ir, const Options& options);
Source render_cuda(const KernelIR& ir, const Options& options);
Source render_metal(const KernelIR& ir, const Options& options);
Source render_glsl(const KernelIR& ir, const Options& options);

} // namespace tg::sdk::render
