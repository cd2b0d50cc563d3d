// Kernel IR -> C (the SDK's renderer) -> a shared object made by the system C compiler. The
// payload is the entry's name and the .so's bytes; program.cpp loads it.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace my {

inline constexpr const char* kTarget = "c-host"; // MY runs C compiled for the machine it is on

class Compiler final : public tg::sdk::Compiler {
public:
  tg::sdk::CompileOutput compile(const tg::sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace my
