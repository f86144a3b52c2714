"""The census names that no other test compared with torch (tests/test_census_tested.py finds
them), each run under torch and under gradgen (tests/oracle.py's `same`: what a call returns
as plain values, raises and warns must be equal): values, gradients where differentiable,
repr and state-dict layout for modules, and one bad call each."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from tests.oracle import same, same_outcome


def _rounded(values: Any, digits: int = 6) -> Any:
    if isinstance(values, list):
        return [_rounded(v, digits) for v in values]
    return round(values, digits)


# -- torch: legacy storages -------------------------------------------------------------------


def _storages(t: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (TypedStorage's deprecation, compared elsewhere)
        char, short = t.CharStorage([1, 2, -3]), t.ShortStorage([1, -2, 30000])
        return (list(char), list(short), repr(char), repr(short), str(char.dtype),
                str(short.dtype), char.size(), len(t.ShortStorage(4)),
                char.element_size(), short.element_size(), type(char).__name__,
                list(t.CharStorage([1.7, -2.7])))


def test_char_and_short_storages() -> None:
    same(_storages)


@pytest.mark.parametrize("data", [[300], ["a"], [None], [1 + 2j]], ids=str)
@pytest.mark.parametrize("kind", ["CharStorage", "ShortStorage"])
def test_a_storage_of_what_its_dtype_cannot_hold(kind: str, data: list) -> None:
    """torch makes a storage of a sequence through torch.tensor: its errors."""
    same_outcome(lambda t: list(getattr(t, kind)(data)))


@pytest.mark.parametrize(("data", "dtype"), [
    (["a"], None), (["a"], "int8"), ([[1, "a"]], None), ([[1, "a"]], "int64"),
    ([[1, "a"]], "float32"), ([None], "int8"), ([None], "float32"), ([[1, None]], None),
    ([1 + 2j], "int8"), ([1 + 2j], "float32"), ([1 + 2j], "bool"), ([[1, 2], [None]], "int64"),
    ([True, 2.5], "int64"), ([b"a"], None)], ids=str)
def test_tensor_of_data_its_dtype_cannot_hold(data: list, dtype: str | None) -> None:
    """torch.tensor's refusals of strings, None and complex numbers (found through the
    storages, which are made with it)."""
    same(lambda t: t.tensor(data, dtype=dtype and getattr(t, dtype)).tolist())


def test_tensor_of_numpy_scalars_for_another_dtype() -> None:
    """numpy's scalars in a list are converted, not refused as Python's complex numbers are
    (outcomes compared: torch warns of the discarded imaginary part once per process)."""
    import numpy as np

    same_outcome(lambda t: (t.tensor([np.complex128(1 + 2j)], dtype=t.float32).tolist(),
                            t.tensor([np.complex128(1 + 2j)], dtype=t.bool).tolist(),
                            t.tensor([np.int8(3)], dtype=t.float32).tolist()))


# -- torch: autocast settings ---------------------------------------------------------------


def _autocast_settings(t: Any) -> Any:
    try:
        before = (t.is_autocast_cache_enabled(), str(t.get_autocast_dtype("cpu")),
                  str(t.get_autocast_dtype("cuda:0")))
        t.set_autocast_cache_enabled(False)
        t.set_autocast_dtype("cpu", t.float16)
        middle = (t.is_autocast_cache_enabled(), str(t.get_autocast_dtype("cpu")))
        t.set_autocast_cpu_dtype(t.float32)
        t.set_autocast_gpu_dtype(t.bfloat16)
        return before, middle, str(t.get_autocast_dtype("cpu")), \
            str(t.get_autocast_dtype("cuda"))
    finally:  # the process's settings as they were
        t.set_autocast_cache_enabled(True)
        t.set_autocast_dtype("cpu", t.bfloat16)
        t.set_autocast_dtype("cuda", t.float16)


def test_autocast_settings() -> None:
    same(_autocast_settings)


@pytest.mark.parametrize("call", [
    lambda t: t.set_autocast_dtype("nodevice", t.float16),
    lambda t: t.set_autocast_dtype(3, t.float16),
    lambda t: t.set_autocast_dtype("cpu", 3),
    lambda t: t.set_autocast_cache_enabled("yes"),
    lambda t: t.set_autocast_cpu_dtype("float16"),
    lambda t: t.set_autocast_gpu_dtype(3),
    lambda t: t.get_autocast_dtype("nodevice"),
], ids=["device", "device-type", "dtype", "cache", "cpu-dtype", "gpu-dtype", "get"])
def test_autocast_settings_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"


# -- torch and Tensor: small predicates and splits -------------------------------------------


def test_predicates() -> None:
    same(lambda t: (t.get_device(t.ones(2)), t.ones(2).get_device(), t.is_neg(t.ones(2)),
                    t.ones(2).is_neg(), t.ones(2).resolve_neg().is_neg(),
                    t.is_nonzero(t.tensor([1.5])), t.tensor(0.0).is_nonzero(),
                    t.tensor([False]).is_nonzero(),
                    t.is_same_size(t.ones(2, 3), t.ones(2, 3)), t.ones(2).is_same_size(t.ones(3)),
                    t.ones(2).is_cpu, t.ones(2).is_maia, t.ones(2).is_meta,
                    t.ones(2).ndimension(), t.ones(2, 3, 1).ndimension()))


@pytest.mark.parametrize("shape", [(2,), (0,)], ids=str)
def test_is_nonzero_of_more_or_fewer_than_one_value(shape: tuple) -> None:
    same(lambda t: t.ones(shape).is_nonzero())


def test_is_same_size_of_a_non_tensor() -> None:
    same(lambda t: t.ones(2).is_same_size([1, 2]))


def _split_gradient(t: Any) -> Any:
    x = t.arange(6.0, requires_grad=True)
    first, second = t.unsafe_split_with_sizes(x * 1, [2, 4])
    method = x.unsafe_split_with_sizes([1, 5])
    (first.sum() * 2 + second.pow(2).sum() + method[1].sum()).backward()
    return [p.tolist() for p in (first, second)], x.grad.tolist(), first.grad_fn.name()


def test_unsafe_split_with_sizes() -> None:
    same(_split_gradient)
    same(lambda t: t.arange(6.0).unsafe_split_with_sizes([1, 4]))


# -- Tensor: element callbacks, subclasses, memory facts --------------------------------------


def _callbacks(t: Any) -> Any:
    x, y = t.arange(4.0), t.arange(4.0)
    returned = x.apply_(lambda v: v * 2 + 1)
    mapped = y.map_(t.ones(4) * 3, lambda a, b: a + b)
    z = t.arange(4.0)
    z.map2_(t.ones(4) * 3, t.arange(4.0) * 10, lambda a, b, c: a * b + c)
    broadcast = t.ones(2, 3).map_(t.arange(3.0), lambda a, b: a - b)
    return x.tolist(), returned is x, y.tolist(), mapped is y, z.tolist(), broadcast.tolist()


def test_apply_map_and_map2() -> None:
    same(_callbacks)


@pytest.mark.parametrize("call", [
    lambda t: t.ones(2, requires_grad=True).apply_(lambda v: v),
    lambda t: t.ones(2, 3).map_(t.ones(3, 2), lambda a, b: a),
    lambda t: t.ones(2).map2_(t.ones(2), t.ones(2, dtype=t.int64), lambda a, b, c: a),
], ids=["requires-grad", "shape", "dtype"])
def test_callbacks_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def test_as_subclass() -> None:
    def program(t: Any) -> Any:
        class Tagged(t.Tensor):
            pass

        tagged = t.arange(3.0).as_subclass(Tagged)
        return type(tagged).__name__, tagged.tolist(), isinstance(tagged, t.Tensor)

    same(program)
    same(lambda t: t.arange(3.0).as_subclass(int))


def test_const_data_ptr_and_dim_order() -> None:
    same(lambda t: (
        t.arange(4.0).const_data_ptr() == t.arange(4.0).const_data_ptr() or True,
        (lambda x: (x.const_data_ptr() == x.data_ptr(),
                    x[1:].const_data_ptr() - x.const_data_ptr()))(t.arange(4.0)),
        t.ones(2, 3, 4, 5).dim_order(),
        t.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).dim_order(),
        t.ones(2, 3).t().dim_order(), t.ones(2, 3).dim_order(ambiguity_check=True),
        t.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        .dim_order(ambiguity_check=[t.contiguous_format]),
        t.ones(()).dim_order(ambiguity_check=True)))


@pytest.mark.parametrize("call", [
    lambda t: t.ones(2, 1, 3).dim_order(ambiguity_check=True),
    lambda t: t.ones(2, 3, 1, 1).dim_order(ambiguity_check=[t.contiguous_format,
                                                             t.channels_last]),
    lambda t: t.ones(2, 3).dim_order(ambiguity_check=3),
    lambda t: t.ones(2, 3).dim_order(ambiguity_check=[3]),
], ids=["size-1", "two-formats", "not-a-list", "not-formats"])
def test_dim_order_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def _fill_diagonal(t: Any) -> Any:
    square = t.zeros(3, 3).fill_diagonal_(5)
    tall = t.zeros(7, 3).fill_diagonal_(1, wrap=True)
    wide = t.zeros(3, 7).fill_diagonal_(2)
    cube = t.zeros(2, 2, 2).fill_diagonal_(2)
    integer = t.zeros(3, 3, dtype=t.int64).fill_diagonal_(2.7)
    return [m.tolist() for m in (square, tall, wide, cube, integer)]


def _fill_diagonal_gradient(t: Any) -> Any:
    x = t.arange(21.0, requires_grad=True)
    y = (x * 2).reshape(7, 3).fill_diagonal_(-1, wrap=True)
    (y * y).sum().backward()
    z = t.ones(3, 3, requires_grad=True)
    w = (z * 2).fill_diagonal_(0)
    w.sum().backward()
    return y.tolist(), x.grad.tolist(), w.tolist(), z.grad.tolist()


def test_fill_diagonal_() -> None:
    same(_fill_diagonal)


def test_fill_diagonal_gradient() -> None:
    """The cells written get no gradient (gradgen's fill_diagonal_ was not recorded)."""
    same(_fill_diagonal_gradient)


@pytest.mark.parametrize("call", [
    lambda t: t.zeros(3).fill_diagonal_(1),
    lambda t: t.zeros(3, 4, 3).fill_diagonal_(1),
    lambda t: t.zeros(2, 2, requires_grad=True).fill_diagonal_(1),
], ids=["one-dim", "unequal", "leaf"])
def test_fill_diagonal_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def _post_accumulate(t: Any) -> Any:
    x = t.ones(3, requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    handle.remove()
    (x * 1).sum().backward()
    return seen, x.grad.tolist()


def test_register_post_accumulate_grad_hook() -> None:
    same(_post_accumulate)
    same(lambda t: (t.ones(3, requires_grad=True) * 2).register_post_accumulate_grad_hook(
        lambda p: None))
    same(lambda t: t.ones(3).register_post_accumulate_grad_hook(lambda p: None))


def _resize(t: Any) -> Any:
    x = t.arange(6.0, requires_grad=True)
    y = x.resize(2, 3)
    (y * t.arange(6.0).reshape(2, 3)).sum().backward()
    return y.tolist(), x.grad.tolist(), t.arange(6.0).resize_as(t.ones(3, 2)).tolist()


def test_resize() -> None:
    same(_resize)


@pytest.mark.parametrize("call", [
    lambda t: t.arange(6.0).resize(8),
    lambda t: t.ones(2, 3).resize(4),
    lambda t: t.arange(6.0).resize([3, 2]),
    lambda t: t.arange(6.0).resize_as(t.ones(4)),
], ids=["count", "two-dims", "a-list", "resize_as"])
def test_resize_refused(call: Any) -> None:
    """torch's autograd Resize keeps the element count (and multiplies its arguments as
    given: a list is refused)."""
    assert same(call)[0][0] == "raises"


# -- torch.nn and torch.nn.functional ----------------------------------------------------------


def _rnn_base(t: Any) -> Any:
    t.manual_seed(0)
    module = t.nn.RNNBase("LSTM", 3, 4, num_layers=2, batch_first=True)
    layout = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    return (repr(module), layout, module.extra_repr(), module.mode,
            isinstance(t.nn.LSTM(2, 3), t.nn.RNNBase),
            _rounded(module.weight_ih_l0.flatten()[:6].tolist()))


def test_rnn_base() -> None:
    same(_rnn_base)
    same(lambda t: t.nn.RNNBase("GRU", 3, 4)(t.ones(2, 4, 3)))  # no forward of its own


@pytest.mark.parametrize("call", [
    lambda t: t.nn.RNNBase("FOO", 3, 4),
    lambda t: t.nn.RNNBase("LSTM", 3, 4, dropout=2),
], ids=["mode", "dropout"])
def test_rnn_base_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def _fractional_max_pool3d(t: Any) -> Any:
    t.manual_seed(0)
    x = t.arange(250, dtype=t.float64).reshape(2, 1, 5, 5, 5).sin().requires_grad_()
    out, indices = t.nn.functional.fractional_max_pool3d_with_indices(
        x, 2, output_size=(3, 3, 3))
    (out * t.arange(out.numel(), dtype=t.float64).reshape(out.shape)).sum().backward()
    return (_rounded(out.flatten().tolist(), 10), indices.flatten().tolist(),
            str(indices.dtype), x.grad.flatten().tolist())


def test_fractional_max_pool3d_with_indices() -> None:
    same(_fractional_max_pool3d)
    same(lambda t: t.nn.functional.fractional_max_pool3d_with_indices(t.ones(1, 1, 4, 4, 4), 2))


def _upsample(t: Any) -> Any:
    x = t.arange(16.0, dtype=t.float64).reshape(1, 1, 4, 4).requires_grad_()
    outs = [t.nn.functional.upsample(x, scale_factor=2),
            t.nn.functional.upsample(x, size=(5, 7), mode="bilinear"),
            t.nn.functional.upsample(x, scale_factor=1.5, mode="bicubic", align_corners=True)]
    sum((o * o).sum() for o in outs).backward()
    return [_rounded(o.flatten().tolist(), 10) for o in outs], _rounded(x.grad.flatten().tolist(),
                                                                        8)


def test_upsample() -> None:
    same(_upsample)
    same(lambda t: t.nn.functional.upsample(t.ones(1, 1, 4, 4)))
    same(lambda t: t.nn.functional.upsample(t.ones(1, 1, 4, 4), size=3, mode="linear"))


# -- torch.nn.utils: the two halves of clip_grad_norm_ -----------------------------------------


def _clip_in_two_steps(t: Any) -> Any:
    t.manual_seed(0)
    parameters = [t.nn.Parameter(t.randn(3, 2)), t.nn.Parameter(t.randn(4))]
    for p in parameters:
        p.grad = t.randn(p.shape) * 3
    grads = [p.grad for p in parameters]
    norms = [t.nn.utils.get_total_norm(grads, norm_type=kind) for kind in (2.0, 1, "inf")]
    returned = t.nn.utils.clip_grads_with_norm_(parameters, 1.0, norms[0])
    small = t.nn.Parameter(t.ones(2))
    small.grad = t.ones(2)
    t.nn.utils.clip_grads_with_norm_([small], 10.0, t.tensor(2.0))  # below: unchanged
    return ([round(n.item(), 5) for n in norms], str(norms[0].dtype), tuple(norms[0].shape),
            returned, [_rounded(p.grad.flatten().tolist()) for p in parameters],
            small.grad.tolist(), t.nn.utils.get_total_norm([]).item(),
            t.nn.utils.get_total_norm(t.tensor([3.0, 4.0])).item())


def test_get_total_norm_and_clip_grads_with_norm_() -> None:
    same(_clip_in_two_steps)
    same(lambda t: t.nn.utils.get_total_norm([t.tensor([float("inf")])],
                                             error_if_nonfinite=True))


# -- torch.utils.data.ChainDataset -----------------------------------------------------------


def _chain(t: Any) -> Any:
    data = t.utils.data

    class Numbers(data.IterableDataset):
        def __init__(self, start: int, stop: int) -> None:
            self.start, self.stop = start, stop

        def __iter__(self) -> Any:
            return iter(range(self.start, self.stop))

    class Counted(Numbers):
        def __len__(self) -> int:
            return self.stop - self.start

    chain = data.ChainDataset([Numbers(0, 3), Numbers(10, 12)])
    batches = [b.tolist() for b in data.DataLoader(chain, batch_size=2)]
    joined = chain + Numbers(20, 22)
    return (list(chain), len(data.ChainDataset([Counted(0, 3), Counted(5, 9)])), batches,
            type(joined).__name__, list(joined))


def test_chain_dataset() -> None:
    same(_chain)
    same(lambda t: list(t.utils.data.ChainDataset([t.utils.data.TensorDataset(t.ones(2))])))


def test_an_iterable_dataset_needs_its_iter() -> None:
    """IterableDataset is abstract, as torch's: one without __iter__ cannot be made."""
    same(lambda t: t.utils.data.IterableDataset())


# -- torch.distributions: OneHotCategoricalStraightThrough, Transform --------------------------


def _straight_through(t: Any) -> Any:
    t.manual_seed(0)
    logits = t.tensor([[0.5, 1.0, -1.0], [2.0, 0.0, 0.1]], requires_grad=True)
    dist = t.distributions.OneHotCategoricalStraightThrough(logits=logits)
    sample = dist.rsample((4,))
    (sample * t.arange(3.0)).sum().backward()
    return (sample.tolist(), _rounded(logits.grad.flatten().tolist()), dist.has_rsample,
            _rounded(dist.log_prob(sample.detach()).flatten().tolist()),
            _rounded(dist.entropy().tolist()), repr(dist), tuple(dist.event_shape),
            tuple(dist.batch_shape))


def test_one_hot_categorical_straight_through() -> None:
    same(_straight_through)
    same(lambda t: t.distributions.OneHotCategoricalStraightThrough(
        probs=t.tensor([0.5, -0.1]), validate_args=True))


def _transform(t: Any) -> Any:
    transforms = t.distributions.transforms
    base = t.distributions.Transform()
    x = t.tensor([0.5, -1.0, 2.0], requires_grad=True)
    exp = transforms.ExpTransform()
    y = exp(x)
    (y.sum() + exp.log_abs_det_jacobian(x, y).sum()).backward()
    return (isinstance(exp, t.distributions.Transform), repr(base), base.bijective,
            _rounded(y.tolist(), 5), _rounded(x.grad.tolist(), 5), repr(exp.inv),
            _rounded(exp.inv(y).tolist(), 5), exp.sign, base == t.distributions.Transform(),
            exp == transforms.ExpTransform(), t.distributions.Transform(cache_size=1)._cache_size,
            repr(transforms.ComposeTransform([exp, transforms.AffineTransform(1.0, 2.0)])))


def test_transform() -> None:
    same(_transform)


@pytest.mark.parametrize("call", [
    lambda t: t.distributions.Transform()(t.ones(2)),
    lambda t: t.distributions.Transform().log_abs_det_jacobian(t.ones(2), t.ones(2)),
    lambda t: t.distributions.Transform().sign,
    lambda t: t.distributions.Transform(cache_size=2),
], ids=["call", "jacobian", "sign", "cache"])
def test_transform_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"


# -- torch.threshold_ and F.threshold_ -------------------------------------------------------


def _threshold_in_place(t: Any) -> Any:
    results = []
    for function in (t.threshold_, t.nn.functional.threshold_):
        leaf = t.tensor([-2.0, -0.7, 0.1, 0.3, 0.9, 4.0], dtype=t.float64, requires_grad=True)
        x = leaf * 1
        returned = function(x, 0.2, 20.0)
        (returned * t.arange(6.0, dtype=t.float64)).sum().backward()
        results.append((returned is x, x.tolist(), leaf.grad.tolist(), x.grad_fn.name()))
    integers = t.arange(5)
    t.threshold_(integers, 2, -1)
    return results, integers.tolist(), t.threshold_(t.arange(3), 0.5, 0.25).tolist()


def test_threshold_() -> None:
    same(_threshold_in_place)


@pytest.mark.parametrize("call", [
    lambda t: t.threshold_(t.ones(2, requires_grad=True), 0.5, 0.0),
    lambda t: t.nn.functional.threshold_(t.ones(2, requires_grad=True), 0.5, 0.0),
    lambda t: t.nn.functional.threshold_(t.ones(2), "a", 0.0),
], ids=["leaf", "functional-leaf", "threshold"])
def test_threshold_refused(call: Any) -> None:
    assert same(call)[0][0] == "raises"
