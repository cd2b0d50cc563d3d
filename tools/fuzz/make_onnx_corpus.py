#!/usr/bin/env python3
"""Writes the ONNX loader's fuzz seeds (tools/fuzz/corpus_onnx): small models built with onnx.helper
that reach every branch of the loader (typed and raw initializers, every attribute kind, subgraphs,
external data, value files of each kind). usage: make_onnx_corpus.py OUTDIR  (python3-onnx)"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, proto):
    with open(os.path.join(out, name), "wb") as f:
        f.write(proto.SerializeToString())


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
w_raw = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), "w")
w_typed = helper.make_tensor("b", TensorProto.FLOAT, [2], [0.5, -0.5])
i64 = helper.make_tensor("shape", TensorProto.INT64, [2], [-1, 2])
half = helper.make_tensor("h", TensorProto.FLOAT16, [2], [15360, 16384])
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["z"]),
     helper.make_node("Reshape", ["z", "shape"], ["r"]),
     helper.make_node("LeakyRelu", ["r"], ["y"], alpha=0.1, name="act")],
    "linear", [x], [y], [w_raw, w_typed, i64, half])
save("linear.onnx", helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))

then_g = helper.make_graph([helper.make_node("Constant", [], ["t"], value_floats=[1.0, 2.0])], "then", [],
                           [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
else_g = helper.make_graph([helper.make_node("Constant", [], ["e"], value_ints=[3, 4])], "else", [],
                           [helper.make_tensor_value_info("e", TensorProto.INT64, [2])])
cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
g = helper.make_graph([helper.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g,
                                        strs=["a", "b"], f=1.5, i=3)],
                      "if", [cond], [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
save("if.onnx", helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]))

ext = TensorProto(name="e", data_type=TensorProto.FLOAT, dims=[4])
ext.data_location = TensorProto.EXTERNAL
for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "16")):
    entry = ext.external_data.add()
    entry.key, entry.value = k, v
g = helper.make_graph([helper.make_node("Identity", ["e"], ["y"])], "external", [], [y], [ext])
save("external.onnx", helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))

save("tensor.pb", numpy_helper.from_array(np.arange(12, dtype=np.int32).reshape(3, 4), "t"))
seq = helper.make_sequence("s", 1, [numpy_helper.from_array(np.ones(2, np.float32)),
                                   numpy_helper.from_array(np.zeros(3, np.float32))])
save("sequence.pb", seq)
save("optional.pb", helper.make_optional("o", 1, numpy_helper.from_array(np.ones(2, np.float64))))
