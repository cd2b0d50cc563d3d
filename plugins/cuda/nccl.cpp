#include "nccl.hpp"

#include <tg/sdk/plugin.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace tg::cuda::nccl {
namespace {

// ncclDataType_t and ncclRedOp_t as nccl.h numbers them (stable since NCCL 2.0; bfloat16 2.10).
enum : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};
enum : int { kSum = 0, kMax = 2 };

std::optional<int> datatype(tg_dtype d) {
  switch (d) {
  case TG_DTYPE_INT8:
    return kInt8;
  case TG_DTYPE_UINT8:
    return kUint8;
  case TG_DTYPE_INT32:
    return kInt32;
  case TG_DTYPE_UINT32:
    return kUint32;
  case TG_DTYPE_INT64:
    return kInt64;
  case TG_DTYPE_UINT64:
    return kUint64;
  case TG_DTYPE_FLOAT16:
    return kFloat16;
  case TG_DTYPE_BFLOAT16:
    return kBfloat16;
  case TG_DTYPE_FLOAT32:
    return kFloat32;
  case TG_DTYPE_FLOAT64:
    return kFloat64;
  default:
    return std::nullopt; // BOOL (no OR in NCCL), 16-bit integers
  }
}

// What a group collective and a rank's collective share (sdk::Collective, sdk::RankCollective).
template <class C> std::optional<Call> map_fields(const C& c) {
  const size_t bytes = size_t(c.count) * sdk::dtype_size(c.dtype);
  switch (c.op) {
  case sdk::CollectiveOp::all_gather:
    return Call{Kind::all_gather, kUint8, 0, bytes, 0};
  case sdk::CollectiveOp::broadcast:
    return Call{Kind::broadcast, kUint8, 0, bytes, c.root};
  case sdk::CollectiveOp::all_reduce: {
    // BOOL's reduction is OR for both ops; over bytes of 0 and 1 that is a max.
    if (c.dtype == TG_DTYPE_BOOL)
      return c.reduce == sdk::ReduceOp::max
                 ? std::optional<Call>(Call{Kind::all_reduce, kUint8, kMax, bytes, 0})
                 : std::nullopt;
    const std::optional<int> type = datatype(c.dtype);
    if (!type) return std::nullopt;
    return Call{Kind::all_reduce, *type, c.reduce == sdk::ReduceOp::max ? kMax : kSum, size_t(c.count), 0};
  }
  }
  return std::nullopt;
}

// One rank's NCCL call; the result unchecked, since a group must be closed before it throws.
Result enqueue(const Library& lib, const Call& call, Comm comm, const Rank& r) {
  switch (call.kind) {
  case Kind::all_reduce:
    return lib.ncclAllReduce(r.input, r.output, call.count, call.datatype, call.op, comm, r.stream);
  case Kind::all_gather:
    return lib.ncclAllGather(r.input, r.output, call.count, call.datatype, comm, r.stream);
  case Kind::broadcast:
    return lib.ncclBroadcast(r.input, r.output, call.count, call.datatype, call.root, comm, r.stream);
  }
  return 0;
}

const char* kind_name(Kind kind) {
  switch (kind) {
  case Kind::all_reduce:
    return "ncclAllReduce";
  case Kind::all_gather:
    return "ncclAllGather";
  case Kind::broadcast:
    return "ncclBroadcast";
  }
  return "NCCL collective";
}

void require(const Library& lib) {
  if (!lib.ok())
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE,
                           "collectives across processes on CUDA need NCCL: " + lib.error);
}

#define TG_NCCL_STRINGIFY_EXPANDED(x) TG_NCCL_STRINGIFY(x)
#define TG_NCCL_STRINGIFY(x) #x

} // namespace

std::string Library::version_text() const {
  // 2.x encodes as major*10000 + minor*100 + patch (before 2.9: major*1000 + minor*100 + patch).
  const int major = version >= 10000 ? version / 10000 : version / 1000;
  const int minor = version >= 10000 ? version / 100 % 100 : version / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

std::string Library::describe(Result r) const {
  const char* text = ncclGetErrorString ? ncclGetErrorString(r) : nullptr;
  return "NCCL error " + std::to_string(r) + (text ? std::string(" (") + text + ")" : std::string());
}

void Library::check(Result r, const std::string& what) const {
  if (r == 0) return;
  // ncclSystemError (2) is most often out of memory; the rest are bugs or setup problems.
  throw sdk::PluginError(TG_ERROR_INTERNAL, what + " failed: " + describe(r));
}

Library Library::open(const std::string& path) {
  Library lib;
  lib.path = path;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    lib.error = "NCCL not found: " + path + " cannot be loaded (" + (e ? e : "unknown") +
                "); set TG_NCCL_LIBRARY to libnccl.so.2's path";
    return lib;
  }
#define TG_NCCL_LOAD(name, type)                                                                             \
  lib.name = reinterpret_cast<type*>(dlsym(handle, TG_NCCL_STRINGIFY_EXPANDED(name)));                       \
  if (!lib.name) {                                                                                           \
    lib.error = "NCCL library " + path + " lacks " TG_NCCL_STRINGIFY_EXPANDED(name);                         \
    return lib;                                                                                              \
  }
  TG_NCCL_FUNCTIONS(TG_NCCL_LOAD)
#undef TG_NCCL_LOAD
  if (lib.ncclGetVersion(&lib.version) != 0) lib.error = "NCCL library " + path + ": ncclGetVersion failed";
  return lib;
}

const Library& library() {
  static const Library lib = [] {
    const char* env = std::getenv("TG_NCCL_LIBRARY");
    return Library::open(env && *env ? env : "libnccl.so.2");
  }();
  return lib;
}

std::string status() {
  const Library& lib = library();
  return lib.ok() ? "found: " + lib.version_text() + " (" + lib.path + ")" : "not found: " + lib.error;
}

std::optional<Call> map(const sdk::Collective& c) { return map_fields(c); }
std::optional<Call> map(const sdk::RankCollective& c) { return map_fields(c); }

void run(const Library& lib, const Call& call, std::span<const Comm> comms, std::span<const Rank> ranks) {
  lib.check(lib.ncclGroupStart(), "ncclGroupStart");
  Result first_error = 0;
  std::string failed;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Result res = enqueue(lib, call, comms[i], ranks[i]);
    if (res != 0 && first_error == 0) {
      first_error = res;
      failed = "rank " + std::to_string(i);
    }
  }
  // The group is always closed, also after a failed call, so NCCL's group state stays balanced.
  const Result end = lib.ncclGroupEnd();
  lib.check(first_error, "NCCL collective (" + failed + ")");
  lib.check(end, "ncclGroupEnd");
}

std::array<std::byte, TG_COMM_ID_BYTES> unique_id(const Library& lib) {
  require(lib);
  UniqueId id{};
  lib.check(lib.ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::array<std::byte, TG_COMM_ID_BYTES> bytes{};
  std::memcpy(bytes.data(), id.internal, bytes.size());
  return bytes;
}

Comm init_rank(const Library& lib, std::span<const std::byte, TG_COMM_ID_BYTES> id, int rank, int size) {
  require(lib);
  UniqueId nccl_id{};
  std::memcpy(nccl_id.internal, id.data(), id.size());
  Comm comm = nullptr;
  lib.check(lib.ncclCommInitRank(&comm, size, nccl_id, rank),
            "ncclCommInitRank (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")");
  return comm;
}

void run_rank(const Library& lib, const Call& call, Comm comm, const Rank& rank) {
  lib.check(enqueue(lib, call, comm, rank), kind_name(call.kind));
}

Result async_error(const Library& lib, Comm comm) {
  Result error = 0;
  const Result asked = lib.ncclCommGetAsyncError(comm, &error);
  return asked != 0 ? asked : error;
}

} // namespace tg::cuda::nccl
