// libFuzzer target for the ONNX loader (kernel/onnx/loader.cpp): any bytes given as a model, and as
// each kind of value file, must load or throw tg::Error, never crash. External data resolves
// against an empty folder, so a fuzzed location can only miss.
#include "kernel/onnx/loader.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static const std::filesystem::path empty_dir = [] {
    auto p = std::filesystem::temp_directory_path() / "tg_fuzz_onnx_empty";
    std::filesystem::create_directories(p);
    return p;
  }();
  try {
    (void)tg::onnx::load_graph(bytes, empty_dir, "fuzz");
  } catch (const tg::Error&) {
  }
  for (auto kind : {tg::onnx::ValueInfo::Kind::tensor, tg::onnx::ValueInfo::Kind::sequence,
                    tg::onnx::ValueInfo::Kind::optional}) {
    try {
      (void)tg::onnx::load_host_value(bytes, kind, "fuzz");
    } catch (const tg::Error&) {
    }
  }
  return 0;
}
