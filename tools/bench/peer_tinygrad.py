#!/usr/bin/env python3
"""The tinygrad peer of `tg bench ops --device D`: the same workloads, sizes and repeat count.

Runs on tinygrad's OpenCL backend (--device CL; on this machine PoCL, the runtime our OPENCL
plugin uses) or its CPU backend (--device CPU). Prints one flat JSON object on stdout, e.g.
  {"tinygrad_version": "0.14.0", "device": "CL", "device_name": "...", "add_ms": 12.3,
   "add_shape": "16777216", ...}
Times are wall-clock medians over --repeat runs after two warm-up runs, in milliseconds: realize
of a freshly built expression, then Device.synchronize (the same thing `tg bench ops` times).
The *_shape keys let `tg bench ops` check that both sides measured the same sizes.
Usable on its own: python3 tools/bench/peer_tinygrad.py --device CL --repeat 10
"""
import argparse
import json
import os
import statistics
import sys
import time


# Row shapes; must match kSizes in tools/tg/cmd_bench_ops.cpp (the *_shape keys catch a mismatch).
SIZES = {
    False: {"n": 1 << 24, "m": 4096, "long": (64, 262144), "short": (1 << 20, 16), "softmax": (4096, 1024),
            "mm": (256, 512), "conv_x": (8, 16, 32, 32), "conv_w": (32, 16, 3, 3)},
    True: {"n": 4096, "m": 64, "long": (4, 4096), "short": (1024, 16), "softmax": (16, 64),
           "mm": (16, 32), "conv_x": (1, 4, 8, 8), "conv_w": (4, 4, 3, 3)},
}


def shape_str(shape):
    return "x".join(str(d) for d in shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="CL", help="tinygrad device: CL (OpenCL) or CPU")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--small", action="store_true", help="tiny sizes (smoke runs)")
    args = ap.parse_args()
    os.environ["DEV"] = args.device  # before importing tinygrad: it picks the default device at import

    from tinygrad import Context, Device, Tensor
    from importlib.metadata import version

    dev = Device[args.device]
    res = {"tinygrad_version": version("tinygrad"), "device": args.device, "repeat": args.repeat}
    name = getattr(dev, "device_name", None) or getattr(getattr(dev, "renderer", None), "device", None)
    if name is None and args.device.startswith("CL"):
        try:
            from tinygrad.runtime.ops_cl import cl
            import ctypes
            buf = ctypes.create_string_buffer(256)
            cl.clGetDeviceInfo(dev.device_id, cl.CL_DEVICE_NAME, 256, buf, None)
            name = buf.value.decode()
        except Exception:  # the name is a label only
            name = None
    res["device_name"] = str(name) if name else args.device

    def median_ms(key, shape, fn, noopt=False):
        def run():
            with Context(NOOPT=int(noopt)):
                fn().realize()
            dev.synchronize()
        for _ in range(2):
            run()
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        res[key + "_ms"] = statistics.median(times)
        res[key + "_shape"] = shape_str(shape)

    z = SIZES[args.small]
    Tensor.manual_seed(0)
    rand = lambda *shape: Tensor.rand(*shape).contiguous().realize()
    n, m = z["n"], z["m"]
    a, b = rand(n), rand(n)
    median_ms("add", (n,), lambda: a + b)
    median_ms("mul", (n,), lambda: a * b)
    median_ms("sum", (n,), lambda: a.sum())
    median_ms("sum_noopt", (n,), lambda: a.sum(), noopt=True)
    del a, b
    x, w, bias = rand(m, m), rand(m), rand(m)
    median_ms("act", (m, m), lambda: (x * w + bias).relu())
    median_ms("sum_ax0", (m, m), lambda: x.sum(0))
    median_ms("sum_ax1", (m, m), lambda: x.sum(1))
    median_ms("max_ax1", (m, m), lambda: x.max(1))
    del x, w, bias
    long = rand(*z["long"])
    median_ms("sum_long", z["long"], lambda: long.sum(1))
    median_ms("sum_long_noopt", z["long"], lambda: long.sum(1), noopt=True)
    del long
    short = rand(*z["short"])
    median_ms("sum_short", z["short"], lambda: short.sum(1))
    del short
    sm = rand(*z["softmax"])
    median_ms("softmax", z["softmax"], lambda: sm.softmax(-1))
    del sm
    for key, k in zip(("mm_a", "mm_b"), z["mm"]):
        p, q = rand(k, k), rand(k, k)
        median_ms(key, (k, k), lambda: p @ q)
    cx, cw = rand(*z["conv_x"]), rand(*z["conv_w"])
    median_ms("conv", z["conv_x"] + z["conv_w"], lambda: cx.conv2d(cw))
    print(json.dumps(res))


if __name__ == "__main__":
    sys.exit(main())
