// A kernel's optimizations as an explicit list of actions (after tinygrad's Opt): each splits one
// axis of the kernel and maps the new part to lanes, loop steps, work-group threads or padding.
// Lists come from the heuristic (heuristic.hpp), a caller, or later a search; lower_kernel checks
// each against the kernel and the device and refuses an invalid one with the reason (OptError).
#pragma once

#include "kernel/ir/errors.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tg {

// Axes are numbered over the kernel's output dims (0..ndim-1), then the reduced dims (of size other
// than 1) of its first reduce: axis ndim + j is the j-th of them.
enum class OptOp : uint8_t {
  UPCAST,   // output axis: `amount` adjacent outputs per work item, computed as lanes
  UNROLL,   // reduce axis: `amount` reduce steps per loop iteration, as lanes
  LOCAL,    // output axis: `amount` work items of one work group (LOCAL_ID), global part shrinks
  GROUP,    // reduce axis: `amount` threads of a work group share the reduce, interleaved
            // (thread t takes elements t, t+amount, ...), partials combined through local memory
  GROUPTOP, // like GROUP, thread t takes one contiguous block of the axis
  LOOP,     // output axis: `amount` outputs per work item as a serial loop (CPU work groups)
  PADTO,    // any axis: pad its size up to a multiple of `amount`; padded outputs are not
            // stored, padded reduce steps add the reduce's identity. First op on its axis.
  TC,       // reduce axis of a matmul-shaped sum of products: the device's matrix unit number
            // `amount` (its index in the units the device offers, DeviceLimits::matrix_units):
            // its work items (LOCAL_ID 0) compute m x n outputs, k reduce steps per matrix op.
            // The unit's A and B dtypes must be the operands'; the first opt. A unit that reads
            // A and B from local memory needs a STAGE of k after it.
  STAGE,    // reduce axis of a sum of products a * b: `amount` reduce steps per tile. Once per tile
            // the work group copies the slices of a and b its outputs need into local memory
            // (each thread a share), waits at a barrier, and reads the products' operands from
            // there. Needs local memory; with TC, UPCAST, LOCAL and other STAGEs only.
};

struct Opt {
  OptOp op;
  int axis = 0;
  int64_t amount = 0;
  bool operator==(const Opt&) const = default;
};

// An optimization that does not fit the kernel or the device; the message says which and why.
struct OptError : IRError {
  using IRError::IRError;
};

const char* opt_name(OptOp op);
std::string to_string(const Opt& o);                 // "LOCAL(0,16)"
std::string to_string(const std::vector<Opt>& opts); // "[LOCAL(0,16), UPCAST(1,4)]"
// Parses to_string's form of one list; throws OptError on malformed text.
std::vector<Opt> parse_opts(const std::string& text);

} // namespace tg
