// Kernel IR -> C (the SDK's renderer) -> a shared object made by the system C compiler. The
// payload is the entry's name and the .so's bytes; program.cpp loads it.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <vector>

namespace my {

inline constexpr const char* kTarget = "c-host"; // MY runs C compiled for the machine it is on

// MY's matrix unit, "my.m4n4k4.f32": the device declares it (Device::matrix_units) and the
// compiler renders its MMA, so both read this one list (an MMA names a unit by its index).
std::vector<tg_matrix_unit> matrix_units();

class Compiler final : public tg::sdk::Compiler {
public:
  tg::sdk::CompileOutput compile(const tg::sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace my
