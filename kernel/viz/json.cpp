#include "kernel/viz/json.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace tg::viz {
namespace {

using nlohmann::json;

json graph_json(const Graph& g) {
  json out = json::array();
  for (const auto& n : g) {
    json node = {{"op", n.op}, {"dtype", n.dtype}, {"arg", n.arg}, {"src", n.src}};
    if (n.changed) node["changed"] = true;
    out.push_back(std::move(node));
  }
  return out;
}

json kernel_json(const KernelRecord& k) {
  json rewrites = json::array();
  for (const auto& r : k.rewrites) {
    json steps = json::array();
    for (const auto& s : r.steps) steps.push_back({{"rule", s.rule}, {"from", s.from}, {"to", s.to}});
    rewrites.push_back({{"steps", steps}, {"before", graph_json(r.before)}, {"after", graph_json(r.after)}});
  }
  return {{"name", k.name},           {"device", k.device},   {"buffers", k.buffers},
          {"cached", k.cached},       {"ms", k.ms},           {"opts", k.opts},
          {"ast", graph_json(k.ast)}, {"rewrites", rewrites}, {"lowered", graph_json(k.lowered)},
          {"linear", k.linear},       {"source", k.source},   {"rewrites_dropped", k.rewrites_dropped}};
}

// Reads a json value as the trace's types, naming the path of what is wrong.
class Reader {
public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw TraceFormatError(where_ + ": not a VIZ trace: " + path + " " + what);
  }
  const json& field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "is not an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("has no \"") + key + "\"");
    return *it;
  }
  std::string str(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_string()) fail(path + "." + key, "is not a string");
    return v.get<std::string>();
  }
  double number(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_number()) fail(path + "." + key, "is not a number");
    return v.get<double>();
  }
  bool flag(const json& obj, const std::string& path, const char* key, bool fallback) const {
    if (!obj.contains(key)) return fallback;
    if (!obj[key].is_boolean()) fail(path + "." + key, "is not true or false");
    return obj[key].get<bool>();
  }
  const json& array(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_array()) fail(path + "." + key, "is not an array");
    return v;
  }
  std::vector<std::string> strings(const json& obj, const std::string& path, const char* key) const {
    std::vector<std::string> out;
    const json& a = array(obj, path, key);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) fail(path + "." + key + "[" + std::to_string(i) + "]", "is not a string");
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }

  Graph graph(const json& obj, const std::string& path, const char* key) const {
    const json& a = array(obj, path, key);
    Graph g;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string p = path + "." + key + "[" + std::to_string(i) + "]";
      GraphNode n{str(a[i], p, "op"),
                  str(a[i], p, "dtype"),
                  str(a[i], p, "arg"),
                  {},
                  flag(a[i], p, "changed", false)};
      const json& src = array(a[i], p, "src");
      for (const auto& s : src) {
        // Sources come first in a graph: an index at or past this node would be a cycle.
        if (!s.is_number_unsigned() || s.get<std::uint64_t>() >= i)
          fail(p + ".src", "holds " + s.dump() + ", not the index of an earlier node");
        n.src.push_back(s.get<std::uint32_t>());
      }
      g.push_back(std::move(n));
    }
    return g;
  }

  KernelRecord kernel(const json& k, const std::string& p) const {
    KernelRecord out;
    out.name = str(k, p, "name");
    out.device = str(k, p, "device");
    out.buffers = strings(k, p, "buffers");
    out.cached = flag(k, p, "cached", false);
    if (k.contains("rewrites_dropped")) { // absent in traces written before it existed
      const double d = number(k, p, "rewrites_dropped");
      if (d < 0 || d != double(std::size_t(d))) fail(p + ".rewrites_dropped", "is not a count");
      out.rewrites_dropped = std::size_t(d);
    }
    out.ms = number(k, p, "ms");
    out.opts = str(k, p, "opts");
    out.ast = graph(k, p, "ast");
    const json& rewrites = array(k, p, "rewrites");
    for (std::size_t i = 0; i < rewrites.size(); ++i) {
      const std::string rp = p + ".rewrites[" + std::to_string(i) + "]";
      RewriteRecord r;
      const json& steps = array(rewrites[i], rp, "steps");
      for (std::size_t s = 0; s < steps.size(); ++s) {
        const std::string sp = rp + ".steps[" + std::to_string(s) + "]";
        r.steps.push_back({str(steps[s], sp, "rule"), str(steps[s], sp, "from"), str(steps[s], sp, "to")});
      }
      r.before = graph(rewrites[i], rp, "before");
      r.after = graph(rewrites[i], rp, "after");
      out.rewrites.push_back(std::move(r));
    }
    out.lowered = graph(k, p, "lowered");
    out.linear = str(k, p, "linear");
    out.source = str(k, p, "source");
    return out;
  }

private:
  std::string where_;
};

} // namespace

std::string trace_to_json(const Trace& trace) {
  json realizes = json::array();
  for (const auto& r : trace.realizes) {
    json kernels = json::array();
    for (const auto& k : r.kernels) kernels.push_back(kernel_json(k));
    realizes.push_back({{"tensor_graph", graph_json(r.tensor_graph)}, {"kernels", kernels}});
  }
  json out = {{"format", kTraceFormat}, {"version", kTraceVersion}, {"realizes", realizes}};
  return out.dump() + "\n";
}

Trace trace_from_json(std::string_view text, const std::string& where) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // Line and column of the byte where parsing stopped, for an editor.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw TraceFormatError(where + ":" + std::to_string(line) + ":" + std::to_string(col) +
                           ": not a VIZ trace: invalid JSON at byte " + std::to_string(e.byte));
  }
  Reader rd(where);
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kTraceFormat)
    rd.fail("the top level", std::string("has no \"format\": \"") + kTraceFormat + "\"");
  if (!doc.contains("version") || doc["version"] != kTraceVersion)
    rd.fail("version", "is " + (doc.contains("version") ? doc["version"].dump() : std::string("missing")) +
                           ", this build reads version " + std::to_string(kTraceVersion));
  Trace trace;
  const json& realizes = rd.array(doc, "the top level", "realizes");
  for (std::size_t i = 0; i < realizes.size(); ++i) {
    const std::string p = "realizes[" + std::to_string(i) + "]";
    RealizeRecord r;
    r.tensor_graph = rd.graph(realizes[i], p, "tensor_graph");
    const json& kernels = rd.array(realizes[i], p, "kernels");
    for (std::size_t k = 0; k < kernels.size(); ++k)
      r.kernels.push_back(rd.kernel(kernels[k], p + ".kernels[" + std::to_string(k) + "]"));
    trace.realizes.push_back(std::move(r));
  }
  return trace;
}

void save_trace(const Trace& trace, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("VIZ: cannot write the trace to " + path.string());
  out << trace_to_json(trace);
  if (!out.flush()) throw Error("VIZ: writing the trace to " + path.string() + " failed");
}

Trace load_trace(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("VIZ: cannot open the trace " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return trace_from_json(text.str(), path.string());
}

} // namespace tg::viz
