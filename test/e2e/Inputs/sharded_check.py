"""The bytes a shard_grad_op run logs per step (train-sharded.test).

  sharded_check.py METRICS.jsonl CHECKPOINT_INTERVAL

CHECKPOINT_INTERVAL is the batches between full checkpoints, 0 when they
are sharded (and gather nothing).
"""
import json
import sys


def main(path, interval):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    steps = [r for r in rows if "communication/bytes/reduce_scatter" in r]
    assert steps, "no communication logged"
    for row in steps:
        scattered = row["communication/bytes/reduce_scatter"]
        gathered = row["communication/bytes/all_gather"]
        reduced = row["communication/bytes/all_reduce"]
        assert scattered > 0, row
        # A full checkpoint gathers the optimizer state too; its bytes count
        # in the next step's.
        after_checkpoint = (interval and row["step"] > 1
                            and (row["step"] - 1) % interval == 0)
        if after_checkpoint:
            assert gathered > scattered, row
        else:
            assert gathered == scattered, row
        # The loss and the stop flags, three doubles, ride on one
        # all-reduce, and the clipping norm on another; no gradient does.
        assert reduced <= 64, row
    print("all-gather equals reduce-scatter; no gradient all-reduce")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
