// `tg plugin new NAME DIR`: writes a ready out-of-tree plugin project: the null plugin's sources
// (the skeleton) renamed to NAME, a CMakeLists.txt that builds it against the installed
// tinygrad.cpp package, and a ctest test that runs `tg conform` on the result.
#include "tools/tg/commands.hpp"
#include "tools/tg/skeleton.hpp"

#include <tg/sdk/bytes.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>

namespace fs = std::filesystem;

namespace tg::cli {
namespace {

const char* kUsage =
    "usage: tg plugin new NAME DIR\n"
    "  writes an out-of-tree plugin project for device NAME (a lowercase identifier; the device is\n"
    "  NAME in capitals) into DIR (new or empty): the skeleton plugin renamed, a CMakeLists.txt that\n"
    "  finds the installed tinygrad.cpp package, and two ctest tests: plugin_exports_NAME (the plugin\n"
    "  exports only tg_plugin_query_v1) and conform_NAME (`tg conform` on the plugin).\n"
    "  Then: cmake -S DIR -B DIR/build -DCMAKE_PREFIX_PATH=<tinygrad.cpp prefix> &&\n"
    "        cmake --build DIR/build && ctest --test-dir DIR/build\n";

// Every whole-word `null` (also after an underscore, as in tg_device_null) becomes `name`;
// `nullptr` and `NULL` stay.
std::string rename(std::string_view text, const std::string& name) {
  static const std::regex word("(^|[^A-Za-z0-9])null(?![A-Za-z0-9])");
  return std::regex_replace(std::string(text), word, "$1" + name);
}

std::string cmake_lists(const std::string& name) {
  std::string sources;
  for (const auto& f : skeleton_files())
    if (f.name.ends_with(".cpp")) sources += " " + std::string(f.name);
  return "# The " + name +
         " device plugin, built against an installed tinygrad.cpp:\n"
         "#   cmake -S . -B build -DCMAKE_PREFIX_PATH=<prefix> && cmake --build build && ctest --test-dir "
         "build\n"
         "cmake_minimum_required(VERSION 3.25)\n"
         "project(tg_device_" +
         name +
         " LANGUAGES CXX)\n"
         "set(CMAKE_CXX_STANDARD 20)\n"
         "set(CMAKE_CXX_STANDARD_REQUIRED ON)\n\n"
         "find_package(tinygrad_cpp 0.1 REQUIRED CONFIG)\n\n"
         "# Before tg_add_plugin: with BUILD_TESTING on it registers plugin_exports_" +
         name +
         ", which checks\n"
         "# that the plugin exports only tg_plugin_query_v1.\n"
         "option(BUILD_TESTING \"Register the plugin's tests\" ON)\n"
         "enable_testing()\n\n"
         "# Add LIBS tinygrad_cpp::sdk_render when the compiler renders source with the SDK's renderers.\n"
         "tg_add_plugin(NAME " +
         name + " SOURCES" + sources +
         ")\n\n"
         "# The conformance suite against this plugin. While device_count answers UNAVAILABLE every device\n"
         "# case is reported unavailable (not passed); fill in the TODO(copy) methods until it all passes.\n"
         "add_test(NAME conform_" +
         name + " COMMAND tinygrad_cpp::tg_tool conform $<TARGET_FILE:tg_device_" + name +
         "> --junit ${CMAKE_CURRENT_BINARY_DIR}/conform_" + name +
         ".xml)\n"
         "set_tests_properties(conform_" +
         name + " PROPERTIES TIMEOUT 600)\n";
}

void write(const fs::path& path, const std::string& text) {
  std::span<const std::byte> bytes = std::as_bytes(std::span(text.data(), text.size()));
  sdk::write_file_durably(path, std::span(&bytes, 1));
}

} // namespace

int cmd_plugin(const std::vector<std::string>& args) {
  // `tg plugin --help` and `tg plugin new --help` both ask for this text.
  if (std::ranges::any_of(args, [](const std::string& a) { return a == "--help" || a == "-h"; })) {
    std::cout << kUsage;
    return 0;
  }
  if (args.size() != 3 || args[0] != "new") {
    std::cerr << kUsage;
    return 2;
  }
  const std::string name = args[1];
  const fs::path dir = args[2];
  if (!std::regex_match(name, std::regex("[a-z][a-z0-9_]{0,30}")) || name == "null") {
    std::cerr
        << "tg plugin new: NAME must be a lowercase identifier ([a-z][a-z0-9_]*, at most 31 characters, not "
           "\"null\"), got \""
        << name << "\"\n";
    return 2;
  }
  std::error_code ec;
  if (fs::exists(dir, ec) && (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec))) {
    std::cerr << "tg plugin new: " << dir.string()
              << " exists and is not an empty folder; nothing was written\n";
    return 2;
  }
  try {
    fs::create_directories(dir);
    for (const auto& f : skeleton_files()) write(dir / f.name, rename(f.text, name));
    write(dir / "CMakeLists.txt", cmake_lists(name));
  } catch (const std::exception& e) {
    std::cerr << "tg plugin new: " << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote the " << name << " plugin project to " << dir.string() << " ("
            << skeleton_files().size() + 1 << " files); next:\n  cmake -S " << dir.string() << " -B "
            << (dir / "build").string() << " -DCMAKE_PREFIX_PATH=<tinygrad.cpp prefix>\n  cmake --build "
            << (dir / "build").string() << "\n  ctest --test-dir " << (dir / "build").string()
            << "   # runs tg conform on it\n";
  return 0;
}

} // namespace tg::cli
