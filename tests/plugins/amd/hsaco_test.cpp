// The AMD plugin's compiler: every render-test kernel (the golden corpus and the builder extras)
// compiles for gfx90a (LLVM 14, in process) and, where Debian's LLVM 19 tools are installed, for
// gfx942 and gfx1100 (llc-19) into a code object that llvm-readelf reads as an AMDGPU ELF with the
// kernel symbol, its `.kd` descriptor and an amdhsa metadata note whose argument list has the
// kernel's buffers then scalars, in order, and that llvm-objdump disassembles to the kernel's code
// ending in s_endpgm (with s_barrier and a group segment where the kernel uses work-group memory).
// A kernel with MMA on each declared matrix unit disassembles to that unit's MFMA or WMMA
// instruction.
#include "amd/mma_kernel.hpp"
#include "plugin_fixture.hpp"
#include "test_kernels.hpp"

#include <tg/sdk/blob.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <thread>

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

struct Target {
  const char* gfx;
  const char* tools; // suffix of llvm-readelf / llvm-objdump that know it
};

std::vector<Target> targets() {
  std::vector<Target> t = {{"gfx90a", "14"}};
#if TG_TEST_AMD_LLVM19
  t.push_back({"gfx942", "19"});
  t.push_back({"gfx1100", "19"});
#else
  BOOST_TEST_MESSAGE("gfx942 and gfx1100 not checked: Debian's llc-19, ld.lld-19, llvm-readelf-19 and "
                     "llvm-objdump-19 were not found at configure time (scripts/bootstrap installs them)");
#endif
  return t;
}

// Splits a tool's output over several files into each file's part: each part starts at the line
// `marker(file)` and runs to the next file's.
std::map<std::string, std::string> per_file(const std::string& out, const std::vector<std::string>& files,
                                            const std::function<std::string(const std::string&)>& marker) {
  std::vector<std::pair<size_t, std::string>> starts;
  for (const std::string& f : files) {
    const size_t at = out.find(marker(f));
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, "no output for " + f);
    starts.emplace_back(at, f);
  }
  std::sort(starts.begin(), starts.end());
  std::map<std::string, std::string> parts;
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t end = i + 1 < starts.size() ? starts[i + 1].first : out.size();
    parts[starts[i].second] = out.substr(starts[i].first, end - starts[i].first);
  }
  return parts;
}

BOOST_AUTO_TEST_CASE(corpus_compiles_to_valid_code_objects) {
  const auto dir = std::filesystem::temp_directory_path() / ("tg_amd_hsaco_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto kernels = tgtest::render_test_kernels();
  int compiled = 0;
  for (const Target& target : targets()) {
    const std::string gfx = target.gfx, tools = target.tools;
    // Compiles on a few threads (compile is thread-safe; each waits on a linker or llc process),
    // checked afterwards on this one (Boost.Test's assertions are not thread-safe).
    std::vector<Compiled> results(kernels.size());
    std::vector<Status> statuses(kernels.size());
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < std::clamp(std::thread::hardware_concurrency(), 1u, 4u); ++t)
      workers.emplace_back([&] {
        for (size_t i; (i = next++) < kernels.size();)
          statuses[i] = try_compile(kernels[i].ir, &results[i], 0, 2, gfx.c_str());
      });
    for (std::thread& w : workers) w.join();
    std::vector<std::string> files;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const auto& k = kernels[i];
      const Compiled& c = results[i];
      const Status& s = statuses[i];
      BOOST_REQUIRE_MESSAGE(s.ok(), k.name + " for " + gfx + ": compile failed: " + s.message + "\n" + s.log);
      // The binary is the SDK's blob envelope around the plugin's payload, the code object.
      const std::vector<std::byte> code = tg::sdk::open_blob(c.binary, "amd", gfx).payload;
      files.push_back((dir / (k.name + "." + gfx + ".hsaco")).string());
      std::ofstream(files.back(), std::ios::binary)
          .write(reinterpret_cast<const char*>(code.data()), std::streamsize(code.size()));
    }
    // One run of each tool over all the files (a process per file would dominate the test's time).
    std::string list;
    for (const std::string& f : files) list += " '" + f + "'";
    const auto elfs =
        per_file(run("llvm-readelf-" + tools + " --file-header --symbols --notes" + list + " 2>&1"), files,
                 [](const std::string& f) { return "File: " + f + "\n"; });
    const auto disassembly = per_file(run("llvm-objdump-" + tools + " -d --mcpu=" + gfx + list + " 2>&1"),
                                      files, [](const std::string& f) { return f + ":\tfile format"; });
    for (size_t i = 0; i < kernels.size(); ++i) {
      const auto& k = kernels[i];
      BOOST_TEST_CONTEXT(k.name << " for " << gfx) {
        const tg::sdk::KernelIR ir = tg::sdk::parse_kernel_ir(k.ir);
        const std::string& elf = elfs.at(files[i]);
        const std::string& code_text = disassembly.at(files[i]);
        BOOST_TEST(std::regex_search(elf, std::regex(R"(Machine:\s+EM_AMDGPU)")));
        BOOST_TEST(std::regex_search(elf, std::regex(R"(Type:\s+DYN)")), "a linked shared object");
        BOOST_TEST(elf.find(" " + ir.name + "\n") != std::string::npos, "kernel symbol " << ir.name);
        BOOST_TEST(elf.find(" " + ir.name + ".kd\n") != std::string::npos, "descriptor " << ir.name << ".kd");
        BOOST_TEST(elf.find("amdhsa.kernels") != std::string::npos);
        BOOST_TEST(elf.find(".name:           " + ir.name) != std::string::npos);
        BOOST_TEST(elf.find("amdgcn-amd-amdhsa--" + gfx) != std::string::npos);
        BOOST_TEST(code_text.find("<" + ir.name + ">:") != std::string::npos, "disassembly of " << ir.name);
        BOOST_TEST(code_text.find("s_endpgm") != std::string::npos);
        if (k.features & TG_FEATURE_BARRIER)
          BOOST_TEST(code_text.find("s_barrier") != std::string::npos, "BARRIER -> s_barrier");
        if (k.features & TG_FEATURE_LOCAL_MEMORY)
          BOOST_TEST(!std::regex_search(elf, std::regex(R"(\.group_segment_fixed_size:\s+0\n)")),
                     "DEFINE_LOCAL -> a group segment");
        // Buffers then scalars, in order; hidden arguments after them.
        std::vector<std::string> kinds = arg_kinds(elf);
        const size_t n = ir.buffer_count + ir.scalar_count;
        BOOST_REQUIRE_GE(kinds.size(), n);
        for (size_t a = 0; a < n; ++a)
          BOOST_TEST(kinds[a] == (a < ir.buffer_count ? "global_buffer" : "by_value"), "argument " << a);
        ++compiled;
      }
    }
  }
  std::filesystem::remove_all(dir);
  BOOST_TEST_MESSAGE(compiled << " code objects checked");
  BOOST_TEST(compiled > 0);
}

// Each declared unit (amd/mma_kernel.hpp lists them) turns MMA into its instruction; the wave the
// unit assumes is the code object's (.wavefront_size). MMA on an undeclared unit, or with operands
// of other lane counts, is refused before LLVM sees it (check_mma).
BOOST_AUTO_TEST_CASE(mma_compiles_to_the_matrix_instruction) {
  const auto dir = std::filesystem::temp_directory_path() / ("tg_amd_mma_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  int checked = 0;
  for (const amdtest::ExpectedUnit& u : amdtest::expected_units()) {
#if !TG_TEST_AMD_LLVM19
    if (std::string(u.tools) == "19") continue;
#endif
    BOOST_TEST_CONTEXT(u.name << " on " << u.gfx) {
      tg::sdk::KernelBuilder kernel = amdtest::mma_kernel("mma_" + std::to_string(u.index), u);
      Compiled c;
      Status s = try_compile(kernel.serialize(), &c, TG_COMPILE_WANT_SOURCE, 2, u.gfx);
      BOOST_REQUIRE_MESSAGE(s.ok(), "compile failed: " + s.message + "\n" + s.log);
      const bool mfma = std::string(u.instruction).find("mfma") != std::string::npos;
      BOOST_TEST(c.source.find(mfma ? "@llvm.amdgcn.mfma." : "@llvm.amdgcn.wmma.") != std::string::npos);
      const std::vector<std::byte> code = tg::sdk::open_blob(c.binary, "amd", u.gfx).payload;
      const auto file = dir / (kernel.ir().name + "." + u.gfx + ".hsaco");
      std::ofstream(file, std::ios::binary)
          .write(reinterpret_cast<const char*>(code.data()), std::streamsize(code.size()));
      const std::string tools = u.tools, path = "'" + file.string() + "'";
      const std::string text = run("llvm-objdump-" + tools + " -d --mcpu=" + u.gfx + " " + path + " 2>&1");
      BOOST_TEST(std::regex_search(text, std::regex(std::string(R"(\s)") + u.instruction + R"(\s)")),
                 u.instruction << " in\n"
                               << text);
      const std::string notes = run("llvm-readelf-" + tools + " --notes " + path + " 2>&1");
      BOOST_TEST(std::regex_search(
                     notes, std::regex(R"(\.wavefront_size:\s+)" + std::to_string(1u << u.item_bits) + "\n")),
                 "a wave of " << (1u << u.item_bits) << " lanes");
      ++checked;

      Status bad = try_compile(amdtest::mma_kernel("mma_lanes", u, uint16_t(u.ab_lanes * 2)).serialize(),
                               nullptr, 0, 2, u.gfx);
      BOOST_TEST(bad.code == TG_ERROR_INVALID_ARGUMENT, bad.message);
      BOOST_TEST(bad.message.find(u.name) != std::string::npos, bad.message);
      amdtest::ExpectedUnit undeclared = u;
      undeclared.index = 2;
      bad = try_compile(amdtest::mma_kernel("mma_undeclared", undeclared).serialize(), nullptr, 0, 2, u.gfx);
      BOOST_TEST(bad.code == TG_ERROR_INVALID_ARGUMENT, bad.message);
      BOOST_TEST(bad.message.find("matrix unit 2 is not declared") != std::string::npos, bad.message);
    }
  }
  // A processor with no declared units refuses every MMA.
  Status none = try_compile(amdtest::mma_kernel("mma_gfx1030", amdtest::expected_units()[0]).serialize(),
                            nullptr, 0, 2, "gfx1030");
  BOOST_TEST(none.code == TG_ERROR_INVALID_ARGUMENT, none.message);
  std::filesystem::remove_all(dir);
  BOOST_TEST_MESSAGE(checked << " matrix units checked");
  BOOST_TEST(checked >= 2);
}
