"""Records MosaicML Streaming's sample orders for StreamingOrderTest.

    python3 record_streaming_orders.py STREAMING_CHECKOUT OUT.json

STREAMING_CHECKOUT is a clone of github.com/mosaicml/streaming. Streaming's
own code computes every order recorded: its shuffle and partition modules
and its random batching are loaded from the checkout, and its
StreamingDataset.resample_streams, Stream.validate_weights and
Stream.apply_weights are taken from their source, unchanged. Only the parts
that need a cluster are replaced: World is a plain record, and each rank's
DataLoader is torch's own, over an IterableDataset that yields the worker's
share as StreamingDataset.__iter__ does (skipping -1).
"""
import ast
import importlib.util
import json
import os
import subprocess
import sys
import types

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

root = sys.argv[1]
base = root + "/streaming/base/"


def package(name, path=None):
    module = types.ModuleType(name)
    module.__path__ = [path] if path else []
    sys.modules[name] = module
    return module


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class World:
    def __init__(self, num_nodes, ranks_per_node, workers_per_rank):
        self.num_nodes = num_nodes
        self.ranks_per_node = ranks_per_node
        self.workers_per_rank = workers_per_rank


package("streaming")
package("streaming.base", base)
package("streaming.base.shuffle", base + "shuffle")
package("streaming.base.partition", base + "partition")
package("streaming.base.batching", base + "batching")
sys.modules["streaming.base.world"] = types.SimpleNamespace(World=World)
for algo in ["py1s", "py1br", "py1e", "py2s", "naive"]:
    load("streaming.base.shuffle." + algo, base + "shuffle/%s.py" % algo)
shuffle = load("streaming.base.shuffle", base + "shuffle/__init__.py")
for algo in ["orig", "relaxed"]:
    load("streaming.base.partition." + algo, base + "partition/%s.py" % algo)
partition = load("streaming.base.partition", base + "partition/__init__.py")
batching = load("streaming.base.batching.random", base + "batching/random.py")
sampling = load("streaming.base.sampling", base + "sampling.py")


def function_source(path, qualname):
    """One function's source from a file, by Class.method or name."""
    tree = ast.parse(open(path).read())
    parts = qualname.split(".")
    body = tree.body
    for part in parts[:-1]:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == part).body
    node = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == parts[-1])
    node.decorator_list = []
    return ast.unparse(node)


namespace = {"np": np, "NDArray": np.ndarray, "Optional": __import__("typing").Optional,
             "Sequence": __import__("typing").Sequence, "Self": object,
             "get_sampling": sampling.get_sampling}
for qualname in ["Stream.validate_weights", "Stream.apply_weights"]:
    exec(function_source(base + "stream.py", qualname), namespace)
exec(function_source(base + "dataset.py", "StreamingDataset.resample_streams"), namespace)


class StreamCls:
    validate_weights = staticmethod(lambda streams: namespace["validate_weights"](StreamCls, streams))


class Dataset:
    """The attributes of a StreamingDataset that its batching reads."""

    def __init__(self, case):
        self.num_streams = len(case["streams"])
        self.streams = []
        for weight in case["streams"]:
            stream = types.SimpleNamespace()
            for key in ["proportion", "repeat", "choose"]:
                if key in weight:
                    setattr(stream, key, weight[key])
            self.streams.append(stream)
        sizes = np.array(case["shard_sizes"], np.int64)
        per_stream = np.array([w["shards"] for w in case["streams"]], np.int64)
        self.samples_per_shard = sizes
        self.sample_offset_per_shard = sizes.cumsum() - sizes
        self.shards_per_stream = per_stream
        self.shard_offset_per_stream = per_stream.cumsum() - per_stream
        samples_per_stream = np.array(
            [sizes[o:o + n].sum() for o, n in zip(self.shard_offset_per_stream, per_stream)],
            np.int64)
        self.shuffle = case["shuffle"]
        self.shuffle_algo = case["shuffle_algo"]
        self.shuffle_seed = case["seed"]
        self.sampling_method = case["sampling_method"]
        self.sampling_granularity = 1
        self.epoch_seed_change = self.shuffle and self.sampling_method == "balanced"
        self.epoch_size = namespace["apply_weights"](StreamCls, self.streams, samples_per_stream,
                                                     case.get("epoch_size"), self.shuffle_seed)
        self.choose_per_stream = [int(s.choose) for s in self.streams]
        self.batch_size = case["batch_size"]
        self.partition_algo = "relaxed"
        self.initial_physical_nodes = case.get("initial_nodes")
        nodes = case["nodes"]
        # StreamingDataset._resume's defaults.
        self.num_canonical_nodes = case.get("num_canonical_nodes") or (
            64 * nodes if self.shuffle_algo in ["py1s", "py2s"] else nodes)
        self.shuffle_block_size = case.get("shuffle_block_size") or max(
            4_000_000 // self.num_canonical_nodes, 1 << 18)

    def resample_streams(self, epoch, stream_id=None):
        return namespace["resample_streams"](self, epoch, stream_id)


class WorkerShare(IterableDataset):
    def __init__(self, work, node, rank):
        self.work, self.node, self.rank = work, node, rank

    def __iter__(self):
        worker = get_worker_info()
        ids = self.work[self.node, self.rank, worker.id if worker else 0].flatten()
        return (int(i) for i in ids if i != -1)


def rank_batches(case):
    dataset = Dataset(case)
    world = World(case["nodes"], case["ranks_per_node"], case["workers"])
    work = batching.generate_work_random_batching(dataset, world, case["epoch"],
                                                  case["sample_in_epoch"])
    out = []
    for node in range(world.num_nodes):
        for rank in range(world.ranks_per_node):
            loader = DataLoader(WorkerShare(work, node, rank), batch_size=case["batch_size"],
                                num_workers=case["workers"])
            out.append([batch.tolist() for batch in loader])
    return dataset.choose_per_stream, out


def shuffle_cases():
    rng = np.random.default_rng(5)
    shard_sets = [[7, 13, 1, 20, 9, 30, 4], rng.integers(20, 90, 15).tolist()]
    for algo in ["naive", "py1br", "py1e", "py1s", "py2s"]:
        for sizes in shard_sets:
            for cn in [1, 2, 3, 8]:
                for seed, epoch in [(9176, 0), (9176, 3), (17, 1)]:
                    for block in [16, 100, 1 << 18]:
                        if algo in ["naive", "py1s", "py2s"] and block != 16:
                            continue
                        if algo == "py1e" and cn > 1 and block == 1 << 18 and seed == 17:
                            continue
                        ids = shuffle.get_shuffle(algo, np.array(sizes, np.int64), cn, seed,
                                                  epoch, block)
                        yield {"algo": algo, "shard_sizes": list(map(int, sizes)), "cn": cn,
                               "seed": seed, "epoch": epoch, "block": block,
                               "ids": list(map(int, ids))}


def partition_cases():
    for samples in [1, 5, 97, 250]:
        for cn, nodes, initial in [(1, 1, None), (2, 1, None), (1, 2, None), (4, 2, None),
                                   (8, 4, None), (3, 3, None), (4, 4, 2), (2, 3, 1),
                                   (4, 3, 2)]:
            for rpn in [1, 3]:
                for workers in [1, 2]:
                    for batch in [1, 4]:
                        for drop in sorted({0, samples // 3, samples // 2 + 1}):
                            algo = "relaxed"
                            try:
                                ids = partition.get_partitions(algo, samples, cn, nodes, rpn,
                                                               workers, batch, drop, initial)
                            except ValueError:
                                continue
                            yield {"algo": algo, "num_samples": samples, "cn": cn,
                                   "nodes": nodes, "ranks_per_node": rpn, "workers": workers,
                                   "batch": batch, "drop_first": drop,
                                   "initial_nodes": initial or 0, "shape": list(ids.shape),
                                   "ids": ids.flatten().tolist()}


def order_cases():
    one = [{"shards": 9}]
    sizes = [50, 50, 50, 50, 50, 50, 50, 50, 23]
    base = {"shard_sizes": sizes, "streams": one, "shuffle": True, "shuffle_algo": "py1e",
            "sampling_method": "balanced", "batch_size": 8, "epoch": 0, "sample_in_epoch": 0,
            "shuffle_block_size": 64}
    for seed in [9176, 17]:
        for nodes in [1, 2]:
            for rpn in [1, 2, 3, 4]:
                for workers in [1, 2]:
                    for cn in [None, 4]:
                        yield dict(base, seed=seed, nodes=nodes, ranks_per_node=rpn,
                                   workers=workers, num_canonical_nodes=cn)
    for algo in ["naive", "py1br", "py1s", "py2s"]:
        yield dict(base, seed=9176, nodes=1, ranks_per_node=2, workers=2, shuffle_algo=algo,
                   num_canonical_nodes=2, epoch=1)
    yield dict(base, seed=9176, nodes=1, ranks_per_node=2, workers=1, shuffle=False,
               num_canonical_nodes=2)
    yield dict(base, seed=9176, nodes=1, ranks_per_node=1, workers=1,
               num_canonical_nodes=None, shuffle_block_size=None)
    # Mid-epoch resumption, at the same and at other world sizes.
    for rpn, workers in [(1, 1), (2, 1), (2, 2), (3, 2)]:
        yield dict(base, seed=9176, nodes=1, ranks_per_node=rpn, workers=workers,
                   num_canonical_nodes=2, sample_in_epoch=96, epoch=2)
    # Several streams.
    two = [50, 50, 50, 30, 40, 40, 17]
    mixes = [
        ([{"shards": 4, "proportion": 0.7}, {"shards": 3, "proportion": 0.3}], None),
        ([{"shards": 4, "proportion": 1.0}, {"shards": 3, "proportion": 2.0}], 200),
        ([{"shards": 4, "repeat": 1.5}, {"shards": 3, "choose": 20}], None),
        ([{"shards": 4}, {"shards": 3}], 150),
        ([{"shards": 4}, {"shards": 3}], None),
    ]
    for streams, epoch_size in mixes:
        for method in ["balanced", "fixed"]:
            for epoch in [0, 1]:
                yield dict(base, shard_sizes=two, streams=streams, epoch_size=epoch_size,
                           sampling_method=method, seed=9176, nodes=1, ranks_per_node=2,
                           workers=2, num_canonical_nodes=2, epoch=epoch)


def main():
    commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or os.environ.get("STREAMING_COMMIT", "")
    orders = []
    for case in order_cases():
        choose, batches = rank_batches(case)
        orders.append(dict(case, choose_per_stream=choose, ranks=batches))
    out = {"streaming_commit": commit, "numpy": np.__version__, "torch": torch.__version__,
           "shuffles": list(shuffle_cases()), "partitions": list(partition_cases()),
           "orders": orders}
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, separators=(",", ":"))


main()
