"""DataLoader, as torch.utils.data.DataLoader, loading in the calling process.

`iter(loader)` makes a fresh iterator per epoch. Like torch's, making it draws one int64
"base seed" from the loader's generator (the default generator when none is given), with
or without shuffling: torch hands that seed to worker processes, and gradgen has none,
but draws it all the same so that the random stream after each epoch is torch's. Then
each batch is: the next list of indices from the batch sampler, the samples at those
indices, and `collate_fn` of that list.

`num_workers` > 0 loads in this process too, but as torch's worker processes would: each
worker has its own random streams, seeded as torch seeds a worker (torch's generator and
Python's `random` with base seed + worker id, numpy's global generator from a
SeedSequence of the two), and runs `worker_init_fn(worker_id)` first. Batch k is fetched
by worker k mod num_workers (torch hands out the batches round-robin and returns them in
order) with that worker's streams swapped in and `get_worker_info()` describing it, so
a dataset that draws random numbers (an augmentation) draws torch's numbers, and the main
streams move only as torch's main process moves them. An IterableDataset is iterated by
every worker, as torch's workers each iterate their copy (split it with
`get_worker_info()`, as in torch), their batches interleaved round-robin until each runs
out. With `persistent_workers` the workers and their streams last across epochs, and the
base seed is drawn once, at the first epoch, as torch draws it. Unlike torch's, the
workers share the dataset object with the main process (no copy is made).
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from runtime import dtypes, factories
from runtime._warn import warn_at_caller
from runtime.random import Generator, default_generator
from runtime.utils.data.collate import default_collate, default_convert
from runtime.utils.data.dataset import Dataset, IterableDataset
from runtime.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_T_co = TypeVar("_T_co", covariant=True)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What get_worker_info() tells a dataset inside a worker (torch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The worker fetching the current batch, or None in the main process."""
    return _worker_info


class _Worker:
    """One of torch's worker processes, played in this process: its random streams, kept
    while the main process runs, and the iterator over its IterableDataset."""

    def __init__(self, worker_id: int, num_workers: int, base_seed: int, dataset: Any) -> None:
        seed = base_seed + worker_id
        self.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                               dataset=dataset)
        # What torch's worker loop seeds at its start.
        self._torch_state = Generator().manual_seed(seed).get_state()
        self._python_state = random.Random(seed).getstate()
        numpy_seed = np.random.SeedSequence(
            [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]).generate_state(4)
        self._numpy_state = np.random.RandomState(numpy_seed).get_state()
        self.dataset_iter: Iterator[Any] | None = None
        self.ended = False

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Run a block as this worker: its streams in place of the main process's."""
        global _worker_info
        saved = (default_generator.get_state(), random.getstate(), np.random.get_state(),
                 _worker_info)
        default_generator.set_state(self._torch_state)
        random.setstate(self._python_state)
        np.random.set_state(self._numpy_state)
        _worker_info = self.info
        try:
            yield
        finally:
            self._torch_state = default_generator.get_state()
            self._python_state = random.getstate()
            self._numpy_state = np.random.get_state()
            default_generator.set_state(saved[0])
            random.setstate(saved[1])
            np.random.set_state(saved[2])
            _worker_info = saved[3]


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
        self._iterator: _DataLoaderIter | None = None  # kept with persistent workers
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
        if not (self.persistent_workers and self.num_workers > 0):
            return _DataLoaderIter(self)
        if self._iterator is None:
            self._iterator = _DataLoaderIter(self)
        else:
            self._iterator._reset()
        return self._iterator

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
            warn_at_caller("'pin_memory' argument is set as true but no accelerator is found, "
                           "then device pinned memory won't be used.")
        # The order matters for the random stream: the sampler's iterator first (a
        # RandomSampler draws nothing until its first index), then the base seed.
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(factories.empty((), dtype=dtypes.int64)
                              .random_(generator=loader.generator).item())
        self._workers = [_Worker(i, loader.num_workers, self._base_seed, self._dataset)
                         for i in range(loader.num_workers)]
        for worker in self._workers:
            with worker.running():
                if loader.worker_init_fn is not None:
                    loader.worker_init_fn(worker.info.id)
        self._dataset_iter = None
        self._ended = False
        self._start_epoch()

    def _start_epoch(self) -> None:
        """What each epoch starts from: worker 0 next, each worker's dataset iterator new."""
        self._num_yielded = 0
        self._next_worker = 0
        if not self._loader._iterable:
            return
        if not self._workers:
            self._dataset_iter = iter(self._dataset)
        for worker in self._workers:
            with worker.running():
                worker.dataset_iter, worker.ended = iter(self._dataset), False

    def _reset(self) -> None:
        """A new epoch of a loader with persistent workers: no new base seed, the workers
        (and their streams) kept."""
        self._sampler_iter = iter(self._index_sampler)
        self._start_epoch()

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __next__(self) -> Any:
        index = next(self._sampler_iter)
        if not self._workers:
            data = self._fetch_iterable(index) if self._dataset_iter is not None \
                else self._fetch_map(index)
        elif not self._loader._iterable:
            worker = self._workers[self._next_worker]
            self._next_worker = (self._next_worker + 1) % len(self._workers)
            with worker.running():
                data = self._fetch_map(index)
        else:
            data = self._fetch_from_workers(index)
        self._num_yielded += 1
        expected = self._loader._IterableDataset_len_called
        if self._dataset_iter is not None and expected is not None \
                and self._num_yielded > expected:
            warn_at_caller(f"Length of IterableDataset {self._dataset} was reported to be "
                           f"{expected}(when accessing len(dataloader)), but "
                           f"{self._num_yielded} samples have been fetched. ")
        return data

    def _fetch_map(self, index: Any) -> Any:
        if not self._auto_collation:
            return self._collate_fn(self._dataset[index])
        getitems = getattr(self._dataset, "__getitems__", None)
        samples = getitems(index) if callable(getitems) else [self._dataset[i] for i in index]
        return self._collate_fn(samples)

    def _fetch_from_workers(self, index: Any) -> Any:
        """The next batch of an IterableDataset: from the next worker whose iterator has
        not run out, round-robin."""
        live = [worker for worker in self._workers if worker.dataset_iter is not None]
        while live:
            worker = self._workers[self._next_worker]
            self._next_worker = (self._next_worker + 1) % len(self._workers)
            if worker.dataset_iter is None:
                continue
            with worker.running():
                self._dataset_iter, self._ended = worker.dataset_iter, worker.ended
                try:
                    return self._fetch_iterable(index)
                except StopIteration:
                    worker.dataset_iter = None
                    live.remove(worker)
                finally:
                    worker.ended = self._ended
        raise StopIteration

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
