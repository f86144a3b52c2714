"""runtime.utils.data: datasets, samplers and the DataLoader, as torch.utils.data.

A training loop reads its data through three pieces, each replaceable:
a *dataset* (index -> sample, or a stream of samples), a *sampler* (the order of the
indices, batched by a BatchSampler) and a *collate function* (a list of samples -> a
batch of tensors). DataLoader wires them together. Every random choice (a shuffle's
permutation, a random split) is drawn from the same generator, in the same order and
with the same kernels as torch's, so a seeded program sees torch's batches.
"""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.utils.data.collate import default_collate, default_convert
from runtime.utils.data.dataloader import DataLoader, get_worker_info
from runtime.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from runtime.utils.data.distributed import DistributedSampler
from runtime.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
    "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "default_collate", "default_convert", "get_worker_info", "random_split",
    "DistributedSampler",
]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
