"""The user's DataLoader as the engine reads it: an epoch at a time, with
Composer's handling of samplers and of resumption mid-epoch."""

import random
import sys
from contextlib import contextmanager
from typing import Any, Iterable, Optional, Tuple

import torch


@contextmanager
def _random_states_kept():
    """Leaves Python's, torch's and NumPy's random states as they were."""
    python_state = random.getstate()
    torch_state = torch.get_rng_state()
    try:
        import numpy
        numpy_state = numpy.random.get_state()
    except ImportError:
        numpy = None
    try:
        yield
    finally:
        random.setstate(python_state)
        torch.set_rng_state(torch_state)
        if numpy is not None:
            numpy.random.set_state(numpy_state)


def _sampler(loader: Any) -> Any:
    sampler = getattr(loader, "sampler", None)
    batch_sampler = getattr(loader, "batch_sampler", None)
    if not hasattr(sampler, "set_epoch") and batch_sampler is not None:
        sampler = getattr(batch_sampler, "sampler", batch_sampler)
    return sampler


def first_batch(loader: Iterable, label: str) -> Any:
    """The loader's first batch, read without moving any random state, so
    that the run's first epoch sees the order it would have seen."""
    with _random_states_kept():
        iterator = iter(loader)
        try:
            return next(iterator)
        except StopIteration:
            raise ValueError(f"{label} gives no batch") from None
        finally:
            del iterator


def epoch_size(loader: Iterable, label: str) -> Tuple[int, int, int]:
    """(batches per epoch, samples per epoch, samples in the data set) of
    this rank's loader."""
    try:
        batches = len(loader)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{label} has no len(): the engine needs the number "
                        f"of batches in an epoch (a torch DataLoader over a "
                        f"map-style dataset, or any iterable with __len__)"
                        ) from None
    if batches <= 0:
        raise ValueError(f"{label} gives no batch")
    dataset = getattr(loader, "dataset", None)
    try:
        dataset_size = len(dataset)  # type: ignore[arg-type]
    except TypeError:
        dataset_size = 0
    batch_size = getattr(loader, "batch_size", None)
    sampler = _sampler(loader)
    try:
        samples = len(sampler)
    except TypeError:
        samples = dataset_size
    if getattr(loader, "drop_last", False) and batch_size:
        samples = batches * batch_size
    if samples <= 0:
        samples = batches * (batch_size or 1)
    return batches, samples, dataset_size or samples


class Feed:
    """What the engine calls: start(epoch, first_batch), next(), and
    read_again(epoch) / read_again_next() for a second pass (SWA)."""

    def __init__(self, loader: Iterable, label: str, resumes: bool):
        self.loader = loader
        self.label = label
        self.resumes = resumes
        self._iterator: Optional[Any] = None
        self._again: Optional[Any] = None

    def _iterate(self, epoch: int):
        # As Composer does: a DistributedSampler (or any sampler with
        # set_epoch) reshuffles per epoch.
        sampler = _sampler(self.loader)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
        return iter(self.loader)

    def start(self, epoch: int, first_batch: int) -> None:
        self._iterator = None
        iterator = self._iterate(epoch)
        if first_batch > 0:
            # The loader's order is its own: as Composer does for a plain
            # DataLoader, the batches already trained on are read and
            # dropped.
            if self.resumes:
                print(f"composer_opt: resuming epoch {epoch} of {self.label} "
                      f"at batch {first_batch}: reading and skipping the "
                      f"{first_batch} batches already trained on",
                      file=sys.stderr)
            for _ in range(first_batch):
                next(iterator)
        self._iterator = iterator

    def next(self) -> Any:
        return self._advance("_iterator")

    def read_again(self, epoch: int) -> bool:
        self._again = self._iterate(epoch)
        return True

    def read_again_next(self) -> Any:
        return self._advance("_again")

    def _advance(self, iterator: str) -> Any:
        """The next batch of the iterator held in attribute `iterator`, or
        None (dropping it) at its end."""
        current = getattr(self, iterator)
        if current is None:
            return None
        try:
            return next(current)
        except StopIteration:
            setattr(self, iterator, None)
            return None
