#!/usr/bin/python3
"""The Fashion-MNIST recipe as a user would write it in plain PyTorch.

    OMP_NUM_THREADS=2 /usr/bin/python3 bench/eager_fashion.py model.pt \
        --jsonl metrics.jsonl [--epochs N] [--target 0.91] [--bf16]
        [--folder DIR [--crop-scale LO HI]]

The baseline composer-train is measured against in bench/time_to_accuracy.py:
examples/recipes/fashion-mnist.yaml (the example ResNet, batch 128, the
recipe's augmentations in one loader worker, Composer's DecoupledSGDW with
Nesterov momentum, linear warmup then cosine decay per batch, evaluation
every half epoch) in an eager training loop with torch.utils.data and
torchvision's transforms. The learning rate, weight decay, warmup, number
of epochs and augmentations (random resized crop, random crop with zero
padding, horizontal flip, each where the recipe has one) are read from the
recipe.
The starting weights are read from `model` (the TorchScript file
composer-train trains), so both start from the same point. Writes JSONL
rows with the keys composer-train's logger uses ("wall_clock/train": the
training seconds so far, evaluation left out; "metrics/eval/Accuracy"), so
bench/train_metrics.py reads both, and prints the time to the target.
--bf16 trains and evaluates under torch.autocast("cpu", torch.bfloat16), as
a user turns bf16 on: the fair baseline on a CPU with bf16 kernels.
--folder DIR trains examples/recipes/fashion64.yaml instead: the 64x64 RGB
JPEGs of examples/make_fashion_jpeg.py in DIR/train and DIR/test, read with
torchvision's ImageFolder (PIL decodes them), that recipe's augmentations
(a random resized crop's scale replaced by --crop-scale, which also adds
one where the recipe has none), the 3-channel model with a stride-2 stem,
and that recipe's optimizer and schedule.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
import yaml
import torchvision.transforms as T
from torchvision.datasets import ImageFolder
from torch.utils.data import DataLoader, Dataset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from fashion_mnist import read_idx  # noqa: E402
from fashion_resnet import FashionResNet  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
RECIPE = os.path.join(ROOT, "examples", "recipes", "fashion-mnist.yaml")
RECIPE64 = os.path.join(ROOT, "examples", "recipes", "fashion64.yaml")
MEAN, STD = 0.2860, 0.3530


class Images(Dataset):
    def __init__(self, split, limit, transform):
        self.images = read_idx(f"{DATA}/{split}-images-idx3-ubyte.gz")
        self.labels = read_idx(f"{DATA}/{split}-labels-idx1-ubyte.gz").long()
        if limit:
            self.images, self.labels = self.images[:limit], self.labels[:limit]
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = self.images[i].unsqueeze(0).float() / 255
        return self.transform(image), self.labels[i]


def augmentations(train_data, size, crop_scale=None):
    """The recipe's training augmentations for `size` x `size` images as
    torchvision transforms: its random resized crop (at `crop_scale` when
    given), random crop with zero padding and horizontal flip, each where
    the recipe has it."""
    steps = []
    crop = train_data.get("random_resized_crop")
    if crop_scale or crop:
        steps.append(T.RandomResizedCrop(
            size, scale=tuple(crop_scale or crop["scale"])))
    padding = train_data.get("random_crop_padding")
    if padding:
        steps.append(T.RandomCrop(size, padding=padding))
    if train_data.get("horizontal_flip"):
        steps.append(T.RandomHorizontalFlip())
    return steps


def jpeg_folders(folder, train_data, crop_scale):
    """fashion64.yaml's training and test data: JPEGs in class folders."""
    normalize = T.Normalize([MEAN] * 3, [STD] * 3)
    train = ImageFolder(os.path.join(folder, "train"), T.Compose(
        augmentations(train_data, 64, crop_scale) +
        [T.ToTensor(), normalize]))
    test = ImageFolder(os.path.join(folder, "test"),
                       T.Compose([T.ToTensor(), normalize]))
    return train, test


def read_recipe(path):
    with open(path) as f:
        return yaml.safe_load(f)


def epochs_of(duration):
    """A recipe's duration in epochs ("0.5ep"); batches are not read."""
    if not duration.endswith("ep"):
        sys.exit(f"eager_fashion.py: {duration!r} is not in epochs")
    return float(duration.removesuffix("ep"))


def decoupled_sgdw_step(optimizer, lr, base_lr, weight_decay):
    """Composer's DecoupledSGDW: decay scaled by lr / initial lr, then SGD."""
    with torch.no_grad():
        for group in optimizer.param_groups:
            group["lr"] = lr
            for p in group["params"]:
                if p.grad is not None:
                    p.mul_(1 - weight_decay * lr / base_lr)
    optimizer.step()


def cosine_with_warmup(step, warmup, total):
    if step < warmup:
        return step / warmup
    x = min(1.0, (step - warmup) / max(1, total - warmup))
    return 0.5 * (1 + math.cos(math.pi * x))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def load_weights(model, path):
    scripted = torch.jit.load(path)
    model.load_state_dict(scripted.state_dict())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model",
                        help="TorchScript file with the start weights")
    parser.add_argument("--jsonl", required=True)
    parser.add_argument("--epochs", type=float,
                        help="default: the recipe's max_duration")
    parser.add_argument("--eval-interval", type=float, default=0.5,
                        help="in epochs")
    parser.add_argument("--target", type=float, default=0.91)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--limit", type=int, default=0,
                        help="train on the first N images only")
    parser.add_argument("--eval-limit", type=int, default=0)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--bf16", action="store_true",
                        help="forward, loss and evaluation under bf16 "
                        "autocast")
    parser.add_argument("--folder",
                        help="train fashion64.yaml on the JPEGs in "
                        "FOLDER/train and FOLDER/test")
    parser.add_argument("--crop-scale", type=float, nargs=2,
                        metavar=("LO", "HI"),
                        help="--folder: a random resized crop of this "
                        "area range (default: fashion64.yaml's, if it has "
                        "one)")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    args = parser.parse_args()
    if args.folder and (args.limit or args.eval_limit):
        parser.error("--limit and --eval-limit read the IDX files only")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    if args.folder:
        model = FashionResNet(args.width, in_channels=3, stem_stride=2)
        recipe = read_recipe(RECIPE64)
        train, test = jpeg_folders(args.folder, recipe["train_data"],
                                   args.crop_scale)
    else:
        recipe = read_recipe(RECIPE)
        model = FashionResNet(args.width)
        normalize = T.Normalize([MEAN], [STD])
        train = Images("train", args.limit, T.Compose(
            augmentations(recipe["train_data"], 28) + [normalize]))
        test = Images("t10k", args.eval_limit, normalize)
    load_weights(model, args.model)
    model.train()
    train_loader = DataLoader(train, batch_size=128, shuffle=True,
                              num_workers=1, persistent_workers=True)
    test_loader = DataLoader(test, batch_size=500)

    # The recipe's optimizer and warmup, so a retuned recipe is mirrored.
    epochs = args.epochs or epochs_of(recipe["max_duration"])
    base_lr = recipe["optimizer"]["lr"]
    weight_decay = recipe["optimizer"]["weight_decay"]
    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9,
                                nesterov=True)
    per_epoch = len(train_loader)
    total = round(epochs * per_epoch)
    warmup = round(epochs_of(recipe["scheduler"]["t_warmup"]) * per_epoch)
    eval_every = max(1, round(args.eval_interval * per_epoch))

    step, clock, reached = 0, 0.0, None
    with open(args.jsonl, "w") as log:
        while step < total:
            start = time.perf_counter()
            for x, y in train_loader:
                lr = base_lr * cosine_with_warmup(step, warmup, total)
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast("cpu", dtype=torch.bfloat16,
                                    enabled=args.bf16):
                    loss = F.cross_entropy(model(x), y)
                loss.backward()
                decoupled_sgdw_step(optimizer, lr, base_lr, weight_decay)
                step += 1
                if step % eval_every == 0 or step == total:
                    clock += time.perf_counter() - start
                    loss = loss.item()
                    with torch.autocast("cpu", dtype=torch.bfloat16,
                                        enabled=args.bf16):
                        accuracy = evaluate(model, test_loader)
                    log.write(json.dumps({
                        "step": step, "wall_clock/train": clock,
                        "loss/train": loss,
                        "metrics/eval/Accuracy": accuracy}) + "\n")
                    log.flush()
                    if reached is None and accuracy >= args.target:
                        reached = (step, accuracy, clock)
                    start = time.perf_counter()
                if step == total:
                    break
            clock += time.perf_counter() - start
    if reached:
        print(f"eager PyTorch: {args.target:.0%} at batch {reached[0]} after "
              f"{reached[2]:.1f} s of training (accuracy {reached[1]:.4f})")
    else:
        print(f"eager PyTorch: {args.target:.0%} not reached")
    print(f"final accuracy {accuracy:.4f}, {clock:.1f} s of training")


if __name__ == "__main__":
    main()
