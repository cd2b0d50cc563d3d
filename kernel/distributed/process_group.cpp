#include "kernel/distributed/process_group.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"
#include "kernel/tensor/multi_collective.hpp"

#include <algorithm>

namespace tg::distributed {
namespace {

void check_device(const Tensor& t, const std::string& device, const char* call) {
  if (t.device() != device)
    throw DistributedError(std::string("ProcessGroup::") + call + ": " + t.str() + " is on " + t.device() +
                           ", the group's device is " + device);
}

} // namespace

ProcessGroup::ProcessGroup(const std::string& device) : device_(parse_device_name(device).canonical()) {
  const World& w = init();
  std::shared_ptr<Device> dev = open_device(device_).device;
  // rank 0's id and, last, whether it made one: the broadcast happens either way, so when rank 0
  // cannot make the id every rank fails at once instead of waiting out the timeout
  std::array<std::byte, TG_COMM_ID_BYTES + 1> message{};
  std::string failed;
  if (w.rank == 0) try {
      const auto id = Communicator::unique_id(*dev);
      std::copy(id.begin(), id.end(), message.begin());
      message.back() = std::byte{1};
    } catch (const std::exception& e) {
      failed = e.what();
    }
  broadcast_bytes(message, 0);
  if (!failed.empty() || message.back() != std::byte{1})
    throw DistributedError("rank " + std::to_string(w.rank) + " of " + std::to_string(w.size) +
                           " cannot join a process group on " + device + ": " +
                           (failed.empty() ? "rank 0 could not make the communicator's id" : failed));
  std::span<const std::byte, TG_COMM_ID_BYTES> id(message.data(), TG_COMM_ID_BYTES);
  try {
    comm_ = std::make_unique<Communicator>(dev, w.rank, w.size, id, w.timeout);
  } catch (const DeviceError& e) {
    throw DistributedError(std::string("rank ") + std::to_string(w.rank) + " of " + std::to_string(w.size) +
                           " cannot join a process group on " + device + ": " + e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const { return comm_->rank(); }
int ProcessGroup::size() const { return comm_->size(); }

Tensor ProcessGroup::all_reduce(const Tensor& t, CollectiveReduce op) const {
  check_device(t, device_, "all_reduce");
  auto [out, output] = detail::fresh_tensor(device_, t.dtype(), t.shape());
  if (output == nullptr) return out; // nothing to reduce
  Tensor in = t;
  Buffer& input = detail::realized_buffer(in);
  comm_->all_reduce({&input, 0}, {output, 0}, t.dtype(), uint64_t(t.numel()), op);
  return out;
}

Tensor ProcessGroup::all_gather(const Tensor& t) const {
  check_device(t, device_, "all_gather");
  Tensor in = t.ndim() == 0 ? t.reshape({1}) : t;
  Dims shape = in.shape();
  shape[0] *= size();
  auto [out, output] = detail::fresh_tensor(device_, t.dtype(), shape);
  if (output == nullptr) return out;
  Buffer& input = detail::realized_buffer(in);
  comm_->all_gather({&input, 0}, {output, 0}, t.dtype(), uint64_t(in.numel()));
  return out;
}

Tensor ProcessGroup::broadcast(const Tensor& t, int root) const {
  check_device(t, device_, "broadcast");
  auto [out, output] = detail::fresh_tensor(device_, t.dtype(), t.shape());
  if (output == nullptr) return out;
  Tensor in = t;
  Buffer& input = detail::realized_buffer(in);
  comm_->broadcast({&input, 0}, {output, 0}, root, t.dtype(), uint64_t(t.numel()));
  return out;
}

} // namespace tg::distributed
