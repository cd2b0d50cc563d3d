// The Metal compiler: kernel IR -> Metal Shading Language (the SDK renderer) in a payload
// (payload.hpp). Needs no device and no Apple SDK: the source becomes a library when the program
// loads (newLibraryWithSource), so every Mac runs the same blob. Thread-safe.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::metal {

constexpr const char* kTarget = "metal"; // one target: source, compiled by the device's driver

class Compiler final : public sdk::Compiler {
public:
  sdk::CompileOutput compile(const sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace tg::metal
