#pragma once
// Lays out a VIZ graph with Graphviz's C library (dot) and returns it as inline SVG. Graphviz
// contexts are not thread-safe: calls are serialized.
#include <string>

#include "kernel/runtime/viz_trace.hpp"

namespace tg::viz {

// Nodes read "OP dtype arg"; changed nodes get class "changed" (highlighted by the page's CSS).
std::string graph_svg(const Graph& graph);
// The DOT text graph_svg lays out (tests read it; it needs no Graphviz).
std::string graph_dot(const Graph& graph);

} // namespace tg::viz
