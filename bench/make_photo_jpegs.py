#!/usr/bin/python3
"""Writes JPEGs of ImageNet-like sizes cut from real photographs, for
bench/data_throughput.py.

    /usr/bin/python3 bench/make_photo_jpegs.py [--out /tmp/photos]
        [--count 2000] [--classes 10] [--seed 0] [--jobs 1|2]
        [--photos /usr/share/backgrounds/mate/nature]

The photographs are the twelve in Debian's mate-backgrounds package
(/usr/share/backgrounds/mate/nature: macro shots of leaves, flowers and
insects, a dune, a storm, grass, wood, 1280x1024 to 2560x1920; install with
`apt-get install mate-backgrounds`). Every output image is a crop at a random
position and scale of one of them, resized down with PIL's Lanczos filter and
saved as a baseline JPEG, quality 90, 4:2:0, in ImageFolder's layout:

    OUT/class_00/00000.jpg .. OUT/class_09/01999.jpg   (image i in class i % 10)

Sizes follow ImageNet's training set roughly: the long side is 500 for three
images in four and drawn from 300..640 otherwise; the shape is 4:3 (the most
common), 3:2, 1:1, 5:4 or 16:9, portrait one time in five. A crop is never
smaller than its output (resizing only shrinks), and one image in two is
mirrored. Everything is drawn from --seed up front, so a run writes the same
bytes every time (PIL 9.4 with libjpeg-turbo); --jobs 2 splits the encoding
over two processes without changing the output.
"""
import argparse
import glob
import os
import random
import sys
import time
from multiprocessing import Pool

from PIL import Image

PHOTOS = "/usr/share/backgrounds/mate/nature"
QUALITY = 90
# (width:height of the landscape form, weight); portrait is the transpose.
SHAPES = [((4, 3), 0.60), ((3, 2), 0.20), ((1, 1), 0.08), ((5, 4), 0.07),
          ((16, 9), 0.05)]

_sources = []


def load_sources(folder):
    paths = sorted(glob.glob(os.path.join(folder, "*.jpg")) +
                   glob.glob(os.path.join(folder, "*.png")))
    if not paths:
        sys.exit(f"no photographs in {folder}: apt-get install "
                 "mate-backgrounds, or pass --photos DIR")
    images = []
    for path in paths:
        with Image.open(path) as image:
            images.append(image.convert("RGB"))
    return paths, images


def draw(rng, sizes, count):
    """The size, source, crop box and mirror flag of every output image."""
    plans = []
    for _ in range(count):
        (a, b), = rng.choices([s for s, _ in SHAPES],
                              [w for _, w in SHAPES])
        long_side = 500 if rng.random() < 0.75 else rng.randint(300, 640)
        width, height = long_side, round(long_side * b / a)
        if rng.random() < 0.2:
            width, height = height, width
        source = rng.randrange(len(sizes))
        sw, sh = sizes[source]
        # The largest crop of this shape that fits the photo, then a scale
        # between the output size (1:1 pixels) and that.
        most = min(sw / width, sh / height)
        scale = 1.0 + (most - 1.0) * rng.random()
        cw, ch = min(sw, round(width * scale)), min(sh, round(height * scale))
        left, top = rng.randint(0, sw - cw), rng.randint(0, sh - ch)
        mirror = rng.random() < 0.5
        plans.append((width, height, source, (left, top, left + cw, top + ch),
                      mirror))
    return plans


def write(job):
    path, (width, height, source, box, mirror) = job
    image = _sources[source].crop(box)
    if image.size != (width, height):
        image = image.resize((width, height), Image.LANCZOS)
    if mirror:
        image = image.transpose(Image.FLIP_LEFT_RIGHT)
    image.save(path, format="JPEG", quality=QUALITY, subsampling=2,
               optimize=False)
    return os.path.getsize(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="/tmp/photos")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--photos", default=PHOTOS)
    parser.add_argument("--jobs", type=int, default=1, choices=[1, 2])
    args = parser.parse_args()

    start = time.time()
    paths, images = load_sources(args.photos)
    _sources.extend(images)
    plans = draw(random.Random(args.seed), [im.size for im in images],
                 args.count)
    folders = [os.path.join(args.out, f"class_{c:02d}")
               for c in range(args.classes)]
    for folder in folders:
        os.makedirs(folder, exist_ok=True)
    jobs = [(os.path.join(folders[i % args.classes], f"{i:05d}.jpg"), plan)
            for i, plan in enumerate(plans)]
    if args.jobs == 1:
        sizes = [write(job) for job in jobs]
    else:
        with Pool(args.jobs) as pool:
            sizes = pool.map(write, jobs, chunksize=50)

    portrait = sum(1 for w, h, *_ in plans if h > w)
    common = sum(1 for w, h, *_ in plans if (w, h) == (500, 375))
    pixels = sum(w * h for w, h, *_ in plans) / len(plans)
    print(f"wrote {len(plans)} JPEGs in {args.classes} classes to {args.out} "
          f"from {len(paths)} photographs in {time.time() - start:.1f} s")
    print(f"  {portrait} portrait, {common} of 500x375, mean "
          f"{pixels / 1000:.0f} kpixels; files {sum(sizes) / 2**20:.1f} MiB, "
          f"mean {sum(sizes) / len(sizes) / 1024:.0f} KiB, "
          f"min {min(sizes) / 1024:.0f} KiB, max {max(sizes) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
