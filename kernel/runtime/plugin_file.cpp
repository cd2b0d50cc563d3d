#include "kernel/runtime/plugin_file.hpp"

#include "kernel/runtime/errors.hpp"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <vector>

namespace tg {

namespace fs = std::filesystem;

namespace {

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Shdr = ElfW(Shdr);

constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kHostData = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
// The machine this host was compiled for; 0 where unknown (then any machine passes, and dlopen
// refuses a wrong one itself).
constexpr uint16_t kHostMachine =
#if defined(__x86_64__)
    EM_X86_64;
#elif defined(__aarch64__)
    EM_AARCH64;
#elif defined(__i386__)
    EM_386;
#elif defined(__arm__)
    EM_ARM;
#elif defined(__riscv)
    EM_RISCV;
#elif defined(__powerpc64__)
    EM_PPC64;
#elif defined(__s390x__)
    EM_S390;
#else
    0;
#endif

std::string class_name(unsigned char c) {
  return c == ELFCLASS64 ? "64-bit" : c == ELFCLASS32 ? "32-bit" : "class " + std::to_string(c);
}

// True when [offset, offset + size) lies inside a file of `file_size` bytes (no overflow).
bool inside(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

} // namespace

void check_plugin_file(const fs::path& path) {
  auto fail = [&](const std::string& why) { throw PluginFileError(path, "cannot load: " + why); };
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail("not a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (ec) fail("cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open it for reading");
  auto read_at = [&](uint64_t offset, void* out, size_t n) {
    in.seekg(std::streamoff(offset));
    in.read(static_cast<char*>(out), std::streamsize(n));
    if (!in) fail("cannot read " + std::to_string(n) + " bytes at offset " + std::to_string(offset));
  };

  unsigned char ident[EI_NIDENT] = {};
  if (size < EI_NIDENT) fail("file too short to be a shared library (" + std::to_string(size) + " bytes)");
  read_at(0, ident, EI_NIDENT);
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) fail("not an ELF file (invalid ELF header)");
  if (ident[EI_CLASS] != kHostClass)
    fail("wrong ELF class: a " + class_name(ident[EI_CLASS]) + " file, this host is " +
         class_name(kHostClass));
  if (ident[EI_DATA] != kHostData)
    fail("wrong byte order (ELF data encoding " + std::to_string(ident[EI_DATA]) + ")");
  if (size < sizeof(Ehdr))
    fail("file too short: " + std::to_string(size) + " bytes, less than an ELF header (truncated?)");
  Ehdr eh;
  read_at(0, &eh, sizeof eh);
  if (eh.e_type != ET_DYN) fail("not a shared object (ELF type " + std::to_string(eh.e_type) + ")");
  if (kHostMachine != 0 && eh.e_machine != kHostMachine)
    fail("built for another machine (ELF machine " + std::to_string(eh.e_machine) + ", this host is " +
         std::to_string(kHostMachine) + ")");

  const std::string truncated =
      " lies beyond the end of the file (" + std::to_string(size) + " bytes; truncated or partly copied?)";
  if (eh.e_phnum == 0) fail("no program headers");
  if (eh.e_phentsize != sizeof(Phdr))
    fail("program header size " + std::to_string(eh.e_phentsize) + " is wrong");
  const uint64_t ph_bytes = uint64_t(eh.e_phnum) * sizeof(Phdr);
  if (!inside(eh.e_phoff, ph_bytes, size)) fail("the program header table" + truncated);
  std::vector<Phdr> segments(eh.e_phnum);
  read_at(eh.e_phoff, segments.data(), ph_bytes);
  for (size_t i = 0; i < segments.size(); ++i)
    if (!inside(segments[i].p_offset, segments[i].p_filesz, size))
      fail("segment " + std::to_string(i) + " (bytes " + std::to_string(segments[i].p_offset) + ".." +
           std::to_string(uint64_t(segments[i].p_offset) + segments[i].p_filesz) + ")" + truncated);

  if (eh.e_shoff != 0) { // a stripped-of-sections file may have none; one that has them has them whole
    if (eh.e_shentsize != sizeof(Shdr))
      fail("section header size " + std::to_string(eh.e_shentsize) + " is wrong");
    // e_shnum 0 with a table means more than SHN_LORESERVE sections: the count is in entry 0.
    const uint64_t sh_bytes = uint64_t(std::max<uint16_t>(eh.e_shnum, 1)) * sizeof(Shdr);
    if (!inside(eh.e_shoff, sh_bytes, size)) fail("the section header table" + truncated);
  }
}

bool is_valid_plugin_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxValidPluginName) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string plugin_name_problem(std::string_view name, std::string_view what) {
  if (is_valid_plugin_name(name)) return {};
  std::string shown(name.substr(0, 64));
  return std::string(what) + " '" + shown + (name.size() > 64 ? "...'" : "'") +
         " is not a valid plugin name (letters, digits and '_', 1 to " + std::to_string(kMaxValidPluginName) +
         " characters: it names cache folders and devices)";
}

std::string device_count_problem(int32_t count) {
  if (count >= 0 && count <= kMaxDeviceCount) return {};
  return "device_count reported " + std::to_string(count) + " devices; a plugin reports 0 to " +
         std::to_string(kMaxDeviceCount);
}

} // namespace tg
