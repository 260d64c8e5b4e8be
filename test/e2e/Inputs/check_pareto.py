"""Checks bench/pareto.py's output folder: pareto.json has one run per
expected variant, in order, with a time (the median of its --repeat runs)
and an accuracy, at least one on the frontier, and pareto.png is a PNG.

  check_pareto.py OUT_DIR VARIANT...
"""
import json
import os
import sys

out, expected = sys.argv[1], sys.argv[2:]
with open(os.path.join(out, "pareto.json")) as f:
    result = json.load(f)
runs = result["runs"]
names = [run["name"] for run in runs]
assert names == expected, f"runs {names}, expected {expected}"
for run in runs:
    assert run["train_seconds"] > 0, run
    times = run["train_seconds_runs"]
    assert len(times) == result["settings"]["repeat"], run
    assert min(times) <= run["train_seconds"] <= max(times), run
    # Three batches: the median of two step times, within the run's time.
    assert 0 < run["median_step_ms"] <= 1000 * max(times), run
    assert 0 <= run["final_accuracy"] <= 1, run
assert any(run["frontier"] for run in runs), "no run on the frontier"
with open(os.path.join(out, "pareto.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", "pareto.png is not a PNG"
print(f"{len(runs)} runs, frontier: "
      f"{', '.join(run['name'] for run in runs if run['frontier'])}")
