#!/usr/bin/env python3
"""Writes test/fixtures/training/overflow: an MLP built to overflow fp16 at
one node, for profile-guided precision (docs/numerics-observability.md).

Its first MatMul ("big/MatMul") has weights of standard deviation 1e4, so
its outputs have a standard deviation of about 4e4 and some 10% of them lie
beyond fp16's 65504. A second, small MatMul brings them back to O(100) and a
LayerNorm to O(1); three more layers follow. In FP32 it trains; in plain
fp16 the first MatMul's result rounds to inf, every loss is NaN and every
step is skipped. The static fp16 range rule cannot see this (no constant is
beyond the range): only measured ranges can.

Developer tool (numpy and onnx from PyPI), never run by the tests:
    python3 scripts/gen_overflow_fixture.py [out_dir]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, D_IN, D_HIDDEN, CLASSES, BATCHES = 32, 16, 64, 10, 8


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "test/fixtures/training/overflow"
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261126)

    def weight(name, shape, std):
        return numpy_helper.from_array((rng.standard_normal(shape) * std).astype(np.float32), name)

    def zeros(name, shape):
        return numpy_helper.from_array(np.zeros(shape, np.float32), name)

    inits = [
        weight("big.weight", (D_IN, D_HIDDEN), 1e4), zeros("big.bias", (D_HIDDEN,)),
        weight("down.weight", (D_HIDDEN, D_HIDDEN), 1e-3), zeros("down.bias", (D_HIDDEN,)),
        numpy_helper.from_array(np.ones(D_HIDDEN, np.float32), "ln.scale"),
        zeros("ln.bias", (D_HIDDEN,)),
        weight("fc1.weight", (D_HIDDEN, D_HIDDEN), 1 / np.sqrt(D_HIDDEN)), zeros("fc1.bias", (D_HIDDEN,)),
        weight("fc2.weight", (D_HIDDEN, D_HIDDEN), 1 / np.sqrt(D_HIDDEN)), zeros("fc2.bias", (D_HIDDEN,)),
        weight("head.weight", (D_HIDDEN, CLASSES), 1 / np.sqrt(D_HIDDEN)), zeros("head.bias", (CLASSES,)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "big.weight"], ["big_mm"], name="big/MatMul"),
        helper.make_node("Add", ["big_mm", "big.bias"], ["big_out"], name="big/Add"),
        helper.make_node("Relu", ["big_out"], ["big_act"], name="big/Relu"),
        helper.make_node("MatMul", ["big_act", "down.weight"], ["down_mm"], name="down/MatMul"),
        helper.make_node("Add", ["down_mm", "down.bias"], ["down_out"], name="down/Add"),
        helper.make_node("LayerNormalization", ["down_out", "ln.scale", "ln.bias"], ["ln_out"],
                         name="ln/LayerNormalization", axis=-1, epsilon=1e-5),
    ]
    prev = "ln_out"
    for layer in ("fc1", "fc2"):
        nodes += [
            helper.make_node("MatMul", [prev, f"{layer}.weight"], [f"{layer}_mm"], name=f"{layer}/MatMul"),
            helper.make_node("Add", [f"{layer}_mm", f"{layer}.bias"], [f"{layer}_out"], name=f"{layer}/Add"),
            helper.make_node("Relu", [f"{layer}_out"], [f"{layer}_act"], name=f"{layer}/Relu"),
        ]
        prev = f"{layer}_act"
    nodes += [
        helper.make_node("MatMul", [prev, "head.weight"], ["head_mm"], name="head/MatMul"),
        helper.make_node("Add", ["head_mm", "head.bias"], ["logits"], name="head/Add"),
    ]
    graph = helper.make_graph(
        nodes, "overflow_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, D_IN])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [BATCH, CLASSES])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="scripts/gen_overflow_fixture.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))

    # A learnable task: the labels are the argmax of a fixed linear map of x.
    x = rng.standard_normal((BATCHES * BATCH, D_IN)).astype(np.float32)
    teacher = rng.standard_normal((D_IN, CLASSES)).astype(np.float32)
    labels = np.argmax(x @ teacher, axis=1).astype(np.int64)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "labels.npy"), labels)
    print(f"wrote {out}: model.onnx, x.npy {x.shape}, labels.npy {labels.shape}")


if __name__ == "__main__":
    main()
