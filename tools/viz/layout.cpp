#include "tools/viz/layout.hpp"

#include <graphviz/gvc.h>

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <stdexcept>

namespace tg::viz {
namespace {

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

// Fill colours by op family, so a graph reads at a glance.
const char* colour(const std::string& op) {
  if (op == "BUFFER" || op == "DEFINE_GLOBAL" || op == "LOAD" || op == "STORE") return "#cfe8fc";
  if (op == "CONST" || op == "DEFINE_VAR" || op == "RANGE" || op == "SPECIAL") return "#e8e8e8";
  if (op == "SINK" || op == "COPY") return "#f5e0ff";
  if (op.starts_with("REDUCE")) return "#ffd9c2";
  if (op == "VIEW" || op == "RESHAPE" || op == "PERMUTE" || op == "EXPAND" || op == "PAD" || op == "SHRINK")
    return "#d8f5d0";
  return "#ffffff";
}

// Graphviz is opened at run time, not linked: `tg` must start on machines without it (the GPU test
// machine runs a Debian-built `tg`); there the page shows each graph's DOT text instead.
struct Graphviz {
  std::mutex mutex;
  void* gvc_lib = dlopen("libgvc.so.6", RTLD_NOW | RTLD_GLOBAL);
  void* cgraph_lib = dlopen("libcgraph.so.6", RTLD_NOW | RTLD_GLOBAL);
  template <class F> F* sym(void* lib, const char* name) {
    return lib ? reinterpret_cast<F*>(dlsym(lib, name)) : nullptr;
  }
  decltype(&::gvContext) context = sym<decltype(::gvContext)>(gvc_lib, "gvContext");
  decltype(&::gvFreeContext) free_context = sym<decltype(::gvFreeContext)>(gvc_lib, "gvFreeContext");
  decltype(&::gvLayout) layout = sym<decltype(::gvLayout)>(gvc_lib, "gvLayout");
  decltype(&::gvFreeLayout) free_layout = sym<decltype(::gvFreeLayout)>(gvc_lib, "gvFreeLayout");
  decltype(&::gvRenderData) render = sym<decltype(::gvRenderData)>(gvc_lib, "gvRenderData");
  decltype(&::gvFreeRenderData) free_render = sym<decltype(::gvFreeRenderData)>(gvc_lib, "gvFreeRenderData");
  decltype(&::agmemread) read = sym<decltype(::agmemread)>(cgraph_lib, "agmemread");
  decltype(&::agclose) close = sym<decltype(::agclose)>(cgraph_lib, "agclose");
  GVC_t* gvc = nullptr;
  Graphviz() {
    if (context && free_context && layout && free_layout && render && free_render && read && close)
      gvc = context();
  }
  ~Graphviz() {
    if (gvc) free_context(gvc);
  }
};
Graphviz& graphviz() {
  static Graphviz g; // a cache of the opened library, made once
  return g;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

} // namespace

std::string graph_dot(const Graph& graph) {
  std::string out =
      "digraph g {\n  rankdir=TB; node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", "
      "fontsize=10, height=0.2];\n  edge [arrowsize=0.6];\n";
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const GraphNode& n = graph[i];
    std::string label = dot_escape(n.op + (n.dtype.empty() || n.dtype == "void" ? "" : " " + n.dtype));
    if (!n.arg.empty()) label += "\\n" + dot_escape(n.arg.size() > 60 ? n.arg.substr(0, 57) + "..." : n.arg);
    out += "  n" + std::to_string(i) + " [id=\"n" + std::to_string(i) + "\", label=\"" + label +
           "\", fillcolor=\"" + (n.changed ? "#ffd54f" : colour(n.op)) + "\"" +
           (n.changed ? ", class=\"changed\", penwidth=2, color=\"#e65100\"" : "") + "];\n";
  }
  for (std::size_t i = 0; i < graph.size(); ++i)
    for (auto s : graph[i].src) out += "  n" + std::to_string(s) + " -> n" + std::to_string(i) + ";\n";
  return out + "}\n";
}

std::string graph_svg(const Graph& graph) {
  if (graph.empty()) return "<p class=\"empty\">(no graph recorded)</p>";
  const std::string dot = graph_dot(graph);
  Graphviz& gv = graphviz();
  if (!gv.gvc)
    return "<p class=\"empty\">Graphviz (libgvc.so.6) is not installed here: the graph as DOT text</p><pre>" +
           html_escape(dot) + "</pre>";
  std::lock_guard lock(gv.mutex);
  std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> g(gv.read(dot.c_str()), gv.close);
  if (!g) throw std::runtime_error("VIZ: Graphviz could not read the graph's DOT text");
  if (gv.layout(gv.gvc, g.get(), "dot") != 0) throw std::runtime_error("VIZ: Graphviz's dot layout failed");
  char* data = nullptr;
  unsigned int len = 0;
  const int rc = gv.render(gv.gvc, g.get(), "svg", &data, &len);
  std::string svg = rc == 0 && data ? std::string(data, len) : std::string();
  if (data) gv.free_render(data);
  gv.free_layout(gv.gvc, g.get());
  if (rc != 0) throw std::runtime_error("VIZ: Graphviz could not render SVG");
  auto start = svg.find("<svg"); // drop the XML prolog and doctype: the SVG goes inline
  return start == std::string::npos ? svg : svg.substr(start);
}

} // namespace tg::viz
