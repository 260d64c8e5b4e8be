"""Reading composer-train's JSONL metrics in the benchmarks."""
import json


def train_clock(jsonl):
    """{step: cumulative training seconds} from the speed monitor."""
    clock = {}
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            if "wall_clock/train" in row:
                clock[row["step"]] = row["wall_clock/train"]
    return clock


def seconds_per_step(jsonl, steps, warmup):
    """Mean step time over the steps after `warmup`."""
    clock = train_clock(jsonl)
    return (clock[steps] - clock[warmup]) / (steps - warmup)
