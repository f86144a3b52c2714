"""Shape and indexing spellings (`x[0]`, `x[mask]`, `x.split(2)`, `list(x)`, ...) through
gradgen and through PyTorch: the same values, gradients, grad_fn names and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime

SPELLINGS = [
    "x[0]", "x[:, 1]", "x[1:3]", "x[..., None]", "x[[0, 2]]", "x[mask]", "x.view(2, -1)",
    "x.view(-1)", "x.reshape(3, 4)", "x.permute(1, 0)", "x.flatten()", "lib.cat([a, b], 1)",
    "lib.stack([a, b])", "x.split(2)", "x.chunk(3, dim=1)", "list(x)", "[row for row in x]",
    "x[-1]", "x[::2]", "x[:]", "x[...]", "x[None]", "x[0, 1]", "x[1:3, [0, 2]]",
    "x[[0, 1], [1, 2]]", "x[True]", "x[False]", "x[True, 1]", "x[lib.tensor(1)]",
    "x[lib.tensor([1]), 1]", "x[-4:, 1]", "x[0:100, 1]", "x[:, :]", "x[..., None, 1]",
    "x[[0, 1], None, [1, 2]]", "x[[True, False, True, True]]", "x[[]]", "y[ymask, 0]",
    "y[:, [0, 2], [1, 3]]", "y[[0, 1], :, [1, 3]]", "y[0, ..., 1:3]", "x.t().contiguous()",
    "x.contiguous()", "x[:1].expand_as(x)", "x.view_as(x)", "x.flip(0)", "x.repeat(2, 1)",
    "x.gather(1, lib.tensor([[0], [1], [2], [0]]))", "x.index_select(0, lib.tensor([0, 2]))",
    "x.split([1, 3])", "lib.split(x, 3, 1)", "lib.chunk(x, 5)", "x.unbind(1)", "y.flatten(1)",
    "x[0].flatten()", "x.t().flatten()", "y.permute(2, 0, 1)", "x.select(1, -1)",
    "x.index_put([lib.tensor([0, 0])], lib.tensor(1.0, dtype=x.dtype), accumulate=True)",
    "x.index_add(0, lib.tensor([0, 0]), a)", "lib.cat([x, x[0:0]])",
    "x[range(4), [0, 1, 2, 0]]", "x[range(1, 3)]", "x[:, range(2)]", "x[range(0)]",
    "x[(0, 1), 2]", "y[0, (1, 0)]", "x[range(5)]",
    # errors
    "x[1.5]", "x[5]", "x[:, 7]", "x[0, 0, 0]", "x[::-1]", "x[[0, 9]]", "x[mask[:, :2]]",
    "x.permute(0, 0)", "x.chunk(0)", "x.split([1, 1])", "lib.cat([x, lib.zeros(2, 5)])",
    "lib.stack([a, x])", "x.repeat(2)", "x[None, 7]", "x[lib.tensor([1.0])]",
    "lib.tensor(3.0)[0]", "x.gather(0, lib.tensor([[4]]))", "x.select(0, 9)",
]

_RNG = np.random.default_rng(0)
X, A, B, Y = (_RNG.standard_normal(s) for s in ((4, 3), (2, 3), (2, 3), (2, 3, 4)))


def _run(lib, spelling: str):
    leaves = {n: lib.tensor(v, requires_grad=True) for n, v in zip("xaby", (X, A, B, Y),
                                                                    strict=True)}
    scope = {**leaves, "lib": lib, "mask": lib.tensor(X > 0), "ymask": lib.tensor(Y[..., 0] > 0)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = eval(spelling, scope)  # noqa: S307 - the spellings above
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return (type(error).__name__, str(error)), None, None
    is_sequence = isinstance(result, list | tuple)
    outputs = list(result) if is_sequence else [result]
    names = (type(result).__name__ if is_sequence else "Tensor",
             [(o.grad_fn.name() if o.grad_fn is not None else None, tuple(o.shape))
              for o in outputs])
    weights = np.random.default_rng(1)
    total = sum((o * lib.tensor(weights.standard_normal(tuple(o.shape)))).sum()
                for o in outputs if o.requires_grad)
    grads = lib.autograd.grad(total, list(leaves.values()), allow_unused=True) \
        if not isinstance(total, int) else ()
    return names, [o.detach().numpy() for o in outputs], \
        [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_spelling_matches_torch(spelling: str) -> None:
    ours, theirs = _run(runtime, spelling), _run(torch, spelling)
    assert ours[0] == theirs[0]
    if ours[1] is not None:
        for mine, other in zip(ours[1], theirs[1], strict=True):
            np.testing.assert_allclose(mine, other)
        for mine, other in zip(ours[2], theirs[2], strict=True):
            assert (mine is None) == (other is None)
            if mine is not None:
                np.testing.assert_allclose(mine, other)


def test_views_share_storage_and_version() -> None:
    x = runtime.zeros(4, 3)
    views = [x[0], x[1:3], x.permute(1, 0), x.split(2)[1], list(x)[3], x[...], x.flatten()]
    x.zero_()
    assert all(v._base is x and v._version == x._version == 1 for v in views)
    assert x[[0, 2]]._base is None


def test_inplace_on_base_invalidates_saved_view() -> None:
    messages = []
    for lib in (runtime, torch):
        y = lib.ones(4, 3, dtype=lib.float64)
        w = lib.ones(3, dtype=lib.float64, requires_grad=True)
        z = y[0] * w  # saves the view y[0]
        y.zero_()
        with pytest.raises(RuntimeError) as error:
            z.sum().backward()
        messages.append(str(error.value))
    assert messages[0] == messages[1]
