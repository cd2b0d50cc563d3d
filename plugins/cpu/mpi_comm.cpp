#include "mpi_comm.hpp"

#include "buffer.hpp"

#include <tg/sdk/plugin.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace tg::cpu {
namespace {

constexpr char kTag[] = "tg-cpu-mpi-world"; // the id's first bytes

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, size_t(std::max(0, length)));
}

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS)
    throw sdk::PluginError(TG_ERROR_INTERNAL, what + " failed: " + mpi_error_text(code));
}

// acc op= in through the SDK's reduction, so NaN and 16-bit floats behave as in every other path.
template <tg_dtype D, sdk::ReduceOp O> void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  sdk::reduce_into(D, O, static_cast<std::byte*>(inout), static_cast<const std::byte*>(in), uint64_t(*len));
}

// MPI's reductions for what it computes as we do; our own for float max (NaN wins) and the
// 16-bit floats. Made once, after MPI_Init.
struct Ops {
  MPI_Op f16_sum, f16_max, bf16_sum, bf16_max, f32_max, f64_max;
  Ops() {
    check(MPI_Op_create(&user_reduce<TG_DTYPE_FLOAT16, sdk::ReduceOp::sum>, 1, &f16_sum), "MPI_Op_create");
    check(MPI_Op_create(&user_reduce<TG_DTYPE_FLOAT16, sdk::ReduceOp::max>, 1, &f16_max), "MPI_Op_create");
    check(MPI_Op_create(&user_reduce<TG_DTYPE_BFLOAT16, sdk::ReduceOp::sum>, 1, &bf16_sum), "MPI_Op_create");
    check(MPI_Op_create(&user_reduce<TG_DTYPE_BFLOAT16, sdk::ReduceOp::max>, 1, &bf16_max), "MPI_Op_create");
    check(MPI_Op_create(&user_reduce<TG_DTYPE_FLOAT32, sdk::ReduceOp::max>, 1, &f32_max), "MPI_Op_create");
    check(MPI_Op_create(&user_reduce<TG_DTYPE_FLOAT64, sdk::ReduceOp::max>, 1, &f64_max), "MPI_Op_create");
  }
};

const Ops& ops() {
  static const Ops made;
  return made;
}

struct Reduction {
  MPI_Datatype type;
  MPI_Op op;
};

// Integer sums run on the unsigned type of the same width: they wrap, with no signed overflow.
Reduction reduction(tg_dtype d, sdk::ReduceOp r) {
  const bool sum = r == sdk::ReduceOp::sum;
  switch (d) {
  case TG_DTYPE_BOOL: // OR for both; over bytes of 0 and 1 that is a max
    return {MPI_UINT8_T, MPI_MAX};
  case TG_DTYPE_INT8:
    return {sum ? MPI_UINT8_T : MPI_INT8_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_UINT8:
    return {MPI_UINT8_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_INT16:
    return {sum ? MPI_UINT16_T : MPI_INT16_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_UINT16:
    return {MPI_UINT16_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_INT32:
    return {sum ? MPI_UINT32_T : MPI_INT32_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_UINT32:
    return {MPI_UINT32_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_INT64:
    return {sum ? MPI_UINT64_T : MPI_INT64_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_UINT64:
    return {MPI_UINT64_T, sum ? MPI_SUM : MPI_MAX};
  case TG_DTYPE_FLOAT16:
    return {MPI_UINT16_T, sum ? ops().f16_sum : ops().f16_max};
  case TG_DTYPE_BFLOAT16:
    return {MPI_UINT16_T, sum ? ops().bf16_sum : ops().bf16_max};
  case TG_DTYPE_FLOAT32:
    return {MPI_FLOAT, sum ? MPI_SUM : ops().f32_max};
  case TG_DTYPE_FLOAT64:
    return {MPI_DOUBLE, sum ? MPI_SUM : ops().f64_max};
  default:
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "dtype " + std::to_string(d) + " has no MPI reduction");
  }
}

char* at(sdk::Buffer* b, uint64_t offset) { return static_cast<Buffer*>(b)->data() + offset; }

const char* op_name(sdk::CollectiveOp op) {
  switch (op) {
  case sdk::CollectiveOp::all_reduce:
    return "all-reduce";
  case sdk::CollectiveOp::all_gather:
    return "all-gather";
  case sdk::CollectiveOp::broadcast:
    return "broadcast";
  }
  return "collective";
}

class MpiComm final : public sdk::Comm {
public:
  MpiComm(int rank, int size, uint64_t timeout_ms) : rank_(rank), size_(size), timeout_ms_(timeout_ms) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Comm_idup(MPI_COMM_WORLD, &comm_, &request), "MPI_Comm_idup");
    wait(request, "joining the communicator (MPI_Comm_idup of MPI_COMM_WORLD)");
  }
  ~MpiComm() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !broken_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  void collective(const sdk::RankCollective& c) override {
    if (broken_)
      throw sdk::PluginError(TG_ERROR_FAILED_PRECONDITION,
                             "this communicator timed out earlier and cannot be used again");
    const size_t element = sdk::dtype_size(c.dtype);
    char* in = at(c.input, c.input_offset);
    char* out = at(c.output, c.output_offset);
    switch (c.op) {
    case sdk::CollectiveOp::all_reduce: {
      const Reduction r = reduction(c.dtype, c.reduce);
      // MPI counts are int: long inputs go in pieces
      for (uint64_t first = 0; first < c.count; first += kMaxCount) {
        const int n = int(std::min<uint64_t>(kMaxCount, c.count - first));
        const size_t at_byte = size_t(first) * element;
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallreduce(in == out ? MPI_IN_PLACE : in + at_byte, out + at_byte, n, r.type, r.op, comm_,
                             &request),
              "MPI_Iallreduce");
        wait(request, op_name(c.op));
      }
      return;
    }
    case sdk::CollectiveOp::all_gather: {
      if (c.count * element > uint64_t(INT_MAX))
        throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "an all-gather of more than 2^31-1 bytes per rank (" +
                                                           std::to_string(c.count * element) + ")");
      const int bytes = int(c.count * element);
      const bool in_place = in == out + size_t(rank_) * size_t(bytes);
      MPI_Request request = MPI_REQUEST_NULL;
      check(MPI_Iallgather(in_place ? MPI_IN_PLACE : in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, comm_,
                           &request),
            "MPI_Iallgather");
      wait(request, op_name(c.op));
      return;
    }
    case sdk::CollectiveOp::broadcast: {
      if (rank_ == c.root && in != out) std::memmove(out, in, size_t(c.count * element));
      const uint64_t bytes = c.count * element;
      for (uint64_t first = 0; first < bytes; first += kMaxCount) {
        const int n = int(std::min<uint64_t>(kMaxCount, bytes - first));
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Ibcast(out + first, n, MPI_BYTE, c.root, comm_, &request), "MPI_Ibcast");
        wait(request, op_name(c.op));
      }
      return;
    }
    }
  }

private:
  static constexpr uint64_t kMaxCount = uint64_t(1) << 30;

  // Polls `request` until it completes or the timeout passes. A request left pending cannot be
  // taken back, so a timeout breaks the communicator for good.
  void wait(MPI_Request& request, const std::string& what) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (unsigned polls = 0;; ++polls) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      if (timeout_ms_ != 0 && uint64_t(waited.count()) > timeout_ms_) {
        broken_ = true;
        throw sdk::PluginError(TG_ERROR_DEADLINE_EXCEEDED,
                               what + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                                   " waited " + std::to_string(waited.count() / 1000.0).substr(0, 6) +
                                   " s for the other ranks (the timeout): a rank has died, hangs or skipped "
                                   "this call");
      }
      // spin briefly (collectives of a step follow each other closely), then let the core go
      if (polls > 2000)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      else
        std::this_thread::yield();
    }
  }

  int rank_;
  int size_;
  uint64_t timeout_ms_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool broken_ = false;
};

// A communicator of one rank: every collective is a copy, and no MPI is needed.
class SoloComm final : public sdk::Comm {
public:
  void collective(const sdk::RankCollective& c) override {
    char* in = at(c.input, c.input_offset);
    char* out = at(c.output, c.output_offset);
    if (in != out) std::memmove(out, in, size_t(c.count * sdk::dtype_size(c.dtype)));
  }
};

} // namespace

std::array<std::byte, TG_COMM_ID_BYTES> mpi_unique_id() {
  std::array<std::byte, TG_COMM_ID_BYTES> id{};
  std::memcpy(id.data(), kTag, sizeof kTag);
  return id;
}

std::unique_ptr<sdk::Comm> mpi_comm_init(const sdk::CommInit& init) {
  if (std::memcmp(init.id.data(), kTag, sizeof kTag) != 0)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "the id was not made by the cpu plugin's comm_unique_id");
  if (init.size == 1) return std::make_unique<SoloComm>();
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw sdk::PluginError(TG_ERROR_FAILED_PRECONDITION,
                           std::string("MPI is ") + (finalized ? "already finalized" : "not initialized") +
                               " in this process: CPU devices of several processes meet through MPI; start "
                               "the ranks with mpirun and call tg::distributed::init() first");
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE)
    throw sdk::PluginError(TG_ERROR_FAILED_PRECONDITION,
                           "MPI was initialized without MPI_THREAD_MULTIPLE (level " +
                               std::to_string(provided) + "): the host calls collectives from any thread");
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_rank != init.rank || world_size != init.size)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "rank " + std::to_string(init.rank) + " of " + std::to_string(init.size) +
                               " differs from MPI_COMM_WORLD's rank " + std::to_string(world_rank) + " of " +
                               std::to_string(world_size) + ": CPU communicators span every MPI rank");
  (void)ops(); // the reductions exist before the first collective
  return std::make_unique<MpiComm>(init.rank, init.size, init.timeout_ms);
}

} // namespace tg::cpu
