// The examples' command lines: `--name value` pairs with defaults; --help lists them. Small on
// purpose (the tg tool uses Boost.Program_Options; an example should read in one sitting).
#pragma once

#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

namespace examples {

class Args {
public:
  // Reads argv; an unknown name or a missing value prints usage and exits with status 2.
  Args(int argc, char** argv, std::map<std::string, std::string> defaults) : values_(std::move(defaults)) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") usage(argv[0], 0);
      if (!a.starts_with("--") || !values_.count(a.substr(2)) || i + 1 >= argc) {
        std::cerr << argv[0] << ": bad argument '" << a << "'\n";
        usage(argv[0], 2);
      }
      values_[a.substr(2)] = argv[++i];
    }
  }
  const std::string& str(const std::string& name) const { return values_.at(name); }
  long long integer(const std::string& name) const { return std::stoll(values_.at(name)); }
  double number(const std::string& name) const { return std::stod(values_.at(name)); }

private:
  [[noreturn]] void usage(const char* program, int status) const {
    std::cerr << "usage: " << program;
    for (const auto& [name, value] : values_)
      std::cerr << " [--" << name << " " << (value.empty() ? "\"\"" : value) << "]";
    std::cerr << "\n";
    std::exit(status);
  }
  std::map<std::string, std::string> values_;
};

} // namespace examples
