// tg: the tinygrad.cpp command line. `tg <command> --help` describes each command.
#include "kernel/distributed/world.hpp"
#include "tools/tg/commands.hpp"

#include "kernel/runtime/errors.hpp"
#include "kernel/viz/recorder.hpp"

#include <boost/program_options.hpp>

#include <iostream>
#include <map>

namespace tg {
const char* core_version();
}

namespace {

std::chrono::steady_clock::time_point g_main_start;

struct Command {
  int (*run)(const std::vector<std::string>&);
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"devices", {tg::cli::cmd_devices, "list plugins, their devices and properties, and load failures"}},
      {"info", {tg::cli::cmd_info, "one plugin's ABI version, build info and properties, or its load error"}},
      {"train",
       {tg::cli::cmd_train,
        "train a model (mnist: tinygrad's beautiful_mnist; gpt: a GPT on text) and report how well"}},
      {"generate", {tg::cli::cmd_generate, "sample text from a GPT checkpoint (KV cache, TinyJit)"}},
      {"conform",
       {tg::cli::cmd_conform,
        "run the conformance suite against a plugin (crashes are reported, not fatal)"}},
      {"corpus",
       {tg::cli::cmd_corpus, "list or write the golden kernel corpus (tg conform, renderer tests)"}},
      {"plugin",
       {tg::cli::cmd_plugin,
        "plugin new NAME DIR: write an out-of-tree plugin project (skeleton + conform test)"}},
      {"viz", {tg::cli::cmd_viz, "serve a saved VIZ trace (VIZ=1 records one) as a web page on 127.0.0.1"}},
      {"run", {tg::cli::cmd_run, "run an ONNX model on a device: outputs, a summary of values, timing"}},
      {"onnx-test",
       {tg::cli::cmd_onnx_test, "run ONNX backend test folders and compare (N passed, N failed, N skipped)"}},
      {"demo", {tg::cli::cmd_demo, "compile and run a vector add on a device and check it"}},
      {"bench",
       {tg::cli::cmd_bench, "time matmul, elementwise, reduce, conv, cold start and dispatch vs PyTorch"}},
  };
  return table;
}

void usage(std::ostream& os) {
  os << "usage: tg <command> [options]   (tg <command> --help for details)\n\ncommands:\n";
  for (const auto& [name, cmd] : commands())
    os << "  " << name << std::string(10 - name.size(), ' ') << cmd.summary << "\n";
  os << "\noptions:\n  --help     show this help\n  --version  print the version\n";
}

} // namespace

std::chrono::steady_clock::time_point tg::cli::main_start_time() { return g_main_start; }

int main(int argc, char** argv) {
  g_main_start = std::chrono::steady_clock::now();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "tg (tinygrad.cpp) " << tg::core_version() << ", plugin ABI v" << TG_ABI_VERSION_MAJOR << "."
              << TG_ABI_VERSION_MINOR << "\n";
    return 0;
  }
  auto it = commands().find(args[0]);
  if (it == commands().end()) {
    std::cerr << "tg: unknown command '" << args[0] << "'\n\n";
    usage(std::cerr);
    return 2;
  }
  try {
    int rc = it->second.run(std::vector<std::string>(args.begin() + 1, args.end()));
    if (rc == 0 && tg::viz::viz_from_environment() && args[0] != "viz") tg::cli::serve_recorded();
    return rc;
  } catch (const boost::program_options::error& e) {
    std::cerr << "tg " << args[0] << ": " << e.what() << " (see tg " << args[0] << " --help)\n";
    return 2;
  } catch (const std::exception& e) {
    // one rank of several that cannot go on ends them all, so none waits for it
    if (const tg::distributed::World* w = tg::distributed::world(); w && w->size > 1)
      tg::distributed::abort("tg " + args[0] + ": " + e.what());
    std::cerr << "tg " << args[0] << ": " << e.what() << "\n";
    return 1;
  }
}
