"""Prints NumPy's default_rng draws as JSON, for NumpyRandomTest: for each
seed, the sequence of calls below in this order on one generator, so that a
call that consumed one draw too many or too few shows in every later one."""
import json
import sys

import numpy as np

seeds = [0, 1, 17, 9176, 9177, 2**32 - 1, 2**32 + 5, 2**63 + 11]
out = []
for seed in seeds:
    g = np.random.default_rng(seed)
    record = {"seed": str(seed)}
    record["uint64"] = [str(int(x)) for x in g.integers(0, 2**64, 3, dtype=np.uint64,
                                                         endpoint=False)]
    record["permutation"] = g.permutation(41).tolist()
    record["integers"] = [int(g.integers(lo, hi)) for lo, hi in
                          [(0, 1), (5, 1000), (196608, 327680), (-7, 7), (0, 2**40), (3, 2**33)]]
    record["stagger"] = g.integers(0, 12345, (5,)).tolist()
    record["uniform"] = [float(x) for x in g.uniform(-3.5, 2.25, 4)] + [
        float(g.uniform(0.0, 0.0)), float(g.uniform(-10.0, 1e-3))]
    spans = [(i, i + 1) for i in range(9)]
    g.shuffle(spans)
    record["shuffle_list"] = [a for a, _ in spans]
    array = np.arange(300, dtype=np.int64)
    g.shuffle(array[10:290])
    record["shuffle_view"] = array.tolist()
    record["choice_small"] = g.choice(20, 7, False).tolist()
    record["choice_floyd"] = g.choice(50000, 300, False).tolist()
    record["choice_tail"] = g.choice(30000, 1000, False).tolist()[:50]
    record["choice_none"] = g.choice(5, 0, False).tolist()
    record["after"] = [float(x) for x in g.random(2)]
    out.append(record)
json.dump({"numpy": np.__version__, "cases": out}, sys.stdout)
