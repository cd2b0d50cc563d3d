// The offset rewrite works on the one line the opencl dialect writes for the signature,
// "__kernel void <entry>(<params>) {\n", with params "__global <type>* b<k>" and "<type> s<k>"
// joined by ", ". Anything else means the renderer changed: INTERNAL, naming the kernel.
#include <tg/sdk/opencl/kernel_source.hpp>
#include <tg/sdk/plugin.hpp>
#include <tg/sdk/render/render.hpp>

namespace tg::sdk::opencl {
namespace {

[[noreturn]] void unexpected(const std::string& entry, const std::string& what) {
  throw PluginError(TG_ERROR_INTERNAL,
                    "kernel " + entry + ": the rendered OpenCL C has " + what +
                        "; the buffer-offset rewrite (kernel_source.cpp) no longer matches the renderer");
}

} // namespace

KernelSource render_kernel(const KernelIR& ir, bool native_half) {
  render::Options options;
  options.opencl_fp16 = native_half;
  render::Source source = render::render(render::Dialect::opencl, ir, options);
  std::string& text = source.text;

  const std::string head = "__kernel void " + source.entry + "(";
  const size_t begin = text.find(head);
  if (begin == std::string::npos) unexpected(source.entry, "no `" + head + "`");
  const size_t params_begin = begin + head.size();
  const size_t params_end = text.find(") {\n", params_begin);
  if (params_end == std::string::npos) unexpected(source.entry, "no `) {` after the parameters");

  std::string params;
  std::string prologue;
  const std::string list = text.substr(params_begin, params_end - params_begin);
  for (size_t at = 0; at < list.size();) {
    size_t comma = list.find(", ", at);
    if (comma == std::string::npos) comma = list.size();
    std::string param = list.substr(at, comma - at);
    at = comma + 2;
    if (param.rfind("__global ", 0) == 0) {
      const size_t star = param.rfind("* ");
      if (star == std::string::npos) unexpected(source.entry, "a buffer parameter without `* `: " + param);
      const std::string type = param.substr(0, star + 1); // "__global T*"
      const std::string name = param.substr(star + 2);
      param = type + " " + name + "_base, ulong " + name + "_offset";
      prologue += "  " + type + " " + name + " = (" + type + ")((__global uchar*)" + name + "_base + " +
                  name + "_offset);\n";
    }
    params += (params.empty() ? "" : ", ") + param;
  }
  text = text.substr(0, params_begin) + params + ") {\n" + prologue + text.substr(params_end + 4);
  return {std::move(text), std::move(source.entry)};
}

} // namespace tg::sdk::opencl
