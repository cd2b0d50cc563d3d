/* A stand-in for libnccl.so.2 (tests/plugins/cuda/nccl_test.cpp), so the CUDA plugin's NCCL
 * loading and argument mapping run in CI without a GPU: each entry appends what it was called
 * with to a log the test reads through fake_nccl_log(). ncclCommInitAll hands out comms that
 * are the device numbers plus 0x100; a call with count 13 fails with ncclInvalidArgument (4). */
#include <stdio.h>
#include <string.h>

typedef struct ncclComm* ncclComm_t;

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
