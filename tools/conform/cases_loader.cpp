// loader/*: the entry symbol, what the library exports, the query function with odd hosts, and
// the function table's header and required functions. None of them needs hardware.
#include "tools/conform/cases.hpp"

#include "kernel/runtime/plugin_file.hpp"

#include <tg/sdk/bytes.hpp>

#include <elf.h>

#include <cstring>
#include <set>

namespace tg::conform {
namespace {

// The defined, visible dynamic symbols of an ELF64 little-endian shared object.
std::set<std::string> exported_symbols(const std::filesystem::path& path) {
  std::vector<std::byte> file = tg::sdk::read_file(path);
  auto at = [&](uint64_t offset, uint64_t size, const char* what) {
    if (offset > file.size() || file.size() - offset < size)
      throw CaseFailed(path.string() + ": the ELF " + what + " lies outside the file");
    return file.data() + offset;
  };
  Elf64_Ehdr eh;
  std::memcpy(&eh, at(0, sizeof eh, "header"), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw CaseSkipped("not an ELF64 file; the export check reads ELF64 only");
  std::set<std::string> names;
  for (unsigned s = 0; s < eh.e_shnum; ++s) {
    Elf64_Shdr sh;
    std::memcpy(&sh, at(eh.e_shoff + uint64_t(s) * eh.e_shentsize, sizeof sh, "section header"), sizeof sh);
    if (sh.sh_type != SHT_DYNSYM || sh.sh_entsize < sizeof(Elf64_Sym)) continue;
    Elf64_Shdr strtab;
    std::memcpy(&strtab,
                at(eh.e_shoff + uint64_t(sh.sh_link) * eh.e_shentsize, sizeof strtab, "string table"),
                sizeof strtab);
    const std::byte* strings = at(strtab.sh_offset, strtab.sh_size, "string table");
    for (uint64_t k = 1; k < sh.sh_size / sh.sh_entsize; ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, at(sh.sh_offset + k * sh.sh_entsize, sizeof sym, "symbol"), sizeof sym);
      const unsigned bind = ELF64_ST_BIND(sym.st_info), vis = ELF64_ST_VISIBILITY(sym.st_other);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
      if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
      if (sym.st_name >= strtab.sh_size) throw CaseFailed("a dynamic symbol's name lies outside .dynstr");
      const char* name = reinterpret_cast<const char*>(strings + sym.st_name);
      names.insert(std::string(name, strnlen(name, size_t(strtab.sh_size - sym.st_name))));
    }
  }
  return names;
}

const tg_plugin_api* query(const Context& ctx, const tg_host_info* host) {
  if (ctx.plugin.query == nullptr) throw CaseFailed("no " TG_PLUGIN_QUERY_SYMBOL " symbol");
  return ctx.plugin.query(host);
}

// A string the host reads up to `bound` bytes: must be there and end in time.
void expect_string(const char* s, size_t bound, const std::string& what, bool non_empty) {
  expect(s != nullptr, what + " is NULL");
  size_t n = strnlen(s, bound + 1);
  expect(n <= bound, what + " is longer than " + std::to_string(bound) + " bytes");
  expect(!non_empty || n > 0, what + " is empty");
}

void entry_symbol(const Context& ctx) {
  expect(ctx.plugin.query != nullptr, ctx.plugin.path.string() + " exports no " TG_PLUGIN_QUERY_SYMBOL);
}

void exports_only_the_entry(const Context& ctx) {
  std::set<std::string> names = exported_symbols(ctx.plugin.path);
  names.erase(TG_PLUGIN_QUERY_SYMBOL);
  names.erase("_init"); // linker-provided section symbols some toolchains leave global
  names.erase("_fini");
  std::string extra;
  for (const auto& n : names) extra += (extra.empty() ? "" : ", ") + n;
  expect(names.empty(), "exports " + std::to_string(names.size()) +
                            " symbols besides " TG_PLUGIN_QUERY_SYMBOL
                            " (build with tg_add_plugin: hidden visibility and the version script): " +
                            extra.substr(0, 400));
}

void query_null_host(const Context& ctx) {
  expect(query(ctx, nullptr) == nullptr, "query(NULL) must return NULL (there is no host to serve)");
}

void query_other_major(const Context& ctx) {
  tg_host_info host = host_info();
  host.abi_major = TG_ABI_VERSION_MAJOR + 1;
  expect(query(ctx, &host) == nullptr,
         "query with a host of ABI major " + std::to_string(host.abi_major) + " must return NULL");
}

void query_newer_host(const Context& ctx) {
  // A newer minor appends fields to tg_host_info: a larger struct_size must be accepted.
  std::vector<std::byte> raw(sizeof(tg_host_info) + 64, std::byte{0});
  tg_host_info host = host_info();
  host.abi_minor = TG_ABI_VERSION_MINOR + 1;
  host.struct_size = raw.size();
  std::memcpy(raw.data(), &host, sizeof host);
  expect(query(ctx, reinterpret_cast<const tg_host_info*>(raw.data())) != nullptr,
         "query refused a host of a newer minor version (struct_size " + std::to_string(raw.size()) + ")");
}

void query_repeatable(const Context& ctx) {
  tg_host_info host = host_info();
  const tg_plugin_api* a = query(ctx, &host);
  const tg_plugin_api* b = query(ctx, &host);
  expect(a != nullptr && b != nullptr, "query returned NULL for a well-formed host");
  expect(a->struct_size == b->struct_size && std::memcmp(a, b, a->struct_size) == 0,
         "two queries returned different tables");
}

void table_header(const Context& ctx) {
  tg_host_info host = host_info();
  const tg_plugin_api* t = query(ctx, &host);
  expect(t != nullptr, "query returned NULL for a well-formed host");
  expect(t->struct_size >= offsetof(tg_plugin_api, device_count),
         "table struct_size " + std::to_string(t->struct_size) + " does not cover the error functions");
  expect(t->abi_major == TG_ABI_VERSION_MAJOR, "table abi_major is " + std::to_string(t->abi_major));
  expect_string(t->plugin_name, TG_NAME_MAX - 1, "plugin_name", true);
  const std::string problem = tg::plugin_name_problem(t->plugin_name, "plugin_name"); // the host's rule
  expect(problem.empty(), problem);
  expect_string(t->plugin_version, TG_NAME_MAX - 1, "plugin_version", false);
  expect_string(t->build_info, 4095, "build_info", false);
}

void required_functions(const Context& ctx) {
  tg_host_info host = host_info();
  const tg_plugin_api* t = query(ctx, &host);
  expect(t != nullptr, "query returned NULL for a well-formed host");
  set_api(t);
  struct Fn {
    const char* name;
    size_t offset;
    bool present;
  };
#define TG_FN(m)                                                                                             \
  Fn { #m, offsetof(tg_plugin_api, m), TG_CONFORM_HAS(m) }
  const Fn required[] = {TG_FN(error_code),    TG_FN(error_message),    TG_FN(error_log),
                         TG_FN(error_destroy), TG_FN(device_count),     TG_FN(device_open),
                         TG_FN(device_close),  TG_FN(device_properties)};
  for (const Fn& f : required) expect(f.present, std::string("required function ") + f.name + " is absent");
  auto pair = [&](Fn a, Fn b) {
    expect(!a.present || b.present, std::string(a.name) + " is present but " + b.name + " is absent");
  };
  pair(TG_FN(buffer_alloc), TG_FN(buffer_free));
  pair(TG_FN(program_load), TG_FN(program_free));
  pair(TG_FN(compile), TG_FN(compile_result_get));
  pair(TG_FN(compile), TG_FN(compile_result_destroy));
  pair(TG_FN(device_attribute_count), TG_FN(device_attribute));
  pair(TG_FN(device_attribute), TG_FN(device_attribute_count));
#undef TG_FN
}

} // namespace

void add_loader_cases(std::vector<Case>& cases) {
  cases.push_back({"loader/entry_symbol", false, entry_symbol});
  cases.push_back({"loader/exports_only_the_entry_symbol", false, exports_only_the_entry});
  cases.push_back({"loader/query_null_host_is_refused", false, query_null_host});
  cases.push_back({"loader/query_other_major_is_refused", false, query_other_major});
  cases.push_back({"loader/query_newer_minor_host_is_served", false, query_newer_host});
  cases.push_back({"loader/query_is_repeatable", false, query_repeatable});
  cases.push_back({"loader/table_header", false, table_header});
  cases.push_back({"loader/required_functions", false, required_functions});
}

} // namespace tg::conform
