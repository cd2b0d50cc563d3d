#include "kernel/runtime/plugin.hpp"

#include "kernel/runtime/plugin_file.hpp"

#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstring>
#include <exception>

namespace tg {

static_assert(kMaxValidPluginName == kMaxPluginNameLength, "a valid name is never cut by the host's bound");

struct Plugin::Library {
  boost::dll::shared_library library;
};

const tg_host_info& host_info() {
  static const tg_host_info info{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR, TG_ABI_VERSION_MINOR,
                                 "tinygrad.cpp 0.1.0"};
  return info;
}

std::string plugin_string(const char* s, size_t max_length) {
  return s ? std::string(s, ::strnlen(s, max_length)) : std::string();
}

namespace {

// Strips Boost's "load() failed (dlerror system message: X)" down to X, dlerror's own text.
std::string dlerror_text(const std::exception& e) {
  std::string what = e.what();
  const std::string marker = "dlerror system message: ";
  auto pos = what.find(marker);
  if (pos == std::string::npos) return what;
  std::string text = what.substr(pos + marker.size()); // "X): <errno text>"
  auto end = text.rfind(')');
  return end == std::string::npos ? text : text.substr(0, end);
}

std::string abi_fix_hint(uint32_t plugin_major) {
  std::string hint = "plugin speaks ABI v" + std::to_string(plugin_major) + ", this host speaks ABI v" +
                     std::to_string(TG_ABI_VERSION_MAJOR) + "; ";
  return hint + (plugin_major < TG_ABI_VERSION_MAJOR
                     ? "rebuild the plugin against this host's SDK (abi/include/tg/abi.h v" +
                           std::to_string(TG_ABI_VERSION_MAJOR) + ")"
                     : "upgrade tinygrad.cpp to a release that speaks ABI v" + std::to_string(plugin_major) +
                           ", or rebuild the plugin against this host's SDK");
}

} // namespace

Plugin::Plugin(std::filesystem::path path, std::unique_ptr<Library> library, const tg_plugin_api* api)
    : path_(std::move(path)), library_(std::move(library)), api_(api),
      name_(plugin_string(api->plugin_name, kMaxPluginNameLength)),
      version_(api->plugin_version ? plugin_string(api->plugin_version, kMaxPluginNameLength) : "?"),
      build_info_(plugin_string(api->build_info, kMaxPluginTextLength)) {}

Plugin::~Plugin() = default;

std::shared_ptr<Plugin> Plugin::load(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw PluginNotFoundError(path, "no such file (plugins are named libtg_device_<name>.so)");
  if (std::filesystem::is_directory(path, ec))
    throw PluginNotFoundError(path, "is a directory, not a plugin file");
  check_plugin_file(path); // before dlopen: a truncated file would crash the loader

  auto library = std::make_unique<Library>();
  try {
    namespace mode = boost::dll::load_mode;
    library->library.load(path, mode::rtld_now | mode::rtld_local);
  } catch (const std::exception& e) {
    throw PluginOpenError(path, "cannot load: " + dlerror_text(e));
  }

  auto& lib = library->library;
  if (!lib.has("tg_plugin_query_v" + std::to_string(TG_ABI_VERSION_MAJOR))) {
    // A plugin for another major exports a differently named entry: name both versions.
    for (uint32_t major = 0; major <= 32; ++major) {
      if (major != TG_ABI_VERSION_MAJOR && lib.has("tg_plugin_query_v" + std::to_string(major)))
        throw AbiVersionMismatchError(path, "ABI major version mismatch: " + abi_fix_hint(major), major);
    }
    throw NotAPluginError(path, "not a tinygrad.cpp plugin: it exports no " TG_PLUGIN_QUERY_SYMBOL " symbol");
  }

  auto query = lib.get<const tg_plugin_api*(const tg_host_info*)>(TG_PLUGIN_QUERY_SYMBOL);
  const tg_plugin_api* api = nullptr;
  try {
    api = query(&host_info());
  } catch (...) { // a C entry point must not throw; treat it as a broken plugin, not a crash
    throw InvalidPluginError(path, TG_PLUGIN_QUERY_SYMBOL " threw a C++ exception across the C ABI");
  }
  if (api == nullptr)
    throw PluginRefusedError(path, "the plugin refused this host (" + std::string(host_info().host_name) +
                                       ", ABI v" + std::to_string(TG_ABI_VERSION_MAJOR) + "." +
                                       std::to_string(TG_ABI_VERSION_MINOR) +
                                       "): " TG_PLUGIN_QUERY_SYMBOL " returned NULL");
  if (api->struct_size < offsetof(tg_plugin_api, error_destroy) + sizeof(void*))
    throw InvalidPluginError(path, "function table struct_size " + std::to_string(api->struct_size) +
                                       " is too small to hold the required functions");
  if (api->abi_major != TG_ABI_VERSION_MAJOR)
    throw AbiVersionMismatchError(
        path, "ABI major version mismatch in the function table: " + abi_fix_hint(api->abi_major),
        api->abi_major);

  if (api->plugin_name == nullptr) throw InvalidPluginError(path, "the function table's plugin_name is NULL");
  auto plugin = std::shared_ptr<Plugin>(new Plugin(path, std::move(library), api));
  if (std::string problem = plugin_name_problem(plugin->name(), "the plugin's name (plugin_name)");
      !problem.empty())
    throw InvalidPluginError(path, problem);
  const char* missing = nullptr;
  if (!plugin->has(&tg_plugin_api::error_code))
    missing = "error_code";
  else if (!plugin->has(&tg_plugin_api::error_message))
    missing = "error_message";
  else if (!plugin->has(&tg_plugin_api::error_log))
    missing = "error_log";
  else if (!plugin->has(&tg_plugin_api::error_destroy))
    missing = "error_destroy";
  else if (!plugin->has(&tg_plugin_api::device_count))
    missing = "device_count";
  else if (!plugin->has(&tg_plugin_api::device_open))
    missing = "device_open";
  else if (!plugin->has(&tg_plugin_api::device_close))
    missing = "device_close";
  else if (!plugin->has(&tg_plugin_api::device_properties))
    missing = "device_properties";
  if (missing)
    throw InvalidPluginError(path, std::string("function table lacks required function ") + missing);
  const int comm_entries = int(plugin->has(&tg_plugin_api::comm_unique_id)) +
                           int(plugin->has(&tg_plugin_api::comm_init)) +
                           int(plugin->has(&tg_plugin_api::comm_destroy));
  if (comm_entries != 0 && comm_entries != 3)
    throw InvalidPluginError(path,
                             "function table has " + std::to_string(comm_entries) +
                                 " of comm_unique_id, comm_init and comm_destroy (1.6): all three or none");
  return plugin;
}

void Plugin::throw_absent(std::string_view function_name) const {
  throw UnimplementedError(TG_ERROR_UNIMPLEMENTED,
                           name() + ": the plugin does not implement " + std::string(function_name));
}

void Plugin::check(tg_error* err, std::string_view call) const {
  if (err == nullptr) return;
  tg_error_code code = api_->error_code(err);
  std::string message = plugin_string(api_->error_message(err), kMaxPluginTextLength);
  std::string log = plugin_string(api_->error_log(err), kMaxPluginLogLength);
  api_->error_destroy(err);
  std::string full = name() + "." + std::string(call) + " failed (" + error_code_name(code) + "): " + message;
  if (!log.empty()) full += "\n" + log;
  throw_device_error(code, full, log);
}

int Plugin::device_count() const {
  int32_t count = 0;
  check(api_->device_count(&count), "device_count");
  if (std::string problem = device_count_problem(count); !problem.empty())
    throw PluginContractError(name_ + " (" + path_.string() + "): " + problem);
  return count;
}

CompiledKernel Plugin::compile(std::span<const std::byte> ir, uint32_t flags, const char* target,
                               uint32_t opt_level) const {
  auto compile_fn = fn(&tg_plugin_api::compile, "compile");
  auto get_fn = fn(&tg_plugin_api::compile_result_get, "compile_result_get");
  auto destroy_fn = fn(&tg_plugin_api::compile_result_destroy, "compile_result_destroy");
  tg_compile_args args{};
  args.struct_size = sizeof args;
  args.ir = ir.data();
  args.ir_size = ir.size();
  args.target = target;
  args.flags = flags;
  args.opt_level = opt_level;
  tg_compile_result* result = nullptr;
  check(compile_fn(&args, &result), "compile");
  std::unique_ptr<tg_compile_result, decltype(destroy_fn)> owned(result, destroy_fn);
  tg_compile_output out{};
  out.struct_size = sizeof out;
  check(get_fn(result, &out), "compile_result_get");
  CompiledKernel kernel;
  const auto* bytes = static_cast<const std::byte*>(out.binary);
  kernel.binary.assign(bytes, bytes + out.binary_size);
  kernel.source = plugin_string(out.source, kMaxPluginLogLength);
  kernel.log = plugin_string(out.log, kMaxPluginLogLength);
  return kernel;
}

std::string Plugin::cache_key(const char* target) const {
  auto key_fn = fn(&tg_plugin_api::compile_cache_key, "compile_cache_key");
  size_t length = 0;
  std::string buf(kInitialCacheKeyBuffer, '\0');
  tg_error* err = key_fn(target, buf.data(), buf.size(), &length);
  if (err != nullptr && api_->error_code(err) == TG_ERROR_INVALID_ARGUMENT && length >= buf.size()) {
    api_->error_destroy(err);
    if (length > kMaxPluginTextLength) // also keeps length + 1 from wrapping
      throw PluginContractError(name_ + " (" + path_.string() + "): compile_cache_key reported a " +
                                std::to_string(length) + "-byte key; the host accepts at most " +
                                std::to_string(kMaxPluginTextLength));
    buf.assign(length + 1, '\0'); // too small: retry once with the reported length
    err = key_fn(target, buf.data(), buf.size(), &length);
  }
  check(err, "compile_cache_key");
  // Never beyond the buffer or its first NUL, whatever *out_length claims.
  buf.resize(std::min(length, ::strnlen(buf.data(), buf.size())));
  return buf;
}

} // namespace tg
