// The CUDA device (CUDA:0..N-1): NVIDIA GPUs through the driver API (dlopen'ed libcuda.so.1, so the
// plugin loads anywhere and reports UNAVAILABLE with the reason where there is no driver or GPU),
// kernels as CUDA C from the SDK renderer compiled by NVRTC (linked; needs no GPU).
#include "collectives.hpp"
#include "compiler.hpp"
#include "device.hpp"
#include "driver.hpp"
#include "peer.hpp"
#include "rank_comm.hpp"

#include <tg/sdk/adaptor.hpp>

#include <dlfcn.h>
#include <nvrtc.h>

namespace tg::cuda {
namespace {

// libnvrtc carries its own copy of the C++ runtime, which allocates its emergency exception pool
// (72704 bytes) when it loads and never frees it. Unloaded with the plugin, that pool is reported
// as a leak by LeakSanitizer in every host that unloads plugins. So the plugin keeps libnvrtc
// loaded for the life of the process (RTLD_NODELETE on the copy already mapped); it is needed
// again by any later load of the plugin anyway.
void keep_nvrtc_loaded() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) == 0 || info.dli_fname == nullptr) return;
  dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); // the handle is never closed, by design
}

class Plugin final : public sdk::Plugin {
public:
  Plugin() { keep_nvrtc_loaded(); }

  sdk::PluginInfo info() const override {
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return {"cuda", TG_CUDA_PLUGIN_VERSION,
            "tg_device_cuda " TG_CUDA_PLUGIN_VERSION ", NVRTC " + std::to_string(major) + "." +
                std::to_string(minor) + ", driver API via dlopen(libcuda.so.1)" +
#ifdef NDEBUG
                ", release"
#else
                ", debug"
#endif
    };
  }

  int32_t device_count() override {
    const Driver& d = driver(); // UNAVAILABLE with the reason when there is no driver or GPU
    int count = 0;
    check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0)
      throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "NVIDIA driver present but no GPU (cuDeviceGetCount: 0)");
    return count;
  }

  std::unique_ptr<sdk::Device> open_device(int32_t index) override { return std::make_unique<Device>(index); }
  sdk::Compiler& compiler() override { return compiler_; }
  bool provides_launch_batch() const override { return true; }
  // ABI 1.2 between GPUs: peer.hpp, collectives.hpp (NCCL, UNIMPLEMENTED without it).
  bool provides_peer_copy() const override { return true; }
  void peer_copy(const sdk::PeerCopy& copy) override { peers_.copy(copy); }
  bool provides_collective() const override { return true; }
  void collective(const sdk::Collective& collective) override { collectives_.run(collective); }
  // ABI 1.3: device pointers shared with other libraries (DLPack, PyTorch).
  bool provides_buffer_address() const override { return true; }
  bool provides_buffer_import() const override { return true; }
  // ABI 1.6: ranks in several processes meet through NCCL (rank_comm.hpp).
  bool provides_comm() const override { return true; }
  std::array<std::byte, TG_COMM_ID_BYTES> comm_unique_id() override { return nccl_unique_id(); }
  std::unique_ptr<sdk::Comm> comm_init(const sdk::CommInit& init) override { return nccl_comm_init(init); }

private:
  Compiler compiler_;
  PeerCopies peers_;
  Collectives collectives_;
};

} // namespace
} // namespace tg::cuda

TG_SDK_DEFINE_PLUGIN(tg::cuda::Plugin)
