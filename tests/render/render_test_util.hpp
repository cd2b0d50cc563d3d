// Small helpers shared by the renderer suites: skipping (exit code 77, which ctest reports as
// skipped), random inputs per dtype, a scratch directory, parsing a corpus kernel.
#pragma once

#include "test_kernels.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace tgtest {

// Ends the whole suite as skipped: this machine cannot run it, which is never a pass.
[[noreturn]] inline void skip_suite(const std::string& reason) {
  std::cout << "skipped: " << reason << std::endl;
  std::_Exit(77);
}

inline tg::sdk::KernelIR parse(const tg::conform::CorpusKernel& k) { return tg::sdk::parse_kernel_ir(k.ir); }

// Random contents for a buffer: small integers (never 0, so divisors stay defined), floats in
// [-2, 2), float16/bfloat16 patterns of magnitude [0.25, 4), bools 0/1.
inline std::vector<std::byte> random_buffer(tg_dtype dt, uint64_t elements, std::mt19937& rng) {
  size_t size = tg::sdk::dtype_size(dt);
  std::vector<std::byte> out(size * elements);
  for (uint64_t e = 0; e < elements; ++e) {
    std::byte* p = out.data() + e * size;
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    int64_t i = int64_t(rng() % 100) - 50;
    if (i == 0) i = 7;
    float f = float(int32_t(rng() % 4096) - 2048) / 1024.0f;
    uint16_t sign = uint16_t((rng() & 1u) << 15);
    switch (dt) {
    case TG_DTYPE_BOOL:
      put(uint8_t(rng() & 1u));
      break;
    case TG_DTYPE_INT8:
    case TG_DTYPE_UINT8:
      put(int8_t(i));
      break;
    case TG_DTYPE_INT16:
    case TG_DTYPE_UINT16:
      put(int16_t(i));
      break;
    case TG_DTYPE_INT32:
    case TG_DTYPE_UINT32:
      put(int32_t(i));
      break;
    case TG_DTYPE_INT64:
    case TG_DTYPE_UINT64:
      put(int64_t(i));
      break;
    case TG_DTYPE_FLOAT16:
      put(uint16_t(sign | uint16_t((13u + rng() % 4u) << 10) | uint16_t(rng() & 0x3ffu)));
      break;
    case TG_DTYPE_BFLOAT16:
      put(uint16_t(sign | uint16_t((125u + rng() % 4u) << 7) | uint16_t(rng() & 0x7fu)));
      break;
    case TG_DTYPE_FLOAT32:
      put(f);
      break;
    case TG_DTYPE_FLOAT64:
      put(double(f) + 1e-9);
      break;
    default:
      break;
    }
  }
  return out;
}

class ScratchDir {
public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tg_render_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::string s;
  if (FILE* f = std::fopen(p.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    std::fclose(f);
  }
  return s;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  FILE* f = std::fopen(p.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + p.string());
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

} // namespace tgtest
