#!/usr/bin/python3
"""Writes Fashion-MNIST as 64x64 RGB JPEGs in torchvision's ImageFolder layout.

    /usr/bin/python3 examples/make_fashion_jpeg.py [--out /tmp/fashion64]
        [--limit N] [--jobs 1|2] [--data /usr/share/datasets/fashion-mnist]

Reads the IDX files of Debian's dataset-fashion-mnist package and writes

    OUT/train/<class>/<index>.jpg   60,000 images
    OUT/test/<class>/<index>.jpg    10,000 images

<class> is the label with its name, "0_tshirt_top" .. "9_ankle_boot", so the
sorted folder names (ImageFolder's class order) are the label order, and
<index> is the image's position in its IDX file, zero-padded to 5 digits.
Each 28x28 grayscale image is upscaled to 64x64 with PIL's bicubic filter
(Image.BICUBIC, a = -0.5), replicated into three equal RGB channels and saved
as a baseline JPEG, quality 90, 4:2:0 chroma subsampling, no optimized
Huffman tables. The output is the same bytes on every run (PIL 9.4 with
libjpeg-turbo). --limit N writes only the first N images of each split (for
tests); --jobs 2 splits the work over two processes. Files already in OUT are
overwritten; nothing else there is removed.
"""
import argparse
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
from PIL import Image

from fashion_mnist import read_idx

DATA = "/usr/share/datasets/fashion-mnist"
CLASSES = ["tshirt_top", "trouser", "pullover", "dress", "coat",
           "sandal", "shirt", "sneaker", "bag", "ankle_boot"]
SIZE = 64
QUALITY = 90
SPLITS = {"train": "train", "test": "t10k"}


def class_folder(label):
    return f"{label}_{CLASSES[label]}"


def to_jpeg(pixels, path):
    image = Image.fromarray(pixels, mode="L")
    image = image.resize((SIZE, SIZE), Image.BICUBIC).convert("RGB")
    image.save(path, format="JPEG", quality=QUALITY, subsampling=2,
               optimize=False)


def write_chunk(args):
    images, paths = args
    for pixels, path in zip(images, paths):
        to_jpeg(pixels, path)
    return len(paths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="/tmp/fashion64")
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--limit", type=int, default=0,
                        help="images per split (0: all)")
    parser.add_argument("--jobs", type=int, default=1, choices=[1, 2])
    args = parser.parse_args()

    start = time.time()
    totals = {}
    for split, prefix in SPLITS.items():
        try:
            images = read_idx(f"{args.data}/{prefix}-images-idx3-ubyte.gz")
            labels = read_idx(f"{args.data}/{prefix}-labels-idx1-ubyte.gz")
        except ValueError as error:
            sys.exit(str(error))
        images, labels = images.numpy(), labels.numpy()
        if len(images) != len(labels) or images.shape[1:] != (28, 28):
            sys.exit(f"{args.data}: {split} images and labels do not match")
        if args.limit:
            images, labels = images[:args.limit], labels[:args.limit]
        for label in range(len(CLASSES)):
            os.makedirs(os.path.join(args.out, split, class_folder(label)),
                        exist_ok=True)
        paths = [os.path.join(args.out, split, class_folder(int(label)),
                              f"{index:05d}.jpg")
                 for index, label in enumerate(labels)]
        if args.jobs == 1:
            write_chunk((images, paths))
        else:
            step = 1000
            chunks = [(images[i:i + step], paths[i:i + step])
                      for i in range(0, len(paths), step)]
            with Pool(args.jobs) as pool:
                sum(pool.imap_unordered(write_chunk, chunks))
        counts = np.bincount(labels, minlength=len(CLASSES))
        totals[split] = len(paths)
        print(f"{split}: {len(paths)} images in {os.path.join(args.out, split)}"
              f" (per class: {' '.join(str(c) for c in counts)})")
    print(f"wrote {sum(totals.values())} JPEGs ({SIZE}x{SIZE} RGB, quality "
          f"{QUALITY}) in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
