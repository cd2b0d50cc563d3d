// `tg corpus`: lists the golden kernel corpus (tools/conform/corpus.hpp) or writes it to a folder,
// which is how tests/data/corpus is made: `tg corpus --out tests/data/corpus`.
#include "tools/conform/corpus.hpp"
#include "tools/tg/commands.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;

namespace tg::cli {

int cmd_corpus(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg corpus: the golden kernel corpus the core's codegen produces for a generic "
      "device (32-byte vectors, 4 compute units).\nOptions");
  opts.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(),
      "write <name>.tgir files and manifest.json into this folder")("ir", "print each kernel's IR");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
  } catch (const po::error& e) {
    std::cerr << "tg corpus: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  auto kernels = conform::golden_corpus(conform::reference_properties());
  for (const auto& k : kernels) {
    std::cout << k.name << "  grid " << k.global[0] << "x" << k.global[1] << "x" << k.global[2] << "  local "
              << k.local[0] << "x" << k.local[1] << "x" << k.local[2] << "  " << k.buffers.size()
              << " buffers, " << k.scalars.size() << " scalars  (" << k.origin << ")\n";
    if (vm.count("ir")) std::cout << sdk::to_string(sdk::parse_kernel_ir(k.ir));
  }
  if (vm.count("out")) {
    conform::write_corpus(vm["out"].as<std::string>(), kernels);
    std::cout << "wrote " << kernels.size() << " kernels to " << vm["out"].as<std::string>() << "\n";
  }
  return 0;
}

} // namespace tg::cli
