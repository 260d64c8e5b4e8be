"""Checks on composer-train runs, read from their JSONL metrics and
checkpoints (plain pickled dicts that torch.load reads).

  train_check.py loss-falls METRICS.jsonl MIN_ACCURACY
  train_check.py same-weights A.ckpt B.ckpt
  train_check.py kill-at METRICS.jsonl STEP -- COMMAND...
  train_check.py frozen CKPT ORIGINAL.pt MIN_FROZEN [STATIC_PREFIX...]
  train_check.py close-weights A.ckpt B.ckpt TOLERANCE
  train_check.py close-metric A.jsonl B.jsonl KEY TOLERANCE
  train_check.py kill-rank METRICS.jsonl STEP RANK LIMIT_S -- COMMAND...
  train_check.py kill-all-at METRICS.jsonl STEP -- LAUNCHER_COMMAND...
"""
import json
import os
import signal
import subprocess
import sys
import time

import torch


def metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def loss_falls(path, min_accuracy):
    rows = metrics(path)
    losses = [r["loss/train/total"] for r in rows if "loss/train/total" in r]
    accuracies = [r["metrics/eval/Accuracy"] for r in rows
                  if "metrics/eval/Accuracy" in r]
    assert len(losses) >= 20, f"only {len(losses)} training steps logged"
    first = sum(losses[:10]) / 10
    last = sum(losses[-10:]) / 10
    print(f"loss {first:.4f} -> {last:.4f}; eval accuracy {accuracies}")
    assert last < 0.7 * first, "the training loss did not fall"
    assert accuracies, "no evaluation was logged"
    assert accuracies[-1] >= float(min_accuracy), "accuracy below target"
    assert accuracies[-1] > accuracies[0] or len(accuracies) == 1


def same_weights(a, b):
    ca, cb = torch.load(a), torch.load(b)
    assert ca["timestamp"] == cb["timestamp"], (ca["timestamp"], cb["timestamp"])
    assert sorted(ca["model"]) == sorted(cb["model"])
    for name, tensor in ca["model"].items():
        other = cb["model"][name]
        assert torch.equal(tensor, other), (
            f"{name} differs: max |diff| "
            f"{(tensor.double() - other.double()).abs().max().item()}")
    print(f"{len(ca['model'])} tensors bit-identical at batch "
          f"{ca['timestamp']['batch']}")


def frozen(checkpoint, original, min_frozen, static_prefixes):
    """Frozen parameters never moved; the rest trained; the checkpoint lists
    at least MIN_FROZEN, including every parameter under STATIC_PREFIX."""
    c = torch.load(checkpoint)
    start = dict(torch.jit.load(original).named_parameters())
    names = set(c["frozen"])
    print(f"{len(names)} of {len(start)} parameters frozen")
    assert len(names) >= int(min_frozen), sorted(names)
    for prefix in static_prefixes:
        under = [n for n in start if n.startswith(prefix + ".")]
        assert under and all(n in names for n in under), (prefix, under)
    trained = 0
    for name, tensor in start.items():
        if name in names and any(name.startswith(p + ".")
                                 for p in static_prefixes):
            assert torch.equal(c["model"][name], tensor), name
        elif name not in names:
            trained += not torch.equal(c["model"][name], tensor)
    assert trained > 0, "nothing trained"
    assert all(torch.isfinite(t).all() for t in c["model"].values()
               if t.is_floating_point())


def close_weights(a, b, tolerance):
    ca, cb = torch.load(a), torch.load(b)
    assert ca["timestamp"] == cb["timestamp"], (ca["timestamp"], cb["timestamp"])
    worst = 0.0
    for name, tensor in ca["model"].items():
        if tensor.is_floating_point():
            worst = max(worst, (tensor.double() - cb["model"][name].double())
                        .abs().max().item())
        else:
            assert torch.equal(tensor, cb["model"][name]), name
    print(f"max |difference| {worst:.3g} at batch {ca['timestamp']['batch']}")
    assert worst <= float(tolerance), f"{worst} > {tolerance}"


def close_metric(a, b, key, tolerance):
    """KEY is logged at the same steps in A and B, within TOLERANCE."""
    def logged(path):
        return {row["step"]: row[key] for row in metrics(path) if key in row}
    la, lb = logged(a), logged(b)
    assert la and sorted(la) == sorted(lb), (sorted(la), sorted(lb))
    worst = max(abs(la[step] - lb[step]) for step in la)
    print(f"{key}: max |difference| {worst:.3g} over {len(la)} steps")
    assert worst <= float(tolerance), f"{worst} > {tolerance}"


def wait_for_step(path, step, process, deadline):
    while time.time() < deadline:
        if process.poll() is not None:
            sys.exit(f"the run ended (status {process.returncode}) "
                     f"before step {step}")
        if os.path.exists(path):
            # A line without its newline may still be being written.
            with open(path) as f:
                steps = [json.loads(l).get("step", 0) for l in f
                         if l.endswith("\n") and l.strip()]
            if steps and max(steps) >= step:
                return max(steps)
        time.sleep(0.002)
    process.kill()
    sys.exit("timed out")


def kill_rank(path, step, rank, limit, command):
    """Runs a launcher, SIGKILLs its child of RANK once METRICS.jsonl logs
    STEP, and checks that the run stops, failing, within LIMIT seconds and
    says which rank was lost."""
    if os.path.exists(path):
        os.remove(path)
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    wait_for_step(path, step, process, time.time() + 300)
    children = subprocess.run(["pgrep", "-P", str(process.pid)],
                              capture_output=True, text=True).stdout.split()
    victim = None
    for child in children:
        with open(f"/proc/{child}/environ", "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        if env.get(b"RANK") == str(rank).encode():
            victim = int(child)
    assert victim, f"no child with RANK={rank} among {children}"
    os.kill(victim, signal.SIGKILL)
    killed = time.time()
    try:
        _, stderr = process.communicate(timeout=float(limit))
    except subprocess.TimeoutExpired:
        process.kill()
        sys.exit(f"still running {limit} s after rank {rank} was killed")
    elapsed = time.time() - killed
    sys.stderr.write(stderr)
    assert process.returncode != 0, "the run succeeded"
    assert f"lost rank {rank}" in stderr, "the lost rank is not named"
    print(f"stopped {elapsed:.1f} s after rank {rank} was killed")


def kill_at(path, step, command, ranks=False):
    """Runs `command`, SIGKILLs it once METRICS.jsonl logs `step`; with
    `ranks`, its child processes (a launcher's ranks) at the same moment."""
    if os.path.exists(path):
        os.remove(path)
    process = subprocess.Popen(command)
    reached = wait_for_step(path, step, process, time.time() + 300)
    victims = [process.pid]
    if ranks:
        victims += [int(pid) for pid in subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True,
            text=True).stdout.split()]
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    process.wait()
    print(f"killed {len(victims)} processes at step {reached}")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "loss-falls":
        loss_falls(sys.argv[2], sys.argv[3])
    elif mode == "same-weights":
        same_weights(sys.argv[2], sys.argv[3])
    elif mode == "frozen":
        frozen(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif mode == "close-weights":
        close_weights(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "close-metric":
        close_metric(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif mode == "kill-rank":
        assert sys.argv[6] == "--"
        kill_rank(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                  sys.argv[5], sys.argv[7:])
    elif mode == "kill-at":
        assert sys.argv[4] == "--"
        kill_at(sys.argv[2], int(sys.argv[3]), sys.argv[5:])
    elif mode == "kill-all-at":
        assert sys.argv[4] == "--"
        kill_at(sys.argv[2], int(sys.argv[3]), sys.argv[5:], ranks=True)
    else:
        sys.exit(f"unknown mode {mode}")
