/* A plugin as it was written for ABI 1.0, compiled ONLY against the frozen copy of the 1.0 header
 * (tests/abi/v1_0/tg/abi.h), never against the current one: when the host gains minor versions,
 * this plugin must keep loading and working. Do not change it to use anything newer.
 * Buffers live in host memory; a "program" is one float, and launch writes it into every element
 * of buffer 0 (offset respected). With -DOLDER_MINOR it plays a plugin built against an older
 * minor than the one its header says: its function table ends before `synchronize` and its
 * properties struct before `features`, so the host must treat both as absent. */
#include <tg/abi.h>

#include <stdlib.h>
#include <string.h>

struct tg_error {
  tg_error_code code;
  char message[128];
};
struct tg_device {
  int index;
};
struct tg_buffer {
  unsigned char* data;
  uint64_t size;
};
struct tg_program {
  float value;
};

static tg_error* fail(tg_error_code code, const char* message) {
  tg_error* e = (tg_error*)calloc(1, sizeof(tg_error));
  if (!e) return NULL; /* test fixture: out of memory is not exercised */
  e->code = code;
  strncpy(e->message, message, sizeof(e->message) - 1);
  return e;
}
static tg_error_code error_code(const tg_error* e) { return e->code; }
static const char* error_message(const tg_error* e) { return e->message; }
static const char* error_log(const tg_error* e) {
  (void)e;
  return "";
}
static void error_destroy(tg_error* e) { free(e); }

static tg_error* device_count(int32_t* out) {
  *out = 1;
  return NULL;
}
static tg_error* device_open(const tg_device_open_args* args, tg_device** out) {
  if (!args || args->index != 0) return fail(TG_ERROR_INVALID_ARGUMENT, "compat: no such device");
  *out = (tg_device*)calloc(1, sizeof(tg_device));
  return *out ? NULL : fail(TG_ERROR_RESOURCE_EXHAUSTED, "compat: out of memory");
}
static void device_close(tg_device* d) { free(d); }
static tg_error* device_properties(tg_device* d, tg_device_properties* out) {
  tg_device_properties p;
  size_t n, mine = sizeof p;
  (void)d;
#if defined(OLDER_MINOR)
  mine = offsetof(tg_device_properties, features);
#endif
  memset(&p, 0, sizeof p);
  strcpy(p.name, "compat device");
  strcpy(p.vendor, "tests");
  strcpy(p.arch, "v1.0");
  p.memory_bytes = p.max_buffer_bytes = 1u << 20;
  p.max_local_size[0] = p.max_local_size[1] = p.max_local_size[2] = 1;
  p.max_local_threads = 1;
  p.max_global_size[0] = p.max_global_size[1] = p.max_global_size[2] = 1;
  p.max_buffer_args = 1;
  p.buffer_alignment = 16;
  p.compute_units = 1;
  p.subgroup_size = 1;
  p.dtype_mask = TG_DTYPE_BIT(TG_DTYPE_FLOAT32);
  p.features = TG_FEATURE_HOST_MEMORY;
  n = out->struct_size < mine ? out->struct_size : mine;
  p.struct_size = n;
  memcpy(out, &p, n);
  return NULL;
}
static tg_error* buffer_alloc(tg_device* d, const tg_buffer_alloc_args* args, tg_buffer** out) {
  tg_buffer* b = (tg_buffer*)calloc(1, sizeof(tg_buffer));
  (void)d;
  if (b) b->data = (unsigned char*)calloc(1, args->size ? (size_t)args->size : 1);
  if (!b || !b->data) {
    free(b);
    return fail(TG_ERROR_RESOURCE_EXHAUSTED, "compat: buffer_alloc: out of memory");
  }
  b->size = args->size;
  *out = b;
  return NULL;
}
static void buffer_free(tg_buffer* b) {
  if (b) free(b->data);
  free(b);
}
static int outside(const tg_buffer* b, uint64_t off, uint64_t size) {
  return off > b->size || size > b->size - off;
}
static tg_error* copy_from_host(tg_buffer* dst, uint64_t off, const void* src, uint64_t size) {
  if (outside(dst, off, size)) return fail(TG_ERROR_INVALID_ARGUMENT, "compat: range outside buffer");
  memcpy(dst->data + off, src, (size_t)size);
  return NULL;
}
static tg_error* copy_to_host(tg_buffer* src, uint64_t off, void* dst, uint64_t size) {
  if (outside(src, off, size)) return fail(TG_ERROR_INVALID_ARGUMENT, "compat: range outside buffer");
  memcpy(dst, src->data + off, (size_t)size);
  return NULL;
}
static tg_error* copy_buffer(tg_buffer* dst, uint64_t dst_off, tg_buffer* src, uint64_t src_off,
                             uint64_t size) {
  if (outside(dst, dst_off, size) || outside(src, src_off, size))
    return fail(TG_ERROR_INVALID_ARGUMENT, "compat: range outside buffer");
  memmove(dst->data + dst_off, src->data + src_off, (size_t)size);
  return NULL;
}
static tg_error* program_load(tg_device* d, const void* binary, size_t size, tg_program** out) {
  (void)d;
  if (size != sizeof(float)) return fail(TG_ERROR_INVALID_ARGUMENT, "compat: a program is one float");
  *out = (tg_program*)calloc(1, sizeof(tg_program));
  if (!*out) return fail(TG_ERROR_RESOURCE_EXHAUSTED, "compat: out of memory");
  memcpy(&(*out)->value, binary, sizeof(float));
  return NULL;
}
static void program_free(tg_program* p) { free(p); }
static tg_error* launch(const tg_launch_args* args) {
  const tg_buffer_arg* arg;
  uint64_t i;
  if (args->buffer_count != 1) return fail(TG_ERROR_INVALID_ARGUMENT, "compat: launch takes one buffer");
  arg = &args->buffers[0];
  if (arg->offset > arg->buffer->size)
    return fail(TG_ERROR_INVALID_ARGUMENT, "compat: offset outside buffer");
  for (i = arg->offset; i + sizeof(float) <= arg->buffer->size; i += sizeof(float))
    memcpy(arg->buffer->data + i, &args->program->value, sizeof(float));
  return NULL;
}
static tg_error* synchronize(tg_device* d) {
  (void)d;
  return NULL;
}

static tg_plugin_api api;

static const tg_plugin_api* query(const tg_host_info* host) {
  if (!host || host->abi_major != TG_ABI_VERSION_MAJOR) return NULL;
  memset(&api, 0, sizeof api);
  api.struct_size = sizeof api;
  api.abi_major = TG_ABI_VERSION_MAJOR;
  api.abi_minor = TG_ABI_VERSION_MINOR;
  api.plugin_name = "compat";
  api.plugin_version = "1.0";
  api.build_info = "built against the frozen ABI 1.0 header";
  api.error_code = error_code;
  api.error_message = error_message;
  api.error_log = error_log;
  api.error_destroy = error_destroy;
  api.device_count = device_count;
  api.device_open = device_open;
  api.device_close = device_close;
  api.device_properties = device_properties;
  api.buffer_alloc = buffer_alloc;
  api.buffer_free = buffer_free;
  api.buffer_copy_from_host = copy_from_host;
  api.buffer_copy_to_host = copy_to_host;
  api.buffer_copy = copy_buffer;
  api.program_load = program_load;
  api.program_free = program_free;
  api.launch = launch;
  api.synchronize = synchronize;
#if defined(OLDER_MINOR)
  api.struct_size = offsetof(tg_plugin_api, synchronize); /* the table ends before synchronize */
#endif
  return &api;
}

TG_PLUGIN_EXPORT const tg_plugin_api* tg_plugin_query_v1(const tg_host_info* host) { return query(host); }
