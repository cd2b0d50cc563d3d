#include "compiler.hpp"

#include "payload.hpp"

#include <tg/sdk/render/render.hpp>

#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>

namespace tg::vulkan {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The validator's messages, or "" when the module is valid.
std::string spirv_problems(const std::vector<uint32_t>& spirv) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* m) {
    messages += "word " + std::to_string(pos.index) + ": " + m + "\n";
  });
  if (tools.Validate(spirv)) return {};
  return messages.empty() ? std::string("invalid SPIR-V") : messages;
}

} // namespace

std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& name) {
  // One compiler for the process: making one costs ~25x a small compile (glslang's start-up), and
  // shaderc_compile_into_spv may be called from several threads at once on the same compiler.
  static shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  // No spirv-opt passes: every Vulkan driver optimizes the SPIR-V itself, and they double the time.
  options.SetOptimizationLevel(shaderc_optimization_level_zero);
  auto result = compiler.CompileGlslToSpv(source, shaderc_compute_shader, (name + ".comp").c_str(), options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success)
    throw sdk::PluginError(TG_ERROR_INTERNAL,
                           "glslang could not compile " + name + ": " + first_line(result.GetErrorMessage()),
                           result.GetErrorMessage() + "\n" + source);
  std::vector<uint32_t> spirv(result.cbegin(), result.cend());
  if (std::string problems = spirv_problems(spirv); !problems.empty())
    throw sdk::PluginError(TG_ERROR_INTERNAL, "invalid SPIR-V for " + name + ": " + first_line(problems),
                           problems + "\n" + source);
  return spirv;
}

void validate_spirv(const std::vector<uint32_t>& spirv, const std::string& name) {
  if (std::string problems = spirv_problems(spirv); !problems.empty())
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "VULKAN program " + name + " holds invalid SPIR-V: " + first_line(problems),
                           problems);
}

sdk::CompileOutput Compiler::compile(const sdk::CompileRequest& request) {
  if (!request.target.empty() && request.target != kTarget)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "unknown target \"" + request.target +
                                                          "\" (VULKAN compiles for \"" + kTarget + "\")");
  sdk::render::Source source = sdk::render::render(sdk::render::Dialect::glsl, request.ir);
  Payload payload;
  payload.spirv = compile_glsl(source.text, request.ir.name);
  payload.push_constant_bytes = source.push_constant_bytes;
  for (const auto& s : source.scalars) payload.scalars.push_back({s.offset, s.size, s.passed_as});
  for (const auto& b : source.buffers) payload.bindings.push_back(b.binding);
  sdk::CompileOutput out;
  out.target = kTarget;
  out.payload = encode(payload);
  if (request.want_source) out.source = source.text;
  return out;
}

std::string Compiler::cache_key(const std::string& target) {
  unsigned int version = 0, revision = 0;
  shaderc_get_spv_version(&version, &revision);
  return std::string(kTarget) + "|shaderc spv " + std::to_string(version) + "." + std::to_string(revision) +
         "|O0|" + target;
}

} // namespace tg::vulkan
