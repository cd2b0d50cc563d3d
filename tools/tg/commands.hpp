// Subcommands of the `tg` tool. Each takes the arguments after its name and returns an exit code.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tg::cli {

int cmd_devices(const std::vector<std::string>& args);
int cmd_info(const std::vector<std::string>& args);
int cmd_demo(const std::vector<std::string>& args);
int cmd_corpus(const std::vector<std::string>& args);
int cmd_plugin(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_conform(const std::vector<std::string>& args);
int cmd_train(const std::vector<std::string>& args);
int train_gpt(const std::vector<std::string>& args);    // `tg train gpt` (cmd_gpt.cpp)
int cmd_generate(const std::vector<std::string>& args); // cmd_gpt.cpp
int cmd_viz(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);       // cmd_onnx.cpp
int cmd_onnx_test(const std::vector<std::string>& args); // cmd_onnx.cpp
// VIZ=1: save the trace recorded while a command ran and serve it (does not return).
int serve_recorded();
int bench_train(const std::vector<std::string>& args);      // `tg bench train`
int bench_ops(const std::vector<std::string>& args);        // `tg bench ops`
int bench_gpu(const std::vector<std::string>& args);        // `tg bench gpu` (cmd_bench_gpu.cpp)
int bench_collective(const std::vector<std::string>& args); // `tg bench collective`
int bench_onnx(const std::vector<std::string>& args);       // `tg bench onnx` (cmd_bench_onnx.cpp)
int bench_python(const std::vector<std::string>& args);     // `tg bench python` (cmd_bench_python.cpp)
int bench_gpt(const std::vector<std::string>& args);        // `tg bench gpt` (cmd_bench_gpt.cpp)
int bench_attention(const std::vector<std::string>& args);  // `tg bench attention` (cmd_bench_attention.cpp)

// When main() started (for `tg bench cold-child`).
std::chrono::steady_clock::time_point main_start_time();

} // namespace tg::cli
