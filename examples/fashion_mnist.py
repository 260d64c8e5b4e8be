"""Fashion-MNIST as Debian's dataset-fashion-mnist ships it (IDX files,
gzip-compressed), read into torch tensors.

    from fashion_mnist import read_idx, normalized
    x, y = normalized("train", 1024)   # float [N, 1, 28, 28], int64 [N]
"""
import gzip
import os

import torch

DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530


def read_idx(path):
    """The IDX file at `path` (gzip-compressed) as a uint8 tensor of its
    shape. Raises ValueError for a file that is not IDX of unsigned bytes."""
    with gzip.open(path) as f:
        data = f.read()
    if len(data) < 4 or data[:3] != b"\0\0\x08":
        raise ValueError(f"{path}: not an IDX file of unsigned bytes")
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
             for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]),
                            dtype=torch.uint8).reshape(shape)


def split_files(split, data=DATA):
    """The images' and labels' files of `split` ("train" or "test")."""
    prefix = "train" if split == "train" else "t10k"
    return (os.path.join(data, f"{prefix}-images-idx3-ubyte.gz"),
            os.path.join(data, f"{prefix}-labels-idx1-ubyte.gz"))


def normalized(split, count=None, data=DATA):
    """The first `count` samples (all when None) of `split`, normalized as
    composer-train's loader normalizes them, (x / 255 - mean) / std in
    float: images float [N, 1, 28, 28], labels int64 [N]."""
    images_path, labels_path = split_files(split, data)
    images = read_idx(images_path)[:count]
    labels = read_idx(labels_path)[:count].long()
    return (images.unsqueeze(1).float() / 255.0 - MEAN) / STD, labels
