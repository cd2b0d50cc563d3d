// A small in-test plugin on the SDK adaptor: host-memory buffers, a compiler whose payload is a
// fixed byte string, and a device that records what reaches it, with switches that make its
// methods throw. The adaptor tests drive it only through the tg_plugin_api table it produces.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace fake {

// What the plugin saw and what it should do; reset by each test through Fixture.
struct World {
  enum class Throw { nothing, runtime_error, bad_alloc, integer, not_found };
  Throw alloc_throws = Throw::nothing;
  bool timing = true;
  uint64_t max_buffer_bytes = 1 << 20;
  int properties_calls = 0;
  int attributes_calls = 0;
  int launches = 0;
  int copies = 0;
  uint64_t last_alignment = 99;
  std::vector<std::byte> last_payload;
  tg::sdk::Signature last_signature;
  std::vector<uint64_t> last_offsets;
  std::vector<tg_scalar_arg> last_scalars;
  std::array<uint32_t, 3> last_global{}, last_local{};
  bool last_timed = false;
  uint32_t max_buffer_args = 4; // the device's limit, read at open
};
inline World world;

inline void throw_as(World::Throw kind) {
  switch (kind) {
  case World::Throw::nothing:
    return;
  case World::Throw::runtime_error:
    throw std::runtime_error("the fake driver broke");
  case World::Throw::bad_alloc:
    throw std::bad_alloc();
  case World::Throw::integer:
    throw 42;
  case World::Throw::not_found:
    throw tg::sdk::PluginError(TG_ERROR_NOT_FOUND, "no such thing", "a log line");
  }
}

class Buffer final : public tg::sdk::Buffer {
public:
  explicit Buffer(uint64_t size) : bytes(size) {}
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override {
    ++world.copies;
    std::memcpy(bytes.data() + offset, src, size);
  }
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override {
    ++world.copies;
    std::memcpy(dst, bytes.data() + offset, size);
  }
  void copy_from(uint64_t offset, tg::sdk::Buffer& src, uint64_t src_offset, uint64_t size) override {
    ++world.copies;
    std::memmove(bytes.data() + offset, static_cast<Buffer&>(src).bytes.data() + src_offset, size);
  }
  std::vector<std::byte> bytes;
};

class Program final : public tg::sdk::Program {};

class Device final : public tg::sdk::Device {
public:
  tg_device_properties properties() const override {
    ++world.properties_calls;
    tg_device_properties p{};
    tg::sdk::copy_name(p.name, "fake device");
    tg::sdk::copy_name(p.arch, "fake-arch");
    p.memory_bytes = p.max_buffer_bytes = world.max_buffer_bytes;
    p.max_local_size[0] = 8;
    p.max_local_size[1] = 4;
    p.max_local_size[2] = 2;
    p.max_local_threads = 16;
    p.max_global_size[0] = 100;
    p.max_global_size[1] = 10;
    p.max_global_size[2] = 10;
    p.max_buffer_args = world.max_buffer_args;
    p.max_scalar_args = 2;
    p.buffer_alignment = 16;
    p.features = world.timing ? TG_FEATURE_TIMING : 0;
    return p;
  }
  std::vector<tg::sdk::Attribute> attributes() const override {
    ++world.attributes_calls;
    return {{"driver", "fake 1.0"}, {"long", std::string(300, 'x')}};
  }
  std::unique_ptr<tg::sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t) override {
    throw_as(world.alloc_throws);
    world.last_alignment = alignment;
    return std::make_unique<Buffer>(size);
  }
  std::unique_ptr<tg::sdk::Program> load_program(const tg::sdk::Blob& blob) override {
    world.last_payload = blob.payload;
    world.last_signature = blob.signature;
    return std::make_unique<Program>();
  }
  uint64_t launch(const tg::sdk::Launch& launch) override {
    ++world.launches;
    world.last_offsets.clear();
    for (const auto& b : launch.buffers) world.last_offsets.push_back(b.offset);
    world.last_scalars.assign(launch.scalars.begin(), launch.scalars.end());
    world.last_global = launch.global;
    world.last_local = launch.local;
    world.last_timed = launch.timed;
    return 1234;
  }
};

class Compiler final : public tg::sdk::Compiler {
public:
  tg::sdk::CompileOutput compile(const tg::sdk::CompileRequest& request) override {
    if (request.target == "throws") throw std::logic_error("compiler bug");
    return {request.target.empty() ? "fake-arch" : request.target,
            {std::byte{1}, std::byte{2}, std::byte{3}},
            "source of " + request.ir.name,
            "compiled at O" + std::to_string(request.opt_level)};
  }
  std::string cache_key(const std::string& target) override {
    if (target == "long") return std::string(1000, 'k');
    return "fake;" + (target.empty() ? std::string("fake-arch") : target);
  }
};

class Plugin final : public tg::sdk::Plugin {
public:
  tg::sdk::PluginInfo info() const override { return {"fake", "1.2.3", "built for tests"}; }
  int32_t device_count() override { return 2; }
  std::unique_ptr<tg::sdk::Device> open_device(int32_t) override { return std::make_unique<Device>(); }
  tg::sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; } // Device keeps the default (one launch each)

private:
  Compiler compiler_;
};

// A plugin whose hardware is absent.
class AbsentPlugin final : public tg::sdk::Plugin {
public:
  tg::sdk::PluginInfo info() const override { return {"absent", "0", ""}; }
  int32_t device_count() override {
    throw tg::sdk::PluginError(TG_ERROR_UNAVAILABLE, "libfakedriver.so.1 is not installed");
  }
  std::unique_ptr<tg::sdk::Device> open_device(int32_t) override { return nullptr; }
  tg::sdk::Compiler& compiler() override { return compiler_; }

private:
  Compiler compiler_;
};

inline const tg_host_info kHost{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR, TG_ABI_VERSION_MINOR,
                                "sdk tests"};

inline const tg_plugin_api& api() { return *tg::sdk::plugin_api<Plugin>(&kHost); }

struct Status {
  tg_error_code code = TG_OK;
  std::string message;
  std::string log;
  bool ok() const { return code == TG_OK; }
  bool says(const std::string& text) const { return message.find(text) != std::string::npos; }
};

inline Status take(tg_error* e, const tg_plugin_api& table = api()) {
  Status s;
  if (e == nullptr) return s;
  s.code = table.error_code(e);
  s.message = table.error_message(e);
  s.log = table.error_log(e);
  table.error_destroy(e);
  return s;
}

inline void check(tg_error* e) {
  Status s = take(e);
  BOOST_REQUIRE_MESSAGE(s.ok(), "code " << s.code << ": " << s.message);
}

// A fresh world and an open device for each test.
struct Fixture {
  Fixture() {
    world = World{};
    tg_device_open_args args{sizeof(args), 0, 0};
    check(api().device_open(&args, &device));
  }
  ~Fixture() { api().device_close(device); }

  tg_buffer* alloc(uint64_t size) {
    tg_buffer_alloc_args args{sizeof(args), size, 0, 0, 0};
    tg_buffer* buffer = nullptr;
    check(api().buffer_alloc(device, &args, &buffer));
    return buffer;
  }

  std::vector<std::byte> compile(const std::vector<std::byte>& ir, const char* target = nullptr) {
    tg_compile_args args{sizeof(args), ir.data(), ir.size(), target, TG_COMPILE_WANT_SOURCE, 2};
    tg_compile_result* result = nullptr;
    check(api().compile(&args, &result));
    tg_compile_output out{};
    out.struct_size = sizeof(out);
    check(api().compile_result_get(result, &out));
    std::vector<std::byte> blob(static_cast<const std::byte*>(out.binary),
                                static_cast<const std::byte*>(out.binary) + out.binary_size);
    api().compile_result_destroy(result);
    return blob;
  }

  tg_device* device = nullptr;
};

} // namespace fake
