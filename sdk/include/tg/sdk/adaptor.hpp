// The C++ adaptor: a plugin implements five small classes (Plugin, Device, Buffer, Compiler,
// Program) and TG_SDK_DEFINE_PLUGIN(MyPlugin) builds the whole tg_plugin_api table from them.
// The adaptor does every ABI-edge duty, so plugin code never sees a raw handle or argument struct:
//  - a guard around every entry (no exception crosses; PluginError keeps its code, IRError is
//    INVALID_ARGUMENT, bad_alloc RESOURCE_EXHAUSTED, anything else INTERNAL), messages prefixed
//    "<plugin>.<entry>: ";
//  - NULL checks, struct_size handling both ways (tg/sdk/plugin.hpp), the properties copy, the
//    attribute strings (kept until device_close), compile results, the cache-key size protocol;
//  - device index, alignment, buffer size and copy-range checks;
//  - kernel IR parsing before Compiler::compile, the blob envelope around its payload
//    (tg/sdk/blob.hpp) and the envelope checks before Device::load_program;
//  - launch validation against the program's signature and the device limits before
//    Device::launch (argument counts and dtypes, buffers of this device, offsets in range and
//    aligned, local/global sizes, elapsed_ns only with TG_FEATURE_TIMING); a grid with a 0 runs
//    nothing and never reaches the plugin; the same for every launch of a launch_batch (1.1),
//    all validated before any runs;
//  - the 1.2 entries between devices (peer_copy, collective): devices of this plugin, distinct,
//    buffers on their devices, ranges inside, element-aligned offsets, known op/reduce/dtype,
//    root in the group; an empty copy or collective never reaches the plugin;
//  - the 1.3 entries (buffer_address, buffer_import): an import's address aligned and not NULL
//    (unless the size is 0), and its release callback run exactly once, after the buffer is
//    destroyed, never when the import fails;
//  - the 1.6 communicators across processes: comm_init's device, rank and size checked, a
//    collective on a comm checked like a group's (one member: this rank) with root < size and
//    an all-gather output of size * count elements;
//  - the 1.4 matrix units: each declared unit checked when the device opens (matrix_unit_error),
//    copied out with the struct_size rules.
// Threading follows abi.h: the host serializes calls per device; Plugin::device_count/open_device
// and the Compiler must be thread-safe.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/blob.hpp>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/plugin.hpp>
#include <tg/sdk/reduce.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tg::sdk {

// Device memory. Ranges reaching these methods lie inside the buffer and sizes are > 0.
class Buffer {
public:
  virtual ~Buffer() = default;
  virtual void copy_from_host(uint64_t offset, const void* src, uint64_t size) = 0;
  virtual void copy_to_host(uint64_t offset, void* dst, uint64_t size) = 0;
  // `src` belongs to the same device; it may be this buffer, with overlapping ranges.
  virtual void copy_from(uint64_t offset, Buffer& src, uint64_t src_offset, uint64_t size) = 0;
  // ABI 1.3 buffer_address: the base address, valid while the buffer lives (a host pointer on a
  // device with TG_FEATURE_HOST_MEMORY, else the device's native one). Reached only when
  // Plugin::provides_buffer_address(); nullopt (the default) answers UNIMPLEMENTED.
  virtual std::optional<uint64_t> address() const { return std::nullopt; }
};

// A loaded program; the adaptor keeps its Signature (from the blob) beside it.
class Program {
public:
  virtual ~Program() = default;
};

struct BufferArg {
  Buffer* buffer;  // never NULL, of the launching device
  uint64_t offset; // inside the buffer, a multiple of the element size
};

// A launch that passed validation.
struct Launch {
  Program& program;
  const Signature& signature;
  std::array<uint32_t, 3> global; // work groups per axis, each >= 1
  std::array<uint32_t, 3> local;  // within the device limits
  std::span<const BufferArg> buffers;
  std::span<const tg_scalar_arg> scalars; // dtypes match signature.scalars
  bool timed;                             // the caller wants the run time: finish the kernel before returning
};

struct Attribute {
  std::string key;
  std::string value;
};

class Device {
public:
  virtual ~Device() = default;
  // Read once, right after open_device; the adaptor answers device_properties from its copy and
  // uses the limits for validation. struct_size is set by the adaptor.
  virtual tg_device_properties properties() const = 0;
  // Read once, right after open_device; the strings stay valid until device_close.
  virtual std::vector<Attribute> attributes() const { return {}; }
  // ABI 1.4: the matrix units the device declares (tg/sdk/matrix_unit.hpp; MMA's arg0 is an
  // index into this list, which must be the same for every device of one target). Read once,
  // right after open_device; a unit that is not well formed (matrix_unit_error) fails the open.
  virtual std::vector<tg_matrix_unit> matrix_units() const { return {}; }
  // Read once, right after open_device: the target string of the blobs this device runs
  // (CompileOutput::target must match). "" (the default) means properties().arch.
  virtual std::string target() const { return {}; }
  // alignment is 0 (the device's default) or a power of two; size may be 0 and is at most
  // properties().max_buffer_bytes (when that is not 0).
  virtual std::unique_ptr<Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) = 0;
  // The envelope is already checked: made by this plugin, for target(), intact.
  virtual std::unique_ptr<Program> load_program(const Blob& blob) = 0;
  // Runs a validated launch; returns the kernel's run time in ns when launch.timed (else 0).
  virtual uint64_t launch(const Launch& launch) = 0;
  // Waits for queued work (devices without TG_FEATURE_ASYNC need not override it).
  virtual void synchronize() {}
  // ABI 1.1 launch_batch: runs validated launches in order (empty grids already dropped); returns
  // their total run time in ns when `timed`. Reached only when Plugin::provides_launch_batch();
  // the default runs launch() for each.
  virtual uint64_t launch_batch(std::span<const Launch> launches, bool timed);
  // ABI 1.3 buffer_import: a Buffer over `size` bytes at `address` (the meaning of
  // Buffer::address()) that someone else owns; it must free none of that memory. The adaptor has
  // checked that address is aligned to properties().buffer_alignment and not 0 unless size is 0.
  // Memory the device cannot reach: throw PluginError(TG_ERROR_INVALID_ARGUMENT). `release` may
  // be called by the Buffer (say, once its queue no longer uses the memory); otherwise the adaptor
  // calls it right after destroying the Buffer. It runs once at most, never when this throws.
  // Reached only when Plugin::provides_buffer_import(); the default throws UNIMPLEMENTED.
  virtual std::unique_ptr<Buffer> import_buffer(uint64_t address, uint64_t size,
                                                std::function<void()> release);
};

// ABI 1.2 peer_copy, validated: ranges inside the buffers, size > 0. The devices may be one.
struct PeerCopy {
  Device* dst_device; // never NULL, dst's device
  Buffer* dst;        // never NULL
  uint64_t dst_offset;
  Device* src_device; // never NULL, src's device
  Buffer* src;        // never NULL
  uint64_t src_offset;
  uint64_t size;
};

enum class CollectiveOp { all_reduce, all_gather, broadcast };

// One rank of a collective: its device and that device's input and output (never NULL).
struct CollectiveMember {
  Device* device;
  Buffer* input;
  uint64_t input_offset;
  Buffer* output;
  uint64_t output_offset;
};

// ABI 1.2 collective, validated (tg_collective_args has the semantics): distinct devices of this
// plugin, ranges inside, offsets element-aligned, count > 0, an output overlapping its input
// only in place (same offset; for all_gather the rank's part).
struct Collective {
  CollectiveOp op;
  ReduceOp reduce;                           // all_reduce only
  tg_dtype dtype;                            // not VOID
  int32_t root;                              // broadcast only: 0 <= root < members.size()
  uint64_t count;                            // elements of each input
  std::span<const CollectiveMember> members; // rank order
};

// ABI 1.6 comm_init, validated: 0 <= rank < size, the device is this plugin's.
struct CommInit {
  Device& device;
  int32_t rank;
  int32_t size;
  uint64_t timeout_ms; // 0: wait without limit
  std::span<const std::byte, TG_COMM_ID_BYTES> id;
};

// A collective across processes (tg_collective_args with a comm), validated: this rank's input
// and output on the comm's device, ranges inside, offsets element-aligned, count > 0, an output
// overlapping its input only in place (for all_gather: the rank-th part), root < size.
struct RankCollective {
  CollectiveOp op;
  ReduceOp reduce; // all_reduce only
  tg_dtype dtype;  // not VOID
  int32_t root;    // broadcast only: a rank of the comm
  uint64_t count;  // elements of the input; an all_gather output holds size * count
  Buffer* input;
  uint64_t input_offset;
  Buffer* output;
  uint64_t output_offset;
};

// This process's rank of a communicator (Plugin::comm_init). Destroyed before its device closes.
class Comm {
public:
  virtual ~Comm() = default;
  // Waiting longer than the init's timeout_ms for the other ranks: throw
  // PluginError(TG_ERROR_DEADLINE_EXCEEDED) saying which call and rank waited.
  virtual void collective(const RankCollective& collective) = 0;
};

struct CompileRequest {
  const KernelIR& ir; // parsed and validated
  std::string target; // "" = the plugin's default target
  bool want_source;   // TG_COMPILE_WANT_SOURCE
  unsigned opt_level; // 0..3
};

struct CompileOutput {
  std::string target;             // the resolved target, as Device::target() spells it
  std::vector<std::byte> payload; // goes into the blob envelope
  std::string source;             // when requested and available
  std::string log;
};

// Needs no device and must be thread-safe.
class Compiler {
public:
  virtual ~Compiler() = default;
  virtual CompileOutput compile(const CompileRequest& request) = 0;
  // Changes whenever the payload compile() makes for `target` ("" = default) would change. The
  // adaptor adds the plugin's name and version and the envelope version.
  virtual std::string cache_key(const std::string& target) = 0;
};

struct PluginInfo {
  std::string name;       // short, e.g. "cpu"
  std::string version;    // e.g. "0.1.0"
  std::string build_info; // compiler, library versions, build type
};

// One instance per loaded plugin, constructed on the first tg_plugin_query_v1: keep the
// constructor cheap and away from hardware.
class Plugin {
public:
  virtual ~Plugin() = default;
  virtual PluginInfo info() const = 0;
  // No hardware: throw PluginError(TG_ERROR_UNAVAILABLE, "<what is missing>").
  virtual int32_t device_count() = 0;
  // 0 <= index < device_count().
  virtual std::unique_ptr<Device> open_device(int32_t index) = 0;
  virtual Compiler& compiler() = 0;
  // True puts launch_batch into the table (Device::launch_batch serves it); false (the default)
  // leaves it NULL, and the host launches one kernel per call.
  virtual bool provides_launch_batch() const { return false; }
  // ABI 1.2. True puts peer_copy into the table (served by peer_copy below); false (the default)
  // leaves it NULL and the host copies through host memory.
  virtual bool provides_peer_copy() const { return false; }
  virtual void peer_copy(const PeerCopy& copy);
  // True puts collective into the table (served by collective below). A call the plugin cannot
  // serve throws PluginError(UNIMPLEMENTED or UNAVAILABLE): the host then goes through host memory.
  virtual bool provides_collective() const { return false; }
  virtual void collective(const Collective& collective);
  // ABI 1.3. True puts buffer_address into the table (served by Buffer::address); false (the
  // default) leaves it NULL and the host copies instead of sharing memory.
  virtual bool provides_buffer_address() const { return false; }
  // True puts buffer_import into the table (served by Device::import_buffer); false (the default)
  // leaves it NULL and the host copies other libraries' memory into buffers of its own.
  virtual bool provides_buffer_import() const { return false; }
  // ABI 1.6. True puts comm_unique_id, comm_init and comm_destroy into the table; false (the
  // default) leaves them NULL and this plugin's devices have no collectives across processes.
  virtual bool provides_comm() const { return false; }
  // Rank 0's id for a new communicator (thread-safe, no device).
  virtual std::array<std::byte, TG_COMM_ID_BYTES> comm_unique_id();
  // Joins the communicator; returns once every rank has (or throws DEADLINE_EXCEEDED after
  // init.timeout_ms). Never returns NULL.
  virtual std::unique_ptr<Comm> comm_init(const CommInit& init);
};

// The plugin object behind a buffer handle, for white-box tests that load the plugin in process.
Buffer& buffer_object(tg_buffer* handle);

namespace detail {

// What the table's entries share: the plugin object and its names.
struct PluginState {
  std::unique_ptr<Plugin> plugin;
  PluginInfo info;
};

// The entries, each with the plugin's state in front (adaptor.cpp).
tg_error* device_count(PluginState&, int32_t*);
tg_error* device_open(PluginState&, const tg_device_open_args*, tg_device**);
void device_close(PluginState&, tg_device*);
tg_error* device_properties(PluginState&, tg_device*, tg_device_properties*);
tg_error* device_attribute_count(PluginState&, tg_device*, int32_t*);
tg_error* device_attribute(PluginState&, tg_device*, int32_t, const char**, const char**);
tg_error* buffer_alloc(PluginState&, tg_device*, const tg_buffer_alloc_args*, tg_buffer**);
void buffer_free(PluginState&, tg_buffer*);
tg_error* buffer_copy_from_host(PluginState&, tg_buffer*, uint64_t, const void*, uint64_t);
tg_error* buffer_copy_to_host(PluginState&, tg_buffer*, uint64_t, void*, uint64_t);
tg_error* buffer_copy(PluginState&, tg_buffer*, uint64_t, tg_buffer*, uint64_t, uint64_t);
tg_error* compile(PluginState&, const tg_compile_args*, tg_compile_result**);
tg_error* compile_result_get(PluginState&, const tg_compile_result*, tg_compile_output*);
void compile_result_destroy(PluginState&, tg_compile_result*);
tg_error* compile_cache_key(PluginState&, const char*, char*, size_t, size_t*);
tg_error* program_load(PluginState&, tg_device*, const void*, size_t, tg_program**);
void program_free(PluginState&, tg_program*);
tg_error* launch(PluginState&, const tg_launch_args*);
tg_error* synchronize(PluginState&, tg_device*);
tg_error* launch_batch(PluginState&, const tg_launch_batch_args*);
tg_error* peer_copy(PluginState&, const tg_peer_copy_args*);
tg_error* collective(PluginState&, const tg_collective_args*);
tg_error* buffer_address(PluginState&, tg_buffer*, uint64_t*);
tg_error* buffer_import(PluginState&, tg_device*, const tg_buffer_import_args*, tg_buffer**);
tg_error* device_matrix_unit_count(PluginState&, tg_device*, int32_t*);
tg_error* device_matrix_unit(PluginState&, tg_device*, int32_t, tg_matrix_unit*);
tg_error* comm_unique_id(PluginState&, uint8_t*, size_t);
tg_error* comm_init(PluginState&, const tg_comm_init_args*, tg_comm**);
void comm_destroy(PluginState&, tg_comm*);

// The plugin's state, created once per plugin class P.
template <class P> PluginState& state() {
  static PluginState s = [] {
    PluginState made{std::make_unique<P>(), {}};
    made.info = made.plugin->info();
    return made;
  }();
  return s;
}

// A C function for `Entry` bound to plugin class P.
template <class P, auto Entry> struct Bind;
template <class P, class R, class... A, R (*Entry)(PluginState&, A...)> struct Bind<P, Entry> {
  static R fn(A... args) { return Entry(state<P>(), args...); }
};

// Fills every field of the table (adaptor.cpp): names, errors, and the entries passed in.
struct Entries {
  decltype(tg_plugin_api::device_count) device_count;
  decltype(tg_plugin_api::device_open) device_open;
  decltype(tg_plugin_api::device_close) device_close;
  decltype(tg_plugin_api::device_properties) device_properties;
  decltype(tg_plugin_api::device_attribute_count) device_attribute_count;
  decltype(tg_plugin_api::device_attribute) device_attribute;
  decltype(tg_plugin_api::buffer_alloc) buffer_alloc;
  decltype(tg_plugin_api::buffer_free) buffer_free;
  decltype(tg_plugin_api::buffer_copy_from_host) buffer_copy_from_host;
  decltype(tg_plugin_api::buffer_copy_to_host) buffer_copy_to_host;
  decltype(tg_plugin_api::buffer_copy) buffer_copy;
  decltype(tg_plugin_api::compile) compile;
  decltype(tg_plugin_api::compile_result_get) compile_result_get;
  decltype(tg_plugin_api::compile_result_destroy) compile_result_destroy;
  decltype(tg_plugin_api::compile_cache_key) compile_cache_key;
  decltype(tg_plugin_api::program_load) program_load;
  decltype(tg_plugin_api::program_free) program_free;
  decltype(tg_plugin_api::launch) launch;
  decltype(tg_plugin_api::synchronize) synchronize;
  decltype(tg_plugin_api::launch_batch) launch_batch;     // set in the table only if the plugin provides it
  decltype(tg_plugin_api::peer_copy) peer_copy;           // the same
  decltype(tg_plugin_api::collective) collective;         // the same
  decltype(tg_plugin_api::buffer_address) buffer_address; // the same
  decltype(tg_plugin_api::buffer_import) buffer_import;   // the same
  decltype(tg_plugin_api::device_matrix_unit_count) device_matrix_unit_count;
  decltype(tg_plugin_api::device_matrix_unit) device_matrix_unit;
  decltype(tg_plugin_api::comm_unique_id) comm_unique_id; // set only if the plugin provides comms
  decltype(tg_plugin_api::comm_init) comm_init;           // the same
  decltype(tg_plugin_api::comm_destroy) comm_destroy;     // the same
};
tg_plugin_api make_api(const PluginState& state, const Entries& entries);

// NULL unless `host` speaks this ABI major version.
bool host_is_compatible(const tg_host_info* host) noexcept;

} // namespace detail

// The table for plugin class P, or NULL when the host cannot be served (or P's constructor
// throws). What TG_SDK_DEFINE_PLUGIN's entry point returns; tests may call it directly.
template <class P> const tg_plugin_api* plugin_api(const tg_host_info* host) noexcept {
  if (!detail::host_is_compatible(host)) return nullptr;
  try {
    using namespace detail;
    static const tg_plugin_api api = make_api(state<P>(), {&Bind<P, &device_count>::fn,
                                                           &Bind<P, &device_open>::fn,
                                                           &Bind<P, &device_close>::fn,
                                                           &Bind<P, &device_properties>::fn,
                                                           &Bind<P, &device_attribute_count>::fn,
                                                           &Bind<P, &device_attribute>::fn,
                                                           &Bind<P, &buffer_alloc>::fn,
                                                           &Bind<P, &buffer_free>::fn,
                                                           &Bind<P, &buffer_copy_from_host>::fn,
                                                           &Bind<P, &buffer_copy_to_host>::fn,
                                                           &Bind<P, &buffer_copy>::fn,
                                                           &Bind<P, &compile>::fn,
                                                           &Bind<P, &compile_result_get>::fn,
                                                           &Bind<P, &compile_result_destroy>::fn,
                                                           &Bind<P, &compile_cache_key>::fn,
                                                           &Bind<P, &program_load>::fn,
                                                           &Bind<P, &program_free>::fn,
                                                           &Bind<P, &launch>::fn,
                                                           &Bind<P, &synchronize>::fn,
                                                           &Bind<P, &launch_batch>::fn,
                                                           &Bind<P, &peer_copy>::fn,
                                                           &Bind<P, &collective>::fn,
                                                           &Bind<P, &buffer_address>::fn,
                                                           &Bind<P, &buffer_import>::fn,
                                                           &Bind<P, &device_matrix_unit_count>::fn,
                                                           &Bind<P, &device_matrix_unit>::fn,
                                                           &Bind<P, &comm_unique_id>::fn,
                                                           &Bind<P, &comm_init>::fn,
                                                           &Bind<P, &comm_destroy>::fn});
    return &api;
  } catch (...) {
    return nullptr;
  }
}

} // namespace tg::sdk

// Defines the plugin's one exported symbol, tg_plugin_query_v1, for plugin class PluginClass
// (a tg::sdk::Plugin). Use it once, at namespace scope, in the plugin's plugin.cpp.
#define TG_SDK_DEFINE_PLUGIN(PluginClass)                                                                    \
  extern "C" TG_PLUGIN_EXPORT const tg_plugin_api* tg_plugin_query_v1(const tg_host_info* host) {            \
    return ::tg::sdk::plugin_api<PluginClass>(host);                                                         \
  }
