"""The eager shortcuts of the inline pass (docs/performance.md, "Levers used") give what
the paths they skip give: the kernels' fast paths (a float sum, a float squared, float
subtraction, an optimizer's in-place update, relu), the shared metadata of one-output
nodes, the cached ones of a bias gradient, the direct seed of a 0-dim loss, and Tensor's
rare fields kept as class defaults (which also lets a program set its own attributes on a
tensor, as torch's tensors do), a Python number saved for a Tensor argument kept as itself.
Each is checked against torch or the general path."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import runtime
from runtime import kernels, recording
from runtime.autograd import gradients

FLOATS = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]


def _array(dtype, shape=(3, 4), seed=0) -> np.ndarray:
    values = np.asarray(np.random.default_rng(seed).standard_normal(shape) * 3)
    if values.size > 1:
        values.flat[0] = np.inf
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(3, 4), (), (0,)])
def test_float_sum_and_square_as_the_general_path(dtype, shape) -> None:
    data = _array(dtype, shape)
    general_sum = kernels._array(kernels._add_reduce(data, None, kernels._opmath(data.dtype)),
                                 data.dtype)
    got = kernels.sum(data)
    assert type(got) is np.ndarray and got.dtype == data.dtype and got.shape == ()
    assert np.array_equal(got, general_sum, equal_nan=True)
    square = kernels.pow_Tensor_Scalar(data, 2)
    assert type(square) is np.ndarray and square.dtype == data.dtype
    assert np.array_equal(square, kernels._array(np.square(data), data.dtype), equal_nan=True)
    assert not np.shares_memory(square, data)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_sum_square_and_difference_match_torch(dtype) -> None:
    data, other = _array(dtype, seed=1), _array(dtype, seed=2)
    data.flat[0] = other.flat[0] = 1.0
    ours = (runtime.tensor(data) - runtime.tensor(other)).pow(2).sum()
    theirs = (torch.tensor(data) - torch.tensor(other)).pow(2).sum()
    assert ours.dtype == getattr(runtime, dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-3 if dtype == "float16"
                               else 1e-6)


@pytest.mark.parametrize("lib", [runtime, torch], ids=["gradgen", "torch"])
def test_subtraction_still_refuses_bools(lib) -> None:
    flags = lib.tensor([True, False])
    with pytest.raises(RuntimeError, match="two bool tensors"):
        flags - flags
    with pytest.raises(RuntimeError, match="with a bool tensor"):
        lib.tensor([1.0, 2.0]) - flags


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_inplace_update_as_the_general_path(dtype) -> None:
    param, grad = _array(dtype, seed=3), _array(dtype, seed=4)
    expected = param.copy()
    kernels._inplace(np.add, expected, -0.01 * kernels._as(grad, expected.dtype), expected.dtype)
    before = param.__array_interface__["data"][0]
    kernels.add_Tensor_(param, grad, -0.01)
    assert np.array_equal(param, expected, equal_nan=True)
    assert param.__array_interface__["data"][0] == before  # written in place


def test_sgd_step_matches_torch_and_refuses_a_cast() -> None:
    data, grad = _array(np.float32, seed=5), _array(np.float32, seed=6)
    data.flat[0] = grad.flat[0] = 0.5
    results = []
    for lib in (runtime, torch):
        weight = lib.tensor(data, requires_grad=True)
        weight.grad = lib.tensor(grad)
        lib.optim.SGD([weight], lr=0.1).step()
        results.append(weight.detach().numpy())
        with pytest.raises(RuntimeError, match="can't be cast"):
            lib.ones(2, dtype=lib.int64).add_(lib.ones(2), alpha=0.5)
    # (an ulp of the larger operand apart at most: torch's update is one fused multiply-add)
    np.testing.assert_allclose(*results, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_relu_as_torch(dtype) -> None:
    data = _array(dtype, seed=7) if dtype is not np.bool_ else np.array([True, False])
    if dtype is np.bool_:
        for lib in (runtime, torch):
            with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
                lib.relu(lib.tensor(data))
        return
    ours = runtime.relu(runtime.tensor(data))
    assert ours.dtype == runtime.tensor(data).dtype
    theirs = torch.relu(torch.tensor(data.astype(np.float32) if dtype is ml_dtypes.bfloat16
                                      else data))
    np.testing.assert_array_equal(ours.numpy().astype(np.float64) if dtype
                                  is not ml_dtypes.bfloat16 else ours.float().numpy(),
                                  theirs.double().numpy())


def test_one_output_nodes_share_their_metadata() -> None:
    x = runtime.ones(3, 2, requires_grad=True)
    a, b, c = x * 2.0, x * 3.0, x.double() * 2.0
    assert a.grad_fn._input_metadata is b.grad_fn._input_metadata
    assert a.grad_fn._input_metadata == (((3, 2), np.dtype(np.float32)),)
    assert c.grad_fn._input_metadata == (((3, 2), np.dtype(np.float64)),)
    values, indices = x.max(dim=0)  # two outputs: the later one's metadata appended
    assert values.grad_fn._input_metadata == (((2,), np.dtype(np.float32)),
                                              ((2,), np.dtype(np.int64)))
    assert indices.grad_fn is None
    (a.sum() + values.sum()).backward()
    assert x.grad.tolist() == [[3.0, 3.0], [2.0, 2.0], [2.0, 2.0]]


def test_shared_metadata_is_bounded() -> None:
    for rows in range(1, 1200):
        (runtime.ones(rows, requires_grad=True) * 2.0).sum()
    assert len(recording._ONE_OUTPUT) <= 1024


def test_bias_gradient_ones_are_cached_read_only_and_results_fresh() -> None:
    grad = _array(np.float32, (16, 10), seed=8)
    first, second = kernels.sum_to(grad, (10,)), kernels.sum_to(grad, (10,))
    assert first is not second and first.flags.writeable
    ones = kernels._ONES[16, np.dtype(np.float32)]
    assert not ones.flags.writeable
    with pytest.raises(ValueError):
        ones[0] = 2.0
    np.testing.assert_allclose(first, grad.sum(0), rtol=1e-6)
    bias = [lib.zeros(10, requires_grad=True) for lib in (runtime, torch)]
    for b, lib in zip(bias, (runtime, torch), strict=True):
        (lib.tensor(grad) + b).sum().backward()
    assert bias[0].grad.tolist() == bias[1].grad.tolist() == [16.0] * 10


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_seed_of_a_one_element_loss(shape) -> None:
    data = np.full(shape, 2.5, np.float64)
    seed = gradients._ones(data)
    assert seed.shape == shape and seed.dtype == np.float64 and seed.flags.writeable
    assert np.all(seed == 1)
    grads = []
    for lib in (runtime, torch):
        x = lib.tensor(data, requires_grad=True)
        seen = []
        y = x * 3.0
        y.register_hook(lambda g, seen=seen: seen.append(g.tolist()))
        y.backward()
        grads.append((seen, x.grad.tolist()))
    assert grads[0] == grads[1]


@pytest.mark.parametrize("lib", [runtime, torch], ids=["gradgen", "torch"])
def test_a_program_may_set_its_own_attributes_on_a_tensor(lib) -> None:
    t = lib.ones(2)
    t.note = "mine"
    assert t.note == "mine"
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        t.missing  # noqa: B018
    p = lib.nn.Parameter(lib.ones(2))
    p.tag = 3
    assert p.tag == 3


def test_rare_fields_default_until_set_and_stay_per_tensor() -> None:
    a = runtime.ones(2, requires_grad=True)
    assert a._retains_grad is False and a._backward_hooks is None and a._fw_grad is None
    seen = []
    for lib in (runtime, torch):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        y = a * 2.0
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        (y.sum() + (b * 2.0).sum()).backward()
        assert y.retains_grad and not (b * 1.0).retains_grad
        seen.append([y.grad.tolist(), a.grad.tolist(), b.grad.tolist()])
    assert seen[0] == seen[1]
    subclasses = []
    for lib in (runtime, torch):
        mine = lib.ones(2, requires_grad=True) * 2.0
        mine.retain_grad()
        mine.note = 1
        sub = mine.as_subclass(type("Mine", (lib.Tensor,), {}))
        subclasses.append((type(sub).__name__, sub.tolist(), sub.requires_grad,
                           sub.retains_grad, type(sub.grad_fn).__name__, hasattr(sub, "note")))
    assert subclasses[0] == subclasses[1]


# -- a Python number saved for a Tensor argument is kept as itself -------------------------

MESSAGE = "Trying to backward through the graph a second time"


@pytest.mark.parametrize("number", [2.5, 3, True, -0.0])
def test_a_number_kept_as_itself_unpacks_frees_and_raises_as_torch(number) -> None:
    x = runtime.tensor([1.0, -2.0, 4.0], requires_grad=True)
    y = x * number
    assert y.grad_fn.other_ is number  # no SavedVariable made for it
    assert y.grad_fn._saved_other is number
    y.sum().backward(retain_graph=True)  # (retained: still kept)
    assert y.grad_fn._saved_other is number
    y.sum().backward()  # freed now: read or backward again raises torch's error
    expected = torch.tensor([1.0, -2.0, 4.0], requires_grad=True)
    (expected * number).sum().backward(retain_graph=True)
    (expected * number).sum().backward()
    assert np.array_equal(x.grad.numpy(), expected.grad.numpy())  # two backwards' sum
    with pytest.raises(RuntimeError, match=MESSAGE):
        _ = y.grad_fn._saved_other
    with pytest.raises(RuntimeError, match=MESSAGE):
        y.sum().backward()


def test_a_tensor_in_the_same_place_is_still_a_saved_variable() -> None:
    from runtime.node import SavedVariable

    x = runtime.tensor([1.0, 2.0], requires_grad=True)
    other = runtime.tensor([3.0, 5.0])
    y = x * other
    assert type(y.grad_fn.other_) is SavedVariable
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 5.0]
    with pytest.raises(RuntimeError, match=MESSAGE):
        _ = y.grad_fn._saved_other


def test_a_number_kept_as_itself_in_a_double_backward_and_a_raw_backward() -> None:
    x = runtime.tensor([0.5, -1.5], requires_grad=True)
    y = (x * 3.0 * x).sum()
    (g,) = runtime.autograd.grad(y, x, create_graph=True)  # Tensor namespace
    g.sum().backward()  # through the nodes again
    xt = torch.tensor([0.5, -1.5], requires_grad=True)
    (gt,) = torch.autograd.grad((xt * 3.0 * xt).sum(), xt, create_graph=True)
    gt.sum().backward()
    assert np.array_equal(g.detach().numpy(), gt.detach().numpy())
    assert np.array_equal(x.grad.numpy(), xt.grad.numpy())


def test_a_slot_not_saved_reads_none_after_backward_as_torch() -> None:
    for lib in (torch, runtime):
        x = lib.ones(2, requires_grad=True)
        y = x * 2.0
        y.sum().backward()
        assert y.grad_fn._saved_self is None  # torch's undefined tensor, not freed
