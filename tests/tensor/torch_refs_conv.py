#!/usr/bin/python3
"""PyTorch reference values for tests/tensor/conv_test.cpp.

Prints C++ NdArray literals; conv_test.cpp holds them verbatim (regenerate with
`/usr/bin/python3 tests/tensor/torch_refs_conv.py > /tmp/refs.inc` and paste the output over the
generated block). Inputs are deterministic: pat(shape, a, b)[i] = ((i*a + b) % 13 - 6) / 4 over the
flat index i, the same formula as conv_test.cpp's pat(). Cases torch cannot express directly
(asymmetric padding, ONNX's LRN window for an even size, LpPool's partial ceil_mode windows) use
torch on an explicitly padded/cropped input or a direct loop, as noted per case.
"""
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def pat(shape, a, b):
    n = math.prod(shape)
    return (((torch.arange(n) * a + b) % 13 - 6) / 4.0).reshape(shape)


def emit(name, t, note):
    t = t.detach().to(torch.float64).contiguous()
    vals = ", ".join("%.9g" % v for v in t.flatten().tolist())
    shape = ", ".join(str(s) for s in t.shape)
    print("// %s" % note)
    print("const NdArray %s{{%s}, {%s}};" % (name, shape, vals))


def grads(out, g, *inputs):
    return torch.autograd.grad(out, inputs, g)


# ---- convolution ----
x = pat((2, 4, 9), 3, 1)
w = pat((6, 2, 3), 5, 2)
b = pat((6,), 7, 3)
emit("kConv1dGroups", F.conv1d(F.pad(x, (1, 2)), w, b, stride=2, groups=2),
     "conv1d groups 2, stride 2, padding (1, 2), bias")

x = pat((1, 3, 10), 2, 0).requires_grad_()
w = pat((2, 3, 3), 4, 1).requires_grad_()
y = F.conv1d(x, w, None, padding=2, dilation=2)
g = pat(tuple(y.shape), 3, 5)
emit("kConv1dDilated", y, "conv1d dilation 2, padding (2, 2)")
dx, dw = grads(y, g, x, w)
emit("kConv1dDilatedDx", dx, "its input gradient for the upstream gradient pat(out, 3, 5)")
emit("kConv1dDilatedDw", dw, "its weight gradient")

x = pat((2, 2, 6, 7), 3, 2).requires_grad_()
w = pat((3, 2, 3, 2), 5, 1).requires_grad_()
b = pat((3,), 1, 0)
y = F.conv2d(F.pad(x, (2, 1, 1, 0)), w, b, stride=(2, 1), dilation=(1, 2))
g = pat(tuple(y.shape), 3, 5)
emit("kConv2dMixed", y, "conv2d stride (2, 1), dilation (1, 2), padding ((1, 0), (2, 1)), bias")
dx, dw = grads(y, g, x, w)
emit("kConv2dMixedDx", dx, "its input gradient for pat(out, 3, 5)")
emit("kConv2dMixedDw", dw, "its weight gradient")

x = pat((1, 4, 4, 5, 4), 3, 1)
w = pat((4, 2, 2, 3, 2), 5, 2)
emit("kConv3d", F.conv3d(F.pad(x, (1, 0, 0, 1, 1, 1)), w, None, stride=(1, 2, 1), dilation=(1, 1, 2), groups=2),
     "conv3d groups 2, stride (1, 2, 1), dilation (1, 1, 2), padding ((1, 1), (0, 1), (1, 0))")

# ---- transposed convolution ----
x = pat((2, 2, 5), 3, 1).requires_grad_()
w = pat((2, 3, 3), 5, 2).requires_grad_()
b = pat((3,), 2, 1)
y = F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1)
g = pat(tuple(y.shape), 3, 5)
emit("kConvT1d", y, "conv_transpose1d stride 2, padding 1, output_padding 1, bias")
dx, dw = grads(y, g, x, w)
emit("kConvT1dDx", dx, "its input gradient for pat(out, 3, 5)")
emit("kConvT1dDw", dw, "its weight gradient")

x = pat((1, 1, 4), 3, 1)
w = pat((1, 2, 2), 5, 2)
emit("kConvT1dCrop", F.conv_transpose1d(x, w, None, stride=3, padding=2),
     "conv_transpose1d stride 3, padding 2 (more than dilation*(k-1): the padded input is cropped)")

x = pat((1, 4, 3, 4), 3, 1)
w = pat((4, 1, 2, 3), 5, 2)
full = F.conv_transpose2d(x, w, None, stride=(2, 3), padding=0, output_padding=(1, 0), groups=2, dilation=(1, 2))
emit("kConvT2dGroups", full[:, :, 1:, : full.shape[3] - 2],
     "conv_transpose2d groups 2, stride (2, 3), dilation (1, 2), output_padding (1, 0), "
     "padding ((1, 0), (0, 2)) (torch: padding 0, output cropped)")

x = pat((1, 2, 3, 3), 3, 1).requires_grad_()
w = pat((2, 2, 3, 3), 5, 2).requires_grad_()
y = F.conv_transpose2d(x, w, None, stride=2, padding=1, output_padding=1)
g = pat(tuple(y.shape), 3, 5)
emit("kConvT2d", y, "conv_transpose2d stride 2, padding 1, output_padding 1")
dx, dw = grads(y, g, x, w)
emit("kConvT2dDx", dx, "its input gradient for pat(out, 3, 5)")
emit("kConvT2dDw", dw, "its weight gradient")

# ---- pooling ----
x = pat((1, 2, 8, 7), 5, 3)
emit("kMaxPool2d", F.max_pool2d(x, (3, 2), stride=2, padding=1, dilation=(2, 1), ceil_mode=True),
     "max_pool2d kernel (3, 2), stride 2, padding 1, dilation (2, 1), ceil_mode")
x = pat((1, 2, 5), 3, 1)
emit("kMaxPool1d", F.max_pool1d(x, 2, stride=2, padding=1, ceil_mode=True),
     "max_pool1d kernel 2, stride 2, padding 1, ceil_mode (a last window in the right padding is dropped)")
x = pat((1, 1, 5, 4, 5), 4, 2)
emit("kMaxPool3d", F.max_pool3d(x, 3, stride=2, padding=1, ceil_mode=True), "max_pool3d kernel 3, stride 2, padding 1, ceil_mode")

x = pat((1, 2, 6, 5), 3, 2).requires_grad_()
y = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True)
emit("kAvgPool2dInclude", y, "avg_pool2d kernel 3, stride 2, padding 1, ceil_mode, count_include_pad")
y = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
emit("kAvgPool2dExclude", y, "avg_pool2d kernel 3, stride 2, padding 1, ceil_mode, count_include_pad=False")
g = pat(tuple(y.shape), 3, 5)
(dx,) = grads(y, g, x)
emit("kAvgPool2dExcludeDx", dx, "its input gradient for pat(out, 3, 5)")
x = pat((2, 1, 7), 2, 1)
emit("kAvgPool1dInclude", F.avg_pool1d(x, 3, ceil_mode=True, count_include_pad=True),
     "avg_pool1d kernel 3, ceil_mode, count_include_pad")
emit("kAvgPool1dExclude", F.avg_pool1d(x, 3, ceil_mode=True, count_include_pad=False),
     "avg_pool1d kernel 3, ceil_mode, count_include_pad=False")
x = pat((1, 1, 3, 4, 3), 5, 1)
emit("kAvgPool3dExclude", F.avg_pool3d(x, 2, stride=1, padding=1, count_include_pad=False),
     "avg_pool3d kernel 2, stride 1, padding 1, count_include_pad=False")

x = pat((1, 2, 4, 6), 3, 1)
emit("kLpPool2d", F.lp_pool2d(x, 2, (2, 3), stride=(1, 2)), "lp_pool2d p 2, kernel (2, 3), stride (1, 2)")
x = pat((1, 2, 9), 5, 2) + 2
emit("kLpPool1d", F.lp_pool1d(x, 3, 3, stride=2), "lp_pool1d p 3, kernel 3, stride 2, input pat + 2 (positive)")
# ONNX LpPool with ceil_mode: torch's lp_pool scales partial windows, so a direct loop instead
x = pat((1, 1, 8), 3, 1)
vals = []
for o in range(3):  # windows at 0, 3, 6 (the last has 2 elements)
    vals.append(sum(abs(v) ** 1.5 for v in x[0, 0, 3 * o : 3 * o + 3].tolist()) ** (1 / 1.5))
emit("kLpPool1dCeil", torch.tensor(vals).reshape(1, 1, 3), "ONNX LpPool p 1.5, kernel 3, ceil_mode (direct loop)")

# ---- normalization ----
x = pat((2, 5, 3, 2), 3, 1)
emit("kLrn3", F.local_response_norm(x, 3, alpha=0.2, beta=0.75, k=1.5), "local_response_norm size 3, alpha 0.2, beta 0.75, k 1.5")
# ONNX LRN, even size: channels [c - floor((size-1)/2), c + ceil((size-1)/2)] (torch centers differently)
size, alpha, beta, k = 4, 0.3, 0.5, 2.0
sq = F.pad(x * x, (0, 0, 0, 0, (size - 1) // 2, size // 2))
s = sum(sq[:, i : i + 5] for i in range(size))
emit("kLrn4", x / (k + alpha / size * s) ** beta, "ONNX LRN size 4, alpha 0.3, beta 0.5, bias 2 (window formula)")

x = pat((2, 3, 4), 5, 2)
emit("kLayerNormLast2", F.layer_norm(x, [3, 4], eps=1e-5), "layer_norm over the last two dims, eps 1e-5")
m = x.mean(1, keepdim=True)
v = x.var(1, unbiased=False, keepdim=True)
emit("kLayerNormAxis1", (x - m) / torch.sqrt(v + 1e-3), "normalized over dim 1, eps 1e-3")

# ---- interpolation ----
x = pat((1, 2, 3, 4), 3, 1)
for name, size, mode, ac in [
    ("kNearest57", (5, 7), "nearest", None),
    ("kNearest68", (6, 8), "nearest", None),
    ("kNearest22", (2, 2), "nearest", None),
    ("kBilinear56", (5, 6), "bilinear", False),
    ("kBilinear23", (2, 3), "bilinear", False),
    ("kBilinearAc57", (5, 7), "bilinear", True),
    ("kBilinearAc13", (1, 3), "bilinear", True),
    ("kBicubic56", (5, 6), "bicubic", False),
    ("kBicubicAc47", (4, 7), "bicubic", True),
    ("kBicubic23", (2, 3), "bicubic", False),
]:
    kw = {} if ac is None else {"align_corners": ac}
    emit(name, F.interpolate(x, size=size, mode=mode, **kw), "interpolate %s to %s align_corners %s" % (mode, size, ac))
xg = x.clone().requires_grad_()
y = F.interpolate(xg, size=(5, 6), mode="bilinear", align_corners=False)
(dx,) = grads(y, pat(tuple(y.shape), 3, 5), xg)
emit("kBilinear56Dx", dx, "bilinear (5, 6)'s input gradient for pat(out, 3, 5)")
x = pat((1, 2, 5), 3, 1)
emit("kLinear8", F.interpolate(x, size=8, mode="linear", align_corners=False), "interpolate linear 5 -> 8")
emit("kNearest3", F.interpolate(x, size=3, mode="nearest"), "interpolate nearest 5 -> 3")
x = pat((1, 1, 2, 3, 2), 3, 1)
emit("kTrilinearAc", F.interpolate(x, size=(3, 4, 3), mode="trilinear", align_corners=True),
     "interpolate trilinear (2, 3, 2) -> (3, 4, 3) align_corners")
emit("kNearest3d", F.interpolate(x, size=(4, 2, 5), mode="nearest"), "interpolate nearest (2, 3, 2) -> (4, 2, 5)")
