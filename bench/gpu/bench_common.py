"""What bench_ops.py and bench_resnet50.py share: their run options, the
device setup and the median timing of a step."""
import statistics
import sys
import time

import torch


def add_run_options(parser, batch, warmup):
    """--batch, --warmup, --iters and --device, with these defaults."""
    parser.add_argument("--batch", type=int, default=batch)
    parser.add_argument("--warmup", type=int, default=warmup)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--device", default="cuda",
                        help="cuda; cpu only checks that the script runs")


def start(args, script):
    """The device of --device (exits when CUDA is asked for and absent), with
    cuDNN autotuning on and the seed set; returns it and its name."""
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{script}: no CUDA device")
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    name = torch.cuda.get_device_name() if device.type == "cuda" else "CPU"
    return device, name


def describe_run(name, args):
    """The first line of a report: device, versions, batch and timing."""
    return (f"device: {name}, torch {torch.__version__} (CUDA "
            f"{torch.version.cuda}), batch {args.batch}, median of "
            f"{args.iters}")


def median_ms(fn, warmup, iters, device, cpu_iters=None):
    """The median time of `iters` calls of fn, each between two CUDA events,
    after `warmup` untimed ones. On --device cpu (a smoke test of the script)
    by the wall clock, over `cpu_iters` calls (default `iters`)."""
    for _ in range(warmup):
        fn()
    if device.type != "cuda":
        times = []
        for _ in range(iters if cpu_iters is None else cpu_iters):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
