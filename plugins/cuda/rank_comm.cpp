#include "rank_comm.hpp"

#include "device.hpp"
#include "nccl.hpp"

#include <tg/sdk/plugin.hpp>

#include <string>

namespace tg::cuda {
namespace {

void* address(sdk::Buffer* b, uint64_t offset) {
  return reinterpret_cast<void*>(static_cast<Buffer*>(b)->device_address() + offset);
}

class RankComm final : public sdk::Comm {
public:
  RankComm(Device& device, const sdk::CommInit& init)
      : device_(device), ordinal_(device.ordinal()), rank_(init.rank), size_(init.size) {
    const nccl::Library& lib = nccl::library();
    // Held by the comm as by a group's communicators (collectives.hpp): NCCL's memory lives in
    // this context, which must not be reset while the comm exists.
    check(driver().cuDevicePrimaryCtxRetain(&context_, ordinal_), "cuDevicePrimaryCtxRetain");
    try {
      make_current(context_); // ncclCommInitRank takes the calling thread's current device
      comm_ = nccl::init_rank(lib, init.id, rank_, size_);
    } catch (...) {
      driver().cuDevicePrimaryCtxRelease(ordinal_);
      throw;
    }
  }

  ~RankComm() override {
    const nccl::Library& lib = nccl::library();
    driver().cuCtxSetCurrent(context_); // NCCL frees its memory in this context
    // comm_destroy reports nothing. A comm with an error is aborted: destroying it would wait for
    // work that peers who are gone never finish.
    if (comm_ != nullptr) {
      if (nccl::async_error(lib, comm_) == 0)
        lib.ncclCommDestroy(comm_);
      else
        lib.ncclCommAbort(comm_);
    }
    driver().cuDevicePrimaryCtxRelease(ordinal_);
  }

  void collective(const sdk::RankCollective& c) override {
    if (comm_ == nullptr)
      throw sdk::PluginError(TG_ERROR_FAILED_PRECONDITION,
                             "this communicator failed earlier and cannot be used again: " + broken_);
    const nccl::Library& lib = nccl::library();
    const std::optional<nccl::Call> call = nccl::map(c);
    if (!call) // every rank makes this call, so every rank refuses it and they stay in step
      throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                             "NCCL has no all-reduce for " + std::string(sdk::dtype_name(c.dtype)) +
                                 (c.reduce == sdk::ReduceOp::max ? " max" : " sum") +
                                 ", and a collective across processes has no host fallback");
    make_current(device_.context());
    if (const nccl::Result error = nccl::async_error(lib, comm_); error != 0)
      fail(lib, "NCCL reports " + lib.describe(error) + " on this communicator");
    try {
      nccl::run_rank(
          lib, *call, comm_,
          {address(c.input, c.input_offset), address(c.output, c.output_offset), device_.stream()});
    } catch (const sdk::PluginError& e) {
      // The other ranks wait for this rank's part of the call, which never comes: no later call
      // could pair up with theirs.
      fail(lib, e.what());
    }
  }

private:
  // Aborts the comm (its kernels queued on the stream stop, so synchronize returns) and throws;
  // every later call answers FAILED_PRECONDITION with `why`.
  [[noreturn]] void fail(const nccl::Library& lib, const std::string& why) {
    lib.ncclCommAbort(comm_);
    comm_ = nullptr;
    broken_ = why + " (rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
              " on CUDA:" + std::to_string(int(ordinal_)) + ")";
    throw sdk::PluginError(TG_ERROR_INTERNAL, broken_ + "; the communicator is aborted");
  }

  Device& device_; // outlives the comm (comm_destroy comes before device_close)
  CUdevice ordinal_;
  CUcontext context_ = nullptr;
  int rank_;
  int size_;
  nccl::Comm comm_ = nullptr; // null once aborted
  std::string broken_;        // why it was aborted
};

} // namespace

std::array<std::byte, TG_COMM_ID_BYTES> nccl_unique_id() { return nccl::unique_id(nccl::library()); }

std::unique_ptr<sdk::Comm> nccl_comm_init(const sdk::CommInit& init) {
  return std::make_unique<RankComm>(static_cast<Device&>(init.device), init);
}

} // namespace tg::cuda
