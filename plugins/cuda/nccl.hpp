// NCCL, reached through dlopen like the driver: the plugin never links it, so it loads where
// NCCL is absent and its collective entry answers UNIMPLEMENTED there (the host then reduces
// through host memory; communicators across processes answer UNAVAILABLE). The few prototypes it needs are
// declared here, not taken from nccl.h (the library's ABI is stable across 2.x: ncclComm_t is opaque, the
// enums are fixed numbers; every entry below exists since NCCL 2.4). This file knows no CUDA driver: streams
// and device addresses are opaque values, so it is tested in CI against a fake libnccl
// (tests/plugins/cuda/fake_nccl.c).
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace tg::cuda::nccl {

using Comm = struct ncclComm*;
using Result = int; // ncclResult_t: 0 = ncclSuccess
// ncclUniqueId: opaque bytes (rank 0's address), passed by value to ncclCommInitRank.
struct UniqueId {
  char internal[128];
};
static_assert(sizeof(UniqueId) == TG_COMM_ID_BYTES, "the ABI's comm id carries an ncclUniqueId as it is");

// The entries' types (nccl.h's prototypes; cudaStream_t as void*).
using GetVersionFn = Result(int*);
using GetErrorStringFn = const char*(Result);
using CommInitAllFn = Result(Comm*, int, const int*);
using CommDestroyFn = Result(Comm);
using GetUniqueIdFn = Result(UniqueId*);
using CommInitRankFn = Result(Comm*, int, UniqueId, int);
using CommGetAsyncErrorFn = Result(Comm, Result*);
using CommAbortFn = Result(Comm);
using GroupFn = Result();
using AllReduceFn = Result(const void*, void*, size_t, int, int, Comm, void*);
using AllGatherFn = Result(const void*, void*, size_t, int, Comm, void*);
using BroadcastFn = Result(const void*, void*, size_t, int, int, Comm, void*);

#define TG_NCCL_FUNCTIONS(X)                                                                                 \
  X(ncclGetVersion, GetVersionFn)                                                                            \
  X(ncclGetErrorString, GetErrorStringFn)                                                                    \
  X(ncclCommInitAll, CommInitAllFn)                                                                          \
  X(ncclCommDestroy, CommDestroyFn)                                                                          \
  X(ncclGetUniqueId, GetUniqueIdFn)                                                                          \
  X(ncclCommInitRank, CommInitRankFn)                                                                        \
  X(ncclCommGetAsyncError, CommGetAsyncErrorFn)                                                              \
  X(ncclCommAbort, CommAbortFn)                                                                              \
  X(ncclGroupStart, GroupFn)                                                                                 \
  X(ncclGroupEnd, GroupFn)                                                                                   \
  X(ncclAllReduce, AllReduceFn)                                                                              \
  X(ncclAllGather, AllGatherFn)                                                                              \
  X(ncclBroadcast, BroadcastFn)

// A loaded libnccl: every pointer set, or `error` says why not.
struct Library {
#define TG_NCCL_MEMBER(name, type) type* name = nullptr;
  TG_NCCL_FUNCTIONS(TG_NCCL_MEMBER)
#undef TG_NCCL_MEMBER
  std::string path;  // what was opened (or looked for)
  int version = 0;   // ncclGetVersion, e.g. 22703 for 2.27.3
  std::string error; // non-empty: not usable, and why (names the library looked for)

  bool ok() const { return error.empty(); }
  // "2.27.3", from version.
  std::string version_text() const;
  // "NCCL error 4 (invalid argument)": the number and NCCL's text for it.
  std::string describe(Result r) const;
  // Throws PluginError naming `what` and NCCL's text unless r is ncclSuccess.
  void check(Result r, const std::string& what) const;

  // Opens `path` (never closed: NCCL keeps threads and state for the process). A missing file
  // or symbol is an error in the result, not an exception.
  static Library open(const std::string& path);
};

// The process's NCCL: $TG_NCCL_LIBRARY, else "libnccl.so.2" through the loader's search path;
// opened on first use (thread-safe) and kept.
const Library& library();

// "found: 2.27.3 (libnccl.so.2)" or "not found: <why>", for the device attributes.
std::string status();

enum class Kind { all_reduce, all_gather, broadcast };

// One collective as NCCL's arguments. all_gather and broadcast move bytes (ncclUint8, count in
// bytes: every dtype); all_reduce needs NCCL's own type and op.
struct Call {
  Kind kind;
  int datatype; // ncclDataType_t
  int op;       // ncclRedOp_t (all_reduce only)
  size_t count; // elements of `datatype` per rank input
  int root;     // broadcast only
};

// How `c` maps onto NCCL; nullopt where NCCL has no such reduction (16-bit integers, a BOOL
// sum): the plugin answers UNIMPLEMENTED and the host serves it.
std::optional<Call> map(const sdk::Collective& c);
// The same for one rank's part of a collective across processes.
std::optional<Call> map(const sdk::RankCollective& c);

// One rank's buffers (device addresses) and stream.
struct Rank {
  const void* input;
  void* output;
  void* stream; // cudaStream_t == CUstream
};

// Issues `call` on every rank inside one ncclGroupStart/ncclGroupEnd (one process drives every
// device). comms[i] and ranks[i] are rank i. Returns once queued on the streams.
void run(const Library& lib, const Call& call, std::span<const Comm> comms, std::span<const Rank> ranks);

// Communicators across processes (ABI 1.6): one process per GPU, one rank each. Without the
// library they throw UNAVAILABLE with lib.error.

// Rank 0's id for a new communicator (ncclGetUniqueId; thread-safe).
std::array<std::byte, TG_COMM_ID_BYTES> unique_id(const Library& lib);
// Joins communicator `id` as `rank` of `size` (ncclCommInitRank) on the calling thread's current
// CUDA context. Blocks until every rank has joined: NCCL's blocking init has no timeout.
Comm init_rank(const Library& lib, std::span<const std::byte, TG_COMM_ID_BYTES> id, int rank, int size);
// Issues `call` for this process's one rank of `comm`: no group (one comm, one call). Returns
// once queued on rank.stream.
void run_rank(const Library& lib, const Call& call, Comm comm, const Rank& rank);
// What NCCL has found wrong with `comm` in the background (a peer gone, the network failed), or
// ncclSuccess (0).
Result async_error(const Library& lib, Comm comm);

} // namespace tg::cuda::nccl
