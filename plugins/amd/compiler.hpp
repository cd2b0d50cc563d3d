// The AMD compiler (docs/amd.md): kernel IR -> an HSACO code object (hsaco.hpp). Needs no device and
// must be thread-safe.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::amd {

class Compiler final : public sdk::Compiler {
public:
  sdk::CompileOutput compile(const sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace tg::amd
