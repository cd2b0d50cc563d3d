#include "graphs.hpp"

#include <string>

namespace tg::cuda {
namespace {

CUDA_KERNEL_NODE_PARAMS node_params(const KernelCall& call, std::vector<void*>& params) {
  params = kernel_params(call);
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = call.function;
  p.gridDimX = call.grid[0];
  p.gridDimY = call.grid[1];
  p.gridDimZ = call.grid[2];
  p.blockDimX = call.block[0];
  p.blockDimY = call.block[1];
  p.blockDimZ = call.block[2];
  p.sharedMemBytes = call.shared_bytes;
  p.kernelParams = params.data();
  return p;
}

} // namespace

std::vector<void*> kernel_params(const KernelCall& call) {
  std::vector<void*> params;
  params.reserve(call.offsets.size());
  for (size_t offset : call.offsets) params.push_back(const_cast<unsigned char*>(call.args.data() + offset));
  return params;
}

Graphs::~Graphs() {
  for (auto& [shape, entry] : graphs_) destroy(*entry);
}

void Graphs::destroy(Entry& entry) {
  const Driver& d = driver();
  if (entry.exec) d.cuGraphExecDestroy(entry.exec);
  if (entry.graph) d.cuGraphDestroy(entry.graph);
  entry = {};
}

std::unique_ptr<Graphs::Entry> Graphs::build(std::span<const KernelCall> calls) {
  const Driver& d = driver();
  auto entry = std::make_unique<Entry>();
  try {
    check(d.cuGraphCreate(&entry->graph, 0), "cuGraphCreate");
    for (const KernelCall& call : calls) {
      std::vector<void*> params;
      const CUDA_KERNEL_NODE_PARAMS p = node_params(call, params);
      CUgraphNode node = nullptr;
      const CUgraphNode* previous = entry->nodes.empty() ? nullptr : &entry->nodes.back();
      const CUresult r = d.cuGraphAddKernelNode(&node, entry->graph, previous, previous ? 1 : 0, &p);
      if (r != CUDA_SUCCESS) // names the kernel: a batch holds many (the message only on failure)
        check(r, "cuGraphAddKernelNode(" + std::string(call.name) + ", node " +
                     std::to_string(entry->nodes.size()) + " of " + std::to_string(calls.size()) + ")");
      entry->nodes.push_back(node);
      entry->args.push_back(call.args);
    }
    check(d.cuGraphInstantiate(&entry->exec, entry->graph, 0), "cuGraphInstantiate");
  } catch (...) {
    destroy(*entry);
    throw;
  }
  return entry;
}

void Graphs::launch(std::span<const KernelCall> calls) {
  const Driver& d = driver();
  Shape shape;
  for (const KernelCall& c : calls) {
    shape.functions.push_back(c.function);
    shape.dims.push_back({c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]});
  }
  auto it = graphs_.find(shape);
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) {
      for (auto& [s, entry] : graphs_) destroy(*entry);
      graphs_.clear();
    }
    it = graphs_.emplace(std::move(shape), build(calls)).first;
  } else {
    Entry& entry = *it->second;
    for (size_t i = 0; i < calls.size(); ++i) {
      if (entry.args[i] == calls[i].args) continue;
      std::vector<void*> params;
      const CUDA_KERNEL_NODE_PARAMS p = node_params(calls[i], params);
      const CUresult r = d.cuGraphExecKernelNodeSetParams(entry.exec, entry.nodes[i], &p);
      if (r != CUDA_SUCCESS)
        check(r, "cuGraphExecKernelNodeSetParams(" + std::string(calls[i].name) + ", node " +
                     std::to_string(i) + " of " + std::to_string(calls.size()) + ")");
      entry.args[i] = calls[i].args;
    }
  }
  check(d.cuGraphLaunch(it->second->exec, stream_.get()), "cuGraphLaunch");
}

void Graphs::forget(CUfunction function) {
  std::erase_if(graphs_, [&](auto& item) {
    for (CUfunction f : item.first.functions)
      if (f == function) {
        destroy(*item.second);
        return true;
      }
    return false;
  });
}

} // namespace tg::cuda
