#!/usr/bin/env python3
"""The peers of `tg bench ops --beam N`: numpy matmul (its BLAS) and PyTorch conv2d (oneDNN), CPU.

Prints one flat JSON object on stdout (numbers and strings only), for example
  {"blas": "libopenblas...", "matmul1024_ms": 6.1, "conv_ms": 9.0, "torch_version": "1.13.1", ...}
--part numpy or --part torch: each may run under another interpreter (numpy from a venv, torch
from Debian). Times are medians over --repeat runs after two warm-up runs, in milliseconds.
Usable on its own: python3 tools/bench/peer_beam.py --part numpy --repeat 10
"""
import argparse
import json
import os

from peer_timing import median_ms


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


def numpy_part(out, sizes, repeat):
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
    for n in sizes:
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        out[f"matmul{n}_ms"] = median_ms(lambda: a @ b, repeat)
    out["blas"] = loaded_blas()


def torch_part(out, conv, repeat, threads):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)  # all cores, as our CPU plugin and OpenBLAS use

    out["torch_version"] = torch.__version__
    out["torch_threads"] = torch.get_num_threads()
    out["mkldnn"] = str(torch.backends.mkldnn.is_available())
    xs, ws = conv
    torch.manual_seed(0)
    x = torch.rand(xs) * 2 - 1
    w = torch.rand(ws) * 2 - 1
    with torch.no_grad():
        out["conv_ms"] = median_ms(lambda: F.conv2d(x, w), repeat)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["numpy", "torch"], required=True)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--matmul", type=int, nargs="*", default=[1024, 2048])
    ap.add_argument("--conv", type=int, nargs=8, default=[32, 32, 28, 28, 64, 32, 3, 3],
                    help="input NCHW then weight OIHW")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="PyTorch's threads")
    args = ap.parse_args()
    out = {}
    if args.part == "numpy":
        numpy_part(out, args.matmul, args.repeat)
    else:
        torch_part(out, (tuple(args.conv[:4]), tuple(args.conv[4:])), args.repeat, args.threads)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
