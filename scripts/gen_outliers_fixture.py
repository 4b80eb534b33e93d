#!/usr/bin/env python3
"""Generates test/fixtures/models/outliers: a tiny graph whose activations
have the outliers that make 16-bit softmax and LayerNorm fail.

  norm  = LayerNormalization(x, gamma, beta)   x = 2000 + N(0, 1): 16-bit
          storage of x keeps the offset and loses the noise LayerNorm keeps
          (FP16 spacing at 2000 is 1; BF16's is 16).
  probs = Softmax(MatMul(a, w))                logits reach ~1.1e5, beyond
          FP16's largest finite value, 65504.

The reference outputs come from onnxruntime (FP32). The precision checks in
test/Conformance/CMakeLists.txt show that --assign-precision's policy (FP32
LayerNorm and softmax) matches them at FP16 tolerance while forcing the two
ops to FP16 does not. Needs: pip install numpy onnx onnxruntime.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "test", "fixtures", "models", "outliers")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    gamma = np.ones(64, np.float32)
    beta = np.zeros(64, np.float32)
    w = (rng.standard_normal((8, 6)) * 40).astype(np.float32)
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["norm"],
                         axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["a", "w"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "outliers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64]),
         helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("norm", TensorProto.FLOAT, [4, 64]),
         helper.make_tensor_value_info("probs", TensorProto.FLOAT, [4, 6])],
        [numpy_helper.from_array(gamma, "gamma"),
         numpy_helper.from_array(beta, "beta"),
         numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="mpt gen_outliers_fixture")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(out, "model.onnx")
    onnx.save(model, path)

    x = (2000 + rng.standard_normal((4, 64))).astype(np.float32)
    a = (np.random.default_rng(12).standard_normal((4, 8)) * 480).astype(np.float32)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    norm, probs = session.run(None, {"x": x, "a": a})
    for name, value in [("input_x", x), ("input_a", a),
                        ("output_norm", norm), ("output_probs", probs)]:
        np.save(os.path.join(out, name + ".npy"), value)
    print(f"outliers: max |logits| {np.abs(a @ w).max():.0f}, wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
