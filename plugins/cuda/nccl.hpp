// NCCL, reached through dlopen like the driver: the plugin never links it, so it loads where
// NCCL is absent and its collective entry answers UNIMPLEMENTED there (the host then reduces
// through host memory). The few prototypes it needs are declared here, not taken from nccl.h
// (the library's ABI is stable across 2.x: ncclComm_t is opaque, the enums are fixed numbers).
// This file knows no CUDA driver: streams and device addresses are opaque values, so it is
// tested in CI against a fake libnccl (tests/plugins/cuda/fake_nccl.c).
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace tg::cuda::nccl {

using Comm = struct ncclComm*;
using Result = int; // ncclResult_t: 0 = ncclSuccess

// The entries' types (nccl.h's prototypes; cudaStream_t as void*).
using GetVersionFn = Result(int*);
using GetErrorStringFn = const char*(Result);
using CommInitAllFn = Result(Comm*, int, const int*);
using CommDestroyFn = Result(Comm);
using GroupFn = Result();
using AllReduceFn = Result(const void*, void*, size_t, int, int, Comm, void*);
using AllGatherFn = Result(const void*, void*, size_t, int, Comm, void*);
using BroadcastFn = Result(const void*, void*, size_t, int, int, Comm, void*);

#define TG_NCCL_FUNCTIONS(X)                                                                                 \
  X(ncclGetVersion, GetVersionFn)                                                                            \
  X(ncclGetErrorString, GetErrorStringFn)                                                                    \
  X(ncclCommInitAll, CommInitAllFn)                                                                          \
  X(ncclCommDestroy, CommDestroyFn)                                                                          \
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

// One rank's buffers (device addresses) and stream.
struct Rank {
  const void* input;
  void* output;
  void* stream; // cudaStream_t == CUstream
};

// Issues `call` on every rank inside one ncclGroupStart/ncclGroupEnd (one process drives every
// device). comms[i] and ranks[i] are rank i. Returns once queued on the streams.
void run(const Library& lib, const Call& call, std::span<const Comm> comms, std::span<const Rank> ranks);

} // namespace tg::cuda::nccl
