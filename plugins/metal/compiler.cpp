#include "compiler.hpp"
#include "payload.hpp"

#include <tg/sdk/render/render.hpp>

namespace tg::metal {

sdk::CompileOutput Compiler::compile(const sdk::CompileRequest& request) {
  if (!request.target.empty() && request.target != kTarget)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "metal: unknown target '" + request.target + "' (the one target is 'metal')");
  const sdk::render::Source src = sdk::render::render(sdk::render::Dialect::metal, request.ir);
  Payload p;
  p.entry = src.entry;
  p.source = src.text;
  // The renderer numbers [[buffer(n)]] in parameter order: the buffers, then the scalars.
  uint32_t slot = 0;
  for (size_t k = 0; k < src.buffers.size(); ++k) p.buffer_slots.push_back(slot++);
  for (const auto& s : src.scalars) p.scalars.push_back({slot++, s.passed_as});
  p.uses_barrier = src.uses_barrier;
  p.uses_local_memory = src.uses_local_memory;
  sdk::CompileOutput out;
  out.target = kTarget;
  out.payload = encode(p);
  if (request.want_source) out.source = src.text;
  out.log = "metal: '" + request.ir.name + "', " + std::to_string(src.text.size()) + " bytes of MSL";
  return out;
}

std::string Compiler::cache_key(const std::string&) { return "metal 1;msl"; }

} // namespace tg::metal
