/*
 * tinygrad.cpp device plugin ABI, major version 1.
 *
 * The one header shared by the core (the "host") and device plugins. Plain C99, no C++ types.
 * docs/abi.md is the reference; every rule below is also stated there.
 *
 * Rules that keep this ABI stable:
 *  - A plugin exports exactly one symbol, tg_plugin_query_v1 (the major version is in the name),
 *    returning its function table or NULL when it cannot serve the given host.
 *  - Every table and argument struct starts with `struct_size` (sizeof as the writer compiled it).
 *    Structs and tables are append-only within a major version. A field or function pointer that
 *    lies beyond the reader's view of struct_size, or a function pointer that is NULL, is "absent".
 *    Minor versions only append; anything else is a new major version and a new entry symbol.
 *    Exception: tg_buffer_arg and tg_scalar_arg are array elements, so they have no struct_size
 *    and are frozen for the whole major version.
 *  - All handles are opaque. Fixed-width integers only; enums are int32_t plus #defines so their
 *    size never depends on the compiler.
 *  - Functions that can fail return tg_error* (NULL = success). The error is owned by the caller
 *    and released with api->error_destroy. A plugin never aborts, exits or lets a C++ exception
 *    escape. Out of memory is always TG_ERROR_RESOURCE_EXHAUSTED so the host may free and retry.
 *  - Thread safety (the one statement of it; docs/abi.md section 3 restates it):
 *     - The HOST serializes every call that takes one device: device_properties,
 *       device_attribute_count/device_attribute, buffer_alloc/buffer_free, the three copies,
 *       program_load/program_free, launch (timed or not) and synchronize, for a device and its
 *       buffers and programs. Calls may come from any thread, but never two at once on one
 *       device, so a plugin needs no lock for per-device state.
 *     - Calls on different devices may run concurrently: state shared between a plugin's devices
 *       (globals, a driver context, a thread pool) is the plugin's to lock.
 *       launch_batch (1.1) counts as one call on its device.
 *       buffer_address and buffer_import (1.3) count as calls on the buffer's device too.
 *       comm_init, comm_destroy and a collective on a comm (1.6) count as calls on the comm's
 *       device; comm_unique_id takes none.
 *     - peer_copy and collective (1.2) take several devices of the plugin: the host holds the
 *       call lock of every device they name (taken in one fixed order, so two such calls never
 *       deadlock), so they count as one call on each of those devices.
 *     - device_count, device_open, compile, compile_result_get/_destroy, compile_cache_key and the
 *       error functions take no device: they must be thread-safe, callable concurrently with
 *       anything. device_close comes after every other call on that device has returned.
 *     - The host never frees an object while another call uses it.
 *  - Strings from the plugin: the host forces the last byte of every char array it receives
 *    (tg_device_properties name, vendor, arch) to NUL, and reads a `const char*` only up to a
 *    bound, cutting longer text: 127 bytes for plugin_name and plugin_version, 4095 for
 *    build_info, error_message, attribute keys and values and the cache key, 1 MiB - 1 for
 *    error_log and compile output (source, log). A negative device_count is an error.
 */
#ifndef TG_ABI_H
#define TG_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_ABI_VERSION_MAJOR 1
#define TG_ABI_VERSION_MINOR 6

/* The entry symbol, spelled out so the host can look it up by name. */
#define TG_PLUGIN_QUERY_SYMBOL "tg_plugin_query_v1"

#if defined(_WIN32)
#define TG_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TG_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef int32_t tg_error_code;
#define TG_OK 0
#define TG_ERROR_INVALID_ARGUMENT 1    /* the caller passed something wrong; nothing changed */
#define TG_ERROR_NOT_FOUND 2           /* no such device, attribute or symbol */
#define TG_ERROR_RESOURCE_EXHAUSTED 3  /* out of device or host memory; retry after freeing */
#define TG_ERROR_UNIMPLEMENTED 4       /* this plugin does not support the request (normal) */
#define TG_ERROR_UNAVAILABLE 5         /* plugin is fine, but its hardware/driver is absent here */
#define TG_ERROR_FAILED_PRECONDITION 6 /* object in the wrong state (e.g. closed device) */
#define TG_ERROR_DEADLINE_EXCEEDED 7   /* a wait timed out */
#define TG_ERROR_INTERNAL 8            /* a bug or an unexpected failure inside the plugin */

/* Opaque error object allocated by the plugin. Read it with api->error_code/_message/_log,
 * release it with api->error_destroy (exactly once). */
typedef struct tg_error tg_error;

/* ------------------------------------------------------------------------------------------ */
/* Data types (stable codes; also used by the kernel IR)                                       */
/* ------------------------------------------------------------------------------------------ */

typedef int32_t tg_dtype;
#define TG_DTYPE_VOID 0
#define TG_DTYPE_BOOL 1
#define TG_DTYPE_INT8 2
#define TG_DTYPE_UINT8 3
#define TG_DTYPE_INT16 4
#define TG_DTYPE_UINT16 5
#define TG_DTYPE_INT32 6
#define TG_DTYPE_UINT32 7
#define TG_DTYPE_INT64 8
#define TG_DTYPE_UINT64 9
#define TG_DTYPE_FLOAT16 10
#define TG_DTYPE_BFLOAT16 11
#define TG_DTYPE_FLOAT32 12
#define TG_DTYPE_FLOAT64 13
#define TG_DTYPE_COUNT 14

/* Bit for a dtype in tg_device_properties.dtype_mask. */
#define TG_DTYPE_BIT(d) (UINT64_C(1) << (d))

/* ------------------------------------------------------------------------------------------ */
/* Kernel IR: the linearized kernel that crosses the ABI (serialized, little-endian)           */
/* ------------------------------------------------------------------------------------------ */
/*
 * Layout (docs/abi.md has the full description):
 *   header:  char magic[4] = "TGIR"; uint16 version_major; uint16 version_minor;
 *            uint32 instruction_count; uint32 name_length; name bytes (no NUL), zero padded
 *            to a multiple of 4.
 *   then instruction_count records, each:
 *            uint16 op; uint8 dtype; uint8 flags; uint16 vcount; uint16 src_count;
 *            int64 arg0; int64 arg1; uint32 src[src_count]
 * Instruction i may only name sources j < i. The value of an instruction is its result; ops
 * without a result (STORE, ENDRANGE, ...) have dtype VOID. vcount > 1 makes a vector value.
 */
#define TG_IR_MAGIC "TGIR"
#define TG_IR_VERSION_MAJOR 1
#define TG_IR_VERSION_MINOR 0
/* IR 1.1 appends TG_OP_WMMA. A program that uses it says 1.1 in its header; one that does not
 * is written as 1.0, byte for byte what a 1.0 host wrote. */
#define TG_IR_VERSION_MINOR_WMMA 1
/* IR 1.2 appends TG_OP_WGMMA. A program that uses it says 1.2; one that does not is written as
 * 1.1 (with WMMA) or 1.0, byte for byte as before. */
#define TG_IR_VERSION_MINOR_WGMMA 2
/* IR 1.3 appends TG_OP_MMA (a matrix unit the device declares, ABI 1.4). A program that uses it
 * says 1.3; one that does not is written as before. */
#define TG_IR_VERSION_MINOR_MMA 3
/* IR 1.4: a gated LOAD's gate may be a bool vector of the load's lanes (lane k reads memory only
 * where gate lane k is true). A program with such a load says 1.4; the host emits one only for a
 * device whose attribute lane_gates is "load". */
#define TG_IR_VERSION_MINOR_LANE_GATES 4

/* Instruction flags. */
#define TG_IR_FLAG_POINTER 0x01u /* the value is a pointer to dtype elements */
#define TG_IR_FLAG_LOCAL 0x02u   /* pointer into work-group local memory */

/* SPECIAL kinds (arg0); arg1 is the axis 0..2. */
#define TG_SPECIAL_GROUP_ID 0 /* work-group index along the axis, 0 <= id < global_size[axis] */
#define TG_SPECIAL_LOCAL_ID 1 /* index inside the work group, 0 <= id < local_size[axis] */

typedef int32_t tg_op;
/* definitions */
#define TG_OP_DEFINE_GLOBAL 1 /* arg0 = buffer argument index; POINTER flag; dtype = element type */
#define TG_OP_DEFINE_VAR 2    /* arg0 = scalar argument index; dtype = the scalar's type */
#define TG_OP_DEFINE_LOCAL 3  /* arg0 = element count; POINTER|LOCAL flags */
#define TG_OP_DEFINE_ACC 4    /* src0 = initial value; a mutable register read by naming it */
#define TG_OP_SPECIAL 5       /* arg0 = TG_SPECIAL_*, arg1 = axis; dtype INT32 */
#define TG_OP_CONST 6         /* arg0 = value: int64 for ints/bool, IEEE double bits for floats */
/* control flow */
#define TG_OP_RANGE 10    /* src0 = start, src1 = end (exclusive); integer loop counter */
#define TG_OP_ENDRANGE 11 /* src0 = the RANGE it closes */
#define TG_OP_IF 12       /* src0 = BOOL condition */
#define TG_OP_ENDIF 13    /* src0 = the IF it closes */
#define TG_OP_BARRIER 14  /* work-group barrier with local memory fence */
/* memory */
#define TG_OP_INDEX 20 /* src0 = DEFINE_GLOBAL/LOCAL, src1 = element index -> pointer */
#define TG_OP_LOAD                                                                                           \
  21                    /* src0 = INDEX [, src1 = BOOL gate, src2 = value when gate is false];               \
                           a false gate reads no memory; vcount > 1 reads consecutive elements */
#define TG_OP_STORE 22  /* src0 = INDEX, src1 = value [, src2 = BOOL gate] */
#define TG_OP_ASSIGN 23 /* src0 = DEFINE_ACC, src1 = new value; result is the new value */
/* vectors and conversions */
#define TG_OP_VECTORIZE 30 /* srcs = lanes (vcount of them) */
#define TG_OP_GEP 31       /* src0 = vector, arg0 = lane */
#define TG_OP_CAST 32      /* value conversion to dtype (float->int truncates toward zero) */
#define TG_OP_BITCAST 33   /* reinterpret bits; same size */
/* unary ALU */
#define TG_OP_NEG 40
#define TG_OP_RECIP 41
#define TG_OP_SQRT 42
#define TG_OP_EXP2 43
#define TG_OP_LOG2 44
#define TG_OP_SIN 45
#define TG_OP_TRUNC 46
/* binary ALU (both sources have the result's dtype, except comparisons: result BOOL).
 * Results the host never relies on, so plugins may differ: integer IDIV/MOD by zero or of
 * INT_MIN by -1 (the host guards these), shifts by >= the bit width, MAX when an operand is NaN. */
#define TG_OP_ADD 50
#define TG_OP_SUB 51
#define TG_OP_MUL 52
#define TG_OP_IDIV 53 /* integer division truncating toward zero (C semantics) */
#define TG_OP_FDIV 54 /* float division */
#define TG_OP_MOD 55  /* integer remainder with the sign of the dividend (C semantics) */
#define TG_OP_MAX 56
#define TG_OP_CMPLT 57
#define TG_OP_CMPNE 58
#define TG_OP_CMPEQ 59
#define TG_OP_AND 60
#define TG_OP_OR 61
#define TG_OP_XOR 62
#define TG_OP_SHL 63
#define TG_OP_SHR 64
/* ternary ALU */
#define TG_OP_WHERE 70  /* src0 = BOOL cond, src1 = if true, src2 = if false */
#define TG_OP_MULACC 71 /* src0 * src1 + src2 */
/* matrix unit (IR 1.1; only for a device with TG_FEATURE_TENSOR_CORES): one warp-wide
 * D = A * B + C. arg0 = TG_WMMA_* shape; src0 = this lane's A fragment, src1 = its B fragment,
 * src2 = its C fragment (the result's dtype and lanes); the per-lane layout is in docs/abi.md. */
#define TG_OP_WMMA 72

/* WMMA shapes (arg0). M16N8K16: a warp of 32 lanes; A 16x16 and B 16x8 of FLOAT16 or BFLOAT16
 * (8 and 4 lanes per lane), C/D 16x8 FLOAT32 (4 lanes per lane). */
#define TG_WMMA_M16N8K16 1

/* warpgroup matrix unit (IR 1.2; only for a device with TG_FEATURE_TENSOR_CORES that names the
 * shape with "@wg" in its tensor_cores attribute): one D = A * B + C computed by a warpgroup of
 * 128 consecutive work items (4 warps, starting at a local id that is a multiple of 128).
 * src0 = A, src1 = B: INDEXes into one DEFINE_LOCAL of FLOAT16 or BFLOAT16 (16-byte aligned), the
 * tiles laid out as 8-row x 16-byte core matrices; src2 = this item's C (FLOAT32, N/2 lanes).
 * arg0 = TG_WGMMA_* shape; arg1 = the tiles' byte strides, 16 bits each (multiples of 16):
 * bits 0-15 A between core matrices along k, 16-31 A along m, 32-47 B along k, 48-63 B along n.
 * The element layout and the per-item lanes of C/D are in docs/abi.md. */
#define TG_OP_WGMMA 73

/* WGMMA shapes (arg0): m64nNk16, A 64x16 and B 16xN of FLOAT16 or BFLOAT16 in local memory,
 * C/D 64xN FLOAT32 (N/2 lanes per work item). */
#define TG_WGMMA_M64N64K16 1
#define TG_WGMMA_M64N128K16 2
#define TG_WGMMA_M64N256K16 3

/* matrix unit the device declares (IR 1.3, ABI 1.4; see tg_matrix_unit): D = A * B + C by the
 * unit's 2^item_bits cooperating work items. arg0 = the unit's index in the declaring device's
 * list (device_matrix_unit; a compile target always lists the same units); src0 = this item's A
 * elements (a_dtype, 2^a.element_bits lanes), src1 = its B elements, src2 = its C elements (the
 * result's dtype and lanes, c_dtype, 2^c.element_bits). Lane e of the result is this item's D
 * element e in the unit's C layout. */
#define TG_OP_MMA 74
/* MMA of a unit with TG_MATRIX_SOURCE_LOCAL (ABI 1.5): src0 = A and src1 = B are INDEXes into
 * DEFINE_LOCALs of a_dtype and b_dtype, each naming the element at its operand's position (0, 0);
 * src2 = this item's C elements as above. arg0 = the unit's index OR'ed with TG_MMA_* flags (bits
 * 32 and up); arg1 = the atom strides in elements, 16 bits each: bits 0-15 A between atoms along
 * its rows (m), 16-31 along its columns (k), 32-47 B along its rows (k), 48-63 along its columns
 * (n). The unit reads its operand's position (r, c) at element
 *   (s XOR atom_offset(r mod R, c mod C)) + (r / R) * row_stride + (c / C) * col_stride,
 * s the INDEX, R x C the operand's atom and atom_offset the inverse of its map (tg_matrix_atom). */
/* The reads of A and B may complete as late as the work group's first BARRIER after the same items
 * start a later run of MMAs (MMAs with only index arithmetic between them) or leave the innermost
 * RANGE around the op; nothing may store to those elements until then. Only inside a RANGE. */
#define TG_MMA_DEFER_READS ((int64_t)1 << 32)

/* ------------------------------------------------------------------------------------------ */
/* Host description, handed to the plugin's query function                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct tg_host_info {
  size_t struct_size;
  uint32_t abi_major;    /* TG_ABI_VERSION_MAJOR the host was built with */
  uint32_t abi_minor;    /* TG_ABI_VERSION_MINOR the host was built with */
  const char* host_name; /* e.g. "tinygrad.cpp 0.1.0"; static, never NULL */
} tg_host_info;

/* ------------------------------------------------------------------------------------------ */
/* Devices                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct tg_device tg_device;
typedef struct tg_buffer tg_buffer;
typedef struct tg_program tg_program;
typedef struct tg_compile_result tg_compile_result;
typedef struct tg_comm tg_comm; /* since 1.6: this process's rank of a communicator */

/* Feature flags in tg_device_properties.features. */
#define TG_FEATURE_LOCAL_MEMORY (UINT64_C(1) << 0) /* DEFINE_LOCAL supported */
#define TG_FEATURE_BARRIER (UINT64_C(1) << 1)      /* BARRIER supported */
#define TG_FEATURE_TIMING (UINT64_C(1) << 2)       /* launch can measure elapsed time */
#define TG_FEATURE_HOST_MEMORY (UINT64_C(1) << 3)  /* buffers live in host memory */
#define TG_FEATURE_FP16_MATH (UINT64_C(1) << 4)    /* native half arithmetic (not only storage) */
#define TG_FEATURE_TENSOR_CORES (UINT64_C(1) << 5) /* matrix units (see attributes) */
#define TG_FEATURE_SUBGROUPS (UINT64_C(1) << 6)
#define TG_FEATURE_ASYNC (UINT64_C(1) << 7) /* launches/copies may be queued; see synchronize */

#define TG_NAME_MAX 128

typedef struct tg_device_properties {
  size_t struct_size;
  char name[TG_NAME_MAX];   /* NUL-terminated, e.g. "AMD EPYC 7B13 (8 threads)" */
  char vendor[TG_NAME_MAX]; /* NUL-terminated */
  char arch[TG_NAME_MAX];   /* compile target understood by compile(), e.g. "x86_64-znver3" */
  uint64_t memory_bytes;    /* total memory usable for buffers */
  uint64_t max_buffer_bytes;
  uint64_t local_memory_bytes; /* shared/local memory per work group, 0 if none */
  uint32_t max_local_size[3];  /* per axis */
  uint32_t max_local_threads;  /* product of local sizes */
  uint32_t max_global_size[3]; /* work groups per axis */
  uint32_t max_buffer_args;
  uint32_t max_scalar_args;
  uint32_t buffer_alignment; /* bytes; every buffer base is aligned to at least this */
  uint32_t compute_units;
  uint32_t subgroup_size; /* SIMD/warp width in threads, 1 if none */
  uint32_t vector_bytes;  /* preferred vector register width in bytes (upcast hint) */
  uint32_t reserved0;
  uint64_t dtype_mask; /* TG_DTYPE_BIT(d) for every dtype the device computes with */
  uint64_t features;   /* TG_FEATURE_* */
} tg_device_properties;

typedef struct tg_device_open_args {
  size_t struct_size;
  int32_t index; /* 0 <= index < device_count */
  int32_t reserved0;
} tg_device_open_args;

/* ------------------------------------------------------------------------------------------ */
/* Buffers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define TG_BUFFER_HOST_VISIBLE (1u << 0) /* hint: will be read by the host often */

typedef struct tg_buffer_alloc_args {
  size_t struct_size;
  uint64_t size;      /* bytes; 0 is valid and gives a buffer that holds nothing */
  uint64_t alignment; /* 0 = device default; otherwise a power of two */
  uint32_t flags;     /* TG_BUFFER_* */
  uint32_t reserved0;
} tg_buffer_alloc_args;

/* ------------------------------------------------------------------------------------------ */
/* Compilation                                                                                 */
/* ------------------------------------------------------------------------------------------ */

#define TG_COMPILE_WANT_SOURCE (1u << 0) /* also return rendered source text (DEBUG=3) */

typedef struct tg_compile_args {
  size_t struct_size;
  const void* ir; /* serialized kernel IR */
  size_t ir_size;
  const char* target; /* a device's properties.arch, or NULL for the plugin's default */
  uint32_t flags;     /* TG_COMPILE_* */
  uint32_t opt_level; /* 0 = none .. 3 = aggressive; plugins default to their usual level at 2 */
} tg_compile_args;

/* Views into a tg_compile_result; pointers valid until compile_result_destroy. */
typedef struct tg_compile_output {
  size_t struct_size;
  const void* binary; /* the blob program_load takes */
  size_t binary_size;
  const char* source; /* rendered source, NUL-terminated, or NULL if not requested/available */
  const char* log;    /* compiler messages, NUL-terminated, may be empty, never NULL */
} tg_compile_output;

/* ------------------------------------------------------------------------------------------ */
/* Launch                                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct tg_buffer_arg {
  tg_buffer* buffer;
  uint64_t offset; /* bytes from the buffer's start; must keep the element type's alignment */
} tg_buffer_arg;

typedef struct tg_scalar_arg {
  tg_dtype dtype; /* must equal the DEFINE_VAR's dtype */
  int32_t reserved0;
  union {
    int64_t i;  /* BOOL and signed integers */
    uint64_t u; /* unsigned integers */
    double f;   /* floats of every width */
  } value;
} tg_scalar_arg;

typedef struct tg_launch_args {
  size_t struct_size;
  tg_program* program;
  uint32_t global_size[3]; /* number of work groups per axis; 0 on any axis = nothing to run */
  uint32_t local_size[3];  /* work-group shape; each >= 1 */
  const tg_buffer_arg* buffers;
  uint32_t buffer_count; /* must equal the program's DEFINE_GLOBAL count */
  uint32_t scalar_count; /* must equal the program's DEFINE_VAR count */
  const tg_scalar_arg* scalars;
  uint64_t* elapsed_ns; /* if not NULL: the launch completes before returning and the kernel's
                           execution time is written here; without TG_FEATURE_TIMING the launch
                           fails with UNIMPLEMENTED and runs nothing */
} tg_launch_args;

/* Since 1.1: a command list, N launches on one device run in order by one call (a JIT replays a
 * captured step this way; a GPU plugin may map it to a graph). Every launch is validated before
 * any runs: one bad launch -> INVALID_ARGUMENT naming its index, nothing runs. Each launch's own
 * elapsed_ns must be NULL; the list's total time goes to elapsed_ns (TG_FEATURE_TIMING rules as
 * for launch). Launches are pointers, so tg_launch_args may keep growing within the major. */
typedef struct tg_launch_batch_args {
  size_t struct_size;
  tg_device* device;                     /* every launch's program belongs to it */
  const tg_launch_args* const* launches; /* launch_count pointers, none NULL */
  uint32_t launch_count;                 /* 0 runs nothing */
  uint32_t reserved0;
  uint64_t* elapsed_ns; /* if not NULL: all launches complete before returning; total time */
} tg_launch_batch_args;

/* ------------------------------------------------------------------------------------------ */
/* Several devices of one plugin (since 1.2)                                                   */
/* ------------------------------------------------------------------------------------------ */
/*
 * Ordering: a peer copy or collective runs after all work queued before it on each device it
 * names, and work queued after it on any of those devices sees its result (as if it were a
 * launch on every one of them). With TG_FEATURE_ASYNC it may return before it completes;
 * synchronize on a device waits for it there.
 */

/* Copies size bytes from src (on one device) to dst (on another device of the same plugin, or the
 * same device). Ranges outside either buffer -> INVALID_ARGUMENT. */
typedef struct tg_peer_copy_args {
  size_t struct_size;
  tg_buffer* dst;
  uint64_t dst_offset;
  tg_buffer* src;
  uint64_t src_offset;
  uint64_t size; /* bytes; 0 copies nothing */
} tg_peer_copy_args;

/* Collective operations (tg_collective_args.op). */
#define TG_COLLECTIVE_ALL_REDUCE 0 /* outputs[i] = reduce over j of inputs[j] (count elements) */
#define TG_COLLECTIVE_ALL_GATHER 1 /* outputs[i] = inputs[0] ++ ... ++ inputs[n-1] (n * count) */
#define TG_COLLECTIVE_BROADCAST 2  /* outputs[i] = inputs[root]; other inputs are not read */
/* Reductions (tg_collective_args.reduce, ALL_REDUCE only). Integer sums wrap; for BOOL both are
 * logical OR; float sums may combine the ranks in any order. */
#define TG_REDUCE_SUM 0
#define TG_REDUCE_MAX 1

/* A group is devices[0..device_count): distinct devices of this plugin, opened by the caller; a
 * device's place in the array is its rank. inputs[i] and outputs[i] are on devices[i]; an output
 * may be its input (same buffer and offset: in place; for ALL_GATHER the input must then be the
 * output's rank-th part). Every range must lie in its buffer; offsets are multiples of the
 * element size. The plugin may keep per-group state (a communicator) keyed by the devices. A
 * group, op, reduce or dtype the plugin cannot serve -> UNIMPLEMENTED (or UNAVAILABLE when a
 * library it needs is missing); the host then falls back to copies through host memory. */
typedef struct tg_collective_args {
  size_t struct_size;
  int32_t op;            /* TG_COLLECTIVE_* */
  int32_t reduce;        /* TG_REDUCE_* (ALL_REDUCE), else 0 */
  tg_dtype dtype;        /* element type; not VOID */
  int32_t root;          /* BROADCAST: the rank whose input is sent, 0 <= root < device_count */
  uint64_t count;        /* elements of each input; 0 runs nothing */
  uint32_t device_count; /* >= 1 */
  uint32_t reserved0;
  tg_device* const* devices;    /* device_count devices */
  const tg_buffer_arg* inputs;  /* device_count entries */
  const tg_buffer_arg* outputs; /* device_count entries */
  /* Since 1.6. NULL: the group above (devices of this process). Not NULL: a collective across
   * processes over the ranks of `comm` (comm_init); then device_count is 1, devices[0] is the
   * comm's device, inputs[0]/outputs[0] this rank's buffers, root a rank of the comm, and an
   * ALL_GATHER output holds size * count elements (in place: the input is the rank-th part).
   * Every rank makes the same calls in the same order; the call returns (or, with
   * TG_FEATURE_ASYNC, is queued) once this rank's part is done. A rank that does not join within
   * the comm's timeout -> DEADLINE_EXCEEDED. A plugin hands out comms only when it reads this
   * field, so an older plugin never receives one. */
  tg_comm* comm;
} tg_collective_args;

/* ------------------------------------------------------------------------------------------ */
/* Ranks in several processes (since 1.6)                                                       */
/* ------------------------------------------------------------------------------------------ */
/*
 * One process per device, each a rank of a communicator, on one host or several (a launcher
 * such as mpirun starts them). Rank 0 makes an id (comm_unique_id), the host sends its bytes to
 * every rank by its own means (MPI, a TCP rendezvous), and every rank calls comm_init with them.
 * A plugin's id says how its ranks meet (NCCL's id holds rank 0's address; an MPI plugin's id
 * names MPI_COMM_WORLD, which the process must have initialized before comm_init).
 */
#define TG_COMM_ID_BYTES 128

typedef struct tg_comm_init_args {
  size_t struct_size;
  tg_device* device;            /* this rank's device, opened by the caller */
  int32_t rank;                 /* 0 <= rank < size */
  int32_t size;                 /* >= 1 ranks in all */
  uint64_t timeout_ms;          /* init or a collective that waits longer for the other ranks fails with
                                   DEADLINE_EXCEEDED; 0 = wait without limit */
  uint8_t id[TG_COMM_ID_BYTES]; /* rank 0's comm_unique_id, the same bytes on every rank */
} tg_comm_init_args;

/* ------------------------------------------------------------------------------------------ */
/* Memory shared with other libraries (since 1.3)                                              */
/* ------------------------------------------------------------------------------------------ */
/*
 * An address means a host pointer on a device with TG_FEATURE_HOST_MEMORY, else the device's
 * native address (a CUdeviceptr on CUDA). The host reads or writes memory through an address
 * only after synchronize on the device and never while a launch may use the buffer.
 */

/* Wraps memory the caller owns as a buffer, without copying (buffer_import). buffer_free on that
 * buffer frees none of the memory and calls release(release_context) once, if release is not
 * NULL. An import that fails never calls release: the caller keeps the memory. */
typedef struct tg_buffer_import_args {
  size_t struct_size;
  uint64_t address;               /* aligned to the device's buffer_alignment; 0 only with size 0 */
  uint64_t size;                  /* bytes; 0 gives a buffer that holds nothing */
  void (*release)(void* context); /* may be NULL; called once, from buffer_free */
  void* release_context;
} tg_buffer_import_args;

/* ------------------------------------------------------------------------------------------ */
/* Matrix units (since 1.4)                                                                    */
/* ------------------------------------------------------------------------------------------ */
/*
 * A matrix unit computes D = A * B + C with A m x k, B k x n, C and D m x n, by 2^item_bits work
 * items: consecutive local ids along axis 0, the first a multiple of 2^item_bits, that all reach
 * the MMA together. Each item passes its elements of A, B and C as vector values and gets its
 * elements of D, laid out as C. The layouts are data: element e of work item t holds the matrix
 * position (row, col) with
 *   row = XOR of item_row[b] over the set bits b of t, XOR element_row[b] over the set bits of e
 *   col = the same with item_col and element_col
 * (a linear map over the bits; for distinct powers of two the XOR is their sum, and overlapping
 * entries express swizzles). A: row = m index, col = k; B: row = k, col = n; C/D: row = m, col = n.
 * Entries at bits >= item_bits or >= element_bits are 0. Every C/D position is held exactly once;
 * every A and B position at least once (an element held by several items is passed equal by all
 * of them; the unit may read any copy). m, n and k are powers of two up to 256. For float c_dtype
 * the products and the sum are at least as precise as c_dtype, in any order; integers are exact
 * (wrapping in c_dtype).
 */
#define TG_MATRIX_MAX_BITS 8
/* tg_matrix_unit.operand_source: where A and B come from. 1.4 defines only registers (the vector
 * values above); other values are reserved and a host that does not know them skips the unit. */
#define TG_MATRIX_SOURCE_REGISTERS 0
/* 1.5: A and B are read by the unit from local memory (MMA's local form, above); a and b are then
 * unused (zero) and a_atom, b_atom say how their tiles lie in local memory. */
#define TG_MATRIX_SOURCE_LOCAL 1
#define TG_MATRIX_ATOM_MAX_BITS 16

/* An atom: 2^offset_bits consecutive elements of local memory, starting at a multiple of that
 * count, that hold an R x C block of an operand (A: rows m, columns k; B: rows k, columns n).
 * Element o of the atom holds the position (row, col) = XOR of row[b], col[b] over the set bits b
 * of o: a bijection onto [0, R) x [0, C), R and C powers of two (overlapping entries express a
 * swizzle). A tile is made of atoms at the strides MMA's arg1 names; the plugin aligns each
 * DEFINE_LOCAL that MMA reads to its largest atom, in bytes. */
typedef struct tg_matrix_atom {
  uint32_t offset_bits; /* 0..TG_MATRIX_ATOM_MAX_BITS */
  uint32_t reserved0;
  uint16_t row[TG_MATRIX_ATOM_MAX_BITS];
  uint16_t col[TG_MATRIX_ATOM_MAX_BITS];
} tg_matrix_atom;

typedef struct tg_matrix_layout {
  uint32_t element_bits; /* log2 of the elements (vector lanes) each work item holds */
  uint32_t reserved0;
  uint16_t item_row[TG_MATRIX_MAX_BITS];
  uint16_t item_col[TG_MATRIX_MAX_BITS];
  uint16_t element_row[TG_MATRIX_MAX_BITS];
  uint16_t element_col[TG_MATRIX_MAX_BITS];
} tg_matrix_layout;

typedef struct tg_matrix_unit {
  size_t struct_size;
  char name[32];           /* NUL-terminated, for messages and DEBUG output, e.g. "mma.m16n8k16.f16" */
  uint32_t m, n, k;        /* powers of two, 1..256 */
  uint32_t item_bits;      /* log2 of the cooperating work items, 0..TG_MATRIX_MAX_BITS */
  tg_dtype a_dtype;        /* A's elements */
  tg_dtype b_dtype;        /* B's elements */
  tg_dtype c_dtype;        /* C's and D's elements */
  uint32_t operand_source; /* TG_MATRIX_SOURCE_* */
  tg_matrix_layout a, b, c;
  /* --- 1.5 --- */
  tg_matrix_atom a_atom, b_atom; /* TG_MATRIX_SOURCE_LOCAL: A's and B's atoms; else zero */
} tg_matrix_unit;

/* ------------------------------------------------------------------------------------------ */
/* The function table                                                                          */
/* ------------------------------------------------------------------------------------------ */

typedef struct tg_plugin_api {
  size_t struct_size;
  uint32_t abi_major;         /* must be TG_ABI_VERSION_MAJOR */
  uint32_t abi_minor;         /* the minor version the plugin was built with */
  const char* plugin_name;    /* short name, e.g. "cpu"; static */
  const char* plugin_version; /* static */
  const char* build_info;     /* static: compiler, library versions, build type */

  /* --- errors (never NULL) --- */
  tg_error_code (*error_code)(const tg_error* error);
  /* Message naming the failing call and cause. Owned by the error. */
  const char* (*error_message)(const tg_error* error);
  /* Compiler or driver log, or "" . Owned by the error. */
  const char* (*error_log)(const tg_error* error);
  void (*error_destroy)(tg_error* error);

  /* --- devices --- */
  /* Number of devices (>= 0; a negative count is an error on the host). No hardware ->
   * TG_ERROR_UNAVAILABLE with a message saying what is missing. */
  tg_error* (*device_count)(int32_t* out_count);
  /* Opens device args->index. The device lives until device_close; close each opened device
   * once, after freeing its buffers and programs. */
  tg_error* (*device_open)(const tg_device_open_args* args, tg_device** out_device);
  void (*device_close)(tg_device* device);
  /* Fills *out up to min(out->struct_size, the plugin's size); the caller sets out->struct_size. */
  tg_error* (*device_properties)(tg_device* device, tg_device_properties* out);
  /* Extra key/value attributes. Strings are owned by the device, valid until device_close.
   * index out of range -> TG_ERROR_NOT_FOUND. */
  tg_error* (*device_attribute_count)(tg_device* device, int32_t* out_count);
  tg_error* (*device_attribute)(tg_device* device, int32_t index, const char** out_key,
                                const char** out_value);

  /* --- buffers --- */
  tg_error* (*buffer_alloc)(tg_device* device, const tg_buffer_alloc_args* args, tg_buffer** out_buffer);
  void (*buffer_free)(tg_buffer* buffer);
  /* Copies are complete when they return (host memory may be reused at once).
   * Any range outside the buffer -> TG_ERROR_INVALID_ARGUMENT. */
  tg_error* (*buffer_copy_from_host)(tg_buffer* dst, uint64_t dst_offset, const void* src, uint64_t size);
  tg_error* (*buffer_copy_to_host)(tg_buffer* src, uint64_t src_offset, void* dst, uint64_t size);
  /* Both buffers belong to the same device. */
  tg_error* (*buffer_copy)(tg_buffer* dst, uint64_t dst_offset, tg_buffer* src, uint64_t src_offset,
                           uint64_t size);

  /* --- compilation: needs no device, thread-safe --- */
  /* Malformed IR -> INVALID_ARGUMENT; an op or dtype the target lacks -> UNIMPLEMENTED; the log
   * travels in the error. On success *out_result is released with compile_result_destroy. */
  tg_error* (*compile)(const tg_compile_args* args, tg_compile_result** out_result);
  /* Fills *out (caller sets out->struct_size). */
  tg_error* (*compile_result_get)(const tg_compile_result* result, tg_compile_output* out);
  void (*compile_result_destroy)(tg_compile_result* result);
  /* A string that changes whenever the blobs compile() makes for `target` (NULL = default)
   * would change: compiler version, target, flags. Written NUL-terminated into buf; the full
   * length (without NUL) goes to *out_length, also when buf_size is too small, which fails with
   * INVALID_ARGUMENT. The host offers 256 bytes first and then retries once with *out_length + 1;
   * keys longer than 4095 bytes are an error. */
  tg_error* (*compile_cache_key)(const char* target, char* buf, size_t buf_size, size_t* out_length);

  /* --- programs --- */
  /* Validates the blob: truncated, corrupt or foreign -> INVALID_ARGUMENT. The blob is copied;
   * the caller may free it after the call. */
  tg_error* (*program_load)(tg_device* device, const void* binary, size_t binary_size,
                            tg_program** out_program);
  void (*program_free)(tg_program* program);
  /* Runs the program. Argument counts, dtypes, sizes or offsets that violate the program or the
   * device limits -> INVALID_ARGUMENT before anything runs. May return before the kernel finishes
   * when TG_FEATURE_ASYNC is set; use synchronize. */
  tg_error* (*launch)(const tg_launch_args* args);
  /* Waits for all work queued on the device. */
  tg_error* (*synchronize)(tg_device* device);

  /* --- 1.1 --- */
  /* Optional: runs args->launches in order (see tg_launch_batch_args). Absent (a 1.0 table, or
   * NULL): the host calls launch once per kernel. */
  tg_error* (*launch_batch)(const tg_launch_batch_args* args);

  /* --- 1.2 --- */
  /* Optional: copies between two devices of this plugin (see tg_peer_copy_args). Absent: the
   * host copies through host memory. */
  tg_error* (*peer_copy)(const tg_peer_copy_args* args);
  /* Optional: one collective over a group of this plugin's devices (see tg_collective_args).
   * Absent, or UNIMPLEMENTED/UNAVAILABLE for a call: the host runs it through host memory. */
  tg_error* (*collective)(const tg_collective_args* args);

  /* --- 1.3 --- */
  /* Optional: the buffer's base address (see "Memory shared with other libraries"), valid until
   * buffer_free. Absent, or UNIMPLEMENTED: the host copies instead. */
  tg_error* (*buffer_address)(tg_buffer* buffer, uint64_t* out_address);
  /* Optional: a buffer over memory the caller owns (see tg_buffer_import_args). An address not
   * aligned to buffer_alignment, or memory the device cannot reach -> INVALID_ARGUMENT. Absent,
   * or UNIMPLEMENTED: the host copies instead. */
  tg_error* (*buffer_import)(tg_device* device, const tg_buffer_import_args* args, tg_buffer** out_buffer);

  /* --- 1.4 --- */
  /* Optional: how many matrix units the device declares (see tg_matrix_unit). Absent: none
   * (a 1.2/1.3 plugin's TG_FEATURE_TENSOR_CORES keeps its meaning). */
  tg_error* (*device_matrix_unit_count)(tg_device* device, int32_t* out_count);
  /* Fills *out up to min(out->struct_size, the plugin's size) with unit `index`; index out of
   * range -> TG_ERROR_NOT_FOUND. MMA's arg0 names a unit by this index. */
  tg_error* (*device_matrix_unit)(tg_device* device, int32_t index, tg_matrix_unit* out);

  /* --- 1.6 --- */
  /* Optional, all three or none: communicators across processes (see tg_comm_init_args).
   * comm_unique_id takes no device and is thread-safe; rank 0 calls it once per communicator.
   * comm_init counts as a call on args->device and returns once every rank has joined (or the
   * timeout passed: DEADLINE_EXCEEDED); a launcher or library the plugin needs is missing ->
   * UNAVAILABLE or FAILED_PRECONDITION, saying what. comm_destroy comes before device_close of
   * the comm's device, after every collective on the comm has returned. */
  tg_error* (*comm_unique_id)(uint8_t* out_id, size_t id_size); /* id_size == TG_COMM_ID_BYTES */
  tg_error* (*comm_init)(const tg_comm_init_args* args, tg_comm** out_comm);
  void (*comm_destroy)(tg_comm* comm);
} tg_plugin_api;

/* The entry point. Returns the plugin's static function table, or NULL when the plugin cannot
 * serve this host (e.g. host->abi_minor too old for what it needs). Must be cheap and must not
 * touch hardware; device_count does that. May be called more than once. */
typedef const tg_plugin_api* (*tg_plugin_query_fn)(const tg_host_info* host);

/* ------------------------------------------------------------------------------------------ */
/* Layout guards (LP64). tests/abi checks every field offset against golden values.            */
/* ------------------------------------------------------------------------------------------ */
#if defined(__cplusplus)
#define TG_ABI_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define TG_ABI_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#define TG_ABI_CONCAT_(a, b) a##b
#define TG_ABI_CONCAT(a, b) TG_ABI_CONCAT_(a, b)
#define TG_ABI_STATIC_ASSERT(cond, msg)                                                                      \
  typedef char TG_ABI_CONCAT(tg_abi_static_assert_, __LINE__)[(cond) ? 1 : -1]
#endif

#if UINTPTR_MAX == UINT64_MAX
TG_ABI_STATIC_ASSERT(sizeof(tg_host_info) == 24, "tg_host_info layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_device_properties) == 488, "tg_device_properties layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_device_open_args) == 16, "tg_device_open_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_buffer_alloc_args) == 32, "tg_buffer_alloc_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_compile_args) == 40, "tg_compile_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_compile_output) == 40, "tg_compile_output layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_buffer_arg) == 16, "tg_buffer_arg layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_scalar_arg) == 16, "tg_scalar_arg layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_launch_args) == 72, "tg_launch_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_launch_batch_args) == 40, "tg_launch_batch_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_peer_copy_args) == 48, "tg_peer_copy_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_collective_args) == 72, "tg_collective_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_comm_init_args) == 160, "tg_comm_init_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_buffer_import_args) == 40, "tg_buffer_import_args layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_matrix_layout) == 72, "tg_matrix_layout layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_matrix_atom) == 72, "tg_matrix_atom layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_matrix_unit) == 432, "tg_matrix_unit layout");
TG_ABI_STATIC_ASSERT(sizeof(tg_plugin_api) == 40 + 33 * sizeof(void*), "tg_plugin_api: append only");
#endif

#ifdef __cplusplus
}
#endif

#endif /* TG_ABI_H */
