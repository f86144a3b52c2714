"""Shape and tensor-identity names against torch: chunk's graph (split's nodes, as torch's
chunk decomposes), Tensor.view(dtype), hash_tensor, conj_physical_,
_new_zeros_with_same_feature_meta, _efficientzerotensor and Tensor.index."""

from __future__ import annotations

import pytest

from tests.oracle import same


def test_chunk_records_split_s_nodes_as_torch_s() -> None:
    def program(lib):
        x = lib.arange(1.0, 13.0, requires_grad=True)
        y = x.view(3, 4) * 1
        pieces = lib.chunk(y, 3, dim=1)
        more = y.chunk(2)
        empty = lib.zeros(2, 0, requires_grad=True).chunk(3, dim=1)
        loss = sum((p * (i + 1)).sum() for i, p in enumerate(pieces)) + (more[1] ** 2).sum()
        loss.backward()
        return ([p.grad_fn.name() for p in pieces], [list(p.shape) for p in pieces],
                [m.grad_fn.name() for m in more], [e.grad_fn.name() for e in empty],
                [list(e.shape) for e in empty], x.grad.tolist())
    same(program)


@pytest.mark.parametrize("make, chunks, dim", [
    (lambda lib: lib.tensor(1.0), 2, 0), (lambda lib: lib.ones(3), 0, 0),
    (lambda lib: lib.ones(3), -1, 0), (lambda lib: lib.ones(3), 2, 1),
])
def test_chunk_errors(make, chunks, dim) -> None:
    def program(lib):
        return [p.tolist() for p in lib.chunk(make(lib), chunks, dim)]
    same(program)
