"""Writes the images ImageCodecTest decodes, and what PIL makes of them.

usage: make_test_images.py OUT_DIR

For every image NAME.{jpg,png} it writes NAME.rgb: PIL's
np.asarray(Image.open(f).convert('RGB')) as raw uint8 [H, W, 3] bytes, and
NAME.shape with "H W". For every cut in CUTS it writes NAME.cutK.rgb, PIL's
img.crop(box).resize((ow, oh), Image.BILINEAR) -- torchvision's resized_crop
on a PIL image. It also lays out an image folder (OUT_DIR/folder) and writes
torchvision's ImageFolder sample list for it (folder_samples.txt).
"""

import os
import sys

import numpy as np
from PIL import Image

# (top, left, height, width, out_height, out_width)
CUTS = {
    "photo.jpg": [
        (10, 20, 100, 120, 100, 120),  # plain crop, full scale
        (13, 7, 150, 170, 60, 70),  # downscale 2.5x: scale 4/8
        (8, 16, 160, 200, 40, 50),  # downscale 4x: scale 2/8
        (-10, -20, 220, 300, 110, 150),  # reaches outside: black padding
        (30, 40, 50, 60, 100, 90),  # upscale
    ],
    "photo.png": [(10, 20, 100, 120, 64, 48), (-5, -5, 60, 60, 32, 32)],
}


def photo(height, width, seed):
    """Smooth colour gradients with noise and edges: JPEG-like content."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    r = 128 + 100 * np.sin(x / 17.0) * np.cos(y / 23.0)
    g = 128 + 90 * np.cos((x + y) / 31.0)
    b = 255 * (x / width) * (1 - y / height)
    img = np.stack([r, g, b], axis=-1)
    img[height // 3 : height // 2, width // 4 : width // 2] = [250, 20, 30]
    img += rng.normal(0, 12, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def save_reference(out, name):
    with Image.open(os.path.join(out, name)) as im:
        rgb = np.asarray(im.convert("RGB"))
        with open(os.path.join(out, name + ".rgb"), "wb") as f:
            f.write(rgb.tobytes())
        with open(os.path.join(out, name + ".shape"), "w") as f:
            f.write("%d %d\n" % rgb.shape[:2])
        for k, (top, left, h, w, oh, ow) in enumerate(CUTS.get(name, [])):
            cut = im.convert("RGB").crop((left, top, left + w, top + h))
            if (oh, ow) != (h, w):
                cut = cut.resize((ow, oh), Image.BILINEAR)
            with open(os.path.join(out, "%s.cut%d.rgb" % (name, k)), "wb") as f:
                f.write(np.asarray(cut).tobytes())


def make_codec_images(out):
    rgb = photo(203, 251, 1)  # odd sizes: partial iMCUs at the edges
    Image.fromarray(rgb).save(os.path.join(out, "photo.jpg"), quality=90)
    Image.fromarray(rgb).save(
        os.path.join(out, "photo444.jpg"), quality=95, subsampling=0
    )
    Image.fromarray(rgb).save(
        os.path.join(out, "progressive.jpg"), quality=85, progressive=True
    )
    Image.fromarray(rgb).convert("L").save(os.path.join(out, "gray.jpg"), quality=90)
    Image.fromarray(rgb).convert("CMYK").save(
        os.path.join(out, "cmyk.jpg"), quality=90
    )
    Image.fromarray(rgb).save(os.path.join(out, "photo.png"))
    rgba = np.concatenate([rgb, rgb[..., :1]], axis=-1)
    Image.fromarray(rgba, "RGBA").save(os.path.join(out, "rgba.png"))
    Image.fromarray(rgb).convert("L").save(os.path.join(out, "gray.png"))
    Image.fromarray(rgb).convert("LA").save(os.path.join(out, "gray_alpha.png"))
    pal = Image.fromarray(rgb).convert("P", palette=Image.ADAPTIVE, colors=50)
    pal.save(os.path.join(out, "palette.png"), transparency=3)
    Image.fromarray(rgb).convert("1").save(os.path.join(out, "bits1.png"))
    Image.fromarray(rgb).save(os.path.join(out, "interlaced.png"), interlace=1)
    rgb16 = rgb.astype(">u2") * 257 + 3
    Image.frombytes("RGB", (251, 203), rgb16.tobytes(), "raw", "RGB;16B").save(
        os.path.join(out, "unused16.png")
    )
    for name in [
        "photo.jpg",
        "photo444.jpg",
        "progressive.jpg",
        "gray.jpg",
        "cmyk.jpg",
        "photo.png",
        "rgba.png",
        "gray.png",
        "gray_alpha.png",
        "palette.png",
        "bits1.png",
        "interlaced.png",
    ]:
        save_reference(out, name)

    data = open(os.path.join(out, "photo.jpg"), "rb").read()
    with open(os.path.join(out, "truncated.jpg"), "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    data = open(os.path.join(out, "photo.png"), "rb").read()
    with open(os.path.join(out, "truncated.png"), "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    with open(os.path.join(out, "garbage.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff" + bytes(range(256)) * 4)


def make_folder(out):
    from torchvision.datasets import ImageFolder

    root = os.path.join(out, "folder")
    files = {
        "cat": ["b.jpg", "a.JPEG", "sub/c.png", "sub dir/d.jpg", "notes.txt"],
        "ant": ["x.png", "y.bmp"],
        "dog": ["z.jpg"],
    }
    for cls, names in files.items():
        for name in names:
            path = os.path.join(root, cls, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if name.endswith(".txt"):
                open(path, "w").write("not an image\n")
            else:
                fmt = {"png": "PNG", "bmp": "BMP"}.get(name.rsplit(".", 1)[1], "JPEG")
                Image.fromarray(photo(20 + len(name), 30, len(path))).save(path, fmt)
    # torchvision (0.14) refuses an empty class folder, so its list is taken
    # before one is added; the test maps its targets through class names.
    dataset = ImageFolder(root)
    with open(os.path.join(out, "folder_samples.txt"), "w") as f:
        for path, target in dataset.samples:
            f.write("%s\t%s\n" % (os.path.relpath(path, root), dataset.classes[target]))
    os.makedirs(os.path.join(root, "bee"))  # empty: sorts between ant and cat

    with open(os.path.join(out, "list.txt"), "w") as f:
        f.write("# path label\n\nfolder/cat/b.jpg 3\nfolder/ant/x.png 0\n")
    with open(os.path.join(out, "badlist.txt"), "w") as f:
        f.write("folder/cat/b.jpg 1\n# fine\nfolder/ant/x.png minus\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    make_codec_images(out)
    make_folder(out)


if __name__ == "__main__":
    main()
