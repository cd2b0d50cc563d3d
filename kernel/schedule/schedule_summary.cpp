#include "kernel/schedule/schedule_summary.hpp"

#include "kernel/schedule/buffer.hpp"

#include <algorithm>

namespace tg {

namespace {

void add_unique(std::vector<std::string>& names, std::string name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::string axes_str(const std::vector<int64_t>& axes) {
  std::string out;
  for (auto a : axes) out += (out.empty() ? "" : ", ") + std::to_string(a);
  return "(" + out + ")";
}

} // namespace

std::string summarize(const ScheduleItem& item) {
  const UOpRef& root = item.ast->src(0);
  const BufferArg& out = buffer_arg(item.buffers[0]);
  if (root->op() == Ops::COPY) {
    std::string from = item.buffers.size() > 1 ? buffer_arg(item.buffers[1]).device() : "?";
    return "copy " + dims_str(item.shape) + " " + from + " -> " + out.device();
  }
  std::vector<std::string> elementwise, reduces, movement;
  for (const auto& u : toposort(item.ast)) {
    OpCategory c = op_category(u->op());
    if (c == OpCategory::Unary || c == OpCategory::Binary || c == OpCategory::Ternary)
      add_unique(elementwise, std::string(op_name(u->op())));
    else if (c == OpCategory::Movement)
      add_unique(movement, std::string(op_name(u->op())));
    else if (const auto* r = u->arg_if<ReduceArg>(); r && u->op() == Ops::REDUCE_AXIS)
      reduces.push_back((r->op == Ops::ADD ? std::string("SUM") : std::string(op_name(r->op))) +
                        " over axes " + axes_str(r->axes));
  }
  size_t inputs = item.buffers.size() - 1;
  std::string line = dims_str(item.shape) + " " + item.buffers[0]->dtype().name() + " on " + out.device() +
                     ", reads " + std::to_string(inputs) + (inputs == 1 ? " buffer" : " buffers");
  if (!elementwise.empty()) line += "; elementwise " + joined(elementwise);
  for (const auto& r : reduces) line += "; reduce " + r;
  if (!movement.empty()) line += "; movement " + joined(movement);
  return line;
}

std::string summarize(std::span<const ScheduleItem> items) {
  if (items.empty()) return "no kernels\n";
  std::string out = std::to_string(items.size()) + (items.size() == 1 ? " kernel:\n" : " kernels:\n");
  for (size_t i = 0; i < items.size(); ++i)
    out += "  kernel " + std::to_string(i) + ": " + summarize(items[i]) + "\n";
  return out;
}

} // namespace tg
