// Kernel IR -> CUDA C (the SDK renderer) -> NVRTC. Targets are spelled "sm_XY" (the device's
// compute capability). A target NVRTC can build machine code for gets a cubin; a newer one gets
// PTX for the newest architecture NVRTC knows, which the driver compiles when the program loads.
// Needs no GPU or driver; thread-safe (NVRTC programs are per call).
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tg::cuda {

// A compile's payload: the entry name, NUL, the bytes of dynamic shared memory a launch passes in
// decimal ("0" for none), NUL, then the cubin or the NUL-terminated PTX.
struct Image {
  std::string entry;
  uint32_t dynamic_shared_bytes = 0;
  std::span<const std::byte> code;
};
std::vector<std::byte> pack_image(const std::string& entry, uint32_t dynamic_shared_bytes,
                                  std::span<const std::byte> code);
Image unpack_image(std::span<const std::byte> payload); // throws INVALID_ARGUMENT when malformed

// "sm_90" -> 90; throws INVALID_ARGUMENT for anything else.
int parse_target(const std::string& target);

class Compiler final : public sdk::Compiler {
public:
  sdk::CompileOutput compile(const sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;

private:
  std::string resolve(const std::string& target) const; // "" -> the first GPU's target, else sm_75
};

} // namespace tg::cuda
