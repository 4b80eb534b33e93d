"""ResNet-50 for the GPU half of the CNN benchmark (README.md beside this file).

One definition serves both sides: prepare_gpu.py exports it to ONNX here with
its parameters zeroed (the plan then stores no weight bytes), and
gpu_bench.py builds it again on the GPU host from the same seed, writes the
parameters to a .safetensors file for `mpt-train --params`, and trains it
with PyTorch. The architecture is the standard one (He et al. 2016, v1.5:
the stride on each bottleneck's 3x3): a 7x7 stride-2 stem, max pooling,
bottleneck stages of 3, 4, 6 and 3 blocks (widths 64 to 512, expansion 4),
global average pooling and a 1000-way linear layer; batch norm after every
convolution, convolutions without bias. `width` and `blocks` shrink it for
the CPU smoke run.
"""
import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        return self.relu(self.bn3(self.conv3(y)) + skip)


class ResNet50(nn.Module):
    def __init__(self, width=64, blocks=(3, 4, 6, 3), classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], width
        for i, n in enumerate(blocks):
            w = width * 2 ** i
            for j in range(n):
                layers.append(Bottleneck(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w * 4
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


FULL = dict(width=64, blocks=(3, 4, 6, 3), classes=1000, image=224)
SMOKE = dict(width=8, blocks=(1, 1, 1, 1), classes=10, image=64)


def build(cfg, seed=None):
    """The model of `cfg`; with a seed, initialised from it (a CPU
    generator: the same values on any device), else with zeros."""
    net = ResNet50(cfg["width"], cfg["blocks"], cfg["classes"])
    if seed is None:
        with torch.no_grad():
            for p in net.parameters():
                p.zero_()
        return net
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif p.dim() == 1:  # batch-norm scale
                p.fill_(1.0)
            else:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=gen) * (2.0 / fan_in) ** 0.5)
    return net


def data(cfg, batch, count, seed):
    """`count` batches of images (f32 [batch, 3, H, W]) and labels (i64)."""
    gen = torch.Generator().manual_seed(seed + 1)
    n = batch * count
    x = torch.randn(n, 3, cfg["image"], cfg["image"], generator=gen)
    y = torch.randint(0, cfg["classes"], (n,), generator=gen)
    return x, y


def train_flops_per_image(cfg, batch=2):
    """Multiply-adds of the convolutions and the linear layer, x 2 FLOPs, x 3
    (forward, the input gradient and the weight gradient), counted on a
    forward pass with hooks."""
    net = ResNet50(cfg["width"], cfg["blocks"], cfg["classes"])
    macs = [0]

    def hook(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1] * mod.in_channels // mod.groups
            macs[0] += out.numel() * k
        elif isinstance(mod, nn.Linear):
            macs[0] += out.numel() * mod.in_features

    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            m.register_forward_hook(hook)
    with torch.no_grad():
        net(torch.zeros(batch, 3, cfg["image"], cfg["image"]))
    return 6 * macs[0] // batch
