#!/usr/bin/env python3
"""The PyTorch (CPU) peer of `tg bench core` and `tg bench ops --beam`: the same workloads, timed
the same way by both (--rows picks which; every row is built and timed by the same code).

Prints one flat JSON object on stdout (numbers and strings only), for example
  {"torch_version": "1.13.1", "threads": 2, "matmul1024_ms": 12.3, ...}
Times are medians over --repeat runs after warm-up; *_ms in milliseconds, *_us in microseconds.
Freed memory stays in the process (peer_timing.keep_freed_memory), as our runtime's buffers do.
`tg` runs it in several fresh processes and keeps each figure's min / median / max.
Usable on its own: /usr/bin/python3 tools/bench/peer_torch.py --repeat 10 --rows conv
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from peer_timing import keep_freed_memory, median_ms

ROWS = ("matmul1024", "matmul2048", "elementwise", "sum", "conv", "dispatch", "cold")


COLD_CHILD = r"""
import time
t0 = time.perf_counter()
import torch
torch.set_num_threads({threads})
a = torch.arange(1024, dtype=torch.float32)
b = torch.ones(1024, dtype=torch.float32)
c = a + b
v = c[5].item()
ms = (time.perf_counter() - t0) * 1e3
assert v == 6.0
print(ms)
"""


def cold_start(threads, repeat):
    """import torch + first op in a fresh interpreter: (median in-process ms, median spawn-to-exit wall ms)."""
    code = COLD_CHILD.format(threads=threads)
    inproc, wall = [], []
    for i in range(repeat + 1):  # the first run warms the page cache and is dropped
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        w = (time.perf_counter() - t0) * 1e3
        if i:
            inproc.append(float(out.strip().splitlines()[-1]))
            wall.append(w)
    return statistics.median(inproc), statistics.median(wall)


def dispatch_us(fn, repeat, calls=1000):
    """Median over `repeat` samples of the mean per-call time (µs) of `calls` calls."""
    for _ in range(calls // 10):
        fn(0)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for k in range(calls):
            fn(k & 1)
        samples.append((time.perf_counter() - t0) * 1e6 / calls)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cold-repeat", type=int, default=5)
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated, of: " + ", ".join(ROWS))
    args = ap.parse_args()
    rows = args.rows.split(",")
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error("unknown rows: " + ", ".join(unknown))
    malloc = keep_freed_memory()

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)  # all cores, as our CPU plugin and OpenBLAS use
    torch.manual_seed(0)
    r = args.repeat
    res = {"torch_version": torch.__version__.split("+")[0], "threads": torch.get_num_threads(), "repeat": r,
           "mkldnn": str(torch.backends.mkldnn.is_available()), "malloc": malloc}

    with torch.no_grad():
        for n in (1024, 2048):
            if "matmul%d" % n in rows:
                a, b = torch.rand(n, n), torch.rand(n, n)
                res["matmul%d_ms" % n] = median_ms(lambda: torch.matmul(a, b), r)
                del a, b

        if "elementwise" in rows or "sum" in rows:
            n = 16 * 1024 * 1024
            a, b, c = torch.rand(n), torch.rand(n), torch.rand(n)
            if "elementwise" in rows:
                res["elementwise_ms"] = median_ms(lambda: ((a + b) * c).relu(), r)
            if "sum" in rows:
                res["sum_ms"] = median_ms(lambda: a.sum(), r)
            del a, b, c

        if "conv" in rows:
            x, w = torch.rand(32, 32, 28, 28), torch.rand(64, 32, 3, 3)
            res["conv_ms"] = median_ms(lambda: F.conv2d(x, w), r)
            del x, w

        if "dispatch" in rows:
            xs = [(torch.rand(1024), torch.rand(1024)) for _ in range(2)]
            out = torch.empty(1024)
            res["dispatch_us"] = dispatch_us(lambda i: xs[i][0] + xs[i][1], r)
            res["dispatch_out_us"] = dispatch_us(lambda i: torch.add(xs[i][0], xs[i][1], out=out), r)

    if "cold" in rows:
        res["cold_ms"], res["cold_wall_ms"] = cold_start(args.threads, max(1, min(r, args.cold_repeat)))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
