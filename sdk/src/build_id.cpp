#include "build_id.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace tg::sdk {

namespace {

struct Search {
  uintptr_t base = 0; // the object's load address (dladdr's dli_fbase)
  std::string id;
};

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

// Walks the PT_NOTE segments of the loaded object whose first segment starts at `base`.
int find_note(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i)
    holds =
        info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == search->base;
  if (!holds) return 0; // not the object at dladdr's base (where its first segment is loaded)
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const unsigned char* name = p + sizeof note;
      const unsigned char* desc = name + ((note.n_namesz + 3) & ~3u);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + note.n_descsz <= end) {
        search->id = hex(desc, note.n_descsz);
        return 1;
      }
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return 1; // the object, without a build id
}

} // namespace

std::string build_identity(const void* address) {
  Dl_info where{};
  if (dladdr(address, &where) == 0) return {};
  Search search{reinterpret_cast<uintptr_t>(where.dli_fbase), {}};
  dl_iterate_phdr(find_note, &search);
  if (!search.id.empty()) return search.id;
  if (where.dli_fname == nullptr) return {};
  std::error_code ec;
  const auto size = std::filesystem::file_size(where.dli_fname, ec);
  if (ec) return {};
  const auto time = std::filesystem::last_write_time(where.dli_fname, ec);
  if (ec) return {};
  return "size " + std::to_string(size) + " mtime " + std::to_string(time.time_since_epoch().count());
}

} // namespace tg::sdk
