"""Tests of mpt.torch (PyTorch export); skipped when torch is not importable.

    python test_torch.py --work DIR

An MLP is exported with export_for_training three ways (the compiler's
cross entropy, a callable loss exported into the graph, the model's own
loss), compiled in FP32 with SGD and trained; each step's loss matches
PyTorch's own SGD steps on the same module.
"""
import argparse
import os
import sys

try:
    import onnx  # noqa: F401 (torch.onnx.export needs it)
    import torch
except Exception as e:  # ImportError, or a broken install
    print("SKIPPED: torch or onnx is not importable (%s): the mpt.torch tests need "
          "both (pip install torch onnx into the venv)" % e)
    sys.exit(0)

import numpy as np

import mpt
import mpt.torch

STEPS = 4
LR = 0.1


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                               torch.nn.Linear(32, 10))


def torch_losses(model, x, y):
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def check(losses, reference, what):
    print(what, losses)
    for a, b in zip(losses, reference):
        assert abs(a - b) <= 1e-4 * abs(b), (what, losses, reference)


class WithOwnLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = make_model()

    def forward(self, x, labels):
        return torch.nn.functional.cross_entropy(self.net(x), labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(1)
    x = torch.randn(8, 16)
    y = torch.randint(0, 10, (8,))
    reference = torch_losses(None, x, y)
    batch = {"x": x.numpy(), "labels": y.numpy()}

    exported = mpt.torch.export_for_training(
        make_model(), {"x": x}, "cross_entropy", targets={"labels": y},
        path=os.path.join(args.work, "mlp_ce.onnx"))
    assert exported.compile_options["loss_kind"] == "cross_entropy", exported
    plan = exported.compile(precision="fp32", optimizer="sgd", lr=LR, backend="cpu")
    check([plan.train_step(**batch).loss for _ in range(STEPS)], reference, "compiler's loss:")

    exported = mpt.torch.export_for_training(
        make_model(), {"x": x}, torch.nn.functional.cross_entropy, targets={"labels": y},
        path=os.path.join(args.work, "mlp_fn.onnx"))
    plan = exported.compile(precision="fp32", optimizer="sgd", lr=LR, backend="cpu")
    check([plan.train_step(**batch).loss for _ in range(STEPS)], reference, "callable loss:")

    exported = mpt.torch.export_for_training(
        WithOwnLoss(), {"x": x, "labels": y}, path=os.path.join(args.work, "mlp_own.onnx"))
    plan = exported.compile(precision="bf16", optimizer="sgd", lr=LR, backend="cpu")
    losses = [plan.train_step(**batch).loss for _ in range(STEPS)]
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert abs(losses[0] - reference[0]) <= 1e-2 * reference[0], (losses, reference)
    print("mpt.torch tests: all passed")


if __name__ == "__main__":
    sys.exit(main())
