"""Writes the image files ImageCodecTest reads, with what PIL makes of them.

    make_test_images.py DIR

DIR/folder is an image folder: RGB, grayscale and CMYK JPEGs; RGB, RGBA,
grayscale and palette PNGs; a text file and a BMP (skipped); an empty class
folder. For every image, DIR/expected/<class>_<name>.rgb holds PIL's
convert('RGB') as H x W x 3 bytes. DIR/samples.txt lists torchvision's
ImageFolder samples (JPEG and PNG only) as 'path label' lines.
DIR/corrupt holds a JPEG truncated in its scan, one cut in its headers, an
empty file and a file of random bytes, all named .jpg. DIR/big.jpg is a
512 x 384 photo-like JPEG for the scaled decodes, and DIR/big_cut.rgb what
PIL makes of its box (100, 60, 420, 300) resized to 80 x 60 (BILINEAR).
"""
import os
import sys

import numpy as np
from PIL import Image
from torchvision.datasets import ImageFolder

out = sys.argv[1]
rng = np.random.default_rng(0)


def photo(height, width):
    """Smooth gradients with texture: real JPEG entropy, stable output."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    base = np.stack([128 + 100 * np.sin(x / 17 + c) * np.cos(y / 23 - c)
                     for c in range(3)], axis=-1)
    noise = rng.normal(0, 12, (height, width, 3))
    return np.clip(base + noise, 0, 255).astype(np.uint8)


folder = os.path.join(out, "folder")
expected = os.path.join(out, "expected")
for d in ["a_rgb", "b_gray", "c_cmyk"]:
    os.makedirs(os.path.join(folder, d), exist_ok=True)
os.makedirs(expected, exist_ok=True)

rgb = Image.fromarray(photo(37, 53))
images = {
    ("a_rgb", "rgb.jpg"): (rgb, dict(quality=90)),
    ("a_rgb", "rgb.png"): (rgb, {}),
    ("a_rgb", "rgba.png"): (rgb.convert("RGBA"), {}),
    ("a_rgb", "palette.png"): (rgb.quantize(64), {}),
    ("b_gray", "gray.jpg"): (rgb.convert("L"), dict(quality=85)),
    ("b_gray", "gray.png"): (rgb.convert("L"), {}),
    ("c_cmyk", "cmyk.jpg"): (rgb.convert("CMYK"), dict(quality=90)),
}
for (cls, name), (image, options) in images.items():
    path = os.path.join(folder, cls, name)
    image.save(path, **options)
    with Image.open(path) as saved:
        data = np.asarray(saved.convert("RGB"))
    data.tofile(os.path.join(expected, cls + "_" + name + ".rgb"))

dataset = ImageFolder(folder, is_valid_file=lambda p: p.endswith((".jpg", ".png")))
with open(os.path.join(out, "samples.txt"), "w") as f:
    for path, label in dataset.samples:
        f.write("%s %d\n" % (path, label))

# Left out of a listing: not images, images in other formats, empty classes.
with open(os.path.join(folder, "a_rgb", "notes.txt"), "w") as f:
    f.write("not an image\n")
rgb.save(os.path.join(folder, "b_gray", "picture.bmp"))
os.makedirs(os.path.join(folder, "z_empty"), exist_ok=True)

corrupt = os.path.join(out, "corrupt")
os.makedirs(corrupt, exist_ok=True)
jpeg = open(os.path.join(folder, "a_rgb", "rgb.jpg"), "rb").read()
open(os.path.join(corrupt, "truncated.jpg"), "wb").write(jpeg[: len(jpeg) // 2])
open(os.path.join(corrupt, "empty.jpg"), "wb").close()
open(os.path.join(corrupt, "header-only.jpg"), "wb").write(jpeg[:300])
open(os.path.join(corrupt, "random.jpg"), "wb").write(rng.bytes(2000))

big = Image.fromarray(photo(384, 512))
big.save(os.path.join(out, "big.jpg"), quality=90)
np.asarray(Image.open(os.path.join(out, "big.jpg")).convert("RGB").crop(
    (100, 60, 420, 300)).resize((80, 60), Image.BILINEAR)).tofile(
    os.path.join(out, "big_cut.rgb"))
