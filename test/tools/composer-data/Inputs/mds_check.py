"""Makes image folders and checks MDS output against Streaming's format.

  mds_check.py make-folder DIR [jpeg|png|mixed|corrupt]
  mds_check.py check MDS_DIR FOLDER SIZE_LIMIT_BYTES

`check` reads the shards as streaming's MDSReader would (written from
streaming/base/format/mds/{writer,reader}.py, not from composer's code) and
compares every sample with torchvision's listing of FOLDER.
"""
import ctypes
import hashlib
import json
import os
import random
import struct
import sys


def make_folder(root, kind):
    from PIL import Image
    rng = random.Random(0)
    layout = {"cat": 3, "dog": 1, "eel": 3}
    for c, (name, count) in enumerate(sorted(layout.items())):
        for i in range(count):
            sub = "nested" if name == "eel" and i == 2 else ""
            os.makedirs(os.path.join(root, name, sub), exist_ok=True)
            w, h = 8 + 3 * i + c, 6 + i
            img = Image.new("RGB", (w, h))
            img.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256))
                         for _ in range(w * h)])
            png = kind == "png" or (kind == "mixed" and name == "dog")
            path = os.path.join(root, name, sub, f"{i:02}.{'png' if png else 'jpg'}")
            img.save(path)
            if kind == "corrupt" and name == "dog":
                with open(path, "r+b") as f:
                    f.truncate(20)
    with open(os.path.join(root, "cat", "README.txt"), "w") as f:
        f.write("not an image\n")


def zstd_decompress(data):
    lib = ctypes.CDLL("libzstd.so.1")
    lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    size = lib.ZSTD_getFrameContentSize(data, len(data))
    assert size < (1 << 40), size
    out = ctypes.create_string_buffer(size)
    got = lib.ZSTD_decompress(out, size, data, len(data))
    assert got == size, (got, size)
    return out.raw


def check_file(path, info, algos):
    data = open(path, "rb").read()
    assert len(data) == info["bytes"], (path, len(data), info["bytes"])
    assert sorted(info["hashes"]) == algos, info
    for algo in algos:
        assert hashlib.new(algo, data).hexdigest() == info["hashes"][algo], path
    return data


def read_mds(root):
    text = open(os.path.join(root, "index.json")).read()
    index = json.loads(text)
    assert text == json.dumps(index, sort_keys=True), "index.json not as json.dump"
    assert index["version"] == 2
    samples, shard_sizes = [], []
    for s, shard in enumerate(index["shards"]):
        assert sorted(shard) == ["column_encodings", "column_names", "column_sizes",
                                 "compression", "format", "hashes", "raw_data",
                                 "samples", "size_limit", "version", "zip_data"]
        assert shard["format"] == "mds" and shard["version"] == 2
        raw_name = shard["raw_data"]["basename"]
        assert raw_name == f"shard.{s:05}.mds", raw_name
        if shard["compression"]:
            zip_info = shard["zip_data"]
            assert zip_info["basename"] == raw_name + ".zstd"
            assert not os.path.exists(os.path.join(root, raw_name)), "raw kept"
            data = check_file(os.path.join(root, zip_info["basename"]), zip_info,
                              shard["hashes"])
            data = zstd_decompress(data)
            assert len(data) == shard["raw_data"]["bytes"]
            for algo in shard["hashes"]:
                assert hashlib.new(algo, data).hexdigest() == \
                    shard["raw_data"]["hashes"][algo]
        else:
            assert shard["zip_data"] is None
            data = check_file(os.path.join(root, raw_name), shard["raw_data"],
                              shard["hashes"])
        # [n][offsets n + 1][config JSON][samples]
        n, = struct.unpack("<I", data[:4])
        assert n == shard["samples"]
        offsets = struct.unpack(f"<{n + 1}I", data[4:8 + 4 * n])
        config = json.loads(data[8 + 4 * n:offsets[0]])
        keys = ["column_encodings", "column_names", "column_sizes", "compression",
                "format", "hashes", "size_limit", "version"]
        assert sorted(config) == keys and all(config[k] == shard[k] for k in keys)
        assert data[8 + 4 * n:offsets[0]] == json.dumps(config, sort_keys=True).encode()
        assert offsets[-1] == len(data)
        names, sizes = shard["column_names"], shard["column_sizes"]
        for i in range(n):
            row = data[offsets[i]:offsets[i + 1]]
            at, cell_sizes = 0, []
            for size in sizes:
                if size is None:
                    size, = struct.unpack("<I", row[at:at + 4])
                    at += 4
                cell_sizes.append(size)
            sample = {}
            for name, size in zip(names, cell_sizes):
                sample[name] = row[at:at + size]
                at += size
            assert at == len(row)
            samples.append((sample, shard))
        shard_sizes.append((n, [offsets[i + 1] - offsets[i] for i in range(n)],
                            len(data[8 + 4 * n:offsets[0]])))
    return index, samples, shard_sizes


def check(root, folder, limit):
    from torchvision.datasets.folder import find_classes, make_dataset
    index, samples, shard_sizes = read_mds(root)
    classes, class_to_idx = find_classes(folder)
    expected = make_dataset(folder, class_to_idx, extensions=(".jpg", ".png"))
    assert len(samples) == len(expected), (len(samples), len(expected))
    for (sample, shard), (path, label) in zip(samples, expected):
        assert shard["column_names"] == ["image", "label"]
        assert shard["column_sizes"] == [None, 8]
        assert shard["column_encodings"][0] == ("png" if path.endswith(".png") else "jpeg")
        assert sample["image"] == open(path, "rb").read(), path
        assert struct.unpack("<q", sample["label"])[0] == label, path
    # Streaming's size_limit rule: a sample that would take the shard past
    # the limit (header 4 + 4 + config, 4 + bytes a sample) starts a new one.
    assert index["shards"][0]["size_limit"] == limit
    rows = [r for _, shard_rows, _ in shard_sizes for r in shard_rows]
    counts, size = [0], 8 + shard_sizes[0][2]
    for r in rows:
        if limit < size + r + 4:
            counts.append(0)
            size = 8 + shard_sizes[0][2]
        counts[-1] += 1
        size += r + 4
    assert counts == [n for n, _, _ in shard_sizes], (counts, shard_sizes)
    print(f"ok: {len(samples)} samples in {len(shard_sizes)} shards")


if __name__ == "__main__":
    if sys.argv[1] == "make-folder":
        make_folder(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "jpeg")
    else:
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]))
