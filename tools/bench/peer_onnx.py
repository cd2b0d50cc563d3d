#!/usr/bin/env python3
"""The models and peers of `tg bench onnx`, and the exporter behind tests/onnx/export_models.py.

Two modes:

  peer_onnx.py export OUTDIR [--batch N] [--models a,b]
      Builds each model with torch.manual_seed(0) random weights (eval mode) and exports it at
      opset 13 into OUTDIR/<name>/model.onnx, with OUTDIR/<name>/test_data_set_0/input_0.pb and
      output_0.pb: a seeded random input and PyTorch's output on it (ONNX's backend-test layout,
      which `tg onnx-test` runs). Needs torch, torchvision and onnx (Debian's python3-torch,
      python3-torchvision, python3-onnx: /usr/bin/python3).

  peer_onnx.py time --peer torch|onnxruntime --dir DIR [--batch 1,32] [--models a,b] ...
      Times each model at each batch size: onnxruntime runs DIR/b<N>/<name>/model.onnx (what the
      export mode wrote), PyTorch eager runs the same module built from the same seed. Each
      iteration takes the whole output to host memory. Prints one flat JSON object, for example
        {"peer": "onnxruntime", "version": "1.20.1", "threads": 2, "resnet18_b1_ms": 12.3, ...}
      where <model>_b<N>_ms is the median ms per batch over --runs runs after --warmup runs, and
      <model>_b<N>_error says why a row has no time. `tg` runs it in several fresh processes.

The models are fixed here so that the test (tests/onnx) and the benchmark (tools/tg/cmd_bench_onnx.cpp)
build the same ones; this file is installed beside the other peer scripts, so an installed `tg bench
onnx` has it.
"""
import argparse
import inspect
import json
import os
import sys
import time

OPSET = 13

# name -> (input shape without the batch, what one batch item is called)
MODELS = {
    "resnet18": ((3, 224, 224), "images"),
    "mobilenet_v2": ((3, 224, 224), "images"),
    "transformer": ((32, 128), "sequences"),  # seq 32, d_model 128
}


def build_model(name):
    """The module for `name`, with torch.manual_seed(0) weights, in eval mode."""
    import torch

    torch.manual_seed(0)
    if name == "resnet18":
        import torchvision

        m = torchvision.models.resnet18(weights=None)
    elif name == "mobilenet_v2":
        import torchvision

        m = torchvision.models.mobilenet_v2(weights=None)
    elif name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, dropout=0.0,
                                                 batch_first=True)
        # enable_nested_tensor only matters with a padding mask; off keeps eager and export on one path
        m = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    else:
        raise ValueError("unknown model %r (known: %s)" % (name, ", ".join(MODELS)))
    calibrate_batchnorm(m, name)
    return m.eval()


def calibrate_batchnorm(m, name):
    """Sets each BatchNorm's running statistics to those of a seeded random batch.

    Freshly initialized, they are mean 0 and variance 1 whatever the layer computes, so in eval mode
    the activations drift layer after layer: MobileNetV2's outputs end up around 1e-9, and a test of
    them would pass with any atol. Calibrated, every layer's activations are about unit-sized and
    the outputs about 1, as in a trained network.
    """
    import torch

    bns = [x for x in m.modules() if isinstance(x, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average: after one batch, exactly its statistics
    g = torch.Generator().manual_seed(2)
    x = torch.randn((8,) + MODELS[name][0], generator=g, dtype=torch.float32)
    m.train()
    with torch.no_grad():
        m(x)


def make_input(name, batch):
    """The seeded random input of `name` at `batch`: standard normal, float32."""
    import torch

    g = torch.Generator().manual_seed(1)
    return torch.randn((batch,) + MODELS[name][0], generator=g, dtype=torch.float32)


def parse_models(s):
    names = [m for m in s.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        raise SystemExit("unknown models: %s (known: %s)" % (", ".join(unknown), ", ".join(MODELS)))
    return names


def export(outdir, batch, names):
    import onnx
    import onnx.numpy_helper
    import torch

    for name in names:
        model = build_model(name)
        x = make_input(name, batch)
        with torch.no_grad():
            y = model(x)
        d = os.path.join(outdir, name)
        data = os.path.join(d, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        tmp = path + ".tmp"
        # torch >= 2.9 exports through dynamo by default (needs onnxscript); the TorchScript
        # exporter is the one Debian's torch 1.13 has, and gives the same graph on both
        legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
        torch.onnx.export(model, (x,), tmp, opset_version=OPSET, input_names=["input"], output_names=["output"],
                          do_constant_folding=True, **legacy)
        onnx.checker.check_model(tmp)
        for fname, arr, pname in (("input_0.pb", x, "input"), ("output_0.pb", y, "output")):
            t = onnx.numpy_helper.from_array(arr.detach().numpy(), pname)
            with open(os.path.join(data, fname), "wb") as f:
                f.write(t.SerializeToString())
        os.replace(tmp, path)  # last: a folder with model.onnx is complete
        print("exported %s batch %d -> %s (output %s, max |y| %.3g)" %
              (name, batch, path, tuple(y.shape), float(y.abs().max())), file=sys.stderr)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def time_runs(fn, args):
    """Median ms of args.runs runs after args.warmup; stops early, after 3, once they took args.max_seconds."""
    for _ in range(args.warmup):
        fn()
    t = []
    while len(t) < args.runs and (len(t) < 3 or sum(t) < args.max_seconds * 1e3):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return median(t)


def time_torch(args, names, batches, res):
    import torch

    torch.set_num_threads(args.threads)
    cuda = args.device == "CUDA"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 on both sides
        torch.backends.cudnn.allow_tf32 = False
        res["device_name"] = torch.cuda.get_device_name()
    res["version"] = torch.__version__.split("+")[0]
    res["threads"] = torch.get_num_threads()
    dev = "cuda" if cuda else "cpu"
    for name in names:
        model = build_model(name).to(dev)
        for b in batches:
            key = "%s_b%d" % (name, b)
            x = make_input(name, b).to(dev)

            def run():
                with torch.inference_mode():
                    y = model(x)
                y.cpu()  # to the host, as ours and onnxruntime do (on CPU: no copy)

            try:
                res[key + "_ms"] = time_runs(run, args)
            except Exception as e:  # noqa: BLE001 - a row's failure is reported, not fatal
                res[key + "_error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def time_onnxruntime(args, names, batches, res):
    import onnxruntime as ort

    res["version"] = ort.__version__
    res["threads"] = args.threads
    providers = ["CPUExecutionProvider"]
    if args.device == "CUDA":
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise SystemExit("onnxruntime %s has no CUDAExecutionProvider (pip install onnxruntime-gpu)" %
                             ort.__version__)
        providers = [("CUDAExecutionProvider", {"use_tf32": 0}), "CPUExecutionProvider"]
    res["provider"] = providers[0] if isinstance(providers[0], str) else providers[0][0]
    for name in names:
        for b in batches:
            key = "%s_b%d" % (name, b)
            path = os.path.join(args.dir, "b%d" % b, name, "model.onnx")
            try:
                so = ort.SessionOptions()
                so.intra_op_num_threads = args.threads
                so.inter_op_num_threads = 1
                so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                sess = ort.InferenceSession(path, sess_options=so, providers=providers)
                x = make_input(name, b).numpy()
                feed = {sess.get_inputs()[0].name: x}
                res[key + "_ms"] = time_runs(lambda: sess.run(None, feed), args)
            except Exception as e:  # noqa: BLE001
                res[key + "_error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    ex = sub.add_parser("export", help="export the models (ONNX backend-test layout)")
    ex.add_argument("outdir")
    ex.add_argument("--batch", type=int, default=1)
    ex.add_argument("--models", default=",".join(MODELS))
    tm = sub.add_parser("time", help="time a peer; prints one JSON object")
    tm.add_argument("--peer", choices=("torch", "onnxruntime"), required=True)
    tm.add_argument("--dir", help="what `export` wrote, one b<N> folder per batch (onnxruntime)")
    tm.add_argument("--device", choices=("CPU", "CUDA"), default="CPU")
    tm.add_argument("--batch", default="1,32", help="comma-separated batch sizes")
    tm.add_argument("--models", default=",".join(MODELS))
    tm.add_argument("--runs", type=int, default=10, help="timed runs per row (the median is reported)")
    tm.add_argument("--warmup", type=int, default=2)
    tm.add_argument("--max-seconds", type=float, default=60, help="a row stops after 3 runs once they took this long")
    tm.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    names = parse_models(args.models)
    if args.mode == "export":
        if args.batch < 1:
            ap.error("--batch must be >= 1")
        export(args.outdir, args.batch, names)
        return
    batches = [int(b) for b in args.batch.split(",") if b]
    from peer_timing import keep_freed_memory  # this script's folder is on sys.path

    res = {"peer": args.peer, "device": args.device, "runs": args.runs, "malloc": keep_freed_memory()}
    if args.peer == "torch":
        time_torch(args, names, batches, res)
    else:
        if not args.dir:
            ap.error("--peer onnxruntime needs --dir")
        time_onnxruntime(args, names, batches, res)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
