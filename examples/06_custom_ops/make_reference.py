#!/usr/bin/env python3
"""Writes reference.txt for 06_custom_ops: gelu (exact, with math.erf), rms_norm and swiglu computed
in float64 by plain Python (no numpy, no tinygrad) on the same inputs custom_ops.cpp builds.
Run: python3 examples/06_custom_ops/make_reference.py > examples/06_custom_ops/reference.txt"""
import math

# The inputs, exactly as custom_ops.cpp makes them (all exact in float32).
gelu_x = [(k - 8) / 4 for k in range(16)]
rms_x = [[((8 * r + c) % 7 - 3) / 2 + r * 0.25 for c in range(8)] for r in range(2)]
rms_w = [1 + c / 8 for c in range(8)]
rms_eps = 1e-6
swi_x = [[(r * 4 + c) / 8 - 0.5 for c in range(4)] for r in range(2)]
swi_w = [[((i * 3 + j) % 5 - 2) / 4 for j in range(3)] for i in range(4)]
swi_v = [[((i * 2 + j) % 7 - 3) / 6 for j in range(3)] for i in range(4)]


def gelu(x):
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


def rms_norm(row, w, eps):
    scale = 1 / math.sqrt(sum(v * v for v in row) / len(row) + eps)
    return [v * scale * wi for v, wi in zip(row, w)]


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def silu(x):
    return x / (1 + math.exp(-x))


def swiglu(x, w, v):
    g, u = matmul(x, w), matmul(x, v)
    return [[silu(g[i][j]) * u[i][j] for j in range(len(g[0]))] for i in range(len(g))]


def line(name, values):
    print(name, " ".join(repr(float(v)) for v in values))


print("# Reference values for examples/06_custom_ops (float64, plain Python: math.erf, math.sqrt, math.exp).")
print("# Made by examples/06_custom_ops/make_reference.py; one line per output, flattened row-major.")
line("gelu", [gelu(x) for x in gelu_x])
line("rms_norm", [v for row in rms_x for v in rms_norm(row, rms_w, rms_eps)])
line("swiglu", [v for row in swiglu(swi_x, swi_w, swi_v) for v in row])
