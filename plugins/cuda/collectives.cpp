#include "collectives.hpp"

#include <tg/sdk/plugin.hpp>

namespace tg::cuda {

Collectives::~Collectives() {
  if (groups_.empty()) return; // NCCL never loaded
  const nccl::Library& lib = nccl::library();
  for (auto& [ordinals, g] : groups_) {
    for (nccl::Comm c : g.comms) lib.ncclCommDestroy(c); // nothing to report to at teardown
    for (CUdevice dev : g.retained) driver().cuDevicePrimaryCtxRelease(dev);
  }
}

const Collectives::Group& Collectives::group(const std::vector<int>& ordinals) {
  if (auto it = groups_.find(ordinals); it != groups_.end()) return it->second;
  const nccl::Library& lib = nccl::library();
  Group g;
  for (int ordinal : ordinals) {
    CUcontext unused = nullptr;
    check(driver().cuDevicePrimaryCtxRetain(&unused, ordinal), "cuDevicePrimaryCtxRetain");
    g.retained.push_back(ordinal);
  }
  g.comms.resize(ordinals.size());
  try {
    lib.check(lib.ncclCommInitAll(g.comms.data(), int(ordinals.size()), ordinals.data()),
              "ncclCommInitAll(" + std::to_string(ordinals.size()) + " GPUs)");
  } catch (...) {
    for (CUdevice dev : g.retained) driver().cuDevicePrimaryCtxRelease(dev);
    throw;
  }
  return groups_.emplace(ordinals, std::move(g)).first->second;
}

void Collectives::run(const sdk::Collective& c) {
  const nccl::Library& lib = nccl::library();
  if (!lib.ok()) throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, lib.error);
  const std::optional<nccl::Call> call = nccl::map(c);
  if (!call)
    throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "NCCL has no all-reduce for " +
                                                       std::string(sdk::dtype_name(c.dtype)) +
                                                       (c.reduce == sdk::ReduceOp::max ? " max" : " sum"));
  std::vector<int> ordinals;
  std::vector<nccl::Rank> ranks;
  for (const sdk::CollectiveMember& m : c.members) {
    const auto& dev = static_cast<const Device&>(*m.device);
    ordinals.push_back(int(dev.ordinal()));
    ranks.push_back(
        {reinterpret_cast<const void*>(static_cast<Buffer*>(m.input)->device_address() + m.input_offset),
         reinterpret_cast<void*>(static_cast<Buffer*>(m.output)->device_address() + m.output_offset),
         dev.stream()});
  }
  std::lock_guard lock(mutex_);
  const Group& g = group(ordinals);
  nccl::run(lib, *call, g.comms, ranks);
}

} // namespace tg::cuda
