"""A BERT-style text classifier as users write one, and its data: Debian's
fortunes, labelled by their category file, as Streaming MDS shards.

    /usr/bin/python3 examples/bert_classifier.py data OUTDIR [--seq-len 64]
    /usr/bin/python3 examples/bert_classifier.py model OUT.pt [--vocab 4096]

`data` reads the fortunes of four categories (computers, politics, science,
work), sends every 10th of each to validation, builds a word vocabulary from
the training split ([PAD]=0, [UNK]=1, [CLS]=2, then the most frequent words),
and writes three MDS datasets: OUTDIR/train, OUTDIR/val, and OUTDIR/val_two
(validation's computers and science fortunes only). Each sample has
`input_ids` and `attention_mask` (ndarray:int64:SEQ_LEN) and `label` (int).
It prints the class counts and the majority class's share of validation.

`model` scripts the encoder: token and position embeddings, pre-norm
transformer layers that ignore padding (attention_mask 0), a masked mean
pool, and a linear head. `forward(input_ids, attention_mask)` returns
{"logits": [B, 4]}.

The MDS writer follows streaming/base/format/mds/writer.py (version 2, raw
shards): the shard is a uint32 sample count, count + 1 uint32 offsets from
the shard's start, then the samples, each its columns' bytes in the index's
column order (these columns all have fixed sizes, so no size prefix).
"""
import argparse
import collections
import json
import os
import re
import struct
import sys

FORTUNES = "/usr/share/games/fortunes"
CATEGORIES = ["computers", "politics", "science", "work"]
TWO = ["computers", "science"]
VALIDATION_EVERY = 10
SPECIAL = ["[PAD]", "[UNK]", "[CLS]"]


def read_category(name):
    with open(os.path.join(FORTUNES, name), "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return [t.strip() for t in re.split(r"^%$", text, flags=re.M) if t.strip()]


def words(text):
    return re.findall(r"[a-z0-9']+|[^\sa-z0-9']", text.lower())


def write_mds(out, samples, seq_len):
    """samples: (input_ids, attention_mask, label) with lists of seq_len."""
    os.makedirs(out, exist_ok=True)
    names = ["attention_mask", "input_ids", "label"]
    array = f"ndarray:int64:{seq_len}"
    encodings = [array, array, "int"]
    sizes = [8 * seq_len, 8 * seq_len, 8]
    rows = []
    for ids, mask, label in samples:
        rows.append(struct.pack(f"<{seq_len}q", *mask) +
                    struct.pack(f"<{seq_len}q", *ids) +
                    struct.pack("<q", label))
    header = 4 + 4 * (len(rows) + 1)
    offsets, at = [], header
    for row in rows:
        offsets.append(at)
        at += len(row)
    offsets.append(at)
    data = (struct.pack("<I", len(rows)) +
            struct.pack(f"<{len(offsets)}I", *offsets) + b"".join(rows))
    with open(os.path.join(out, "shard.00000.mds"), "wb") as f:
        f.write(data)
    shard = {
        "column_encodings": encodings, "column_names": names,
        "column_sizes": sizes, "compression": None, "format": "mds",
        "hashes": [], "raw_data": {"basename": "shard.00000.mds",
                                   "bytes": len(data), "hashes": {}},
        "samples": len(rows), "size_limit": 1 << 26, "version": 2,
        "zip_data": None}
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"shards": [shard], "version": 2}, f, indent=1)


def make_data(args):
    train, val = [], []
    for label, name in enumerate(CATEGORIES):
        for i, text in enumerate(read_category(name)):
            (val if i % VALIDATION_EVERY == 0 else train).append((text, label))
    counts = collections.Counter(w for text, _ in train for w in words(text))
    vocab = SPECIAL + [w for w, _ in counts.most_common(args.vocab - len(SPECIAL))]
    index = {w: i for i, w in enumerate(vocab)}

    def encode(text):
        ids = [2] + [index.get(w, 1) for w in words(text)][:args.seq_len - 1]
        mask = [1] * len(ids) + [0] * (args.seq_len - len(ids))
        return ids + [0] * (args.seq_len - len(ids)), mask

    def samples(split):
        return [(*encode(text), label) for text, label in split]

    write_mds(os.path.join(args.out, "train"), samples(train), args.seq_len)
    write_mds(os.path.join(args.out, "val"), samples(val), args.seq_len)
    two = [s for s in val if CATEGORIES[s[1]] in TWO]
    write_mds(os.path.join(args.out, "val_two"), samples(two), args.seq_len)
    with open(os.path.join(args.out, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    for split_name, split in (("train", train), ("val", val), ("val_two", two)):
        by_class = collections.Counter(label for _, label in split)
        majority = max(by_class.values()) / len(split)
        print(f"{split_name}: {len(split)} fortunes, "
              + ", ".join(f"{CATEGORIES[c]} {n}" for c, n in sorted(by_class.items()))
              + f"; majority class {majority:.4f}")


def make_model(args):
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self, vocab, width, layers, heads, seq_len, classes):
            super().__init__()
            self.tokens = nn.Embedding(vocab, width, padding_idx=0)
            self.positions = nn.Embedding(seq_len, width)
            layer = nn.TransformerEncoderLayer(
                width, heads, 4 * width, dropout=0.1, batch_first=True,
                norm_first=True)
            self.layers = nn.TransformerEncoder(layer, layers,
                                                enable_nested_tensor=False)
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, classes)

        def forward(self, input_ids: torch.Tensor,
                    attention_mask: torch.Tensor):
            positions = torch.arange(input_ids.size(1), device=input_ids.device)
            x = self.tokens(input_ids) + self.positions(positions)
            x = self.layers(x, src_key_padding_mask=attention_mask == 0)
            mask = attention_mask.unsqueeze(-1).to(x.dtype)
            pooled = (self.norm(x) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return {"logits": self.head(pooled)}

    torch.manual_seed(0)
    model = Encoder(args.vocab, args.width, args.layers, args.heads,
                    args.seq_len, len(CATEGORIES))
    torch.jit.script(model).save(args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    data = sub.add_parser("data")
    data.add_argument("out")
    model = sub.add_parser("model")
    model.add_argument("out")
    for p in (data, model):
        p.add_argument("--seq-len", type=int, default=64)
        p.add_argument("--vocab", type=int, default=4096)
    model.add_argument("--width", type=int, default=64)
    model.add_argument("--layers", type=int, default=2)
    model.add_argument("--heads", type=int, default=4)
    args = parser.parse_args()
    make_data(args) if args.command == "data" else make_model(args)


if __name__ == "__main__":
    sys.exit(main())
