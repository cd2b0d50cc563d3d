// The adaptor's ABI edge, seen from the host through the table it builds for an in-test plugin:
// version check, struct_size tolerance both ways, no exception escaping, the cache-key size
// protocol, attribute lifetime, and the checks it makes before plugin code runs.
#include "fake_plugin.hpp"

#include <cstddef>

using namespace fake;

BOOST_AUTO_TEST_SUITE(sdk_adaptor)

BOOST_AUTO_TEST_CASE(query_checks_the_host_and_fills_every_entry) {
  BOOST_CHECK(tg::sdk::plugin_api<Plugin>(nullptr) == nullptr);
  tg_host_info future{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR + 1, 0, "future"};
  BOOST_CHECK(tg::sdk::plugin_api<Plugin>(&future) == nullptr);
  tg_host_info tiny{sizeof(size_t), TG_ABI_VERSION_MAJOR, 0, "tiny"};
  BOOST_CHECK(tg::sdk::plugin_api<Plugin>(&tiny) == nullptr);

  const tg_plugin_api& t = api();
  BOOST_CHECK_EQUAL(t.struct_size, sizeof(tg_plugin_api));
  BOOST_CHECK_EQUAL(t.abi_major, uint32_t(TG_ABI_VERSION_MAJOR));
  BOOST_CHECK_EQUAL(std::string(t.plugin_name), "fake");
  BOOST_CHECK_EQUAL(std::string(t.plugin_version), "1.2.3");
  BOOST_CHECK_EQUAL(std::string(t.build_info), "built for tests");
  // Every function pointer after the strings is set, up to the 1.2 entries, which a plugin
  // provides only by asking (this one does not).
  constexpr size_t first = offsetof(tg_plugin_api, error_code);
  BOOST_CHECK(t.peer_copy == nullptr);
  BOOST_CHECK(t.collective == nullptr);
  for (size_t at = first; at < offsetof(tg_plugin_api, peer_copy); at += sizeof(void*)) {
    void* fn = nullptr;
    std::memcpy(&fn, reinterpret_cast<const char*>(&t) + at, sizeof(fn));
    BOOST_CHECK_MESSAGE(fn != nullptr, "entry at offset " << at << " is NULL");
  }
  // Two plugin classes in one process get two tables.
  const tg_plugin_api* absent = tg::sdk::plugin_api<AbsentPlugin>(&kHost);
  BOOST_REQUIRE(absent != nullptr);
  BOOST_CHECK(absent != &t);
  BOOST_CHECK_EQUAL(std::string(absent->plugin_name), "absent");
}

BOOST_AUTO_TEST_CASE(unavailable_hardware_is_reported_as_such) {
  const tg_plugin_api& t = *tg::sdk::plugin_api<AbsentPlugin>(&kHost);
  int32_t count = -7;
  Status s = take(t.device_count(&count), t);
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_UNAVAILABLE);
  BOOST_CHECK_EQUAL(s.message, "absent.device_count: libfakedriver.so.1 is not installed");
  BOOST_CHECK_EQUAL(count, -7);
  tg_device_open_args args{sizeof(args), 0, 0};
  tg_device* device = nullptr;
  BOOST_CHECK_EQUAL(take(t.device_open(&args, &device), t).code, TG_ERROR_UNAVAILABLE);
  BOOST_CHECK(device == nullptr);
}

BOOST_FIXTURE_TEST_CASE(device_index_and_null_arguments_are_checked, Fixture) {
  int32_t count = 0;
  check(api().device_count(&count));
  BOOST_CHECK_EQUAL(count, 2);
  BOOST_CHECK_EQUAL(take(api().device_count(nullptr)).code, TG_ERROR_INVALID_ARGUMENT);
  tg_device* other = nullptr;
  for (int32_t index : {-1, 2, 1000}) {
    tg_device_open_args args{sizeof(args), index, 0};
    Status s = take(api().device_open(&args, &other));
    BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
    BOOST_CHECK_MESSAGE(s.says("fake.device_open: device index " + std::to_string(index) + " out of range"),
                        s.message);
  }
  BOOST_CHECK_EQUAL(take(api().device_open(nullptr, &other)).code, TG_ERROR_INVALID_ARGUMENT);
  tg_device_properties p{};
  p.struct_size = sizeof(p);
  BOOST_CHECK_EQUAL(take(api().device_properties(nullptr, &p)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().device_properties(device, nullptr)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().synchronize(nullptr)).code, TG_ERROR_INVALID_ARGUMENT);
  check(api().synchronize(device));
  // Freeing NULL handles is harmless.
  api().buffer_free(nullptr);
  api().program_free(nullptr);
  api().compile_result_destroy(nullptr);
  api().device_close(nullptr);
}

BOOST_FIXTURE_TEST_CASE(argument_structs_of_older_and_newer_hosts_are_read, Fixture) {
  // An older host's alloc args end before `alignment`: whatever follows in memory is not read.
  struct {
    tg_buffer_alloc_args args;
    char after[16];
  } old_host;
  std::memset(&old_host, 0x7f, sizeof(old_host));
  old_host.args.struct_size = offsetof(tg_buffer_alloc_args, alignment);
  old_host.args.size = 64;
  tg_buffer* buffer = nullptr;
  check(api().buffer_alloc(device, &old_host.args, &buffer));
  BOOST_CHECK_EQUAL(world.last_alignment, 0u);
  api().buffer_free(buffer);

  // A newer host's args are longer: the known prefix is used, the rest ignored.
  struct {
    tg_buffer_alloc_args args;
    uint64_t future_field;
  } new_host{};
  new_host.args = {sizeof(new_host), 32, 16, 0, 0};
  new_host.future_field = 123;
  check(api().buffer_alloc(device, &new_host.args, &buffer));
  BOOST_CHECK_EQUAL(world.last_alignment, 16u);
  api().buffer_free(buffer);

  tg_buffer_alloc_args broken{sizeof(size_t) - 1, 32, 0, 0, 0};
  Status s = take(api().buffer_alloc(device, &broken, &buffer));
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_MESSAGE(s.says("struct_size"), s.message);
}

BOOST_FIXTURE_TEST_CASE(results_are_written_only_up_to_the_callers_struct_size, Fixture) {
  // An older host's properties end before max_buffer_bytes: nothing after it is written.
  struct {
    tg_device_properties p;
  } out;
  std::memset(&out, 0xab, sizeof(out));
  const size_t known = offsetof(tg_device_properties, max_buffer_bytes);
  out.p.struct_size = known;
  check(api().device_properties(device, &out.p));
  BOOST_CHECK_EQUAL(out.p.struct_size, known);
  BOOST_CHECK_EQUAL(std::string(out.p.name), "fake device");
  BOOST_CHECK_EQUAL(out.p.memory_bytes, world.max_buffer_bytes);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&out.p);
  for (size_t i = known; i < sizeof(out.p); ++i) BOOST_REQUIRE_EQUAL(bytes[i], 0xabu);
  // The whole struct: struct_size is the plugin's.
  tg_device_properties full{};
  full.struct_size = sizeof(full);
  check(api().device_properties(device, &full));
  BOOST_CHECK_EQUAL(full.max_local_threads, 16u);
  BOOST_CHECK_EQUAL(full.features, uint64_t(TG_FEATURE_TIMING));
  // Properties were asked of the plugin once, at open.
  BOOST_CHECK_EQUAL(world.properties_calls, 1);

  // Compile output for a host that knows only the binary fields.
  tg::sdk::KernelBuilder k("tiny");
  k.global(0, TG_DTYPE_FLOAT32);
  auto ir = k.serialize();
  tg_compile_args args{sizeof(args), ir.data(), ir.size(), nullptr, 0, 2};
  tg_compile_result* result = nullptr;
  check(api().compile(&args, &result));
  tg_compile_output small;
  std::memset(&small, 0xcd, sizeof(small));
  small.struct_size = offsetof(tg_compile_output, source);
  check(api().compile_result_get(result, &small));
  BOOST_CHECK(small.binary != nullptr);
  BOOST_CHECK_GT(small.binary_size, 0u);
  const auto* tail = reinterpret_cast<const unsigned char*>(&small);
  for (size_t i = offsetof(tg_compile_output, source); i < sizeof(small); ++i)
    BOOST_REQUIRE_EQUAL(tail[i], 0xcdu);
  tg_compile_output full_out{};
  full_out.struct_size = sizeof(full_out);
  check(api().compile_result_get(result, &full_out));
  BOOST_CHECK(full_out.source == nullptr); // not requested
  BOOST_CHECK_EQUAL(std::string(full_out.log), "compiled at O2");
  api().compile_result_destroy(result);
}

BOOST_FIXTURE_TEST_CASE(no_exception_escapes_and_codes_are_kept, Fixture) {
  tg_buffer_alloc_args args{sizeof(args), 8, 0, 0, 0};
  tg_buffer* buffer = nullptr;
  auto alloc_status = [&](World::Throw kind) {
    world.alloc_throws = kind;
    Status s = take(api().buffer_alloc(device, &args, &buffer));
    BOOST_CHECK(buffer == nullptr);
    return s;
  };
  Status runtime = alloc_status(World::Throw::runtime_error);
  BOOST_CHECK_EQUAL(runtime.code, TG_ERROR_INTERNAL);
  BOOST_CHECK_EQUAL(runtime.message, "fake.buffer_alloc: the fake driver broke");
  BOOST_CHECK_EQUAL(alloc_status(World::Throw::bad_alloc).code, TG_ERROR_RESOURCE_EXHAUSTED);
  Status unknown = alloc_status(World::Throw::integer);
  BOOST_CHECK_EQUAL(unknown.code, TG_ERROR_INTERNAL);
  BOOST_CHECK(unknown.says("unknown exception"));
  Status typed = alloc_status(World::Throw::not_found);
  BOOST_CHECK_EQUAL(typed.code, TG_ERROR_NOT_FOUND);
  BOOST_CHECK_EQUAL(typed.message, "fake.buffer_alloc: no such thing");
  BOOST_CHECK_EQUAL(typed.log, "a log line");

  // The compiler's exceptions too; malformed IR is the caller's mistake.
  tg::sdk::KernelBuilder k("k");
  k.global(0, TG_DTYPE_FLOAT32);
  auto ir = k.serialize();
  tg_compile_args cargs{sizeof(cargs), ir.data(), ir.size(), "throws", 0, 2};
  tg_compile_result* result = nullptr;
  Status bug = take(api().compile(&cargs, &result));
  BOOST_CHECK_EQUAL(bug.code, TG_ERROR_INTERNAL);
  BOOST_CHECK_EQUAL(bug.message, "fake.compile: compiler bug");
  auto garbage = ir;
  garbage[0] = std::byte{'X'};
  tg_compile_args bad{sizeof(bad), garbage.data(), garbage.size(), nullptr, 0, 2};
  Status malformed = take(api().compile(&bad, &result));
  BOOST_CHECK_EQUAL(malformed.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_MESSAGE(malformed.says("fake.compile: malformed kernel IR"), malformed.message);
  BOOST_CHECK(result == nullptr);
  // After all that the device still works.
  world.alloc_throws = World::Throw::nothing;
  api().buffer_free(alloc(8));
}

BOOST_AUTO_TEST_CASE(cache_key_protocol) {
  // The key names the plugin binary by the linker's build id (40 hex digits from Debian's
  // toolchain), so a rebuilt plugin does not load its predecessor's cached binaries.
  std::vector<char> first(512);
  size_t length = 0;
  check(api().compile_cache_key(nullptr, first.data(), first.size(), &length));
  const std::string got(first.data());
  const std::string head = "tg_device_fake 1.2.3;build ";
  BOOST_TEST_REQUIRE(got.starts_with(head));
  const std::string id = got.substr(head.size(), got.find(';', head.size()) - head.size());
  BOOST_TEST(id.size() == 40u);
  BOOST_TEST(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  const std::string key =
      head + id + ";envelope " + std::to_string(tg::sdk::kBlobEnvelopeVersion) + ";fake;fake-arch";
  length = 0;
  Status none = take(api().compile_cache_key(nullptr, nullptr, 0, &length));
  BOOST_CHECK_EQUAL(none.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(length, key.size());
  std::vector<char> buf(key.size() + 1, '#');
  length = 0;
  Status exact_without_nul = take(api().compile_cache_key(nullptr, buf.data(), key.size(), &length));
  BOOST_CHECK_EQUAL(exact_without_nul.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(exact_without_nul.says(std::to_string(key.size() + 1) + "-byte cache key"));
  BOOST_CHECK_EQUAL(length, key.size());
  check(api().compile_cache_key(nullptr, buf.data(), buf.size(), &length));
  BOOST_CHECK_EQUAL(std::string(buf.data()), key);
  BOOST_CHECK_EQUAL(length, key.size());
  // "" and NULL are the default target; another target gives another key.
  check(api().compile_cache_key("", buf.data(), buf.size(), &length));
  BOOST_CHECK_EQUAL(std::string(buf.data()), key);
  std::vector<char> other(256);
  check(api().compile_cache_key("gfx1030", other.data(), other.size(), &length));
  BOOST_CHECK(std::string(other.data()).ends_with(";fake;gfx1030"));
  // The host's two-step protocol for a long key: 256 bytes first, then *out_length + 1.
  Status small = take(api().compile_cache_key("long", other.data(), other.size(), &length));
  BOOST_CHECK_EQUAL(small.code, TG_ERROR_INVALID_ARGUMENT);
  std::vector<char> big(length + 1);
  check(api().compile_cache_key("long", big.data(), big.size(), &length));
  BOOST_CHECK_EQUAL(std::string(big.data()).size(), length);
  BOOST_CHECK(std::string(big.data()).ends_with(std::string(1000, 'k')));
}

BOOST_FIXTURE_TEST_CASE(attribute_strings_live_until_device_close, Fixture) {
  int32_t count = 0;
  check(api().device_attribute_count(device, &count));
  BOOST_REQUIRE_EQUAL(count, 2);
  std::vector<const char*> keys(2), values(2);
  for (int32_t i = 0; i < count; ++i) check(api().device_attribute(device, i, &keys[i], &values[i]));
  // Other calls, including new attribute reads and work on another device, leave them intact.
  tg_device* second = nullptr;
  tg_device_open_args args{sizeof(args), 1, 0};
  check(api().device_open(&args, &second));
  const char* k = nullptr;
  const char* v = nullptr;
  check(api().device_attribute(second, 0, &k, &v));
  api().device_close(second);
  for (int i = 0; i < 50; ++i) api().buffer_free(alloc(64));
  for (int32_t i = 0; i < count; ++i) {
    check(api().device_attribute(device, i, &k, &v));
    BOOST_CHECK(k == keys[size_t(i)]);
    BOOST_CHECK(v == values[size_t(i)]);
  }
  BOOST_CHECK_EQUAL(std::string(keys[0]), "driver");
  BOOST_CHECK_EQUAL(std::string(values[0]), "fake 1.0");
  BOOST_CHECK_EQUAL(std::string(values[1]), std::string(300, 'x'));
  BOOST_CHECK_EQUAL(world.attributes_calls, 2); // once per open
  for (int32_t bad : {-1, 2, 99}) {
    Status s = take(api().device_attribute(device, bad, &k, &v));
    BOOST_CHECK_EQUAL(s.code, TG_ERROR_NOT_FOUND);
  }
  BOOST_CHECK_EQUAL(take(api().device_attribute(device, 0, nullptr, &v)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().device_attribute_count(device, nullptr)).code, TG_ERROR_INVALID_ARGUMENT);
}

BOOST_FIXTURE_TEST_CASE(buffer_sizes_alignment_and_copy_ranges_are_checked, Fixture) {
  tg_buffer* too_big = nullptr;
  tg_buffer_alloc_args big{sizeof(big), world.max_buffer_bytes + 1, 0, 0, 0};
  Status s = take(api().buffer_alloc(device, &big, &too_big));
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_CHECK(too_big == nullptr);
  tg_buffer_alloc_args odd{sizeof(odd), 8, 24, 0, 0};
  Status a = take(api().buffer_alloc(device, &odd, &too_big));
  BOOST_CHECK_EQUAL(a.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(a.says("alignment 24 is not a power of two"));

  tg_buffer* buf = alloc(100);
  std::vector<std::byte> host(200, std::byte{7});
  Status out = take(api().buffer_copy_from_host(buf, 90, host.data(), 20));
  BOOST_CHECK_EQUAL(out.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(out.message, "fake.buffer_copy_from_host: destination range [offset 90, size 20) lies "
                                 "outside the buffer of 100 bytes");
  BOOST_CHECK_EQUAL(take(api().buffer_copy_to_host(buf, 101, host.data(), 0)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_to_host(buf, UINT64_MAX, host.data(), 2)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_from_host(buf, 0, nullptr, 4)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(world.copies, 0);                       // none reached the plugin
  check(api().buffer_copy_from_host(buf, 100, nullptr, 0)); // empty copies are fine, and skipped
  BOOST_CHECK_EQUAL(world.copies, 0);
  check(api().buffer_copy_from_host(buf, 10, host.data(), 90));
  BOOST_CHECK_EQUAL(world.copies, 1);

  tg_device* second = nullptr;
  tg_device_open_args args{sizeof(args), 1, 0};
  check(api().device_open(&args, &second));
  tg_buffer_alloc_args small{sizeof(small), 100, 0, 0, 0};
  tg_buffer* foreign = nullptr;
  check(api().buffer_alloc(second, &small, &foreign));
  Status cross = take(api().buffer_copy(buf, 0, foreign, 0, 10));
  BOOST_CHECK_EQUAL(cross.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(cross.says("different devices"));
  api().buffer_free(foreign);
  api().device_close(second);
  api().buffer_free(buf);
}

BOOST_FIXTURE_TEST_CASE(blobs_carry_the_payload_and_signature_to_load_program, Fixture) {
  tg::sdk::KernelBuilder k("sig");
  k.global(0, TG_DTYPE_INT16);
  k.global(1, TG_DTYPE_FLOAT64);
  k.var(0, TG_DTYPE_UINT8);
  auto blob = compile(k.serialize());
  tg_program* program = nullptr;
  check(api().program_load(device, blob.data(), blob.size(), &program));
  BOOST_CHECK((world.last_payload == std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}}));
  BOOST_CHECK_EQUAL(world.last_signature.kernel_name, "sig");
  BOOST_CHECK((world.last_signature.buffers == std::vector<tg_dtype>{TG_DTYPE_INT16, TG_DTYPE_FLOAT64}));
  BOOST_CHECK((world.last_signature.scalars == std::vector<tg_dtype>{TG_DTYPE_UINT8}));
  api().program_free(program);
  program = nullptr;

  // A blob for another target, another plugin's blob, junk.
  auto other = compile(k.serialize(), "gfx1030");
  Status target = take(api().program_load(device, other.data(), other.size(), &program));
  BOOST_CHECK_EQUAL(target.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_MESSAGE(target.says("compiled for gfx1030, this device is fake-arch"), target.message);
  auto foreign = tg::sdk::seal_blob({"cpu", "fake-arch", {"x", {}, {}, {}}, {}});
  Status plugin = take(api().program_load(device, foreign.data(), foreign.size(), &program));
  BOOST_CHECK_MESSAGE(plugin.says("made by the 'cpu' plugin"), plugin.message);
  BOOST_CHECK_EQUAL(take(api().program_load(device, nullptr, 10, &program)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(program == nullptr);

  // A kernel taking more buffers than the device allows is refused at load.
  tg::sdk::KernelBuilder wide("wide");
  for (uint32_t i = 0; i < 5; ++i) wide.global(i, TG_DTYPE_FLOAT32);
  auto wide_blob = compile(wide.serialize());
  Status w = take(api().program_load(device, wide_blob.data(), wide_blob.size(), &program));
  BOOST_CHECK_EQUAL(w.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_MESSAGE(w.says("takes 5 buffers"), w.message);
}

BOOST_AUTO_TEST_SUITE_END()
