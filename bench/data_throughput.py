#!/usr/bin/python3
"""Images per second through JPEG decode + random_resized_crop(224) + flip
into uint8 batches: composer-data against torchvision, side by side.

Run from the repository root after building, on a folder of JPEGs from
bench/make_photo_jpegs.py (2,000 ImageNet-sized photographs):
    /usr/bin/python3 bench/make_photo_jpegs.py --out /tmp/photos
    OMP_NUM_THREADS=1 /usr/bin/python3 bench/data_throughput.py /tmp/photos
        [--workers 1,2] [--repeat 3] [--batches K] [--batch-size 64]
        [--size 224] [--composer-data build/bin/composer-data]
        [--only composer|torchvision] [--check-pixels [N]]
        [--resnet [--resnet-batch 64] [--resnet-steps 2]] [--remote]

For each worker count and each of --repeat rounds it runs both loaders, one
after the other (the order swaps every round, so drift in the machine's
speed falls on both), and prints the medians and their ratio as a Markdown
table:
  composer     `composer-data throughput ROOT --size S --batch-size B
               --workers N --batches K`, which prints `images_per_second: X`
               (its own clock). --composer-data is the command, split like a
               shell would ("taskset -c 0 build/bin/composer-data" works).
  torchvision  datasets.ImageFolder(ROOT) with PIL decoding and the
               transforms RandomResizedCrop(S) (scale 0.08-1, ratio 3/4-4/3,
               bilinear with antialias, as PIL resizes), RandomHorizontalFlip
               and PILToTensor, no normalization, in a DataLoader with
               num_workers=N, shuffle, drop_last and the default collate:
               uint8 batches [B, 3, S, S]. Its clock runs from creating the
               iterator (worker start included) to the K-th batch in the main
               process, and K * B images are counted.
K defaults to the number of full batches in ROOT (31 for 2,000 images).
Every file is read once before timing, so both loaders read from the page
cache. Threads: torch in this process uses one (workers use one each, as
DataLoader sets), and OMP_NUM_THREADS=1 is passed to composer-data.

--check-pixels [N] decodes N JPEGs of ROOT (default 8, spread over the
sorted file list, portrait ones included) at full scale with PIL
(Image.open(f).convert("RGB")) and with `composer-data decode FILE --out
RAW` (raw RGB, HWC, uint8) and expects equal bytes: both use Debian's
libjpeg-turbo 2.1.5 with its defaults (islow IDCT, fancy upsampling).

--remote measures MDS shards read from an HTTP remote against the same
shards on local disk. ROOT is first written as raw MDS shards (`composer-data
mds-from-folder ROOT MDS --shard-size 16mb --hashes sha1`). Each round
then runs, one after the other (the order swaps every round):
  local   `composer-data throughput MDS --epochs 2`: two epochs in Streaming's
          order (py1e), the first from opening the index (which checks every
          shard's hash) to its last batch;
  remote  test/e2e_lib/serve_shards.py serving MDS (Python's http.server on
          127.0.0.1) while `composer-data throughput CACHE --remote URL
          --epochs 2` reads two epochs into an empty CACHE: the first
          downloads each shard (predownload: 8 batches ahead) and checks its
          hash, the second reads the warm cache.
It prints the medians and the ratios of the remote's first and second
epochs to the local ones.

--resnet times a torchvision ResNet-50 training step at SxS (batch
--resnet-batch, default 64; SGD; under torch.autocast("cpu",
dtype=torch.bfloat16); one thread; uint8 batches normalized in the step)
fed from one batch kept in memory, and reports the share of the step the
loader would take on that one core: the loader's time for one batch at 1
worker (from the table's medians) against the step's time. The same model
also takes steps fed from a torchvision DataLoader over ROOT with one
worker (decoding on the second core, in parallel), alternating with the
steps fed from memory; medians of --resnet-steps each. At batch 64 a step
takes 10-40 s on this 2-core machine, so it runs for minutes.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif",
                    ".tiff", ".webp")


def image_files(root):
    files = []
    for folder, _, names in os.walk(root, followlinks=True):
        files += [os.path.join(folder, n) for n in names
                  if n.lower().endswith(IMAGE_EXTENSIONS)]
    return sorted(files)


def warm_page_cache(files):
    total = 0
    for path in files:
        with open(path, "rb") as f:
            total += len(f.read())
    return total


def torchvision_loader(root, size, batch_size, workers, seed):
    import torchvision.transforms as T
    from torchvision.datasets import ImageFolder
    transform = T.Compose([T.RandomResizedCrop(size),
                           T.RandomHorizontalFlip(),
                           T.PILToTensor()])
    dataset = ImageFolder(root, transform=transform)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True, drop_last=True,
        num_workers=workers, generator=generator,
        persistent_workers=False)


def run_torchvision(args, workers, seed):
    loader = torchvision_loader(args.root, args.size, args.batch_size,
                                workers, seed)
    start = time.perf_counter()
    count = 0
    for batch, (images, labels) in enumerate(iter(loader)):
        if batch == 0:
            want = (args.batch_size, 3, args.size, args.size)
            if images.dtype != torch.uint8 or tuple(images.shape) != want:
                sys.exit(f"torchvision batch {images.dtype} "
                         f"{tuple(images.shape)}, expected uint8 {want}")
        count += images.shape[0]
        if batch + 1 == args.batches:
            break
    seconds = time.perf_counter() - start
    del loader
    return count / seconds


def composer_command(args):
    return shlex.split(args.composer_data)


def composer_available(args):
    command = composer_command(args)
    if not command:
        return False
    exe = command[-1] if "/" in command[-1] else command[0]
    return os.path.exists(exe) or any(
        os.path.exists(os.path.join(p, command[0]))
        for p in os.environ.get("PATH", "").split(os.pathsep))


def run_composer(args, workers, seed):
    command = composer_command(args) + [
        "throughput", args.root, "--size", str(args.size),
        "--batch-size", str(args.batch_size), "--workers", str(workers),
        "--batches", str(args.batches)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    match = re.search(r"^images_per_second:\s*([0-9.eE+-]+)", result.stdout,
                      re.MULTILINE)
    if result.returncode != 0 or not match:
        sys.exit(f"{shlex.join(command)} failed (exit {result.returncode}):"
                 f"\n{result.stdout}{result.stderr}")
    return float(match.group(1))


def fmt(value):
    return "—" if value is None else f"{value:,.0f}"


def throughput(args):
    loaders = [name for name in ("composer", "torchvision")
               if args.only in (None, name)]
    if "composer" in loaders and not composer_available(args):
        print(f"note: {args.composer_data} not found; timing torchvision "
              "only", file=sys.stderr)
        loaders.remove("composer")
    results = {(name, w): [] for name in loaders for w in args.workers}
    for round_ in range(args.repeat):
        order = loaders if round_ % 2 == 0 else loaders[::-1]
        for workers in args.workers:
            for name in order:
                run = run_composer if name == "composer" else run_torchvision
                rate = run(args, workers, seed=round_)
                results[(name, workers)].append(rate)
                print(f"round {round_ + 1}/{args.repeat}  workers {workers}  "
                      f"{name:11s} {rate:8.1f} images/s", flush=True)

    medians = {key: statistics.median(v) for key, v in results.items()}
    print()
    print(f"{args.batches} batches of {args.batch_size} from {args.root}, "
          f"random_resized_crop({args.size}) + flip, uint8; median of "
          f"{args.repeat}")
    print()
    print("| workers | torchvision images/s | composer images/s | "
          "composer / torchvision | per worker (torchvision, composer) |")
    print("|---:|---:|---:|---:|---|")
    for workers in args.workers:
        tv = medians.get(("torchvision", workers))
        cd = medians.get(("composer", workers))
        ratio = f"{cd / tv:.2f}x" if tv and cd else "—"
        per = ", ".join(fmt(None if v is None else v / workers)
                        for v in (tv, cd))
        print(f"| {workers} | {fmt(tv)} | {fmt(cd)} | {ratio} | {per} |")
    print()
    return medians


def check_pixels(args, files):
    if not composer_available(args):
        sys.exit(f"--check-pixels: {args.composer_data} not found")
    jpegs = [f for f in files if f.lower().endswith((".jpg", ".jpeg"))]
    if not jpegs:
        sys.exit(f"--check-pixels: no JPEGs in {args.root}")
    n = min(args.check_pixels, len(jpegs))
    picked = [jpegs[round(i * (len(jpegs) - 1) / max(n - 1, 1))]
              for i in range(n)]
    portrait = [f for f in jpegs if _is_portrait(f)]
    if portrait and not any(_is_portrait(f) for f in picked):
        picked[-1] = portrait[0]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw.bin")
        for path in picked:
            with Image.open(path) as image:
                want = np.asarray(image.convert("RGB"))
            command = composer_command(args) + ["decode", path, "--out", raw]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                print(f"FAIL {path}: {shlex.join(command)} exit "
                      f"{result.returncode}\n{result.stdout}{result.stderr}")
                failures += 1
                continue
            got = np.fromfile(raw, dtype=np.uint8)
            h, w, _ = want.shape
            if got.size != want.size:
                print(f"FAIL {path}: {got.size} bytes, PIL decodes {w}x{h}x3"
                      f" = {want.size}")
                failures += 1
                continue
            diff = np.abs(got.reshape(want.shape).astype(np.int16) -
                          want.astype(np.int16))
            if diff.any():
                print(f"FAIL {path} ({w}x{h}): {np.count_nonzero(diff)} "
                      f"bytes differ, max difference {diff.max()}")
                failures += 1
            else:
                print(f"ok   {path} ({w}x{h}): equal to PIL")
    print(f"check-pixels: {len(picked) - failures}/{len(picked)} equal")
    return failures == 0


def _is_portrait(path):
    with Image.open(path) as image:
        return image.height > image.width


def resnet_steps(args):
    """Seconds per ResNet-50 training step fed from memory and from the
    folder: one model, the two kinds of step alternating, medians."""
    import torchvision
    batch, size = args.resnet_batch, args.size
    torch.manual_seed(0)
    model = torchvision.models.resnet50(num_classes=1000)
    memory_format = (torch.channels_last if args.channels_last
                     else torch.contiguous_format)
    model = model.to(memory_format=memory_format).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255
    fixed = (torch.randint(0, 256, (batch, 3, size, size), dtype=torch.uint8),
             torch.randint(0, 10, (batch,)))
    folder = None
    if len(image_files(args.root)) >= batch * (args.resnet_steps + 1):
        folder = iter(torchvision_loader(args.root, size, batch, 1, seed=0))

    def step(source):
        start = time.perf_counter()
        images, labels = next(source) if source is not None else fixed
        x = ((images.float() - mean) / std).contiguous(
            memory_format=memory_format)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return time.perf_counter() - start

    step(None)  # warm-up: allocations, oneDNN primitives
    if folder is not None:
        step(folder)  # the loader's worker starts and fills its queue
    memory, from_folder = [], []
    for _ in range(args.resnet_steps):
        memory.append(step(None))
        if folder is not None:
            from_folder.append(step(folder))
    return (statistics.median(memory),
            statistics.median(from_folder) if folder is not None else None)


def resnet(args, medians):
    batch = args.resnet_batch
    print(f"ResNet-50 training step, batch {batch}, {args.size}x{args.size}, "
          f"bf16 autocast, {torch.get_num_threads()} thread, "
          f"{'channels-last' if args.channels_last else 'NCHW'}: "
          f"{args.resnet_steps} steps of each kind after warm-up ...",
          flush=True)
    memory, folder = resnet_steps(args)
    print(f"  fed from memory: {memory:.2f} s per step "
          f"({batch / memory:.1f} images/s)")
    if folder is None:
        print(f"  (fed from the folder skipped: fewer than "
              f"{batch * (args.resnet_steps + 1)} images in {args.root})")
    else:
        print(f"  fed from {args.root} by torchvision (1 worker, on the "
              f"other core): {folder:.2f} s per step, "
              f"{folder / memory:.3f}x the step fed from memory")
    print()
    print(f"| loader (1 worker) | seconds per batch of {batch} | "
          "share of the step | loader / (loader + step) |")
    print("|---|---:|---:|---:|")
    for name in ("torchvision", "composer"):
        rate = medians.get((name, 1))
        if rate is None:
            print(f"| {name} | — | — | — |")
            continue
        load = batch / rate
        print(f"| {name} | {load:.3f} | {load / memory:.1%} | "
              f"{load / (load + memory):.1%} |")
    print()


def epoch_seconds(command):
    out = subprocess.run(command, check=True, capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="1")).stdout
    match = re.search(r"epoch_seconds:((?: [0-9.e+-]+)+)", out)
    if not match:
        sys.exit("no epoch_seconds in: " + out)
    return [float(x) for x in match.group(1).split()]


def remote(args):
    """The first epoch from an HTTP remote, and the second from its warm
    cache, against one epoch from local shards."""
    tool = composer_command(args)
    work = tempfile.mkdtemp(prefix="remote-bench-")
    mds = os.path.join(work, "mds")
    subprocess.run(tool + ["mds-from-folder", args.root, mds, "--shard-size",
                           "16mb", "--hashes", "sha1"], check=True,
                   stdout=subprocess.DEVNULL)
    shards = [f for f in os.listdir(mds) if f.endswith(".mds")]
    print(f"{len(shards)} shards, "
          f"{sum(os.path.getsize(os.path.join(mds, f)) for f in shards) / 2**20:.1f}"
          " MiB", flush=True)
    serve = [sys.executable, os.path.join(ROOT, "test/e2e_lib/serve_shards.py")]
    common = ["--size", str(args.size), "--batch-size", str(args.batch_size)]
    for workers in args.workers:
        local, local2, first, second = [], [], [], []
        for round_ in range(args.repeat):
            def run_local():
                times = epoch_seconds(
                    tool + ["throughput", mds, "--epochs", "2", "--workers",
                            str(workers)] + common)
                local.append(times[0])
                local2.append(times[1])

            def run_remote():
                cache = tempfile.mkdtemp(prefix="cache-", dir=work)
                times = epoch_seconds(
                    serve + [mds, "--"] + tool +
                    ["throughput", cache, "--remote", "{url}", "--epochs", "2",
                     "--workers", str(workers)] + common)
                first.append(times[0])
                second.append(times[1])
                subprocess.run(["rm", "-rf", cache], check=True)

            for run in ((run_local, run_remote) if round_ % 2 == 0 else
                        (run_remote, run_local)):
                run()
            print(f"workers {workers} round {round_}: local {local[-1]:.2f} "
                  f"then {local2[-1]:.2f} s, remote first {first[-1]:.2f} s, "
                  f"warm {second[-1]:.2f} s", flush=True)
        ml, ml2, mf, ms = (statistics.median(x)
                           for x in (local, local2, first, second))
        print()
        print("| workers | local first epoch (s) | remote first epoch (s) | "
              "x local | local second epoch (s) | remote warm epoch (s) | "
              "x local |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        print(f"| {workers} | {ml:.2f} | {mf:.2f} | {mf / ml:.3f} | {ml2:.2f} "
              f"| {ms:.2f} | {ms / ml2:.3f} |", flush=True)
    subprocess.run(["rm", "-rf", work], check=True)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", default="/tmp/photos",
                        help="ImageFolder root (bench/make_photo_jpegs.py)")
    parser.add_argument("--composer-data",
                        default=os.path.join(ROOT, "build/bin/composer-data"))
    parser.add_argument("--workers", default="1,2",
                        help="comma-separated worker counts")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batches", type=int, default=0,
                        help="batches per run (0: every full batch of ROOT)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--only", choices=["composer", "torchvision"])
    parser.add_argument("--check-pixels", type=int, nargs="?", const=8,
                        default=0, metavar="N")
    parser.add_argument("--resnet", action="store_true")
    parser.add_argument("--resnet-batch", type=int, default=64)
    parser.add_argument("--resnet-steps", type=int, default=2)
    parser.add_argument("--channels-last", action="store_true",
                        help="ResNet-50 in channels-last (with --resnet)")
    parser.add_argument("--no-throughput", action="store_true",
                        help="skip the timing (with --check-pixels)")
    parser.add_argument("--remote", action="store_true",
                        help="MDS shards over loopback HTTP against local")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",") if w]
    torch.set_num_threads(1)

    if not os.path.isdir(args.root):
        sys.exit(f"{args.root}: no such folder (bench/make_photo_jpegs.py "
                 "makes one)")
    files = image_files(args.root)
    full = len(files) // args.batch_size
    if full == 0:
        sys.exit(f"{args.root}: {len(files)} images, fewer than one batch")
    if args.batches <= 0 or args.batches > full:
        args.batches = full
    size = warm_page_cache(files)
    print(f"{args.root}: {len(files)} images, {size / 2**20:.1f} MiB; "
          f"{os.cpu_count()} CPUs, torch {torch.__version__}, PIL "
          f"{Image.__version__}", flush=True)

    if args.remote:
        remote(args)
        return
    ok = True
    if args.check_pixels:
        ok = check_pixels(args, files)
    medians = {}
    if not args.no_throughput:
        medians = throughput(args)
    if args.resnet:
        resnet(args, medians)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
