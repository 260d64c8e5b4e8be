"""Models the end-to-end tests export at test time, with an example input.

Run as: models.py NAME {script,trace} OUT.pt
Writes OUT.pt (torch.jit.save) and OUT.pt.input.pt (the example input).

Exports are deterministic, so a lit run exports each (NAME, mode) once: with
COMPOSER_MODEL_CACHE set (lit.cfg.py sets it to a directory of the lit
run's own), the first test to ask exports into it, under a lock, and every
test copies from it.
"""
import fcntl
import os
import shutil
import sys


def cached_export_path(cache, name, mode):
    os.makedirs(cache, exist_ok=True)
    return os.path.join(cache, f"{name}.{mode}.pt")


def copy_cached_export(cached, out):
    for suffix in ("", ".input.pt"):
        shutil.copyfile(cached + suffix, out + suffix)


# A cached export is copied before torch is imported (which takes seconds).
# The example input is written last, so its presence means both are whole.
if __name__ == "__main__" and os.environ.get("COMPOSER_MODEL_CACHE"):
    _cached = cached_export_path(os.environ["COMPOSER_MODEL_CACHE"],
                                 *sys.argv[1:3])
    if os.path.exists(_cached + ".input.pt"):
        copy_cached_export(_cached, sys.argv[3])
        sys.exit(0)

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples"))
# CausalSelfAttention is named here too: reference.py's ALiBi finds it.
from gpt_decoder import CausalSelfAttention, GPTDecoder  # noqa: E402,F401
from transformer_layouts import HFGPT2, Bert, Llama  # noqa: E402


class UNet(nn.Module):
    """A small two-level UNet: conv blocks, max-pool down, a transposed
    convolution and a bilinear upsampling up, skip connections by
    concatenation."""

    def __init__(self, channels=3, classes=2, width=8):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

        self.down1 = block(channels, width)
        self.down2 = block(width, 2 * width)
        self.bottom = block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = block(4 * width, 2 * width)
        # One level up by a transposed convolution, one by upsampling.
        self.up1 = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            nn.Conv2d(2 * width, width, 1))
        self.dec1 = block(2 * width, width)
        self.head = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        b = self.bottom(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return self.head(u1)


class ListBlock(nn.Module):
    """A residual conv block: conv, BN, ReLU, conv, BN, plus the input."""

    def __init__(self, width, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.pool = nn.MaxPool2d(stride) if stride > 1 else nn.Identity()

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + self.pool(x))


class ListCNN(nn.Module):
    """A CNN whose blocks live in an nn.ModuleList and an nn.ModuleDict, as
    users write them, with a dropout and two linears in the head."""

    def __init__(self, width=32, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.ModuleList(
            [ListBlock(width), ListBlock(width, stride=2)])
        self.heads = nn.ModuleDict({
            "hidden": nn.Linear(width, 4 * width),
            "out": nn.Linear(4 * width, classes)})
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        x = F.relu(self.stem(x))
        for block in self.blocks:
            x = block(x)
        x = x.mean((2, 3))
        x = self.drop(F.gelu(self.heads["hidden"](x)))
        return self.heads["out"](x)


class GPT(GPTDecoder):
    """The example decoder (examples/gpt_decoder.py: token and learned
    position embeddings, pre-LayerNorm blocks with causal attention and a
    GELU MLP, an output head tied to the token embedding) at test sizes, with
    dropout and PyTorch's default initialization."""

    def __init__(self, vocab=101, dim=32, heads=4, layers=2, context=16,
                 dropout=0.1):
        super().__init__(vocab, dim, heads, layers, context, dropout,
                         gpt2_init=False)


def build(name):
    """The model and an example input."""
    import torchvision.models as tvm
    image = lambda size=64: torch.randn(2, 3, size, size)
    if name == "unet":
        return UNet(), image(32)
    if name == "list_cnn":
        return ListCNN(), image(16)
    if name == "gpt2":
        return GPT(), torch.randint(0, 101, (2, 16))
    layouts = {"hf_gpt2": HFGPT2, "bert": Bert, "llama": Llama}
    if name in layouts:
        return layouts[name](), torch.randint(0, 101, (2, 16))
    if name == "vit_b_16":
        return tvm.vit_b_16(weights=None), torch.randn(1, 3, 224, 224)
    if name == "googlenet":
        # Scripted, it returns the GoogLeNetOutputs NamedTuple; the auxiliary
        # classifiers make its Optional fields tensors in train, None in eval.
        return tvm.googlenet(weights=None, init_weights=False), image()
    if name == "squeezenet1_0":
        # Its blurred max pools need at least 64x64 at half this size.
        return tvm.squeezenet1_0(weights=None), image(128)
    if name == "deeplabv3_mobilenet_v3_large":
        return tvm.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, aux_loss=False), image()
    return getattr(tvm, name)(weights=None), image()


def randomize_batch_norm_statistics(model):
    """Non-trivial BatchNorm statistics, so eval-mode checks mean something."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)


def export(name, mode, out):
    torch.manual_seed(0)
    model, example = build(name)
    model.eval()
    randomize_batch_norm_statistics(model)
    if mode == "script":
        exported = torch.jit.script(model)
    elif mode == "trace":
        exported = torch.jit.trace(model, example, check_trace=False,
                                   strict=False)
    else:
        raise SystemExit(f"unknown mode {mode}")
    exported.save(out)
    torch.save(example, out + ".input.pt")


def main():
    name, mode, out = sys.argv[1:4]
    cache = os.environ.get("COMPOSER_MODEL_CACHE")
    if not cache:
        export(name, mode, out)
        return
    cached = cached_export_path(cache, name, mode)
    with open(cached + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(cached + ".input.pt"):
            # Whole files only: renamed into place, the input last.
            export(name, mode, cached + ".tmp")
            for suffix in ("", ".input.pt"):
                os.replace(cached + ".tmp" + suffix, cached + suffix)
    copy_cached_export(cached, out)


if __name__ == "__main__":
    main()
