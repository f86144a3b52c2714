"""torch.embedding_bag, F.embedding_bag and nn.EmbeddingBag through the spec's _embedding_bag
(node EmbeddingBagBackward0), and its backward ops, against torch 2.13: the four outputs
(torch's CPU bookkeeping too), the gradients of the table and of per_sample_weights
(scale_grad_by_freq, padding_idx and mean mode included), and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from tests.names_oracle import same

INDICES = [0, 2, 4, 5, 1, 3, 2, 2]
OFFSETS = {"runs": [0, 2, 2, 5], "last": [0, 2, 2, 5, 8], "short_last": [0, 3, 3, 6]}


def _table(lib, dtype="float64", requires_grad=True):
    values = np.linspace(-2.0, 3.0, 18).reshape(6, 3) ** 2 - 1
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=requires_grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("offsets, include_last", [("runs", False), ("last", True),
                                                   ("short_last", True)])
def test_torch_embedding_bag_outputs_and_gradient(dtype, mode, padding_idx, offsets,
                                                  include_last):
    def program(t):
        weight = _table(t, dtype)
        result = t.embedding_bag(weight, t.tensor(INDICES), t.tensor(OFFSETS[offsets]), False,
                                 mode, False, None, include_last, padding_idx)
        grad = t.arange(result[0].numel(), dtype=weight.dtype).reshape(result[0].shape)
        if offsets != "short_last":  # (torch's backward reads past its gradient there)
            result[0].backward(grad)
        return [*result, weight.grad]

    same(program, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("include_last", [False, True])
def test_forward_only_kernel_when_nothing_needs_a_gradient(mode, include_last):
    def program(t):
        weight = _table(t, "float32", requires_grad=False)
        offsets = t.tensor(OFFSETS["last" if include_last else "runs"])
        first = t.embedding_bag(weight, t.tensor(INDICES), offsets, False, mode, False, None,
                                include_last)
        second = t._embedding_bag_forward_only(weight, t.tensor(INDICES), offsets, False, mode,
                                               False, None, include_last)
        with t.no_grad():  # requires_grad alone picks the kernel, as torch's
            third = t.embedding_bag(weight.requires_grad_(), t.tensor(INDICES), offsets, False,
                                    mode, False, None, include_last)
        return [*first, *second, *third]

    same(program)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_per_sample_weights_gradients(index_dtype):
    def program(t):
        weight = _table(t)
        samples = t.linspace(0.5, 2.0, 8, dtype=t.float64).requires_grad_()
        indices = t.tensor(INDICES, dtype=getattr(t, index_dtype))
        offsets = t.tensor(OFFSETS["runs"], dtype=getattr(t, index_dtype))
        out = t.nn.functional.embedding_bag(indices, weight, offsets, mode="sum",
                                            per_sample_weights=samples, padding_idx=4)
        out.backward(t.ones_like(out) * t.arange(3.0, dtype=t.float64))
        return [out, out.grad_fn.name(), weight.grad, samples.grad]

    same(program)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("options", [{}, {"scale_grad_by_freq": True}, {"padding_idx": 0},
                                     {"max_norm": 1.5}, {"include_last_offset": True}])
def test_functional_embedding_bag(mode, options):
    def program(t):
        weight = _table(t)
        if options.get("include_last_offset"):
            offsets = t.tensor(OFFSETS["last"])
        else:
            offsets = t.tensor(OFFSETS["runs"])
        out = t.nn.functional.embedding_bag(t.tensor(INDICES), weight, offsets, mode=mode,
                                            **options)
        out.sum().backward()
        return [out, out.grad_fn.name(), weight.grad, weight]

    same(program)  # (max mode with scale_grad_by_freq: torch's ValueError, compared)


def test_two_dimensional_input_and_module():
    def program(t):
        t.manual_seed(0)
        bag = t.nn.EmbeddingBag(7, 3, mode="max", padding_idx=1)
        input = t.tensor([[1, 2, 4], [6, 1, 1], [0, 5, 3]])
        out = bag(input)
        out.pow(2).sum().backward()
        mean = t.nn.functional.embedding_bag(input, bag.weight, mode="mean",
                                             per_sample_weights=None)
        return [out, out.grad_fn.name(), bag.weight.grad, mean]

    same(program)


def test_forward_mode_is_the_derivative():
    """torch has no forward formula for _embedding_bag (it raises); gradgen's is the bags of
    the tangent (the maxima's rows in max mode): checked against reverse mode here."""
    from runtime.autograd import forward_ad

    weight = _table(runtime, requires_grad=False)
    tangent = runtime.linspace(-1.0, 1.0, 18, dtype=runtime.float64).reshape(6, 3)
    indices, offsets = runtime.tensor(INDICES), runtime.tensor(OFFSETS["runs"])
    for mode in (0, 1, 2):
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(weight, tangent)
            out = runtime.embedding_bag(dual, indices, offsets, False, mode)[0]
            jvp = forward_ad.unpack_dual(out).tangent
        leaf = weight.clone().requires_grad_()
        bags = runtime.embedding_bag(leaf, indices, offsets, False, mode)[0]
        cotangent = runtime.linspace(0.5, 1.5, bags.numel(), dtype=runtime.float64)
        bags.backward(cotangent.reshape(bags.shape))
        assert np.isclose(float((jvp.reshape(-1) * cotangent).sum()),
                          float((leaf.grad * tangent).sum()))
    with torch.autograd.forward_ad.dual_level():  # torch refuses, as this test says
        dual = torch.autograd.forward_ad.make_dual(torch.ones(6, 3), torch.ones(6, 3))
        with pytest.raises(NotImplementedError, match="_embedding_bag"):
            torch.embedding_bag(dual, torch.tensor(INDICES), torch.tensor(OFFSETS["runs"]))


def _aten_or_runtime(lib, name):
    return getattr(lib.ops.aten, name) if lib is torch else getattr(lib, name)


def test_backward_ops_against_torch():
    def program(t):
        indices = t.tensor([3, 0, 0, 1, 0, 3, 4])
        offsets = t.tensor([0, 3])
        grad = t.arange(6.0, dtype=t.float64).reshape(2, 3)
        weight = _table(t, requires_grad=False)[:5]
        backward = _aten_or_runtime(t, "_embedding_bag_backward")
        dense = _aten_or_runtime(t, "_embedding_bag_dense_backward")
        per_sample = _aten_or_runtime(t, "_embedding_bag_per_sample_weights_backward")
        offset2bag = t.tensor([0, 0, 0, 1, 1, 1, 1])
        sizes = t.tensor([3, 4])
        samples = t.linspace(0.5, 2.0, 7, dtype=t.float64)
        return [
            backward(grad, indices, offsets, t.tensor([], dtype=t.int64), sizes, sizes, 5,
                     True, 0, False, None, -1),
            backward(grad, indices, offsets, offset2bag, sizes, sizes, 5, True, 1, False, None,
                     0),
            dense(grad, indices, offset2bag, sizes, sizes, 5, False, 0, samples, 3),
            dense(grad, indices, offset2bag, t.tensor([3, 0]), t.tensor([[3, 0, 4], [0, 0, 0]]),
                  5, False, 2, None, -1),
            per_sample(grad, weight, indices, offsets, t.tensor([], dtype=t.int64), 0, -1),
            per_sample(grad, weight, indices, offsets, offset2bag, 0, 0),
        ]

    same(program)


def _error(program):
    def run(t):
        try:
            program(t)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return type(error).__name__, str(error)
        return None
    return run


BAD_CALLS = {
    "float_indices": lambda t, w: t._embedding_bag(w, t.tensor([0.0, 1.0]), t.tensor([0])),
    "int_table": lambda t, w: t._embedding_bag(w.int(), t.tensor([0, 1]), t.tensor([0])),
    "outside_fast": lambda t, w: t._embedding_bag(w.float(), t.tensor([0, 7]), t.tensor([0])),
    "outside_slow": lambda t, w: t._embedding_bag(w, t.tensor([0, 7]), t.tensor([0])),
    "outside_max": lambda t, w: t._embedding_bag(w.float(), t.tensor([0, -1]), t.tensor([0]),
                                                 False, 2),
    "sample_dtype": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]), t.tensor([0]), False, 0,
                                                  False, t.ones(2)),
    "sample_mode": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]), t.tensor([0]), False, 1,
                                                 False, t.ones(2, dtype=t.float64)),
    "sample_count": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]), t.tensor([0]), False, 0,
                                                  False, t.ones(3, dtype=t.float64)),
    "first_offset": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]), t.tensor([1])),
    "last_offset": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]), t.tensor([0, 3])),
    "no_offsets": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]),
                                                t.tensor([], dtype=t.int64), False, 0, False,
                                                None, True),
    "offsets_2d": lambda t, w: t._embedding_bag(w, t.tensor([0, 1]), t.tensor([[0]])),
    "mode": lambda t, w: t.embedding_bag(w, t.tensor([0, 1]), t.tensor([0]), False, 4),
    "padding": lambda t, w: t.embedding_bag(w, t.tensor([0, 1]), t.tensor([0]), False, 0,
                                            False, None, False, 7),
    "table_1d": lambda t, w: t._embedding_bag(w[0], t.tensor([0, 1]), t.tensor([0])),
    "f_mode": lambda t, w: t.nn.functional.embedding_bag(t.tensor([0, 1]), w, t.tensor([0]),
                                                         mode="median"),
    "f_max_freq": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), w, t.tensor([0]), mode="max", scale_grad_by_freq=True),
    "f_samples_mean": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), w, t.tensor([0]), per_sample_weights=t.ones(2, dtype=t.float64)),
    "f_2d_offsets": lambda t, w: t.nn.functional.embedding_bag(t.tensor([[0, 1]]), w,
                                                               t.tensor([0])),
    "f_no_offsets": lambda t, w: t.nn.functional.embedding_bag(t.tensor([0, 1]), w),
    "sparse_freq": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), w, t.tensor([0]), sparse=True, scale_grad_by_freq=True,
        mode="sum").sum().backward(),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_errors_as_torchs(name):
    def program(t):
        weight = _table(t)
        before = weight.detach().clone()
        outcome = _error(lambda lib: BAD_CALLS[name](lib, weight))(t)
        return [outcome, bool((weight.detach() == before).all())]

    (kind, (_, [error, _unchanged])), _warnings = same(program)
    assert kind == "returns" and error is not None  # torch raised


def test_sparse_gradient_is_refused_with_a_reason():
    weight = _table(runtime)
    out = runtime.nn.functional.embedding_bag(runtime.tensor([0, 1]), weight,
                                              runtime.tensor([0]), sparse=True)
    assert out.grad_fn.name() == "EmbeddingBagBackward0"
    with pytest.raises(NotImplementedError, match="sparse"):
        out.sum().backward()
