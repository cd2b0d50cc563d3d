#!/usr/bin/python3
"""Exports real models from PyTorch to ONNX for `tg onnx-test` (the ctest fixture in this folder).

  /usr/bin/python3 tests/onnx/export_models.py OUTDIR [--batch N] [--models resnet18,mobilenet_v2,transformer]

writes, for each model, OUTDIR/<name>/model.onnx (opset 13) and OUTDIR/<name>/test_data_set_0/
input_0.pb, output_0.pb: a seeded random input and PyTorch's output on it, as serialized
TensorProtos (ONNX's backend-test layout). The models, all with torch.manual_seed(0) random weights
in eval mode, nothing downloaded:
  resnet18      torchvision ResNet-18, input N x 3 x 224 x 224
  mobilenet_v2  torchvision MobileNetV2, input N x 3 x 224 x 224
  transformer   nn.TransformerEncoder, 2 layers, d_model 128, 4 heads, batch_first, input N x 32 x 128
The BatchNorm statistics are those of a seeded random batch, so outputs are about 1 in size (with
the default ones MobileNetV2's outputs are ~1e-9 and any tolerance would pass).

The definitions live in tools/bench/peer_onnx.py, shared with `tg bench onnx` (which is installed
and must build the same models); this script is its `export` mode. Needs Debian's python3-torch,
python3-torchvision and python3-onnx (scripts/bootstrap installs them).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "bench"))


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    missing = []
    for module in ("torch", "torchvision", "onnx"):
        try:
            __import__(module)
        except ImportError as e:
            missing.append("%s (%s)" % (module, e))
    if missing:
        sys.exit("export_models.py: cannot import " + ", ".join(missing) +
                 "; install python3-torch python3-torchvision python3-onnx (scripts/bootstrap)")
    import peer_onnx

    sys.argv[1:1] = ["export"]  # peer_onnx.py export OUTDIR [--batch N] [--models ...]
    peer_onnx.main()


if __name__ == "__main__":
    main()
