// The rendezvous under mpirun: MPI_COMM_WORLD, and nonblocking calls polled against the timeout
// so a rank that died never leaves the others waiting.
#include "kernel/distributed/rendezvous.hpp"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <thread>

namespace tg::distributed::detail {
namespace {

std::string mpi_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, size_t(length > 0 ? length : 0));
}

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw DistributedError(what + " failed: " + mpi_text(code));
}

class MpiRendezvous final : public Rendezvous {
public:
  MpiRendezvous(const Ranks& r, std::chrono::milliseconds timeout)
      : rank_(r.rank), size_(r.size), timeout_(timeout) {}

  void barrier() override {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    wait(request, "barrier");
  }
  void broadcast(std::span<std::byte> bytes, int root) override {
    if (bytes.size() > size_t(INT_MAX)) throw DistributedError("broadcast_bytes: more than 2^31-1 bytes");
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibcast(bytes.data(), int(bytes.size()), MPI_BYTE, root, MPI_COMM_WORLD, &request),
          "MPI_Ibcast");
    wait(request, "broadcast from rank " + std::to_string(root));
  }
  void finalize() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  void wait(MPI_Request& request, const std::string& what) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (unsigned polls = 0;; ++polls) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (timeout_.count() > 0 && Clock::now() - start > timeout_)
        throw DistributedError(what + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                               " waited more than " + std::to_string(timeout_.count() / 1000) +
                               " s (TG_DISTRIBUTED_TIMEOUT) for the other ranks: one has died, hangs or "
                               "skipped this call");
      if (polls > 2000)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      else
        std::this_thread::yield();
    }
  }
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
};

} // namespace

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

std::unique_ptr<Rendezvous> mpi_rendezvous(Ranks& w, std::chrono::milliseconds timeout) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    if (provided < MPI_THREAD_MULTIPLE)
      throw DistributedError("this MPI gives thread level " + std::to_string(provided) +
                             ", not MPI_THREAD_MULTIPLE, which collectives from any thread need");
  }
  check(MPI_Comm_rank(MPI_COMM_WORLD, &w.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &w.size), "MPI_Comm_size");
  // the ranks sharing this host: a communicator split by shared memory
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  check(MPI_Comm_rank(local, &w.local_rank), "MPI_Comm_rank");
  check(MPI_Comm_size(local, &w.local_size), "MPI_Comm_size");
  MPI_Comm_free(&local);
  return std::make_unique<MpiRendezvous>(w, timeout);
}

} // namespace tg::distributed::detail
