#include <tg/sdk/plugin.hpp>

// The plugin-side definition of the opaque tg_error. Each plugin links its own copy of the SDK,
// so errors are always created and destroyed by the same plugin's code.
struct tg_error {
  tg_error_code code;
  std::string message;
  std::string log;
};

namespace tg::sdk {
namespace {

// Returned when allocating an error itself fails; never destroyed.
tg_error g_out_of_memory{TG_ERROR_RESOURCE_EXHAUSTED, "out of host memory while reporting an error", ""};

tg_error_code error_code(const tg_error* e) { return e ? e->code : TG_ERROR_INTERNAL; }
const char* error_message(const tg_error* e) { return e ? e->message.c_str() : "NULL error"; }
const char* error_log(const tg_error* e) { return e ? e->log.c_str() : ""; }
void error_destroy(tg_error* e) {
  if (e != &g_out_of_memory) delete e;
}

} // namespace

tg_error* make_error(tg_error_code code, const std::string& message, const std::string& log) noexcept {
  try {
    return new tg_error{code, message, log};
  } catch (...) {
    return &g_out_of_memory;
  }
}

void set_error_functions(tg_plugin_api& api) noexcept {
  api.error_code = &error_code;
  api.error_message = &error_message;
  api.error_log = &error_log;
  api.error_destroy = &error_destroy;
}

} // namespace tg::sdk
