"""English text from Debian's `fortunes` package as byte tokens in
composer-train's `tokens` format (flat little-endian uint16, one per byte),
split into training and validation files.

    /usr/bin/python3 examples/text_tokens.py OUTDIR [--limit N]

Reads the plain fortune files of /usr/share/games/fortunes (sorted by name;
not the .dat indexes or the .u8 links), cuts them into fortunes at their `%`
lines, and sends every 20th fortune (5%) to validation, the rest to
training, each fortune followed by its "%\\n" separator. Writes
OUTDIR/fortunes-train.tokens and OUTDIR/fortunes-val.tokens. `--limit N`
reads only the first N fortunes (for tests).
"""
import argparse
import os
import sys

FORTUNES = "/usr/share/games/fortunes"
VALIDATION_EVERY = 20


def fortune_files(folder):
    names = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if (name.endswith((".dat", ".u8")) or os.path.islink(path)
                or not os.path.isfile(path)):
            continue
        names.append(path)
    return names


def read_fortunes(folder, limit=None):
    fortunes = []
    for path in fortune_files(folder):
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        # A line holding only "%" ends a fortune.
        fortune = b""
        for line in lines + [b"%\n"]:
            if line.rstrip(b"\r\n") != b"%":
                fortune += line
                continue
            if fortune.strip():
                fortunes.append(fortune + b"%\n")
                if limit and len(fortunes) >= limit:
                    return fortunes
            fortune = b""
    return fortunes


def write_tokens(path, data):
    # Byte b becomes the uint16 token b: bytes b, 0 (little-endian).
    tokens = bytearray(2 * len(data))
    tokens[0::2] = data
    with open(path, "wb") as f:
        f.write(tokens)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output_dir")
    parser.add_argument("--limit", type=int, default=None,
                        help="read only the first N fortunes")
    parser.add_argument("--source", default=FORTUNES)
    args = parser.parse_args()
    if not os.path.isdir(args.source):
        sys.exit(f"text_tokens.py: {args.source} not found; install Debian's "
                 "`fortunes` package")
    fortunes = read_fortunes(args.source, args.limit)
    train = b"".join(f for i, f in enumerate(fortunes)
                     if i % VALIDATION_EVERY != VALIDATION_EVERY - 1)
    val = b"".join(f for i, f in enumerate(fortunes)
                   if i % VALIDATION_EVERY == VALIDATION_EVERY - 1)
    os.makedirs(args.output_dir, exist_ok=True)
    for split, data in (("train", train), ("val", val)):
        write_tokens(os.path.join(args.output_dir, f"fortunes-{split}.tokens"),
                     data)
    print(f"{len(fortunes)} fortunes: {len(train)} training tokens, "
          f"{len(val)} validation tokens")


if __name__ == "__main__":
    main()
