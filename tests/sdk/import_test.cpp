// ABI 1.3 through the adaptor: buffer_address and buffer_import are in the table only when the
// plugin provides them; an import's arguments are checked before plugin code runs, and its release
// callback runs exactly once, after the buffer is freed, and never when the import fails.
#include "fake_plugin.hpp"

#include <cstdlib>
#include <functional>
#include <optional>

namespace {

// What the sharing plugin saw and should do; reset by each test.
struct Sharing {
  int imports = 0;                 // import_buffer calls that reached the plugin
  bool refuse = false;             // import_buffer throws INVALID_ARGUMENT (memory it cannot reach)
  bool release_in_buffer = false;  // the plugin's Buffer calls release itself, twice, when destroyed
  bool release_then_throw = false; // a faulty import_buffer: calls release, then fails
  uint64_t last_address = 0, last_size = 0;
};
Sharing sharing;

// Host memory, owned (allocated) or borrowed (imported).
class SharedBuffer final : public tg::sdk::Buffer {
public:
  SharedBuffer(std::byte* data, uint64_t size, bool owned, std::function<void()> release = {})
      : data_(data), size_(size), owned_(owned), release_(std::move(release)) {}
  ~SharedBuffer() override {
    if (owned_) std::free(data_);
    if (sharing.release_in_buffer && release_) {
      release_();
      release_(); // the adaptor runs it once, however often it is asked
    }
  }
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override {
    std::memcpy(data_ + offset, src, size);
  }
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override {
    std::memcpy(dst, data_ + offset, size);
  }
  void copy_from(uint64_t offset, tg::sdk::Buffer& src, uint64_t src_offset, uint64_t size) override {
    std::memmove(data_ + offset, static_cast<SharedBuffer&>(src).data_ + src_offset, size);
  }
  std::optional<uint64_t> address() const override { return reinterpret_cast<uintptr_t>(data_); }

private:
  std::byte* data_;
  uint64_t size_;
  bool owned_;
  std::function<void()> release_;
};

// A buffer that has no address to give (Buffer::address keeps its default).
class OpaqueBuffer final : public tg::sdk::Buffer {
public:
  void copy_from_host(uint64_t, const void*, uint64_t) override {}
  void copy_to_host(uint64_t, void*, uint64_t) override {}
  void copy_from(uint64_t, tg::sdk::Buffer&, uint64_t, uint64_t) override {}
};

constexpr uint32_t kAlignment = 64;

class SharingDevice final : public tg::sdk::Device {
public:
  tg_device_properties properties() const override {
    tg_device_properties p{};
    tg::sdk::copy_name(p.name, "sharing device");
    tg::sdk::copy_name(p.arch, "fake-arch");
    p.memory_bytes = p.max_buffer_bytes = 1 << 20;
    p.max_local_size[0] = p.max_local_size[1] = p.max_local_size[2] = 1;
    p.max_local_threads = 1;
    p.max_global_size[0] = p.max_global_size[1] = p.max_global_size[2] = 1;
    p.max_buffer_args = p.max_scalar_args = 4;
    p.buffer_alignment = kAlignment;
    p.features = TG_FEATURE_HOST_MEMORY;
    return p;
  }
  std::unique_ptr<tg::sdk::Buffer> alloc(uint64_t size, uint64_t, uint32_t flags) override {
    if (flags != 0) return std::make_unique<OpaqueBuffer>(); // tests ask for one with a flag
    auto* data = static_cast<std::byte*>(
        std::aligned_alloc(kAlignment, (size + kAlignment) / kAlignment * kAlignment));
    return std::make_unique<SharedBuffer>(data, size, true);
  }
  std::unique_ptr<tg::sdk::Buffer> import_buffer(uint64_t address, uint64_t size,
                                                 std::function<void()> release) override {
    ++sharing.imports;
    sharing.last_address = address;
    sharing.last_size = size;
    if (sharing.refuse)
      throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "not memory this device reaches");
    if (sharing.release_then_throw) {
      release();
      throw std::runtime_error("import broke after releasing");
    }
    return std::make_unique<SharedBuffer>(reinterpret_cast<std::byte*>(uintptr_t(address)), size, false,
                                          std::move(release));
  }
  std::unique_ptr<tg::sdk::Program> load_program(const tg::sdk::Blob&) override {
    return std::make_unique<fake::Program>();
  }
  uint64_t launch(const tg::sdk::Launch&) override { return 0; }
};

class SharingPlugin final : public tg::sdk::Plugin {
public:
  tg::sdk::PluginInfo info() const override { return {"sharing", "1.3.0", "built for tests"}; }
  int32_t device_count() override { return 1; }
  std::unique_ptr<tg::sdk::Device> open_device(int32_t) override { return std::make_unique<SharingDevice>(); }
  tg::sdk::Compiler& compiler() override { return compiler_; }
  bool provides_buffer_address() const override { return true; }
  bool provides_buffer_import() const override { return true; }

private:
  fake::Compiler compiler_;
};

const tg_plugin_api& sharing_api() { return *tg::sdk::plugin_api<SharingPlugin>(&fake::kHost); }

fake::Status status_of(tg_error* e) { return fake::take(e, sharing_api()); }

// Counts the calls of the release callback handed over with an import.
struct Releases {
  int count = 0;
  static void call(void* self) { ++static_cast<Releases*>(self)->count; }
};

struct SharingFixture {
  SharingFixture() {
    sharing = Sharing{};
    tg_device_open_args args{sizeof(args), 0, 0};
    BOOST_REQUIRE(status_of(sharing_api().device_open(&args, &device)).ok());
  }
  ~SharingFixture() { sharing_api().device_close(device); }

  fake::Status import_memory(uint64_t address, uint64_t size, tg_buffer** out, Releases* releases) {
    tg_buffer_import_args args{sizeof(args), address, size, &Releases::call, releases};
    return status_of(sharing_api().buffer_import(device, &args, out));
  }

  tg_device* device = nullptr;
  alignas(kAlignment) float memory[32] = {};
};

} // namespace

BOOST_AUTO_TEST_SUITE(sdk_adaptor_1_3)

BOOST_AUTO_TEST_CASE(the_entries_are_absent_unless_the_plugin_provides_them) {
  const tg_plugin_api& plain = fake::api();
  BOOST_TEST(plain.struct_size == sizeof(tg_plugin_api));
  BOOST_TEST(plain.buffer_address == nullptr);
  BOOST_TEST(plain.buffer_import == nullptr);
  const tg_plugin_api& t = sharing_api();
  BOOST_TEST(t.abi_minor == uint32_t(TG_ABI_VERSION_MINOR));
  BOOST_TEST(t.buffer_address != nullptr);
  BOOST_TEST(t.buffer_import != nullptr);
}

BOOST_FIXTURE_TEST_CASE(buffer_address_gives_the_plugins_address, SharingFixture) {
  tg_buffer_alloc_args args{sizeof(args), 16, 0, 0, 0};
  tg_buffer* buffer = nullptr;
  BOOST_REQUIRE(status_of(sharing_api().buffer_alloc(device, &args, &buffer)).ok());
  const float values[4] = {1.5f, 2.5f, -3.0f, 4.0f};
  BOOST_REQUIRE(status_of(sharing_api().buffer_copy_from_host(buffer, 0, values, sizeof values)).ok());
  uint64_t address = 0;
  BOOST_REQUIRE(status_of(sharing_api().buffer_address(buffer, &address)).ok());
  BOOST_TEST(address % kAlignment == 0u);
  const auto* seen = reinterpret_cast<const float*>(uintptr_t(address));
  BOOST_TEST(std::vector<float>(seen, seen + 4) == std::vector<float>(values, values + 4),
             boost::test_tools::per_element());
  fake::Status s = status_of(sharing_api().buffer_address(buffer, nullptr));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.says("sharing.buffer_address: out_address is NULL"), s.message);
  BOOST_TEST(status_of(sharing_api().buffer_address(nullptr, &address)).code == TG_ERROR_INVALID_ARGUMENT);
  sharing_api().buffer_free(buffer);
}

BOOST_FIXTURE_TEST_CASE(a_buffer_without_an_address_answers_unimplemented, SharingFixture) {
  tg_buffer_alloc_args args{sizeof(args), 16, 0, TG_BUFFER_HOST_VISIBLE, 0}; // an OpaqueBuffer
  tg_buffer* buffer = nullptr;
  BOOST_REQUIRE(status_of(sharing_api().buffer_alloc(device, &args, &buffer)).ok());
  uint64_t address = 7;
  fake::Status s = status_of(sharing_api().buffer_address(buffer, &address));
  BOOST_TEST(s.code == TG_ERROR_UNIMPLEMENTED);
  BOOST_TEST(s.says("sharing.buffer_address: "), s.message);
  BOOST_TEST(address == 7u);
  sharing_api().buffer_free(buffer);
}

BOOST_FIXTURE_TEST_CASE(an_import_shares_the_memory_and_releases_it_once_when_freed, SharingFixture) {
  for (bool release_in_buffer : {false, true}) {
    sharing.release_in_buffer = release_in_buffer;
    Releases releases;
    tg_buffer* buffer = nullptr;
    const auto address = reinterpret_cast<uintptr_t>(memory);
    BOOST_REQUIRE(import_memory(address, sizeof memory, &buffer, &releases).ok());
    BOOST_TEST(sharing.last_address == address);
    BOOST_TEST(sharing.last_size == sizeof memory);
    uint64_t seen = 0;
    BOOST_REQUIRE(status_of(sharing_api().buffer_address(buffer, &seen)).ok());
    BOOST_TEST(seen == address);
    // No copy: the buffer reads and writes the caller's memory.
    memory[3] = 42.0f;
    float value = 0;
    BOOST_REQUIRE(
        status_of(sharing_api().buffer_copy_to_host(buffer, 3 * sizeof(float), &value, sizeof value)).ok());
    BOOST_TEST(value == 42.0f);
    const float seven = 7.0f;
    BOOST_REQUIRE(status_of(sharing_api().buffer_copy_from_host(buffer, 0, &seven, sizeof seven)).ok());
    BOOST_TEST(memory[0] == 7.0f);
    // Ranges are the import's size.
    BOOST_TEST(
        status_of(sharing_api().buffer_copy_to_host(buffer, sizeof memory, &value, sizeof value)).code ==
        TG_ERROR_INVALID_ARGUMENT);
    BOOST_TEST(releases.count == 0);
    sharing_api().buffer_free(buffer);
    BOOST_TEST(releases.count == 1);
  }
}

BOOST_FIXTURE_TEST_CASE(a_failed_import_never_releases, SharingFixture) {
  Releases releases;
  tg_buffer* buffer = nullptr;
  const auto address = reinterpret_cast<uintptr_t>(memory);
  // Checked before the plugin sees it: misaligned, NULL for a non-empty range, a range that wraps.
  fake::Status s = import_memory(address + 4, 16, &buffer, &releases);
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.says("sharing.buffer_import: address 0x"), s.message);
  BOOST_TEST(s.says("is not aligned to the device's buffer_alignment (64 bytes)"), s.message);
  s = import_memory(0, 16, &buffer, &releases);
  BOOST_TEST(s.says("address is 0 for 16 bytes"), s.message);
  BOOST_TEST(import_memory(uint64_t(0) - kAlignment, 2 * kAlignment, &buffer, &releases).code ==
             TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(status_of(sharing_api().buffer_import(device, nullptr, &buffer)).code ==
             TG_ERROR_INVALID_ARGUMENT);
  tg_buffer_import_args args{sizeof(args), address, 16, &Releases::call, &releases};
  BOOST_TEST(status_of(sharing_api().buffer_import(device, &args, nullptr)).code ==
             TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(status_of(sharing_api().buffer_import(nullptr, &args, &buffer)).code ==
             TG_ERROR_INVALID_ARGUMENT);
  args.struct_size = 4; // too small to be any struct
  BOOST_TEST(status_of(sharing_api().buffer_import(device, &args, &buffer)).code ==
             TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(sharing.imports == 0);
  // Refused by the plugin, or failing after the plugin called release: the callback never runs.
  sharing.refuse = true;
  s = import_memory(address, 16, &buffer, &releases);
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.says("sharing.buffer_import: not memory this device reaches"), s.message);
  sharing.refuse = false;
  sharing.release_then_throw = true;
  BOOST_TEST(import_memory(address, 16, &buffer, &releases).code == TG_ERROR_INTERNAL);
  BOOST_TEST(sharing.imports == 2);
  BOOST_TEST(buffer == nullptr);
  BOOST_TEST(releases.count == 0);
}

BOOST_FIXTURE_TEST_CASE(empty_imports_and_older_callers_are_served, SharingFixture) {
  // Size 0 at address 0 is an empty buffer; a NULL release is allowed.
  tg_buffer_import_args args{sizeof(args), 0, 0, nullptr, nullptr};
  tg_buffer* buffer = nullptr;
  BOOST_REQUIRE(status_of(sharing_api().buffer_import(device, &args, &buffer)).ok());
  BOOST_TEST(sharing.last_size == 0u);
  sharing_api().buffer_free(buffer);
  // A caller whose struct ends before `release` (a shorter args struct) gets no callback.
  Releases releases;
  args = {offsetof(tg_buffer_import_args, release), reinterpret_cast<uintptr_t>(memory), 16, &Releases::call,
          &releases};
  BOOST_REQUIRE(status_of(sharing_api().buffer_import(device, &args, &buffer)).ok());
  sharing_api().buffer_free(buffer);
  BOOST_TEST(releases.count == 0);
}

BOOST_AUTO_TEST_SUITE_END()
