// Entry point of the CPU plugin: N logical devices of the host CPU (logical_devices.hpp) and an
// LLVM compiler, MPI between processes; the SDK's adaptor turns them into the tg_plugin_api table behind
// tg_plugin_query_v1.
#include "collectives.hpp"
#include "compiler.hpp"
#include "device.hpp"
#include "logical_devices.hpp"
#include "mpi_comm.hpp"

#include <tg/sdk/adaptor.hpp>

#include <llvm/Config/llvm-config.h>

namespace tg::cpu {
namespace {

#define TG_CPU_STR2(x) #x
#define TG_CPU_STR(x) TG_CPU_STR2(x)

class Plugin final : public sdk::Plugin {
public:
  sdk::PluginInfo info() const override {
    return {
      "cpu", TG_CPU_PLUGIN_VERSION,
          "tg_device_cpu " TG_CPU_PLUGIN_VERSION ", LLVM " LLVM_VERSION_STRING " (ORC LLJIT), "
#if defined(__clang__)
          "clang " __clang_version__
#elif defined(__GNUC__)
          "gcc " TG_CPU_STR(__GNUC__) "." TG_CPU_STR(__GNUC_MINOR__)
#endif
#ifdef NDEBUG
          ", release"
    };
#else
              ", debug"
    };
#endif
  }
  int32_t device_count() override { return logical_device_count_from_env(); }
  std::unique_ptr<sdk::Device> open_device(int32_t) override { return std::make_unique<Device>(pool_.get()); }
  sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; }
  // ABI 1.2 between the logical devices (collectives.hpp).
  bool provides_peer_copy() const override { return true; }
  void peer_copy(const sdk::PeerCopy& copy) override { cpu::peer_copy(copy); }
  bool provides_collective() const override { return true; }
  void collective(const sdk::Collective& collective) override { run_collective(collective, *pool_.get()); }
  // ABI 1.3: buffers are host memory, shared with other libraries (numpy) as plain pointers.
  bool provides_buffer_address() const override { return true; }
  bool provides_buffer_import() const override { return true; }
  // ABI 1.6: ranks in several processes meet through MPI (mpi_comm.hpp).
  bool provides_comm() const override { return true; }
  std::array<std::byte, TG_COMM_ID_BYTES> comm_unique_id() override { return mpi_unique_id(); }
  std::unique_ptr<sdk::Comm> comm_init(const sdk::CommInit& init) override { return mpi_comm_init(init); }

private:
  Compiler compiler_;
  SharedPool pool_;
};

} // namespace
} // namespace tg::cpu

TG_SDK_DEFINE_PLUGIN(tg::cpu::Plugin)
