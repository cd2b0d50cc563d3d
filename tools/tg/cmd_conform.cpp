// `tg conform <plugin name or path>`: the conformance suite (tools/conform) against one plugin.
#include "tools/conform/conform.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;

namespace tg::cli {

int cmd_conform(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg conform <plugin name or path>: run the conformance suite against a device plugin: loader\n"
      "and ABI rules, properties, memory, compile, program load, launch limits, and a kernel corpus\n"
      "whose results are checked against the SDK's reference interpreter. Every case runs in its own\n"
      "child process, so a crash is reported and the run goes on.\nOptions");
  tg::conform::Options o;
  std::string json;
  int timeout = 120;
  opts.add_options()("help,h", "show this help")("device", po::value<int32_t>(&o.device)->default_value(0),
                                                 "the device the device cases open")(
      "filter", po::value<std::string>(&o.filter),
      "run only cases whose name contains this (or matches this glob)")(
      "list", "print the case names and run nothing")(
      "json", po::value<std::string>(&json)->implicit_value("-"),
      "write the results as JSON to this file (--json alone: to stdout, the case lines then go to stderr;\n"
      "give the plugin first, or --json=FILE, so the plugin is not taken for the file)")(
      "junit", po::value<std::string>(),
      "write the results as JUnit XML to this file")("timeout", po::value<int>(&timeout)->default_value(120),
                                                     "seconds one case may take before it is killed");
  po::options_description hidden;
  hidden.add_options()("plugin", po::value<std::string>(&o.plugin));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("plugin", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout
        << opts
        << "\nA plugin name is looked up like `tg devices` does (TG_PLUGIN_PATH, then the directory of\n"
           "libtg); anything with a '/' or ending in .so is a path.\n"
           "Results: PASS, FAIL, SKIP (the device declares it unsupported), UNAVAILABLE (no hardware\n"
           "here), CRASH (signal N). Exit status: 0 when nothing failed or crashed (a plugin without\n"
           "hardware here is all UNAVAILABLE and exits 0), 1 otherwise, 2 for a usage error or a\n"
           "plugin that cannot be loaded.\n";
    return 0;
  }
  if (o.plugin.empty())
    throw po::error("which plugin? give a name (cpu) or a path to libtg_device_<name>.so");
  if (timeout <= 0) throw po::error("--timeout must be positive");
  o.list = vm.count("list") > 0;
  if (vm.count("json")) o.json = json;
  if (vm.count("junit")) o.junit = vm["junit"].as<std::string>();
  o.timeout = std::chrono::seconds(timeout);
  return tg::conform::run_conform(o, std::cout, std::cerr);
}

} // namespace tg::cli
