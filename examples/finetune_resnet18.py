#!/usr/bin/python3
"""Fine-tunes torchvision's ResNet-18 the Composer way, in process: a
torchvision ImageFolder and DataLoader with workers, weights from a
torch.save'd state_dict, BlurPool, ChannelsLast and EMA by Composer's names,
bf16; then exports the model for inference.

    /usr/bin/python3 examples/make_fashion_jpeg.py --out /tmp/fashion64
    /usr/bin/python3 examples/finetune_resnet18.py /tmp/fashion64 \\
        --weights pretrained.pt --out /tmp/finetuned [--epochs 1] [--limit N]

JPEG_ROOT holds train/<class>/*.jpg and test/<class>/*.jpg. Without
--weights, the model starts from torchvision's initialization (no weights
can be downloaded here; save your own with torch.save(model.state_dict())).
Writes OUT/model.pt (TorchScript, eval mode, EMA's weights, loadable by
stock PyTorch) and OUT/model.state_dict.pt (torchvision's names), and prints
the last evaluation's accuracy as JSON.
"""
import argparse
import json
import os
import sys

import torch
import torchvision
from torch.utils.data import DataLoader, Subset
from torchvision import transforms

import composer_opt
from composer_opt.algorithms import EMA, BlurPool, ChannelsLast

# Fashion-MNIST's statistics, the same in each of the three channels.
NORMALIZE = transforms.Normalize([0.2860] * 3, [0.3530] * 3)


def image_folder(root, split, train, limit):
    steps = [transforms.RandomHorizontalFlip()] if train else []
    data = torchvision.datasets.ImageFolder(
        os.path.join(root, split),
        transforms.Compose(steps + [transforms.ToTensor(), NORMALIZE]))
    return Subset(data, range(min(limit, len(data)))) if limit else data


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root")
    parser.add_argument("--out", required=True)
    parser.add_argument("--weights")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0,
                        help="images per split (0: all)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--ema-half-life", default="20ba")
    args = parser.parse_args()

    train = DataLoader(image_folder(args.root, "train", True, args.limit),
                       batch_size=args.batch_size, shuffle=True,
                       num_workers=args.workers, drop_last=True)
    test = DataLoader(image_folder(args.root, "test", False, args.limit),
                      batch_size=250, num_workers=args.workers)
    model = torchvision.models.resnet18(num_classes=10)
    trainer = composer_opt.Trainer(
        model=model, train_dataloader=train, eval_dataloader=test,
        max_duration=args.epochs, load_path=args.weights,
        optimizers=torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9,
                                   weight_decay=5e-4),
        schedulers={"name": "cosine_with_warmup", "t_warmup": "0.1dur"},
        algorithms=[BlurPool(), ChannelsLast(), EMA(half_life=args.ema_half_life)],
        precision="amp_bf16", threads=args.threads, seed=17,
        progress_bar=sys.stderr.isatty())
    trainer.fit()
    os.makedirs(args.out, exist_ok=True)
    exported = os.path.join(args.out, "model.pt")
    state_dict = trainer.export_for_inference(exported)
    print(json.dumps({
        "accuracy": trainer.state.eval_metrics["eval"]["Accuracy"],
        "model": exported, "state_dict": state_dict}))


if __name__ == "__main__":
    main()
