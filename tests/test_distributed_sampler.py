"""torch.utils.data.DistributedSampler on one process, against torch's: the same indices
for every rank, shuffled or not, padded or cut, epoch after epoch."""

from __future__ import annotations

import pytest
import torch

import runtime
from tests.names_oracle import same


@pytest.mark.parametrize("size", [1, 5, 10, 11])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("options", [{}, {"shuffle": False}, {"drop_last": True},
                                     {"seed": 7}, {"shuffle": False, "drop_last": True}])
def test_indices_of_every_rank(size, replicas, options):
    def program(t):
        found = []
        for rank in range(replicas):
            sampler = t.utils.data.DistributedSampler(range(size), num_replicas=replicas,
                                                      rank=rank, **options)
            for epoch in range(3):
                sampler.set_epoch(epoch)
                found.append((list(sampler), len(sampler), sampler.num_samples,
                              sampler.total_size))
        return found

    same(program)


def test_errors():
    same(lambda t: t.utils.data.DistributedSampler(range(5)))
    same(lambda t: t.utils.data.DistributedSampler(range(5), num_replicas=2, rank=2))
    same(lambda t: t.utils.data.DistributedSampler(range(5), num_replicas=2, rank=-1))


def test_with_a_data_loader():
    def program(t):
        data = t.utils.data.TensorDataset(t.arange(10.0))
        sampler = t.utils.data.DistributedSampler(data, num_replicas=3, rank=1, seed=3)
        loader = t.utils.data.DataLoader(data, batch_size=2, sampler=sampler)
        return [batch[0] for batch in loader]

    same(program)


def test_module_path():
    assert torch.utils.data.distributed.DistributedSampler.__name__ == "DistributedSampler"
    from runtime.utils.data import distributed

    assert distributed.DistributedSampler is runtime.utils.data.DistributedSampler
