"""Writes a MosaicML Streaming MDS data set as streaming.MDSWriter lays it
out (streaming/base/format/mds/writer.py, index version 2, raw shards with
sha1 hashes), written from the format, not from composer's code:

    write_mds.py OUT --samples N --per-shard K [--features F]

Columns: id (int, the sample's index), label (int, id % 3) and x
(ndarray:float32:F, a function of the id that a small model can fit).
"""
import argparse
import hashlib
import json
import os
import struct


def sample(i, features):
    x = [((i * 7 + j * 13) % 17) / 17.0 - 0.5 for j in range(features)]
    label = i % 3
    x[label % features] += 1.0
    return i, label, x


def encode(i, label, x):
    # Columns sorted by name: id, label, x; all fixed-size, so a row holds
    # no size prefixes.
    return struct.pack("<q", i) + struct.pack("<q", label) + struct.pack(
        "<%df" % len(x), *x)


def write_shard(out, index, rows, config):
    header = 4 + 4 * (len(rows) + 1) + len(config)
    offsets, at = [], header
    for row in rows:
        offsets.append(at)
        at += len(row)
    offsets.append(at)
    data = (struct.pack("<I", len(rows)) + struct.pack("<%dI" % len(offsets), *offsets)
            + config + b"".join(rows))
    name = "shard.%05d.mds" % index
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    return name, data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--per-shard", type=int, required=True)
    parser.add_argument("--features", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = ["id", "label", "x"]
    encodings = ["int", "int", "ndarray:float32:%d" % args.features]
    sizes = [8, 8, 4 * args.features]
    config = {"column_encodings": encodings, "column_names": names, "column_sizes": sizes,
              "compression": None, "format": "mds", "hashes": ["sha1"],
              "size_limit": 1 << 26, "version": 2}
    config_bytes = json.dumps(config, sort_keys=True).encode()
    shards = []
    for index, first in enumerate(range(0, args.samples, args.per_shard)):
        ids = range(first, min(first + args.per_shard, args.samples))
        rows = [encode(*sample(i, args.features)) for i in ids]
        name, data = write_shard(args.out, index, rows, config_bytes)
        shards.append(dict(config, raw_data={
            "basename": name, "bytes": len(data),
            "hashes": {"sha1": hashlib.sha1(data).hexdigest()}},
            samples=len(rows), zip_data=None))
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"shards": shards, "version": 2}, f, indent=1)


main()
