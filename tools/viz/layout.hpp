#pragma once
// Lays out a VIZ graph with Graphviz's C library (dot) and returns it as inline SVG. Graphviz's
// time grows much faster than a graph's size (a 100-node chain whose nodes all read one shared
// node takes minutes), so a graph is bounded twice: only its last nodes are drawn, and the layout
// runs in a child process that is killed at a deadline. Layouts run one at a time.
#include <chrono>
#include <cstddef>
#include <string>

#include "kernel/viz/trace.hpp"

namespace tg::viz {

struct LayoutLimits {
  // Nodes drawn per graph: a larger graph draws its last max_nodes nodes (the root's end of the
  // topological order) and the page says so.
  std::size_t max_nodes = 500;
  // Graphviz's time per graph; past it the page shows the graph's DOT text and says why.
  std::chrono::milliseconds deadline{5000};
};

// Nodes read "OP dtype arg"; changed nodes get class "changed" (highlighted by the page's CSS).
std::string graph_svg(const Graph& graph, const LayoutLimits& limits = {});
// The DOT text graph_svg lays out (tests read it; it needs no Graphviz).
std::string graph_dot(const Graph& graph);
// The last `keep` nodes of `graph`, renumbered; sources among the dropped nodes are left out.
Graph last_nodes(const Graph& graph, std::size_t keep);

} // namespace tg::viz
