#include "tools/viz/layout.hpp"

#include <graphviz/gvc.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

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
  decltype(&::gvRenderData) render = sym<decltype(::gvRenderData)>(gvc_lib, "gvRenderData");
  decltype(&::agmemread) read = sym<decltype(::agmemread)>(cgraph_lib, "agmemread");
  GVC_t* gvc = nullptr;
  Graphviz() {
    if (context && free_context && layout && render && read) gvc = context();
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

// In the forked child: lays `dot` out and writes the SVG to `fd`. Returns whether all of it went.
bool write_svg(Graphviz& gv, const std::string& dot, int fd) {
  Agraph_t* g = gv.read(dot.c_str());
  if (!g || gv.layout(gv.gvc, g, "dot") != 0) return false;
  char* data = nullptr;
  unsigned int len = 0;
  if (gv.render(gv.gvc, g, "svg", &data, &len) != 0 || !data) return false;
  for (unsigned int done = 0; done < len;) {
    const ssize_t n = write(fd, data + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += unsigned(n);
  }
  return true; // the child exits now: nothing needs freeing
}

// The SVG of `dot`, or (svg empty) why there is none. Graphviz runs in a forked child writing to a
// pipe: a call into Graphviz cannot be stopped, a process can, and the layout's memory (and any
// crash) stays in the child.
struct Layout {
  std::string svg, failure;
};
Layout run_layout(Graphviz& gv, const std::string& dot, std::chrono::milliseconds deadline) {
  using clock = std::chrono::steady_clock;
  std::lock_guard lock(gv.mutex); // one child at a time
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {{}, "no pipe for Graphviz's child process"};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {{}, "could not start Graphviz's child process"};
  }
  if (pid == 0) { // the child: _exit skips the parent's atexit handlers and static destructors
    close(fds[0]);
    _exit(write_svg(gv, dot, fds[1]) ? 0 : 1);
  }
  close(fds[1]);
  const auto end = clock::now() + deadline;
  std::string svg;
  bool late = false, broken = false;
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(end - clock::now()).count();
    pollfd p{fds[0], POLLIN, 0};
    const int ready = left > 0 ? poll(&p, 1, int(std::min<decltype(left)>(left, 1 << 30))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      late = true;
      break;
    }
    const ssize_t n = ready < 0 ? -1 : read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken = n < 0;
      break; // 0: the child closed its end, done
    }
    svg.append(buf, std::size_t(n));
  }
  close(fds[0]);
  if (late) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (late)
    return {{}, "Graphviz did not lay this graph out within " + std::to_string(deadline.count()) + " ms"};
  if (broken || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {{}, "Graphviz failed on this graph"};
  return {std::move(svg), {}};
}

std::string dot_text(const std::string& why, const std::string& dot) {
  return "<p class=\"empty dot-text\">" + html_escape(why) + ": the graph as DOT text</p><pre>" +
         html_escape(dot) + "</pre>";
}

} // namespace

Graph last_nodes(const Graph& graph, std::size_t keep) {
  if (keep >= graph.size()) return graph;
  const std::size_t first = graph.size() - keep;
  Graph out(graph.begin() + std::ptrdiff_t(first), graph.end());
  for (GraphNode& n : out) {
    std::vector<std::uint32_t> src;
    for (auto s : n.src)
      if (s >= first) src.push_back(std::uint32_t(s - first));
    n.src = std::move(src);
  }
  return out;
}

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

std::string graph_svg(const Graph& graph, const LayoutLimits& limits) {
  if (graph.empty()) return "<p class=\"empty\">(no graph recorded)</p>";
  std::string note;
  const std::size_t keep = std::max<std::size_t>(limits.max_nodes, 1);
  if (graph.size() > keep)
    note = "<p class=\"reduced\">This graph has " + std::to_string(graph.size()) +
           " nodes: drawn here are the last " + std::to_string(keep) +
           " (nearest the root), without the edges from earlier nodes. The trace's JSON holds all of it.</p>";
  const std::string dot = graph_dot(graph.size() > keep ? last_nodes(graph, keep) : graph);
  Graphviz& gv = graphviz();
  if (!gv.gvc) return note + dot_text("Graphviz (libgvc.so.6) is not installed here", dot);
  Layout layout = run_layout(gv, dot, limits.deadline);
  if (layout.svg.empty()) return note + dot_text(layout.failure, dot);
  auto start = layout.svg.find("<svg"); // drop the XML prolog and doctype: the SVG goes inline
  return note + (start == std::string::npos ? layout.svg : layout.svg.substr(start));
}

} // namespace tg::viz
