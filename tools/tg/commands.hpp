// Subcommands of the `tg` tool. Each takes the arguments after its name and returns an exit code.
#pragma once

#include <string>
#include <vector>

namespace tg::cli {

int cmd_devices(const std::vector<std::string>& args);
int cmd_info(const std::vector<std::string>& args);
int cmd_demo(const std::vector<std::string>& args);

} // namespace tg::cli
