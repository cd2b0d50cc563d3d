// The AMD plugin's compiler: every render-test kernel (the golden corpus and the builder extras)
// compiles for each gfx target LLVM 14 has of the issue's list into a code object that
// llvm-readelf-14 reads as an AMDGPU ELF with the kernel symbol, its `.kd` descriptor and an amdhsa
// metadata note whose argument list has the kernel's buffers then scalars, in order.
#include "plugin_fixture.hpp"
#include "test_kernels.hpp"

#include <tg/sdk/blob.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  BOOST_REQUIRE_MESSAGE(p != nullptr, "cannot run " + cmd);
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  BOOST_REQUIRE_MESSAGE(pclose(p) == 0, cmd + " failed:\n" + out);
  return out;
}

// The `.args:` entries of the metadata note, in order: each entry's `.value_kind`.
std::vector<std::string> arg_kinds(const std::string& notes) {
  std::vector<std::string> kinds;
  const size_t args = notes.find(".args:");
  if (args == std::string::npos) return kinds;
  const size_t end = notes.find("\n    .", args); // the next key of the kernel map
  const std::string list = notes.substr(args, end == std::string::npos ? std::string::npos : end - args);
  static const std::regex kind(R"(\.value_kind:\s+(\w+))");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), kind); it != std::sregex_iterator(); ++it)
    kinds.push_back((*it)[1]);
  return kinds;
}

} // namespace

using namespace tgtest;

BOOST_AUTO_TEST_CASE(corpus_compiles_to_valid_code_objects) {
  const auto dir = std::filesystem::temp_directory_path() / ("tg_amd_hsaco_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  int compiled = 0, refused = 0;
  for (const char* gfx : {"gfx90a", "gfx1030", "gfx1035"}) {
    for (const auto& k : tgtest::render_test_kernels()) {
      BOOST_TEST_CONTEXT(k.name << " for " << gfx) {
        const tg::sdk::KernelIR ir = tg::sdk::parse_kernel_ir(k.ir);
        Compiled c;
        Status s = try_compile(k.ir, &c, 0, 2, gfx);
        if (tgtest::needs_work_group_memory(k) && s.code == TG_ERROR_UNIMPLEMENTED) {
          ++refused; // BARRIER/DEFINE_LOCAL: the LLVM renderer does not render them yet
          continue;
        }
        BOOST_REQUIRE_MESSAGE(s.ok(), "compile failed: " + s.message + "\n" + s.log);
        // The binary is the SDK's blob envelope around the plugin's payload, the code object.
        const std::vector<std::byte> code = tg::sdk::open_blob(c.binary, "amd", gfx).payload;
        const auto file = dir / (k.name + "." + gfx + ".hsaco");
        std::ofstream(file, std::ios::binary)
            .write(reinterpret_cast<const char*>(code.data()), std::streamsize(code.size()));
        const std::string elf =
            run("llvm-readelf-14 --file-header --symbols --notes '" + file.string() + "' 2>&1");
        BOOST_TEST(std::regex_search(elf, std::regex(R"(Machine:\s+EM_AMDGPU)")));
        BOOST_TEST(std::regex_search(elf, std::regex(R"(Type:\s+DYN)")), "a linked shared object");
        BOOST_TEST(elf.find(" " + ir.name + "\n") != std::string::npos, "kernel symbol " << ir.name);
        BOOST_TEST(elf.find(" " + ir.name + ".kd\n") != std::string::npos, "descriptor " << ir.name << ".kd");
        BOOST_TEST(elf.find("amdhsa.kernels") != std::string::npos);
        BOOST_TEST(elf.find(".name:           " + ir.name) != std::string::npos);
        BOOST_TEST(elf.find("amdgcn-amd-amdhsa--" + std::string(gfx)) != std::string::npos);
        // Buffers then scalars, in order; hidden arguments after them.
        std::vector<std::string> kinds = arg_kinds(elf);
        const size_t n = ir.buffer_count + ir.scalar_count;
        BOOST_REQUIRE_GE(kinds.size(), n);
        for (size_t i = 0; i < n; ++i)
          BOOST_TEST(kinds[i] == (i < ir.buffer_count ? "global_buffer" : "by_value"), "argument " << i);
        ++compiled;
      }
    }
  }
  std::filesystem::remove_all(dir);
  BOOST_TEST_MESSAGE(compiled << " code objects checked, " << refused << " refused (work-group memory)");
  BOOST_TEST(compiled > 0);
}
