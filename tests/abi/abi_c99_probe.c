/* Compiled as strict C99 (-std=c99 -pedantic -Werror): the ABI header must stay plain C. */
#include <tg/abi.h>

int tg_abi_c99_probe(void) {
  tg_plugin_api api = {0};
  api.struct_size = sizeof api;
  return (int)(api.struct_size == sizeof(tg_plugin_api) ? TG_ABI_VERSION_MAJOR : -1);
}
