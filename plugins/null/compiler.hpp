// The null compiler: kernel IR -> the payload Device::load_program takes. Needs no device and
// must be thread-safe.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::null {

class Compiler final : public sdk::Compiler {
public:
  sdk::CompileOutput compile(const sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace tg::null
