// render(): picks the dialect's entry (each in its own file, declared in render.hpp).
#include <tg/sdk/render/render.hpp>

namespace tg::sdk::render {

Source render(Dialect dialect, const KernelIR& ir, const Options& options) {
  switch (dialect) {
  case Dialect::c:
    return render_c(ir, options);
  case Dialect::opencl:
    return render_opencl(ir, options);
  case Dialect::cuda:
    return render_cuda(ir, options);
  case Dialect::metal:
    return render_metal(ir, options);
  case Dialect::glsl:
    return render_glsl(ir, options);
  }
  return render_c(ir, options);
}

} // namespace tg::sdk::render
