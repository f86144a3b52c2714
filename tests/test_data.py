"""runtime.utils.data against torch.utils.data: the same datasets, samplers, collation and
DataLoader batches, and the same random draws in the same order (a seeded program that
shuffles stays in step with torch, batch for batch and draw for draw)."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import runtime as rt
import runtime.utils.data as rdata

ROOT = Path(__file__).resolve().parent.parent
LIBS = [(rt, rdata), (torch, tdata)]  # ours first


def _plain(value):
    """A batch as plain Python/numpy values (tensors as (dtype name, array)), so that
    torch's and gradgen's can be compared with ==."""
    if isinstance(value, torch.Tensor | rt.Tensor):
        return (str(value.dtype), value.detach().numpy().tolist(), tuple(value.shape))
    if isinstance(value, dict):
        return (type(value).__name__, {k: _plain(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_plain(v) for v in value])
    return value


def _both(program):
    """program(lib, data) run with torch and with gradgen, results made plain."""
    return [_plain(program(lib, data)) for lib, data in LIBS]


# -- the random stream: shuffling, splitting -------------------------------------------------

def _epochs(lib, data, seed, use_generator, epochs=3, **loader_options):
    """Batches of a shuffling DataLoader over several epochs, with randn draws between them
    (and in the middle of an epoch), all from one seeded stream."""
    lib.manual_seed(seed)
    generator = lib.Generator().manual_seed(seed + 1) if use_generator else None
    dataset = data.TensorDataset(lib.arange(23.0), lib.arange(23) * 10)
    loader = data.DataLoader(dataset, generator=generator, **loader_options)
    record = []
    for _ in range(epochs):
        for index, batch in enumerate(loader):
            record.append(batch)
            if index == 1:
                record.append(lib.randn(3))
        record.append(lib.randn(2))
    return record


@pytest.mark.parametrize("seed", [0, 1, 1234])
@pytest.mark.parametrize("use_generator", [False, True])
@pytest.mark.parametrize("options", [{"batch_size": 4, "shuffle": True},
                                     {"batch_size": 5, "shuffle": True, "drop_last": True},
                                     {"batch_size": 64, "shuffle": True},
                                     {"batch_size": 3, "shuffle": False}])
def test_shuffled_epochs_and_draws_match_torch(seed, use_generator, options):
    ours, theirs = _both(lambda lib, data: _epochs(lib, data, seed, use_generator, **options))
    assert ours == theirs


def test_iterating_without_shuffle_still_draws_a_seed_like_torch():
    """torch's iterator draws a base seed from the stream on every iter(): after one
    epoch without shuffling, the next randn differs from the one a fresh seed gives."""
    def program(lib, data):
        lib.manual_seed(5)
        loader = data.DataLoader(data.TensorDataset(lib.arange(4.0)), batch_size=2)
        iter(loader)  # no batch taken: the seed is drawn anyway
        return lib.randn(4)
    ours, theirs = _both(program)
    assert ours == theirs
    rt.manual_seed(5)
    assert ours != _plain(rt.randn(4))


@pytest.mark.parametrize("num_samples", [None, 7, 40])
def test_random_sampler_with_replacement_and_num_samples(num_samples):
    def program(lib, data):
        lib.manual_seed(3)
        drawn = list(data.RandomSampler(range(10), replacement=True, num_samples=num_samples))
        drawn += list(data.RandomSampler(range(10), num_samples=num_samples or 10))
        return drawn, lib.rand(2)
    ours, theirs = _both(program)
    assert ours == theirs


def test_other_samplers_match_torch():
    def program(lib, data):
        lib.manual_seed(11)
        generator = lib.Generator().manual_seed(4)
        return (list(data.SubsetRandomSampler([3, 9, 4, 12, 7])),
                list(data.SubsetRandomSampler([3, 9, 4], generator=generator)),
                list(data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0], 6)),
                list(data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 3, replacement=False)),
                list(data.SequentialSampler(range(4))),
                list(data.BatchSampler(data.SequentialSampler(range(10)), 3, False)),
                list(data.BatchSampler(range(10), 3, True)),
                len(data.BatchSampler(range(10), 3, True)),
                len(data.BatchSampler(range(10), 3, False)),
                lib.randn(2))
    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("lengths", [[3, 7], [5, 0, 5], [0.3, 0.7], [0.5, 0.25, 0.25],
                                     [0.33, 0.33, 0.34], [1.0]])
@pytest.mark.parametrize("use_generator", [False, True])
def test_random_split_matches_torch(lengths, use_generator):
    def program(lib, data):
        lib.manual_seed(21)
        kwargs = {"generator": lib.Generator().manual_seed(42)} if use_generator else {}
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            parts = data.random_split(range(10), lengths, **kwargs)
        return [list(part) for part in parts], [len(p) for p in parts], lib.randn(3)
    ours, theirs = _both(program)
    assert ours == theirs


def test_random_split_with_an_empty_fraction_warns_like_torch():
    for _, data in LIBS:
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            data.random_split(range(3), [1.0, 0.0])


@pytest.mark.parametrize(("lengths", "message"), [
    ([3, 3], "Sum of input lengths does not equal the length of the input dataset!"),
    ([1.5, -0.5], "Fraction at index 0 is not between 0 and 1"),
])
def test_random_split_errors_like_torch(lengths, message):
    for _, data in LIBS:
        with pytest.raises(ValueError) as error:
            data.random_split(range(10), lengths)
        assert str(error.value) == message


# -- collation --------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def _samples(lib):
    return [
        [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
        [1.5, 2.5, 3.0],
        [1, 2, 3],
        [True, False],
        ["a", "b"],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)],
        [np.float64(1.5), np.int64(2)],
        [(lib.tensor(1), 2.0), (lib.tensor(3), 4.0)],
        [[1, 2.0], [3, 4.0]],
        [{"a": lib.ones(2), "b": 1}, {"a": lib.zeros(2), "b": 2}],
        [collections.OrderedDict(a=1.0), collections.OrderedDict(a=2.0)],
        [Point(lib.tensor([1]), 1.0), Point(lib.tensor([2]), 2.0)],
        [{"nested": [(1, "x")]}, {"nested": [(2, "y")]}],
    ]


@pytest.mark.parametrize("case", range(len(_samples(rt))))
def test_default_collate_matches_torch(case):
    ours, theirs = [_plain(data.default_collate(_samples(lib)[case])) for lib, data in LIBS]
    assert ours == theirs


@pytest.mark.parametrize("case", range(len(_samples(rt))))
def test_default_convert_matches_torch(case):
    ours, theirs = [_plain(data.default_convert(_samples(lib)[case])) for lib, data in LIBS]
    assert ours == theirs


@pytest.mark.parametrize(("batch", "exception"), [
    ([[1, 2], [3]], RuntimeError),
    ([object(), object()], TypeError),
    ([np.array(["a"]), np.array(["b"])], TypeError),
])
def test_default_collate_errors_like_torch(batch, exception):
    messages = []
    for _, data in LIBS:
        with pytest.raises(exception) as error:
            data.default_collate(batch)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


# -- datasets and the DataLoader's options --------------------------------------------------------

class Squares:
    """A map-style dataset that is not a Dataset subclass (DataLoader takes any)."""

    def __len__(self):
        return 7

    def __getitem__(self, index):
        return {"x": float(index), "y": index * index}


class Stream:
    def __init__(self, data, n):
        self.base = data.IterableDataset
        self.n = n

    def make(self):
        n = self.n

        class Counter(self.base):
            def __iter__(self):
                return iter(range(n))

            def __len__(self):
                return n
        return Counter()


@pytest.mark.parametrize("options", [
    {}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
    {"batch_size": 2, "collate_fn": lambda batch: [s["y"] for s in batch]},
    {"sampler": [6, 0, 3]}, {"batch_sampler": [[1, 2], [5]]},
])
def test_loader_options_match_torch(options):
    def program(lib, data):
        loader = data.DataLoader(Squares(), **options)
        return len(loader), list(loader), list(loader)
    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("options", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                     {"batch_size": None}])
def test_iterable_dataset_matches_torch(options):
    def program(lib, data):
        loader = data.DataLoader(Stream(data, 8).make(), **options)
        return len(loader), list(loader), list(loader)
    ours, theirs = _both(program)
    assert ours == theirs


def test_datasets_match_torch():
    def program(lib, data):
        a = data.TensorDataset(lib.arange(5.0), lib.arange(5))
        b = data.TensorDataset(lib.arange(3.0) + 100, lib.arange(3) + 100)
        both = a + b
        subset = data.Subset(both, [7, 0, 5])
        stack = data.StackDataset(a, a)
        named = data.StackDataset(first=a, second=a)
        concat = data.ConcatDataset([a, b, a])
        return (len(both), both[6], both[-1], len(subset), subset[0], list(subset),
                stack[1], named[2], len(concat), concat.cumulative_sizes, concat[9],
                a[1:3], len(a))
    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize(("make", "exception"), [
    (lambda lib, data: data.TensorDataset(lib.ones(2), lib.ones(3)), AssertionError),
    (lambda lib, data: data.ConcatDataset([]), AssertionError),
    (lambda lib, data: data.ConcatDataset([data.TensorDataset(lib.ones(2))])[-5], ValueError),
    (lambda lib, data: data.Dataset()[0], NotImplementedError),
    (lambda lib, data: data.StackDataset(), ValueError),
    (lambda lib, data: data.StackDataset(range(2), range(3)), ValueError),
    (lambda lib, data: data.DataLoader(range(3), num_workers=-1), ValueError),
    (lambda lib, data: data.DataLoader(range(3), timeout=-1), ValueError),
    (lambda lib, data: data.DataLoader(range(3), prefetch_factor=2), ValueError),
    (lambda lib, data: data.DataLoader(range(3), persistent_workers=True), ValueError),
    (lambda lib, data: data.DataLoader(range(3), multiprocessing_context="spawn"), ValueError),
    (lambda lib, data: data.DataLoader(range(3), sampler=[0], shuffle=True), ValueError),
    (lambda lib, data: data.DataLoader(range(3), batch_sampler=[[0]], batch_size=2),
     ValueError),
    (lambda lib, data: data.DataLoader(range(3), batch_size=None, drop_last=True), ValueError),
    (lambda lib, data: data.DataLoader(Stream(data, 2).make(), shuffle=True), ValueError),
    (lambda lib, data: data.DataLoader(range(3), batch_size=0), ValueError),
    (lambda lib, data: data.BatchSampler(range(3), 2, drop_last=1), ValueError),
    (lambda lib, data: data.RandomSampler(range(3), replacement=1), TypeError),
    (lambda lib, data: data.RandomSampler(range(3), num_samples=0), ValueError),
    (lambda lib, data: data.WeightedRandomSampler([[1.0]], 2), ValueError),
    (lambda lib, data: setattr(data.DataLoader(range(3)), "batch_size", 2), ValueError),
])
def test_errors_match_torch(make, exception):
    messages = []
    for lib, data in LIBS:
        with pytest.raises(exception) as error:
            make(lib, data)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_workers_load_in_process_with_torch_s_batches():
    """num_workers > 0 loads in this process (no worker starts), with the same batches
    and draws as torch's single-process loader."""
    def program(lib, data, workers):
        lib.manual_seed(9)
        dataset = data.TensorDataset(lib.arange(10))
        batches = list(data.DataLoader(dataset, batch_size=3, shuffle=True,
                                       num_workers=workers))
        return batches, lib.randn(2)
    assert _plain(program(rt, rdata, 2)) == _plain(program(torch, tdata, 0))
    assert rdata.get_worker_info() is None


# -- a whole program ----------------------------------------------------------------------------

def _quickstart(lib, data):
    """The Quickstart tutorial's training loop on synthetic data: a seeded TensorDataset,
    a shuffling DataLoader, an MLP, CrossEntropyLoss and SGD for two epochs."""
    nn = lib.nn
    lib.manual_seed(0)
    images = lib.rand(300, 1, 8, 8)
    labels = lib.randint(0, 10, (300,))
    loader = data.DataLoader(data.TensorDataset(images, labels), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32),
                          nn.ReLU(), nn.Linear(32, 10))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-1)
    losses = []
    for _ in range(2):
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
        with lib.no_grad():
            correct = sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
        losses.append(correct)
    return losses


def test_quickstart_training_loop_matches_torch():
    ours, theirs = _quickstart(rt, rdata), _quickstart(torch, tdata)
    assert len(ours) == len(theirs) == 2 * 6
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


PROGRAM = """
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset, random_split

    torch.manual_seed(1)
    data = TensorDataset(torch.randn(40, 3), torch.randint(0, 2, (40,)))
    train, test = random_split(data, [0.75, 0.25])
    loader = DataLoader(train, batch_size=8, shuffle=True)
    model = nn.Linear(3, 2)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(epoch, f"{loss.item():.6f}", scheduler.get_last_lr())
    print(sorted(test.indices))
"""


def test_a_program_runs_unchanged_with_python_m_runtime(tmp_path):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = [subprocess.run([sys.executable, *prefix, "prog.py"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300, check=True).stdout
               for prefix in ([], ["-m", "runtime"])]
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") == 4


def test_pin_memory_without_an_accelerator_warns_like_torch():
    messages = []
    for _, data in LIBS:
        with pytest.warns(UserWarning) as caught:
            list(data.DataLoader(range(4), batch_size=2, pin_memory=True))
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1]
    assert "pin_memory" in messages[0][0]


def test_annotated_subclasses_run_as_in_torch():
    def program(lib, data):
        class Pairs(data.Dataset[tuple]):
            def __len__(self):
                return 5

            def __getitem__(self, index):
                return lib.tensor([index, -index]), index % 2

        class Backwards(data.Sampler[int]):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n - 1, -1, -1))

            def __len__(self):
                return self.n
        return list(data.DataLoader(Pairs(), batch_size=2, sampler=Backwards(5)))
    ours, theirs = _both(program)
    assert ours == theirs


def test_torch_names_resolve_to_gradgen_s_modules():
    import runtime.utils.data.dataloader as dataloader
    assert rt.utils.data is rdata
    assert dataloader.default_collate is rdata.default_collate
    assert rt.utils.data.dataset.random_split is rdata.random_split
    assert rdata.DistributedSampler is rt.utils.data.distributed.DistributedSampler
    with pytest.raises(AttributeError, match="torch.utils.data.NoSuchSampler is not in "
                                             "gradgen"):
        rdata.NoSuchSampler  # noqa: B018


def _mnist_example(lib, data):
    """pytorch/examples' MNIST training shape (Adadelta, StepLR, dropout, log_softmax and
    nll_loss, a test pass with reduction='sum') on synthetic data, with a Linear network
    in place of the convolutions: dropout masks and shuffles come from one seeded stream."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(1)
    train = data.TensorDataset(lib.randn(200, 1, 6, 6), lib.randint(0, 10, (200,)))
    test = data.TensorDataset(lib.randn(50, 1, 6, 6), lib.randint(0, 10, (50,)))
    train_loader = data.DataLoader(train, batch_size=32, shuffle=True)
    test_loader = data.DataLoader(test, batch_size=100)
    model = nn.Sequential(nn.Flatten(), nn.Linear(36, 32), nn.ReLU(), nn.Dropout(0.25),
                          nn.Linear(32, 10), nn.LogSoftmax(dim=1))
    optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    printed = []
    for _ in range(3):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            printed.append(loss.item())
        model.eval()
        with lib.no_grad():
            printed.append(sum(F.nll_loss(model(x), y, reduction="sum").item()
                               for x, y in test_loader))
        scheduler.step()
        printed.append(scheduler.get_last_lr()[0])
    return printed


def test_mnist_example_shape_matches_torch():
    ours, theirs = _mnist_example(rt, rdata), _mnist_example(torch, tdata)
    assert len(ours) == len(theirs) == 3 * 9
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
