// ABI 1.1 launch_batch as CUDA graphs: a batch's shape (its kernels, grids and blocks, in order)
// is built into a graph of chained kernel nodes and instantiated once; a later batch of the same
// shape re-launches that executable graph, updating only the nodes whose arguments changed
// (cuGraphExecKernelNodeSetParams). A JIT replays the same shape with the same buffers, so a
// replay is one cuGraphLaunch. TG_CUDA_GRAPHS=0 runs batches as plain launches (for measuring).
#pragma once

#include "driver.hpp"
#include "stream.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace tg::cuda {

// One kernel launch, with its argument bytes already packed (KernelArgs).
struct KernelCall {
  CUfunction function;
  std::array<uint32_t, 3> grid;
  std::array<uint32_t, 3> block;
  uint32_t shared_bytes = 0;       // dynamic shared memory (Program::dynamic_shared_bytes)
  std::vector<unsigned char> args; // each argument at an 8-byte aligned offset
  std::vector<size_t> offsets;     // where each argument starts in args
  std::string_view name;           // the kernel's name, for errors (the program's signature holds it)
};

// The void* array cuLaunchKernel and kernel nodes take, pointing into call.args.
std::vector<void*> kernel_params(const KernelCall& call);

class Graphs {
public:
  explicit Graphs(Stream& stream) : stream_(stream) {}
  ~Graphs();
  Graphs(const Graphs&) = delete;
  Graphs& operator=(const Graphs&) = delete;

  // Queues the calls on the stream as one graph launch.
  void launch(std::span<const KernelCall> calls);
  // Drops every graph that uses `function` (its module is being unloaded).
  void forget(CUfunction function);

private:
  struct Shape {
    std::vector<CUfunction> functions;
    std::vector<std::array<uint32_t, 6>> dims;
    auto operator<=>(const Shape&) const = default;
  };
  struct Entry {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUgraphNode> nodes;
    std::vector<std::vector<unsigned char>> args; // what each node was last given
  };
  static constexpr size_t kMaxGraphs = 256; // beyond this the cache starts over
  std::unique_ptr<Entry> build(std::span<const KernelCall> calls);
  static void destroy(Entry& entry);

  Stream& stream_;
  std::map<Shape, std::unique_ptr<Entry>> graphs_;
};

} // namespace tg::cuda
