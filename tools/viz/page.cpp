#include "tools/viz/page.hpp"

#include "kernel/viz/json.hpp"
#include "tools/viz/layout.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

namespace tg::viz {
namespace {

const char* kStyle = R"css(
body{margin:0;font:14px system-ui,sans-serif;display:flex;height:100vh;color:#222}
#sidebar{width:260px;overflow:auto;background:#f4f4f6;border-right:1px solid #ccc;padding:8px;flex:none}
#sidebar h1{font-size:16px;margin:4px 0 10px}
#sidebar a{display:block;color:#124;text-decoration:none;padding:2px 4px;border-radius:3px;white-space:nowrap;
 overflow:hidden;text-overflow:ellipsis}
#sidebar a.realize{font-weight:600;margin-top:6px}
#sidebar a.kernel{padding-left:16px;font-family:monospace;font-size:12px}
#sidebar a.sel{background:#1565c0;color:#fff}
main{flex:1;overflow:auto;padding:12px 18px}
h2{font-size:17px;margin:4px 0 8px}
.tabs a{display:inline-block;padding:4px 10px;margin-right:4px;border:1px solid #bbb;border-radius:4px 4px 0 0;
 text-decoration:none;color:#124}
.tabs a.sel{background:#1565c0;color:#fff;border-color:#1565c0}
.meta{color:#555;font-size:13px;margin:4px 0 10px}
#graph,#before{overflow:auto}
#graph .changed polygon,#graph .changed path{stroke:#e65100}
pre.code{background:#1e1e24;color:#ddd;padding:10px;border-radius:4px;overflow:auto;font-size:12px;line-height:1.35}
pre.code .k{color:#c792ea}pre.code .n{color:#f78c6c}pre.code .c{color:#7f8c98;font-style:italic}
pre.code .s{color:#c3e88d}pre.code .o{color:#82aaff}
#steps{font-family:monospace;font-size:12px;margin:6px 0}
#steps li.sel{background:#fff3c4}
table.sched{border-collapse:collapse;font-size:12px}table.sched td,table.sched th{border:1px solid #ccc;padding:2px 6px}
.empty{color:#888}
.reduced{background:#fff3e0;border-left:3px solid #e65100;padding:4px 8px;font-size:13px}
)css";

const char* kScript = R"js(
(function(){
  var s=document.getElementById('step');
  function go(n){var u=new URL(location.href);u.searchParams.set('step',n);location.href=u.toString();}
  if(s){s.addEventListener('change',function(){go(s.value);});
    document.addEventListener('keydown',function(e){
      var v=parseInt(s.value,10);
      if(e.key==='ArrowRight'&&v<parseInt(s.max,10))go(v+1);
      if(e.key==='ArrowLeft'&&v>0)go(v-1);});}
})();
)js";

std::string esc(std::string_view s) {
  std::string out;
  for (char c : s) switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  return out;
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

std::map<std::string, std::string> query(std::string_view target) {
  std::map<std::string, std::string> q;
  auto qpos = target.find('?');
  if (qpos == std::string_view::npos) return q;
  std::string_view rest = target.substr(qpos + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    std::string_view kv = rest.substr(0, amp);
    auto eq = kv.find('=');
    q[std::string(kv.substr(0, eq))] = eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return q;
}

int int_param(const std::map<std::string, std::string>& q, const char* key, int fallback) {
  auto it = q.find(key);
  if (it == q.end()) return fallback;
  int v = fallback;
  auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  return ec == std::errc{} && end == it->second.data() + it->second.size() ? v : fallback;
}

std::string link(int r, int k = -1, const std::string& stage = {}, int step = -1) {
  std::string u = "/?r=" + std::to_string(r);
  if (k >= 0) u += "&amp;k=" + std::to_string(k);
  if (!stage.empty()) u += "&amp;stage=" + stage;
  if (step >= 0) u += "&amp;step=" + std::to_string(step);
  return u;
}

std::string sidebar(const Trace& t, int sel_r, int sel_k) {
  std::string out =
      "<nav id=\"sidebar\"><h1>tinygrad.cpp VIZ</h1><a href=\"/trace.json\" download>save trace "
      "(JSON)</a>";
  for (std::size_t r = 0; r < t.realizes.size(); ++r) {
    const auto& rr = t.realizes[r];
    bool sel = int(r) == sel_r && sel_k < 0;
    out += "<a class=\"realize" + std::string(sel ? " sel" : "") + "\" id=\"realize-" + std::to_string(r) +
           "\" href=\"" + link(int(r)) + "\">realize " + std::to_string(r) + " (" +
           std::to_string(rr.kernels.size()) + ")</a>";
    for (std::size_t k = 0; k < rr.kernels.size(); ++k) {
      const auto& kr = rr.kernels[k];
      bool ks = int(r) == sel_r && int(k) == sel_k;
      out += "<a class=\"kernel" + std::string(ks ? " sel" : "") + "\" id=\"kernel-" + std::to_string(r) +
             "-" + std::to_string(k) + "\" href=\"" + link(int(r), int(k)) + "\" title=\"" + esc(kr.name) +
             "\">" + esc(kr.name) + (kr.cached ? " (cached)" : "") + "</a>";
    }
  }
  return out + "</nav>";
}

// Bars in launch order, widths by time (equal widths when nothing was timed).
std::string timeline(const RealizeRecord& rr, int r) {
  double total = 0;
  for (const auto& k : rr.kernels) total += k.ms;
  const double width = 900, height = 34;
  std::string out = "<svg id=\"timeline\" width=\"" + std::to_string(int(width)) + "\" height=\"" +
                    std::to_string(int(height) + 16) + "\">";
  double x = 0;
  for (std::size_t k = 0; k < rr.kernels.size(); ++k) {
    const auto& kr = rr.kernels[k];
    double w = total > 0 ? width * kr.ms / total : width / double(rr.kernels.size());
    const char* fill = kr.name == "copy" ? "#9e9e9e" : (k % 2 ? "#42a5f5" : "#1e88e5");
    out += "<a href=\"" + link(r, int(k)) + "\"><rect x=\"" + std::to_string(x) + "\" y=\"0\" width=\"" +
           std::to_string(std::max(w, 1.0)) + "\" height=\"" + std::to_string(int(height)) + "\" fill=\"" +
           fill + "\"><title>" + esc(kr.name) + " " + fmt_ms(kr.ms) + "</title></rect></a>";
    x += w;
  }
  return out + "<text x=\"0\" y=\"" + std::to_string(int(height) + 13) +
         "\" font-size=\"11\">0</text><text x=\"" + std::to_string(int(width) - 80) + "\" y=\"" +
         std::to_string(int(height) + 13) + "\" font-size=\"11\">" + fmt_ms(total) + "</text></svg>";
}

std::string realize_view(const RealizeRecord& rr, int r) {
  std::string out = "<h2>realize " + std::to_string(r) + "</h2><h3>schedule</h3>" + timeline(rr, r);
  out += "<table class=\"sched\"><tr><th>#</th><th>kernel</th><th>device</th><th>time</th><th>output, "
         "inputs</th></tr>";
  for (std::size_t k = 0; k < rr.kernels.size(); ++k) {
    const auto& kr = rr.kernels[k];
    std::string bufs;
    for (std::size_t b = 0; b < kr.buffers.size(); ++b)
      bufs += (b ? ", " : "<b>") + esc(kr.buffers[b]) + (b ? "" : "</b>");
    out += "<tr><td>" + std::to_string(k) + "</td><td><a href=\"" + link(r, int(k)) + "\">" + esc(kr.name) +
           "</a></td><td>" + esc(kr.device) + "</td><td>" + fmt_ms(kr.ms) + "</td><td>" + bufs + "</td></tr>";
  }
  out += "</table><h3>tensor graph</h3><div id=\"graph\">" + graph_svg(rr.tensor_graph) + "</div>";
  return out;
}

std::string kernel_view(const KernelRecord& kr, int r, int k, std::string stage, int step) {
  if (stage.empty()) stage = kr.rewrites.empty() ? "ast" : "rewrite";
  std::string out =
      "<h2 id=\"kernel-name\">" + esc(kr.name) + "</h2><div class=\"meta\">" + esc(kr.device) + " · " +
      fmt_ms(kr.ms) + (kr.opts.empty() ? "" : " · opts: <code id=\"opts\">" + esc(kr.opts) + "</code>") +
      (kr.cached ? " · compiled by an earlier realize: see its first launch for the stages" : "") +
      "</div><div class=\"tabs\">";
  const std::pair<const char*, const char*> tabs[] = {{"ast", "schedule item"},
                                                      {"rewrite", "rewrites"},
                                                      {"lowered", "lowered"},
                                                      {"linear", "kernel IR"},
                                                      {"source", "source"}};
  for (auto [id, title] : tabs)
    out += "<a id=\"tab-" + std::string(id) + "\" class=\"" + (stage == id ? "sel" : "") + "\" href=\"" +
           link(r, k, id) + "\">" + title +
           (std::string(id) == "rewrite" ? " (" + std::to_string(kr.rewrites.size()) + ")" : "") + "</a>";
  out += "</div>";
  if (stage == "ast") return out + "<div id=\"graph\">" + graph_svg(kr.ast) + "</div>";
  if (stage == "lowered") return out + "<div id=\"graph\">" + graph_svg(kr.lowered) + "</div>";
  if (stage == "linear")
    return out + "<pre class=\"code\" id=\"linear\">" +
           (kr.linear.empty() ? "(none recorded)" : highlight(kr.linear)) + "</pre>";
  if (stage == "source")
    return out + "<pre class=\"code\" id=\"source\">" +
           (kr.source.empty() ? "(this plugin renders no source)" : highlight(kr.source)) + "</pre>";
  if (kr.rewrites.empty())
    return out + "<p class=\"empty\">no graph_rewrite changed this kernel's graphs</p>";
  step = std::clamp(step, 0, int(kr.rewrites.size()) - 1);
  const RewriteRecord& rw = kr.rewrites[std::size_t(step)];
  out += "<div class=\"meta\">graph_rewrite <span id=\"step-label\">" + std::to_string(step + 1) + " / " +
         std::to_string(kr.rewrites.size()) + "</span> <input type=\"range\" id=\"step\" min=\"0\" max=\"" +
         std::to_string(kr.rewrites.size() - 1) + "\" value=\"" + std::to_string(step) +
         "\"> <a id=\"prev\" href=\"" + link(r, k, "rewrite", std::max(step - 1, 0)) +
         "\">&larr;</a> <a id=\"next\" href=\"" +
         link(r, k, "rewrite", std::min(step + 1, int(kr.rewrites.size()) - 1)) +
         "\">&rarr;</a> (changed nodes highlighted)" +
         (kr.rewrites_dropped ? " <span id=\"dropped\">" + std::to_string(kr.rewrites_dropped) +
                                    " later calls not recorded: raise VIZ_MAX_REWRITES</span>"
                              : std::string()) +
         "</div><ol id=\"steps\">";
  for (const auto& s : rw.steps)
    out += "<li><b class=\"rule\">" + esc(s.rule) + "</b>: " + esc(s.from) + " &rarr; " + esc(s.to) + "</li>";
  // After first: it carries the highlights; before follows for comparison.
  out += "</ol><h3>after</h3><div id=\"graph\">" + graph_svg(rw.after) +
         "</div><h3>before</h3><div id=\"before\">" + graph_svg(rw.before) + "</div>";
  return out;
}

std::string page(const Trace& t, const std::map<std::string, std::string>& q, int& status) {
  int r = int_param(q, "r", 0), k = int_param(q, "k", -1), step = int_param(q, "step", 0);
  std::string stage = q.count("stage") ? q.at("stage") : "";
  std::string body;
  if (t.realizes.empty()) {
    body = "<p class=\"empty\">this trace recorded no realize</p>";
  } else if (r < 0 || r >= int(t.realizes.size()) || k >= int(t.realizes[std::size_t(r)].kernels.size())) {
    status = 404;
    body = "<p>no such realize or kernel</p>";
  } else if (k < 0) {
    body = realize_view(t.realizes[std::size_t(r)], r);
  } else {
    body = kernel_view(t.realizes[std::size_t(r)].kernels[std::size_t(k)], r, k, stage, step);
  }
  return "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>tinygrad.cpp VIZ</title><link "
         "rel=\"stylesheet\" "
         "href=\"/style.css\"></head><body>" +
         sidebar(t, r, k) + "<main>" + body + "</main><script src=\"/app.js\"></script></body></html>";
}

} // namespace

std::string highlight(std::string_view code) {
  static const std::set<std::string, std::less<>> keywords = {
      "for",    "if",       "else",       "while",      "return",   "void",         "float",         "double",
      "int",    "unsigned", "char",       "bool",       "half",     "long",         "short",         "const",
      "struct", "kernel",   "__kernel",   "__global",   "global",   "__local",      "extern",        "static",
      "inline", "define",   "declare",    "ret",        "br",       "i32",          "i64",           "i1",
      "ptr",    "layout",   "uniform",    "buffer",     "in",       "out",          "uint",          "vec4",
      "float4", "barrier",  "__global__", "__shared__", "restrict", "__restrict__", "typedef",       "sizeof",
      "true",   "false",    "label",      "phi",        "load",     "store",        "getelementptr", "fadd",
      "fmul",   "add",      "mul",        "icmp",       "fcmp",     "select"};
  std::string out;
  std::size_t i = 0;
  while (i < code.size()) {
    char c = code[i];
    if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
      auto end = code.find('\n', i);
      if (end == std::string_view::npos) end = code.size();
      out += "<span class=\"c\">" + esc(code.substr(i, end - i)) + "</span>";
      i = end;
    } else if (c == ';' && (i == 0 || code[i - 1] == '\n' || code[i - 1] == ' ')) { // LLVM IR comment
      auto end = code.find('\n', i);
      if (end == std::string_view::npos) end = code.size();
      out += "<span class=\"c\">" + esc(code.substr(i, end - i)) + "</span>";
      i = end;
    } else if (c == '"') {
      auto end = code.find('"', i + 1);
      end = end == std::string_view::npos ? code.size() : end + 1;
      out += "<span class=\"s\">" + esc(code.substr(i, end - i)) + "</span>";
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t end = i;
      while (end < code.size() && (std::isalnum(static_cast<unsigned char>(code[end])) || code[end] == '.'))
        ++end;
      out += "<span class=\"n\">" + esc(code.substr(i, end - i)) + "</span>";
      i = end;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = i;
      while (end < code.size() && (std::isalnum(static_cast<unsigned char>(code[end])) || code[end] == '_'))
        ++end;
      std::string_view word = code.substr(i, end - i);
      bool upper = word.size() > 1 && std::all_of(word.begin(), word.end(), [](char ch) {
                     return std::isupper(static_cast<unsigned char>(ch)) || ch == '_' ||
                            std::isdigit(static_cast<unsigned char>(ch));
                   });
      if (keywords.count(word))
        out += "<span class=\"k\">" + esc(word) + "</span>";
      else if (upper)
        out += "<span class=\"o\">" + esc(word) + "</span>";
      else
        out += esc(word);
      i = end;
    } else {
      out += esc(code.substr(i, 1));
      ++i;
    }
  }
  return out;
}

Response respond(const Trace& trace, std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  if (path == "/style.css") return {200, "text/css; charset=utf-8", kStyle};
  if (path == "/app.js") return {200, "text/javascript; charset=utf-8", kScript};
  if (path == "/trace.json") return {200, "application/json", trace_to_json(trace)};
  if (path != "/" && path != "/index.html") return {404, "text/plain", "not found\n"};
  Response res;
  res.body = page(trace, query(target), res.status);
  return res;
}

} // namespace tg::viz
