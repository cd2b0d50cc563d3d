// ONNX's GridSample: Tensor::grid_sample (torch.nn.functional.grid_sample's semantics, which ONNX
// follows). Opset 16's modes are torch's names; opset 20 renamed them ("linear", "cubic") and
// allowed N-d inputs, of which the 2-d (N, C, H, W) case is supported.
#include "kernel/onnx/ops.hpp"

#include <string>

namespace tg::onnx {
namespace {

std::vector<Value> grid_sample(OpContext& ctx) {
  const Tensor& X = ctx.tensor(0);
  const Tensor& grid = ctx.tensor(1);
  std::string mode = ctx.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") ctx.fail("unknown mode \"" + mode + "\"");
  std::string padding_mode = ctx.attr_string("padding_mode", "zeros");
  if (padding_mode != "zeros" && padding_mode != "border" && padding_mode != "reflection")
    ctx.fail("unknown padding_mode \"" + padding_mode + "\"");
  int64_t align_corners = ctx.attr_int("align_corners", 0);
  if (align_corners != 0 && align_corners != 1) ctx.fail("align_corners must be 0 or 1");
  if (X.ndim() != 4) {
    if (X.ndim() > 4 && grid.ndim() == X.ndim()) ctx.unsupported("GridSample over more than 2 spatial dims");
    ctx.fail("X must be (N, C, H, W), got " + dims_str(X.shape()));
  }
  if (grid.ndim() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != X.shape()[0])
    ctx.fail("grid must be (N, H_out, W_out, 2) with X's N, got grid " + dims_str(grid.shape()) + " for X " +
             dims_str(X.shape()));
  if (!grid.dtype().is_float()) ctx.fail("grid must be a float tensor, got " + grid.dtype().name());
  Tensor Y = X.grid_sample(grid, mode, padding_mode, align_corners != 0);
  return {Y.dtype() == X.dtype() ? Y : Y.cast(X.dtype())};
}

} // namespace

void register_grid_sample_ops(OpTable& t) { t["GridSample"] = grid_sample; }

} // namespace tg::onnx
