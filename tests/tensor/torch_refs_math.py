#!/usr/bin/python3
# Prints the PyTorch (and, for ONNX-only semantics, numpy) reference values that
# tests/tensor/math_test.cpp and tests/tensor/indexing_test.cpp hold as literals:
#   /usr/bin/python3 tests/tensor/torch_refs_math.py
# Inputs are literals or pat() below (the tests' pat(): the same formula).
import math
import warnings

import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(0)
warnings.filterwarnings("ignore", message="scatter_reduce")
nan, inf = float("nan"), float("inf")


def fmt(v, digits=9):
    v = float(v)
    if math.isnan(v):
        return "kNan"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return "%.*g" % (digits, v)


def lst(values, digits=9):
    return "{" + ", ".join(fmt(v, digits) for v in np.asarray(values, dtype=np.float64).reshape(-1)) + "}"


def ilst(values):
    return "{" + ", ".join(str(int(v)) for v in np.asarray(values).reshape(-1)) + "}"


def pat(shape, a, b):
    n = int(np.prod(shape))
    return torch.tensor([((i * a + b) % 13 - 6) / 4 for i in range(n)], dtype=torch.float32).reshape(shape)


def section(name):
    print("\n// ================= " + name)


# ---------------------------------------------------------------- math_test.cpp
section("math_test.cpp: unary ops, float32 and float64")
UNARY = {
    "erf": (torch.erf, [-3, -1.5, -0.7, -0.2, 0, 1e-3, 0.3, 0.49, 0.51, 1, 2.5, 5, inf, -inf, nan]),
    "round": (torch.round, [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.6, 1.4, 2.6, 3.5, -3.5, 1e8 + 2, inf, nan]),
    "asin": (torch.asin, [-1, -0.999, -0.5, -0.1, 0, 0.05, 0.3, 0.7, 0.9999, 1, 1.5]),
    "acos": (torch.acos, [-1, -0.999, -0.5, -0.1, 0, 0.05, 0.3, 0.7, 0.9999, 1, 1.5]),
    "atan": (torch.atan, [-1e6, -3, -1, -0.5, -0.01, 0, 0.2, 0.66, 0.7, 2.4, 2.5, 100, inf, -inf, nan]),
    "sinh": (torch.sinh, [-10, -2, -0.6, -0.4, -1e-3, 0, 0.3, 0.5, 1, 5, 88.5]),
    "cosh": (torch.cosh, [-10, -2, -0.6, -0.4, -1e-3, 0, 0.3, 0.5, 1, 5, 88.5]),
    "asinh": (torch.asinh, [-1e20, -5, -0.5, -0.1, 0, 0.01, 0.124, 0.126, 1, 3, 1e20]),
    "acosh": (torch.acosh, [1, 1.0001, 1.5, 2, 10, 1e20, 0.5]),
    "atanh": (torch.atanh, [-1, -0.999, -0.5, -0.12, -0.01, 0, 0.1, 0.13, 0.7, 0.9999, 1, 1.5]),
    "elu": (F.elu, [-5, -1, -0.1, 0, 0.1, 1, 3, 100]),
    "elu0.5": (lambda x: F.elu(x, 0.5), [-5, -1, -0.1, 0, 0.1, 1, 3, 100]),
    "selu": (F.selu, [-5, -1, -0.1, 0, 0.1, 1, 3, 100]),
    "celu2": (lambda x: F.celu(x, 2.0), [-5, -1, -0.1, 0, 0.1, 1, 3, 100]),
    "hardsigmoid": (F.hardsigmoid, [-4, -3, -1, 0, 1, 2.9, 3, 4]),
    "hardsigmoid0.2": (lambda x: torch.clamp(0.2 * x + 0.5, 0, 1), [-4, -3, -1, 0, 1, 2.4, 3, 4]),
    "hardswish": (F.hardswish, [-4, -3, -1, 0, 1, 2.9, 3, 4]),
    "mish": (F.mish, [-20, -5, -1, -0.1, 0, 0.1, 1, 5, 30, 100]),
    "softsign": (F.softsign, [-100, -2, -0.5, 0, 0.5, 2, 100]),
}
for dtype, digits, tag in ((torch.float32, 9, "f32"), (torch.float64, 17, "f64")):
    print("// %s: {name, inputs, outputs}" % tag)
    for name, (f, xs) in UNARY.items():
        x = torch.tensor(xs, dtype=dtype)
        print('{"%s", %s, %s},' % (name, lst(x, digits), lst(f(x), digits)))

section("math_test.cpp: gradients of f(x).sum(), float32")
GRAD = {
    "erf": [-3, -1.5, -0.7, -0.2, 0, 0.3, 0.49, 0.51, 1, 2.5, 5],
    "elu": [-5, -1, -0.1, 0, 0.1, 1, 3, 100],
    "selu": [-5, -1, -0.1, 0.1, 1, 3],
    "celu2": [-5, -1, -0.1, 0, 0.1, 1, 3],
    "atan": [-3, -1, -0.5, 0, 0.2, 0.7, 2.5, 100],
    "asin": [-0.9, -0.5, 0, 0.3, 0.7],
    "acos": [-0.9, -0.5, 0, 0.3, 0.7],
    "sinh": [-2, -0.4, 0, 0.3, 1],
    "asinh": [-5, -0.1, 0, 0.126, 3],
    "atanh": [-0.7, -0.1, 0, 0.13, 0.5],
    "acosh": [1.5, 2, 10],
    "mish": [-20, -5, -1, -0.1, 0, 0.1, 1, 5, 30, 100],
    "softsign": [-2, -0.5, 0, 0.5, 2],
    "hardswish": [-4, -1, 0, 1, 2.5, 4],
    "round": [-1.3, 0.2, 2.7],
}
for name, xs in GRAD.items():
    x = torch.tensor(xs, dtype=torch.float32, requires_grad=True)
    UNARY[name][0](x).sum().backward()
    print('{"%s", %s, %s},' % (name, lst(x.detach()), lst(x.grad)))

# ---------------------------------------------------------------- indexing_test.cpp
section("indexing_test.cpp: pad of x = pat((2, 3, 4), 5, 1) (numpy.pad after cropping; wrap by np.take)")
x = pat((2, 3, 4), 5, 1).numpy()
PADS = [
    ("constant", [(0, 0), (1, 2), (2, -1)]),
    ("reflect", [(1, 0), (2, 1), (3, 2)]),
    ("reflect", [(0, 0), (0, 0), (5, 7)]),
    ("edge", [(1, 1), (0, 2), (3, 0)]),
    ("wrap", [(0, 1), (2, 2), (5, 1)]),
    ("reflect", [(0, 0), (-1, 1), (2, -1)]),
    ("wrap", [(-1, 0), (1, -2), (0, 0)]),
]
for mode, pads in PADS:
    crop = tuple(slice(max(0, -b), n - max(0, -a)) for (b, a), n in zip(pads, x.shape))
    pos = [(max(0, b), max(0, a)) for b, a in pads]
    if mode == "wrap":  # periodic; numpy < 1.25 wraps pads wider than the dim wrongly
        y = x[crop]
        for axis, (b, a) in enumerate(pos):
            y = np.take(y, np.arange(-b, y.shape[axis] + a), axis=axis, mode="wrap")
    else:
        y = np.pad(x[crop], pos, mode=mode, **({"constant_values": 1.5} if mode == "constant" else {}))
    cpp_pads = "{" + ", ".join("{%d, %d}" % p for p in pads) + "}"
    print("{PadMode::%s, %s, %s, %s}," % (mode, cpp_pads, ilst(y.shape), lst(y)))

section("indexing_test.cpp: pad reflect gradient, x = pat((1, 1, 3, 4), 3, 2), upstream pat(y, 7, 3)")
xt = pat((1, 1, 3, 4), 3, 2).requires_grad_()
y = F.pad(xt, (1, 2, 2, 1), mode="reflect")
(y * pat(tuple(y.shape), 7, 3)).sum().backward()
print("// y", list(y.shape))
print(lst(y.detach()))
print("// dx")
print(lst(xt.grad))

section("indexing_test.cpp: scatter_elements, data = pat((3, 4), 5, 2), src = pat(index shape, 3, 1)")
data = pat((3, 4), 5, 2)
CASES = [
    (0, [[1, 0, 2, 2], [0, 2, 1, 0]], "none"),
    (0, [[1, 0, 2, 0], [1, 2, 1, 0], [0, 0, 1, 0]], "sum"),
    (0, [[1, 0, 2, 0], [1, 2, 1, 0], [0, 0, 1, 0]], "prod"),
    (0, [[1, 0, 2, 0], [1, 2, 1, 0], [0, 0, 1, 0]], "amax"),
    (0, [[1, 0, 2, 0], [1, 2, 1, 0], [0, 0, 1, 0]], "amin"),
    (1, [[3, 0, 3], [1, 1, 2]], "sum"),
    (1, [[3, 0], [1, 2]], "none"),
]
for axis, index, reduce in CASES:
    idx = torch.tensor(index)
    src = pat(tuple(idx.shape), 3, 1)
    if reduce == "none":
        out = data.scatter(axis, idx, src)
    else:
        out = data.scatter_reduce(axis, idx, src, reduce, include_self=True)
    name = {"none": "none", "sum": "add", "prod": "mul", "amax": "max", "amin": "min"}[reduce]
    print("{%d, %s, %s, ScatterReduce::%s, %s}," % (axis, ilst(idx.shape), ilst(idx), name, lst(out)))
d = data.clone().requires_grad_()
idx = torch.tensor([[1, 0, 2, 0], [1, 2, 1, 0], [0, 0, 1, 0]])
s = pat((3, 4), 3, 1).requires_grad_()
out = d.scatter_add(0, idx, s)
(out * pat((3, 4), 7, 3)).sum().backward()
print("// scatter add gradient, upstream pat((3, 4), 7, 3): d data, d src")
print(lst(d.grad))
print(lst(s.grad))


def linear_nd(ix, dims):
    ix = [int(v) + (dims[i] if v < 0 else 0) for i, v in enumerate(ix)]
    return tuple(ix)


section("indexing_test.cpp: gather_nd, data = pat((2, 3, 4), 5, 1) (ONNX GatherND by loops)")
data = pat((2, 3, 4), 5, 1).numpy()
GND = [
    (0, [[[1, -1], [0, 2]], [[1, 0], [0, 0]]]),
    (1, [[[2], [0]], [[1], [1]]]),
    (1, [[[2, 3], [0, -4]], [[1, 1], [-1, 0]]]),
]
for b, indices in GND:
    ind = np.array(indices)
    outs = []
    for pos in np.ndindex(*ind.shape[:-1]):
        row = ind[pos]
        sub = data[pos[:b]]
        outs.append(sub[linear_nd(row, sub.shape)])
    y = np.array(outs).reshape(ind.shape[:-1] + data.shape[b + ind.shape[-1]:])
    print("{%d, %s, %s, %s, %s}," % (b, ilst(ind.shape), ilst(ind), ilst(y.shape), lst(y)))

section("indexing_test.cpp: scatter_nd, data = pat((4, 3), 5, 2), updates = pat(shape, 3, 1)")
data = pat((4, 3), 5, 2).numpy()
SND = [
    ([[2], [0]], "none"),
    ([[2], [0], [2]], "add"),
    ([[2], [0], [2]], "mul"),
    ([[2], [0], [2]], "max"),
    ([[2], [0], [2]], "min"),
    ([[1, 2], [3, -1], [-4, 0]], "none"),
]
for indices, reduce in SND:
    ind = np.array(indices)
    k = ind.shape[-1]
    upd = pat(ind.shape[:-1] + data.shape[k:], 3, 1).numpy()
    out = data.copy()
    for pos in np.ndindex(*ind.shape[:-1]):
        t = linear_nd(ind[pos], data.shape)
        u = upd[pos]
        out[t] = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum,
                  "min": np.minimum}[reduce](out[t], u)
    print("{%s, %s, ScatterReduce::%s, %s}," % (ilst(ind.shape), ilst(ind), reduce, lst(out)))

section("indexing_test.cpp: topk and sort")
x = torch.randn(3, 7)
print("// x = torch.randn(3, 7) after torch.manual_seed(0)")
print(lst(x))
for k, dim, largest in ((3, -1, True), (3, -1, False), (2, 0, True), (7, 1, False)):
    v, i = torch.topk(x, k, dim=dim, largest=largest)
    print("{%d, %d, %s, %s, %s}," % (k, dim, str(largest).lower(), lst(v), ilst(i)))
for desc in (False, True):
    v, i = torch.sort(x, dim=0, descending=desc, stable=True)
    print("// sort dim=0 descending=%s" % desc)
    print("{%s, %s}," % (lst(v), ilst(i)))
ties = torch.tensor([3, 1, 3, 2, 1, 3, nan, -inf, 0, nan])
for desc in (False, True):
    v, i = torch.sort(ties, descending=desc, stable=True)
    print("// ties %s sort descending=%s" % (lst(ties), desc))
    print("{%s, %s}," % (lst(v), ilst(i)))

section("indexing_test.cpp: nonzero")
x = torch.tensor([[0, 1.5, 0, 0], [nan, 0, -2, 0], [0, 0, 0, 1e-30]])
print("// x", lst(x))
print(ilst(torch.nonzero(x).T), list(torch.nonzero(x).T.shape))

section("indexing_test.cpp: tril / triu of pat((2, 3, 4), 5, 1)")
x = pat((2, 3, 4), 5, 1)
for dg in (-1, 0, 2):
    print("{%d, %s, %s}," % (dg, lst(torch.tril(x, dg)), lst(torch.triu(x, dg))))

section("indexing_test.cpp: einsum, operand i = pat(shape_i, 3 + 2i, 1 + i)")
EIN = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("ij->", [(3, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("ba,ab", [(3, 2), (2, 3)]),
    ("...i,i", [(2, 3), (3,)]),
    ("Ab,bc", [(2, 3), (3, 4)]),
    ("i...->...", [(3, 2, 2)]),
    ("i i , i", [(2, 2), (2,)]),
]
for formula, shapes in EIN:
    ops = [pat(s, 3 + 2 * i, 1 + i) for i, s in enumerate(shapes)]
    y = torch.einsum(formula, *ops)
    print('{"%s", {%s}, %s, %s},' % (formula, ", ".join(ilst(s) for s in shapes), ilst(y.shape), lst(y)))
