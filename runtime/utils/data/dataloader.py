"""DataLoader, as torch.utils.data.DataLoader, loading in the calling process.

`iter(loader)` makes a fresh iterator per epoch. Like torch's, making it draws one int64
"base seed" from the loader's generator (the default generator when none is given), with
or without shuffling: torch hands that seed to worker processes, and gradgen has none,
but draws it all the same so that the random stream after each epoch is torch's. Then
each batch is: the next list of indices from the batch sampler, the samples at those
indices, and `collate_fn` of that list.

`num_workers` > 0 is accepted and loads in this process: torch's workers return the
batches in the sampler's order, so the batches (and every draw from the generators)
are the same; `worker_init_fn` is not called, as no worker starts, and
`get_worker_info()` is None throughout.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from runtime import dtypes, factories
from runtime.random import Generator
from runtime.utils.data.collate import default_collate, default_convert
from runtime.utils.data.dataset import Dataset, IterableDataset
from runtime.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_T_co = TypeVar("_T_co", covariant=True)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


def get_worker_info() -> None:
    """Information about the current worker process: always None, as gradgen loads in
    the main process."""
    return None


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides the order)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


class DataLoader(Generic[_T_co]):
    """Batches from `dataset`: see the module docstring for what one epoch draws."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers,
                              multiprocessing_context)
        self.dataset = dataset
        self.num_workers = num_workers
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        shuffle = _check_sampling_options(self._iterable, batch_size, shuffle, sampler,
                                          batch_sampler, drop_last)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_initialized", False) and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What yields each step's index: the batch sampler when batching, else the
        sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = (length // self.batch_size if self.drop_last
                      else math.ceil(length / self.batch_size))
        return length


def _check_worker_options(num_workers: int, timeout: float, prefetch_factor: int | None,
                          persistent_workers: bool, multiprocessing_context: Any) -> None:
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    if multiprocessing_context is not None and num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")


def _check_sampling_options(iterable: bool, batch_size: int | None,
                            shuffle: bool | None, sampler: Any, batch_sampler: Any,
                            drop_last: bool) -> bool:
    """torch's checks of how the options combine; returns `shuffle` as a bool."""
    if iterable:
        if shuffle not in {False, None}:
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                             f"option, but got shuffle={shuffle}")
        if sampler is not None:
            raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                             f"option, but got sampler={sampler}")
        if batch_sampler is not None:
            raise ValueError("DataLoader with IterableDataset: expected unspecified "
                             f"batch_sampler option, but got batch_sampler={batch_sampler}")
    shuffle = bool(shuffle)
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
    elif batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")
    return shuffle


class _DataLoaderIter:
    """One epoch over a DataLoader (torch's _SingleProcessDataLoaderIter)."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        # The order matters for the random stream: the sampler's iterator first (a
        # RandomSampler draws nothing until its first index), then the base seed.
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(factories.empty((), dtype=dtypes.int64)
                              .random_(generator=loader.generator).item())
        self._dataset_iter = iter(self._dataset) if loader._iterable else None
        self._ended = False
        self._num_yielded = 0

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __next__(self) -> Any:
        index = next(self._sampler_iter)
        data = self._fetch_iterable(index) if self._dataset_iter is not None \
            else self._fetch_map(index)
        self._num_yielded += 1
        expected = self._loader._IterableDataset_len_called
        if self._dataset_iter is not None and expected is not None \
                and self._num_yielded > expected:
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{expected}(when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched. ", stacklevel=2)
        return data

    def _fetch_map(self, index: Any) -> Any:
        if not self._auto_collation:
            return self._collate_fn(self._dataset[index])
        getitems = getattr(self._dataset, "__getitems__", None)
        samples = getitems(index) if callable(getitems) else [self._dataset[i] for i in index]
        return self._collate_fn(samples)

    def _fetch_iterable(self, index: Any) -> Any:
        if self._ended:
            raise StopIteration
        if not self._auto_collation:
            return self._collate_fn(next(self._dataset_iter))
        samples = []
        for _ in index:
            try:
                samples.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not samples or (self._drop_last and len(samples) < len(index)):
            raise StopIteration
        return self._collate_fn(samples)
