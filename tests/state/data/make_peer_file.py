#!/usr/bin/env python3
# Generates peer.safetensors, a file written by the reference (Hugging Face) implementation, that
# tests/state/state_test.cpp loads and checks value by value. The tests do not need Python.
# Made with: pip install safetensors==0.8.0 numpy  &&  python3 make_peer_file.py
# (in tests/state/data/). Values are fixed, so rerunning yields the same tensors (the reference
# orders tensors by dtype alignment, then name).
import numpy as np
from safetensors.numpy import save_file

tensors = {
    "f32": np.array([[1.5, -2.0, 3.25], [0.0, -0.0, 1e-30]], dtype=np.float32),
    "f64": np.array([3.141592653589793, -1e300], dtype=np.float64),
    "f16": np.array([1.0, -2.5, 65504.0, 0.000061035], dtype=np.float16),
    "i64": np.array([-9223372036854775808, 9223372036854775807, -1], dtype=np.int64),
    "u64": np.array([18446744073709551615, 0], dtype=np.uint64),
    "i32": np.arange(-3, 3, dtype=np.int32).reshape(2, 3),
    "u32": np.array([4294967295, 7], dtype=np.uint32),
    "i16": np.array([-32768, 32767], dtype=np.int16),
    "u16": np.array([65535, 1], dtype=np.uint16),
    "i8": np.array([-128, 127, 0], dtype=np.int8),
    "u8": np.arange(0, 250, 25, dtype=np.uint8).reshape(2, 5),
    "bool": np.array([True, False, True], dtype=np.bool_),
    "scalar": np.array(42.0, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float32),
}
save_file(tensors, "peer.safetensors", metadata={"format": "np", "note": "caf\u00e9 \"quoted\""})
