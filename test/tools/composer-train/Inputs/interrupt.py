"""Runs composer-train as a Python wrapper would: the metrics come back
through a pipe (--metrics-jsonl=/dev/fd/N), and once a line with "step"
has arrived the child gets SIGNAL; the pipe is read until it closes.
Prints the exit status and the steps that came through the pipe.

  interrupt.py SIGNAL -- COMMAND...
"""
import json
import os
import signal
import subprocess
import sys

signum = getattr(signal, sys.argv[1])
assert sys.argv[2] == "--"
reader, writer = os.pipe()
process = subprocess.Popen(
    sys.argv[3:] + [f"--metrics-jsonl=/dev/fd/{writer}"], pass_fds=(writer,))
os.close(writer)
steps = []
with os.fdopen(reader) as pipe:
    for line in pipe:
        row = json.loads(line)
        if "step" in row and "loss/train/total" in row:
            steps.append(row["step"])
            if len(steps) == 1:
                process.send_signal(signum)
try:
    status = process.wait(timeout=120)
except subprocess.TimeoutExpired:
    process.kill()
    sys.exit("composer-train did not stop")
print(f"exit status {status}")
print(f"steps {len(steps)}, from {min(steps, default=0)} to "
      f"{max(steps, default=0)}")
