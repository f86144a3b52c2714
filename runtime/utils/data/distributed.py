"""DistributedSampler on one process: each of `num_replicas` ranks draws its share of the
dataset's indices, the same shuffled order on every rank (a generator seeded with
seed + epoch), padded to divide evenly or cut (drop_last). gradgen has no process group, so
num_replicas and rank must be given."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from runtime.random import Generator
from runtime.random_ops import randperm
from runtime.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:  # they would come from the process group
            raise ValueError("Default process group has not been initialized, please make sure "
                             "to call init_process_group.")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        size = len(dataset)
        if drop_last and size % num_replicas:
            # the last, incomplete round is dropped: every rank gets the same count
            self.num_samples = math.ceil((size - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(size / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[Any]:
        size = len(self.dataset)
        if self.shuffle:
            generator = Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = randperm(size, generator=generator).tolist()
        else:
            indices = list(range(size))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:  # repeat from the start until the ranks' shares are equal
            missing = self.total_size - len(indices)
            if missing <= len(indices):
                indices += indices[:missing]
            else:
                indices += (indices * math.ceil(missing / len(indices)))[:missing]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch seeds the shuffle: call it before each epoch for a new order."""
        self.epoch = epoch
