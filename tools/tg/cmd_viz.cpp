// `tg viz FILE`: reopens a saved VIZ trace in the browser page (tools/viz). `VIZ=1 tg <command>`
// records while the command runs, then saves and serves the trace the same way (serve_recorded).
#include "tools/tg/commands.hpp"

#include "kernel/viz/json.hpp"
#include "kernel/viz/recorder.hpp"
#include "tools/viz/server.hpp"

#include <boost/program_options.hpp>

#include <iostream>

namespace tg::cli {

namespace po = boost::program_options;

int cmd_viz(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg viz FILE: serve a saved VIZ trace (JSON, docs/viz.md) as a web page on 127.0.0.1 and print its "
      "URL.\n"
      "Record one with VIZ=1 on any program (saved to $VIZ_FILE, default <temp dir>/tg_viz_<pid>.json);\n"
      "VIZ=1 tg <command> also serves it when the command ends.\nOptions");
  opts.add_options()("help,h", "show this help")("file", po::value<std::string>(), "the trace file")(
      "port", po::value<int>(), "port to listen on (default: $VIZ_PORT, else a free one)");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (!vm.count("file")) {
    std::cerr << "tg viz: name a trace file (see tg viz --help)\n";
    return 2;
  }
  viz::Trace trace = viz::load_trace(vm["file"].as<std::string>()); // TraceFormatError says where it broke
  unsigned short port = viz::port_from_environment();
  if (vm.count("port")) {
    int p = vm["port"].as<int>();
    if (p < 0 || p > 65535) throw Error("--port " + std::to_string(p) + " is not a port number");
    port = static_cast<unsigned short>(p);
  }
  viz::serve(std::move(trace), port);
}

int serve_recorded() {
  viz::Recorder* r = viz::recorder();
  if (!r) return 0;
  r->save();
  viz::serve(r->snapshot(), viz::port_from_environment());
}

} // namespace tg::cli
