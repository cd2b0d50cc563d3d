#!/usr/bin/env python3
"""The numpy (CPU) peer of `tg bench core` and `tg bench ops --beam`: matmul through numpy's BLAS
(Debian: OpenBLAS with libopenblas0-pthread, else the slow reference BLAS), the unfused
((a+b)*c).relu() and a full sum over 16M floats, float32.

Prints one flat JSON object on stdout (numbers and strings only), for example
  {"numpy_version": "1.24.2", "blas": "/usr/lib/.../libopenblasp-r0.3.21.so", "matmul1024_ms": 6.1, ...}
Times are medians over --repeat runs after two warm-up runs, in milliseconds. Freed memory stays in
the process (peer_timing.keep_freed_memory). `tg` runs it in several fresh processes.
Usable on its own: python3 tools/bench/peer_numpy.py --repeat 10 --rows matmul1024
"""
import argparse
import json
import os

from peer_timing import keep_freed_memory, median_ms

ROWS = ("matmul1024", "matmul2048", "elementwise", "sum")


def loaded_blas():
    """The BLAS libraries this process has mapped (what numpy really calls), from /proc/self/maps."""
    names = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                base = os.path.basename(path)
                if "blas" in base.lower() or "lapack" in base.lower():
                    names.add(os.path.realpath(path))
    except OSError:
        pass
    return ", ".join(sorted(names)) or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated, of: " + ", ".join(ROWS))
    args = ap.parse_args()
    rows = args.rows.split(",")
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error("unknown rows: " + ", ".join(unknown))
    out = {"malloc": keep_freed_memory()}

    import numpy as np

    out["numpy_version"] = np.__version__
    try:  # threadpoolctl names the BLAS and its threads, when installed
        from threadpoolctl import threadpool_info

        out["blas_pools"] = "; ".join(
            f"{p.get('internal_api')} {p.get('version')} {p.get('num_threads')} threads ({p.get('threading_layer')})"
            for p in threadpool_info() if p.get("user_api") == "blas")
    except ImportError:
        out["blas_pools"] = "threadpoolctl not installed"
    rng = np.random.default_rng(0)
    for n in (1024, 2048):
        if "matmul%d" % n in rows:
            a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            out["matmul%d_ms" % n] = median_ms(lambda: a @ b, args.repeat)
    if "elementwise" in rows or "sum" in rows:
        n = 16 * 1024 * 1024
        a, b, c = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(3))
        if "elementwise" in rows:  # three temporaries, like PyTorch's unfused ((a+b)*c).relu()
            out["elementwise_ms"] = median_ms(lambda: np.maximum((a + b) * c, 0), args.repeat)
        if "sum" in rows:
            out["sum_ms"] = median_ms(lambda: a.sum(), args.repeat)
    out["blas"] = loaded_blas()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
