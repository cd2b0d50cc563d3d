#pragma once
// VIZ's record of a program run, as plain values: for each realize the tensor graph and the
// schedule, for each kernel its stages (the schedule item's graph, every recorded graph_rewrite
// with the rules that fired, the applied optimizations, the lowered graph, the linearized kernel
// IR, the plugin's source) and its time. Graphs are copied out of the UOps so a trace keeps no
// node alive and reads the same after a save and a reload (kernel/viz/json.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/ir/uop.hpp"

namespace tg::viz {

struct GraphNode {
  std::string op, dtype, arg;
  std::vector<std::uint32_t> src; // indices of earlier nodes in the same graph
  bool changed = false;           // in a rewrite's `after`: a node the rewrite created
  bool operator==(const GraphNode&) const = default;
};
// Nodes in topological order (sources first); the last node is the root.
using Graph = std::vector<GraphNode>;

// One rule application inside a graph_rewrite call: `from` became `to` (rendered).
struct RuleStep {
  std::string rule, from, to;
  bool operator==(const RuleStep&) const = default;
};

// One graph_rewrite call that changed its graph.
struct RewriteRecord {
  std::vector<RuleStep> steps;
  Graph before, after;
  bool operator==(const RewriteRecord&) const = default;
};

struct KernelRecord {
  std::string name;                 // the lowered kernel's name, or "copy"
  std::string device;               // e.g. "CPU"
  std::vector<std::string> buffers; // output first, then inputs (BUFFER args)
  bool cached = false;              // compiled by an earlier realize: no stages recorded this time
  double ms = 0;                    // launch time (device-measured when it can time)
  std::string opts;                 // the applied optimizations
  Graph ast;                        // the schedule item
  std::vector<RewriteRecord> rewrites;
  std::size_t rewrites_dropped = 0; // changing calls past the bound (max_rewrites_per_kernel)
  Graph lowered;
  std::string linear; // the kernel IR that crosses the plugin boundary, as text
  std::string source; // the plugin's rendered source (empty when it renders none)
  bool operator==(const KernelRecord&) const = default;
};

struct RealizeRecord {
  Graph tensor_graph; // the targets' graph (SINK over them); empty for a schedule run directly
  std::vector<KernelRecord> kernels;
  bool operator==(const RealizeRecord&) const = default;
};

struct Trace {
  std::vector<RealizeRecord> realizes;
  bool operator==(const Trace&) const = default;
};

// Bounds that keep a trace of a long run readable and its file small. The rewrite calls recorded
// per kernel: VIZ_MAX_REWRITES, default kDefaultMaxRewrites; the calls past it are counted.
inline constexpr std::size_t kDefaultMaxRewrites = 200;
std::size_t max_rewrites_per_kernel();
inline constexpr std::size_t kMaxGraphNodes = 2000; // larger graphs keep their last nodes

// The graph under root. `before`, when given, marks each node absent from it as changed.
Graph graph_of(const UOpRef& root, const UOpRef& before = nullptr);

} // namespace tg::viz
