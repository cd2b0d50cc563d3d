#!/usr/bin/python3
"""PyTorch reference values for tests/tensor/grid_sample_test.cpp.

Prints C++ NdArray literals; grid_sample_test.cpp holds them verbatim (regenerate with
`/usr/bin/python3 tests/tensor/torch_refs_grid_sample.py > /tmp/refs.inc` and paste the output
over the generated block). Inputs are deterministic, the same formulas as the test's helpers:
pat(shape, a, b)[i] = ((i*a + b) % 13 - 6) / 4 for the input, and
grid_pat(shape, a, b)[i] = ((i*a + b) % 17 - 8) / 5 for the grid (points in [-1.6, 1.6], so some
fall outside [-1, 1]). Computed in float32, as the test runs.
"""
import math

import torch
import torch.nn.functional as F


def pat(shape, a, b):
    n = math.prod(shape)
    return (((torch.arange(n) * a + b) % 13 - 6) / 4.0).reshape(shape).float()


def grid_pat(shape, a, b):
    n = math.prod(shape)
    return (((torch.arange(n) * a + b) % 17 - 8) / 5.0).reshape(shape).float()


def emit(name, t, note):
    t = t.detach().to(torch.float64).contiguous()
    vals = ", ".join("%.9g" % v for v in t.flatten().tolist())
    shape = ", ".join(str(s) for s in t.shape)
    print("// %s" % note)
    print("const NdArray %s{{%s}, {%s}};" % (name, shape, vals))


x = pat((2, 2, 3, 4), 3, 1)
grid = grid_pat((2, 2, 5, 2), 7, 3)
for mode in ("bilinear", "nearest", "bicubic"):
    for padding in ("zeros", "border", "reflection"):
        for ac in (False, True):
            name = "k%s%s%s" % (mode.capitalize(), padding.capitalize(), "Ac" if ac else "")
            emit(name, F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=ac),
                 "grid_sample %s %s align_corners=%s" % (mode, padding, ac))

# gradients: bilinear, upstream pat(out shape, 3, 5)
for padding, ac in (("zeros", False), ("reflection", True)):
    xg = x.clone().requires_grad_()
    gg = grid.clone().requires_grad_()
    y = F.grid_sample(xg, gg, mode="bilinear", padding_mode=padding, align_corners=ac)
    dx, dgrid = torch.autograd.grad(y, (xg, gg), pat(y.shape, 3, 5))
    suffix = "%s%s" % (padding.capitalize(), "Ac" if ac else "")
    emit("kBilinear%sDx" % suffix, dx, "d/dx of grid_sample bilinear %s align_corners=%s" % (padding, ac))
    if padding == "zeros":
        emit("kBilinear%sDgrid" % suffix, dgrid,
             "d/dgrid of grid_sample bilinear %s align_corners=%s" % (padding, ac))
