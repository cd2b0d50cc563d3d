/* A stand-in for libnccl.so.2 (tests/plugins/cuda/nccl_test.cpp), so the CUDA plugin's NCCL
 * loading and argument mapping run in CI without a GPU: each entry appends what it was called
 * with to a log the test reads through fake_nccl_log(). ncclCommInitAll hands out comms that
 * are the device numbers plus 0x100, ncclCommInitRank the rank plus 0x200; a call with count 13
 * and an InitRank of 13 ranks fail with ncclInvalidArgument (4). ncclGetUniqueId's byte i is
 * i ^ 0x5a; comm 0x666 has a pending ncclRemoteError (6). */
#include <stdio.h>
#include <string.h>

typedef struct ncclComm* ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;

static char fake_log[4096];

static void append(const char* text) {
  size_t used = strlen(fake_log);
  if (used + strlen(text) + 1 < sizeof fake_log) strcat(fake_log, text);
}

const char* fake_nccl_log(void);
const char* fake_nccl_log(void) { return fake_log; }
void fake_nccl_reset(void);
void fake_nccl_reset(void) { fake_log[0] = 0; }

int ncclGetVersion(int* version);
int ncclGetVersion(int* version) {
  *version = 22703;
  return 0;
}
const char* ncclGetErrorString(int result);
const char* ncclGetErrorString(int result) {
  return result == 4 ? "invalid argument (fake)" : "error (fake)";
}

int ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist);
int ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  char line[64];
  snprintf(line, sizeof line, "init(%d);", ndev);
  append(line);
  for (int i = 0; i < ndev; ++i) comms[i] = (ncclComm_t)(size_t)(0x100 + devlist[i]);
  return 0;
}
int ncclCommDestroy(ncclComm_t comm);
int ncclCommDestroy(ncclComm_t comm) {
  char line[64];
  snprintf(line, sizeof line, "destroy(%zx);", (size_t)comm);
  append(line);
  return 0;
}
int ncclGetUniqueId(ncclUniqueId* id);
int ncclGetUniqueId(ncclUniqueId* id) {
  append("uniqueid;");
  for (int i = 0; i < 128; ++i) id->internal[i] = (char)(i ^ 0x5a);
  return 0;
}
/* The id by value: its first and last bytes in the log show it arrived whole. */
int ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank);
int ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  char line[96];
  snprintf(line, sizeof line, "initrank(%d,%d,%02x%02x..%02x%02x);", rank, nranks,
           (unsigned char)id.internal[0], (unsigned char)id.internal[1], (unsigned char)id.internal[126],
           (unsigned char)id.internal[127]);
  append(line);
  if (nranks == 13) return 4;
  *comm = (ncclComm_t)(size_t)(0x200 + rank);
  return 0;
}
int ncclCommGetAsyncError(ncclComm_t comm, int* result);
int ncclCommGetAsyncError(ncclComm_t comm, int* result) {
  *result = (size_t)comm == 0x666 ? 6 : 0;
  return 0;
}
int ncclCommAbort(ncclComm_t comm);
int ncclCommAbort(ncclComm_t comm) {
  char line[64];
  snprintf(line, sizeof line, "abort(%zx);", (size_t)comm);
  append(line);
  return 0;
}
int ncclGroupStart(void);
int ncclGroupStart(void) {
  append("start;");
  return 0;
}
int ncclGroupEnd(void);
int ncclGroupEnd(void) {
  append("end;");
  return 0;
}

static int call(const char* name, const void* send, void* recv, size_t count, int type, int op_or_root,
                ncclComm_t comm, void* stream) {
  char line[160];
  snprintf(line, sizeof line, "%s(%zx,%zx,%zu,%d,%d,%zx,%zx);", name, (size_t)send, (size_t)recv, count, type,
           op_or_root, (size_t)comm, (size_t)stream);
  append(line);
  return count == 13 ? 4 : 0;
}

int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, ncclComm_t comm,
                  void* stream);
int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, ncclComm_t comm,
                  void* stream) {
  return call("allreduce", send, recv, count, type, op, comm, stream);
}
int ncclAllGather(const void* send, void* recv, size_t count, int type, ncclComm_t comm, void* stream);
int ncclAllGather(const void* send, void* recv, size_t count, int type, ncclComm_t comm, void* stream) {
  return call("allgather", send, recv, count, type, 0, comm, stream);
}
int ncclBroadcast(const void* send, void* recv, size_t count, int type, int root, ncclComm_t comm,
                  void* stream);
int ncclBroadcast(const void* send, void* recv, size_t count, int type, int root, ncclComm_t comm,
                  void* stream) {
  return call("broadcast", send, recv, count, type, root, comm, stream);
}
