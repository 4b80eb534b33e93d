# Trains the example character-level GPT (test/fixtures/training/charlm) in
# bf16 mixed precision with AdamW from Python, as scripts/run-example.sh
# does with mpt-train, then checkpoints it and runs its forward pass.
#   python python/examples/train.py [STEPS] [FIXTURE_DIR]
import sys

import numpy as np

import mpt

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
fixture = sys.argv[2] if len(sys.argv) > 2 else "test/fixtures/training/charlm"

# The model computes its own loss (an output named loss), so no loss_kind.
plan = mpt.compile(f"{fixture}/model.onnx", precision="bf16", optimizer="adamw",
                   lr=3e-3, weight_decay=0)
x = np.load(f"{fixture}/train_x.npy")  # int32 [1024, 32] windows of the text
y = np.load(f"{fixture}/train_y.npy")  # x shifted by one character
batch = 16
for s in range(steps):
    rows = slice(batch * s % len(x), batch * s % len(x) + batch)
    step = plan.train_step(idx=x[rows], targets=y[rows])
    if s % 10 == 0 or s == steps - 1:
        print(f"step {s + 1:4d}  loss {step.loss:.4f}  grad_norm {step.grad_norm:.3f}")

plan.save_checkpoint("charlm.ckpt")  # mpt-train --resume reads it too
# eval_step: the forward pass and the loss, no update.
out = plan.run(idx=x[:batch], targets=y[:batch])
print(f"eval_step on batch 1: loss {float(out['loss']):.4f}, logits {out['logits'].shape}")
