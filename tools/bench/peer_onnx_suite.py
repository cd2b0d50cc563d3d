#!/usr/bin/env python3
"""ONNX backend test folders through onnxruntime (CPU provider), compared as `tg onnx-test` compares
(rtol 1e-3, atol 1e-7, dtype and shape exactly, NaN equal to NaN): the peer figure for the suite.
usage: peer_onnx_suite.py DIR...   (an interpreter that imports onnxruntime and onnx; see
`tg bench onnx --help` for the venv). Prints a line per case that does not pass and the counts."""
import glob
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort


def cases(root):
    if os.path.exists(os.path.join(root, "model.onnx")):
        return [root]
    out = []
    for d in sorted(glob.glob(os.path.join(root, "*"))):
        if os.path.isdir(d):
            out += cases(d) if not os.path.exists(os.path.join(d, "model.onnx")) else [d]
    return out


def load(path, type_proto):
    if type_proto.HasField("sequence_type"):
        p = onnx.SequenceProto()
        p.ParseFromString(open(path, "rb").read())
        return onnx.numpy_helper.to_list(p)
    if type_proto.HasField("optional_type"):
        p = onnx.OptionalProto()
        p.ParseFromString(open(path, "rb").read())
        return onnx.numpy_helper.to_optional(p)
    return onnx.numpy_helper.to_array(onnx.load_tensor(path))


def same(got, want):
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if want is None:
        return got is None
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind in "biuO":
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True))


def run(case):
    model = onnx.load(os.path.join(case, "model.onnx"))
    sess = ort.InferenceSession(os.path.join(case, "model.onnx"), providers=["CPUExecutionProvider"])
    inits = {i.name for i in model.graph.initializer}
    ins = [i for i in model.graph.input if i.name not in inits]
    for ds in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
        feed = {}
        for k, info in enumerate(ins):
            f = os.path.join(ds, "input_%d.pb" % k)
            if os.path.exists(f):
                feed[info.name] = load(f, info.type)
        outs = sess.run(None, feed)
        for k, info in enumerate(model.graph.output):
            f = os.path.join(ds, "output_%d.pb" % k)
            if os.path.exists(f) and not same(outs[k], load(f, info.type)):
                return "output %s differs" % info.name
    return None


passed = failed = 0
for root in sys.argv[1:]:
    for case in cases(root):
        try:
            why = run(case)
        except Exception as e:  # a model the peer cannot load or run
            why = str(e).splitlines()[0][:150]
        name = "/".join(case.rstrip("/").split("/")[-2:])
        if why is None:
            passed += 1
        else:
            failed += 1
            print("FAIL %s: %s" % (name, why))
print("onnxruntime %s: %d passed, %d failed" % (ort.__version__, passed, failed))
