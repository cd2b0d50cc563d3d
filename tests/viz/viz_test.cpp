// VIZ's recorder, trace JSON and page: the recorder sees each graph_rewrite with the rules that
// fired (checked against the rules' own results), a trace survives a save and a reload, a
// corrupt file says where it broke, and the page shows a recorded graph's nodes.
#include <boost/test/unit_test.hpp>

#include "kernel/ir/rewrite.hpp"
#include "kernel/ir/symbolic.hpp"
#include "kernel/viz/json.hpp"
#include "kernel/viz/recorder.hpp"
#include "tools/viz/layout.hpp"
#include "tools/viz/page.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

using namespace tg;

namespace {

UOpRef x_plus_zero_times_one() {
  UOpRef x = UOp::variable("x", 0, 10);
  return (x + UOp::constant(dtypes::index, std::int64_t{0})) * UOp::constant(dtypes::index, std::int64_t{1});
}

std::string error_of(const std::string& text) {
  try {
    viz::trace_from_json(text, "t.json");
  } catch (const viz::TraceFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

viz::Trace sample_trace() {
  viz::Trace t;
  viz::KernelRecord k;
  k.name = "E_4";
  k.device = "CPU";
  k.buffers = {"BUFFER CPU 4", "BUFFER CPU 4"};
  k.ms = 0.25;
  k.opts = "UPCAST(0, 4)";
  k.ast = viz::graph_of(UOp::sink({x_plus_zero_times_one()}));
  k.rewrites.push_back({{{"x+0", "(x+0)", "x"}}, k.ast, viz::graph_of(UOp::variable("x", 0, 10), nullptr)});
  k.rewrites.back().after[0].changed = true;
  k.rewrites_dropped = 3;
  k.linear = "r0 = LOAD buf0[gid]";
  k.source = "void E_4(float* restrict b) { b[0] = 1.5f; } // done";
  t.realizes.push_back({k.ast, {k}});
  return t;
}

// x = x + c, n - 1 times: every ADD also reads the one shared CONST, whose long edges make
// Graphviz's dot take minutes from about 100 nodes on.
viz::Graph chain(std::size_t n) {
  viz::Graph g{{"CONST", "float", "1.0", {}, false}};
  for (std::size_t i = 1; i < n; ++i) g.push_back({"ADD", "float", "", {std::uint32_t(i - 1), 0}, false});
  return g;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(viz_recording)

BOOST_AUTO_TEST_CASE(no_sink_no_record) {
  BOOST_TEST(rewrite_sink() == nullptr); // VIZ unset in the test's environment
  BOOST_TEST(viz::recorder() == nullptr);
}

BOOST_AUTO_TEST_CASE(recorder_sees_rewrites_and_rule_names) {
  viz::Recorder& r = viz::start_recording();
  r.clear();
  UOpRef expr = x_plus_zero_times_one();
  {
    viz::Recorder::KernelScope scope(&r);
    BOOST_TEST(r.wants_rewrites() == true);
    BOOST_TEST(simplify(expr)->render() == "x");
    BOOST_TEST(simplify(UOp::variable("x", 0, 10))->render() == "x"); // unchanged: not recorded
  }
  simplify(expr);                            // outside a kernel scope: not recorded
  BOOST_TEST(r.wants_rewrites() == false);   // outside the scope
  BOOST_TEST(r.snapshot().realizes.empty()); // rewrites wait for their kernel's launch
  viz::Graph before = viz::graph_of(expr);
  BOOST_TEST(before.back().op == "MUL");
  viz::Graph after = viz::graph_of(UOp::variable("x", 0, 10), expr);
  BOOST_TEST(after.size() == 1u);
  BOOST_TEST(after[0].changed == false); // x was already in the graph before
  r.clear();
}

BOOST_AUTO_TEST_CASE(rule_labels_reach_the_sink) {
  struct Sink : RewriteSink {
    bool wants_rewrites() const override { return true; }
    void on_graph_rewrite(const UOpRef& b, const UOpRef& a, std::vector<RewriteStep> s) override {
      before = b, after = a, steps = std::move(s);
    }
    UOpRef before, after;
    std::vector<RewriteStep> steps;
  } sink;
  RewriteSink* old = rewrite_sink();
  set_rewrite_sink(&sink);
  UOpRef expr = x_plus_zero_times_one();
  UOpRef out = simplify(expr);
  set_rewrite_sink(old);
  BOOST_TEST(sink.before == expr);
  BOOST_TEST(sink.after == out);
  std::vector<std::string> rules;
  for (const auto& s : sink.steps) rules.push_back(s.rule);
  BOOST_TEST_REQUIRE(rules.size() == 2u);
  BOOST_TEST(rules[0] == "x+0");
  BOOST_TEST(rules[1] == "x*1");
  BOOST_TEST(sink.steps[0].to->render() == "x");
}

BOOST_AUTO_TEST_CASE(json_round_trip) {
  viz::Trace t = sample_trace();
  std::string text = viz::trace_to_json(t);
  BOOST_TEST((viz::trace_from_json(text) == t));
  BOOST_TEST(text.find("\"format\":\"tinygrad.cpp-viz\"") != std::string::npos);
  auto path = std::filesystem::temp_directory_path() / "tg_viz_test_roundtrip.json";
  viz::save_trace(t, path);
  BOOST_TEST((viz::load_trace(path) == t));
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(corrupt_traces_say_where) {
  BOOST_TEST(error_of("{\"format\": \"tinygrad.cpp-viz\",\n \"version\": 1,\n \"realizes\": [}") ==
             "t.json:3:15: not a VIZ trace: invalid JSON at byte 61");
  BOOST_TEST(error_of("[1, 2]").find("has no \"format\"") != std::string::npos);
  BOOST_TEST(error_of("{\"format\": \"tinygrad.cpp-viz\", \"version\": 9, \"realizes\": []}") ==
             "t.json: not a VIZ trace: version is 9, this build reads version 1");
  std::string good = viz::trace_to_json(sample_trace());
  std::string bad_name = good;
  bad_name.replace(bad_name.find("\"name\":\"E_4\""), 12, "\"name\":4");
  BOOST_TEST(error_of(bad_name) == "t.json: not a VIZ trace: realizes[0].kernels[0].name is not a string");
  std::string cycle = good;
  cycle.replace(cycle.find("\"src\":[2,3]"), 11, "\"src\":[2,7]");
  BOOST_TEST(error_of(cycle).find("holds 7, not the index of an earlier node") != std::string::npos);
  std::string negative = good;
  negative.replace(negative.find("\"rewrites_dropped\":3"), 20, "\"rewrites_dropped\":-1");
  BOOST_TEST(error_of(negative) ==
             "t.json: not a VIZ trace: realizes[0].kernels[0].rewrites_dropped is not a count");
  BOOST_CHECK_THROW(viz::load_trace("/nonexistent/trace.json"), Error);
}

BOOST_AUTO_TEST_CASE(page_shows_the_graph_and_the_rules) {
  viz::Trace t = sample_trace();
  viz::Response idx = viz::respond(t, "/");
  BOOST_TEST(idx.status == 200);
  BOOST_TEST(idx.body.find("id=\"timeline\"") != std::string::npos);
  BOOST_TEST(idx.body.find("id=\"kernel-0-0\"") != std::string::npos);
  viz::Response ast = viz::respond(t, "/?r=0&k=0&stage=ast");
  BOOST_TEST(ast.body.find(">MUL int</text>") != std::string::npos); // laid out by Graphviz
  BOOST_TEST(ast.body.find(">DEFINE_VAR int</text>") != std::string::npos);
  viz::Response rw = viz::respond(t, "/?r=0&k=0&stage=rewrite&step=0");
  BOOST_TEST(rw.body.find("<b class=\"rule\">x+0</b>") != std::string::npos);
  BOOST_TEST(rw.body.find("class=\"node changed\"") != std::string::npos);
  BOOST_TEST(rw.body.find("3 later calls not recorded: raise VIZ_MAX_REWRITES") != std::string::npos);
  viz::Response src = viz::respond(t, "/?r=0&k=0&stage=source");
  BOOST_TEST(src.body.find("<span class=\"k\">void</span>") != std::string::npos);
  BOOST_TEST(src.body.find("<span class=\"c\">// done</span>") != std::string::npos);
  BOOST_TEST(viz::respond(t, "/?r=3").status == 404);
  BOOST_TEST(viz::respond(t, "/nope").status == 404);
  BOOST_TEST((viz::trace_from_json(viz::respond(t, "/trace.json").body) == t));
}

// A 1,500- and a 20,000-node chain: the page draws the last 500 nodes within seconds and says so.
BOOST_AUTO_TEST_CASE(huge_graphs_are_drawn_reduced) {
  for (std::size_t n : {std::size_t(1500), std::size_t(20000)}) {
    viz::Trace t;
    t.realizes.push_back({chain(n), {}});
    const auto start = std::chrono::steady_clock::now();
    viz::Response r = viz::respond(t, "/?r=0");
    BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(15)));
    BOOST_TEST(r.status == 200);
    BOOST_TEST(r.body.find("This graph has " + std::to_string(n) + " nodes: drawn here are the last 500") !=
               std::string::npos);
    // 500 nodes drawn, as SVG (<g id="n7" class="node">) or, should a slow machine pass the
    // layout's deadline, as DOT text (n7 [id="n7", ...]).
    BOOST_TEST(count(r.body, "id=\"n") == 500u);
  }
  viz::Graph last = viz::last_nodes(chain(10), 3);
  BOOST_TEST_REQUIRE(last.size() == 3u);
  BOOST_TEST(last[0].src.empty()); // its sources, node 6 and the CONST, were dropped
  BOOST_TEST((last[2].src == std::vector<std::uint32_t>{1}));
  BOOST_TEST(viz::graph_svg(chain(3)).find("class=\"reduced\"") == std::string::npos);
}

// Graphviz past its deadline is stopped; the page shows the DOT text and says why.
BOOST_AUTO_TEST_CASE(a_layout_past_its_deadline_shows_dot_text) {
  const auto start = std::chrono::steady_clock::now();
  const std::string html =
      viz::graph_svg(chain(150), {.max_nodes = 500, .deadline = std::chrono::milliseconds(300)});
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
  BOOST_TEST(html.find("Graphviz did not lay this graph out within 300 ms: the graph as DOT text") !=
             std::string::npos);
  BOOST_TEST(html.find("n149 [id=\"n149\"") != std::string::npos);
  BOOST_TEST(html.find("<svg") == std::string::npos);
  // The next graph is laid out as usual: nothing of the stopped layout is left behind.
  BOOST_TEST(viz::graph_svg(chain(3)).find(">ADD float</text>") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
