"""F.linear_cross_entropy, nn.LinearCrossEntropyLoss and nn.LinearCrossEntropyOptions (new in
torch 2.13) against torch: the reference path (linear then cross_entropy, recorded as those
ops) and the chunked path (options given: torch's custom op node, gradients made in
forward, one backward unless allow_retain_graph), values, gradients, repr, state dict,
warnings and errors."""

from __future__ import annotations

import pytest
import torch

from tests.names_oracle import same


def _inputs(t, dtype="float64", batch=7, features=4, classes=10, bias=True):
    t.manual_seed(0)
    kind = getattr(t, dtype)
    x = t.randn(batch, features, dtype=kind, requires_grad=True)
    w = t.randn(classes, features, dtype=kind, requires_grad=True)
    b = t.randn(classes, dtype=kind, requires_grad=True) if bias else None
    target = t.randint(0, classes, (batch,))
    return x, w, b, target


def _run(t, loss, leaves):
    (loss.sum() * 1.5 if loss.dim() else loss * 1.5).backward()
    return [loss, loss.grad_fn.name(), *[leaf.grad for leaf in leaves if leaf is not None]]


REFERENCE = {
    "plain": {},
    "weighted_sum": {"weight": "w", "reduction": "sum"},
    "ignored": {"ignore_index": 3, "reduction": "none"},
    "smoothing": {"label_smoothing": 0.2, "weight": "w"},
}


@pytest.mark.parametrize("case", REFERENCE)
def test_reference_path(case):
    def program(t):
        x, w, b, target = _inputs(t)
        kwargs = dict(REFERENCE[case])
        if kwargs.get("weight") == "w":
            kwargs["weight"] = t.linspace(0.5, 2.0, 10, dtype=t.float64)
        target[2] = 3
        loss = t.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b, **kwargs)
        return _run(t, loss, [x, w, b])

    same(program, rtol=1e-9, atol=1e-12)


def test_reference_path_k_dimensional_and_probabilities():
    def program(t):
        t.manual_seed(1)
        x = t.randn(3, 4, dtype=t.float64, requires_grad=True)
        w = t.randn(5, 2, 4, dtype=t.float64, requires_grad=True)
        b = t.randn(5, 2, dtype=t.float64, requires_grad=True)
        target = t.randint(0, 5, (3, 2))
        loss = t.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b)
        probabilities = t.softmax(t.randn(3, 5, 2, dtype=t.float64), 1)
        soft = t.nn.functional.linear_cross_entropy(x, w, probabilities, linear_bias=b)
        single = t.nn.functional.linear_cross_entropy(x[0], w[:, 0], target[0, 0])
        return [*_run(t, loss + soft + single, [x, w, b]), loss, soft, single]

    same(program, rtol=1e-9, atol=1e-12)


CHUNKED = {
    "mean": ({"reduction": "mean"}, {}),
    "sum_chunks_of_two": ({"reduction": "sum"}, {"batch_chunk_size": 2}),
    "none_weighted": ({"reduction": "none", "weight": True, "ignore_index": 3},
                      {"chunking_method": "aspect_ratio"}),
    "mean_weighted_ignored": ({"weight": True, "ignore_index": 3}, {"batch_chunk_size": 3}),
    "retain": ({}, {"allow_retain_graph": True, "chunking_method": "aspect_ratio:2"}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CHUNKED)
def test_chunked_path(case, dtype):
    def program(t):
        x, w, b, target = _inputs(t, dtype)
        kwargs, options = dict(CHUNKED[case][0]), CHUNKED[case][1]
        if kwargs.pop("weight", False):
            kwargs["weight"] = t.linspace(0.5, 2.0, 10, dtype=x.dtype)
        target[2] = 3
        loss = t.nn.functional.linear_cross_entropy(
            x, w, target, linear_bias=b,
            options=t.nn.LinearCrossEntropyOptions(**options), **kwargs)
        return _run(t, loss, [x, w, b])

    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {}
    same(program, **tolerance)


def test_chunked_backward_runs_once_unless_allowed():
    def program(t):
        outcomes = []
        for allow in (False, True):
            x, w, b, target = _inputs(t)
            options = t.nn.LinearCrossEntropyOptions(allow_retain_graph=allow)
            loss = t.nn.functional.linear_cross_entropy(x, w, target, options=options)
            loss.backward(retain_graph=True)
            try:
                loss.backward()
                outcomes.append(x.grad)
            except RuntimeError as error:
                outcomes.append(str(error))
        none = t.nn.functional.linear_cross_entropy(
            x, w, target, reduction="none", options=t.nn.LinearCrossEntropyOptions())
        none.sum().backward(retain_graph=True)
        none.sum().backward()  # recomputed: any number of times
        return [*outcomes, w.grad]

    same(program)


def test_unbatched_and_no_grad_chunked():
    def program(t):
        x, w, b, target = _inputs(t)
        options = t.nn.LinearCrossEntropyOptions()
        one = t.nn.functional.linear_cross_entropy(x[0], w, target[0], options=options,
                                                   reduction="none")
        with t.no_grad():
            quiet = t.nn.functional.linear_cross_entropy(x, w, target, options=options)
        return [one, one.grad_fn.name(), quiet, quiet.requires_grad]

    same(program)


def test_options_fall_back_with_torchs_warning():
    def program(t):
        x, w, b, target = _inputs(t)
        loss = t.nn.functional.linear_cross_entropy(
            x, w, target, label_smoothing=0.1, options=t.nn.LinearCrossEntropyOptions())
        return [loss, loss.grad_fn.name()]

    same(program)


@pytest.mark.parametrize("arguments", [
    {}, {"batch_chunk_size": 3}, {"chunking_method": "aspect_ratio:4"},
    {"chunking_method": None, "batch_chunk_size": 100}, {"acc_policy": "balanced"},
    {"chunking_method": "aspect_ratio", "batch_chunk_size": 5},
])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_options_resolve_as_torchs(arguments, dtype):
    def program(t):
        options = t.nn.LinearCrossEntropyOptions(**arguments)
        adjusted = options._adjust(num_batches=37, in_features=8, num_classes=100,
                                   dtype=getattr(t, dtype), device=t.device("cpu"))
        return [repr(options), adjusted.acc_policy, adjusted.chunking_method,
                adjusted.batch_chunk_size, str(adjusted.acc_dtype),
                adjusted.allow_retain_graph]

    same(program)


@pytest.mark.parametrize("arguments", [
    {"acc_policy": "fast"}, {"chunking_method": "aspect"}, {"chunking_method": "aspect_ratio:0"},
    {"batch_chunk_size": 0}, {"batch_chunk_size": 2.5}, {"acc_dtype": "int64"},
])
def test_options_refuse_as_torchs(arguments):
    def program(t):
        if arguments.get("acc_dtype") == "int64":
            arguments["acc_dtype"] = t.int64
        try:
            t.nn.LinearCrossEntropyOptions(**arguments)
        except ValueError as error:
            return str(error)
        return None

    assert same(program)[0][1] is not None


BAD_CALLS = {
    "input_3d": lambda t, x, w, b, y: t.nn.functional.linear_cross_entropy(x[None], w, y),
    "weight_1d": lambda t, x, w, b, y: t.nn.functional.linear_cross_entropy(x, w[0], y),
    "features": lambda t, x, w, b, y: t.nn.functional.linear_cross_entropy(x[:, :3], w, y),
    "bias_shape": lambda t, x, w, b, y: t.nn.functional.linear_cross_entropy(
        x, w, y, linear_bias=b[:4]),
    "k_dim_unbatched": lambda t, x, w, b, y: t.nn.functional.linear_cross_entropy(
        x[0], w.reshape(5, 2, 4), y[0]),
    "ignore_probabilities": lambda t, x, w, b, y: t.nn.functional.linear_cross_entropy(
        x, w, t.softmax(x @ w.T, 1), ignore_index=1),
    "module_weight": lambda t, x, w, b, y: t.nn.LinearCrossEntropyLoss(4, 10,
                                                                      weight=t.ones(3)),
    "module_smoothing": lambda t, x, w, b, y: t.nn.LinearCrossEntropyLoss(4, 10,
                                                                         label_smoothing=2.0),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_errors_as_torchs(name):
    def program(t):
        try:
            BAD_CALLS[name](t, *_inputs(t))
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return type(error).__name__, str(error)
        return None

    assert same(program)[0][1] is not None


@pytest.mark.parametrize("options", [False, True])
def test_module(options):
    def program(t):
        t.manual_seed(3)
        module = t.nn.LinearCrossEntropyLoss(
            4, 5, out_features=() if options else (2,), bias=True,
            weight=t.linspace(1.0, 2.0, 5), ignore_index=1,
            options=t.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if options else None)
        x = t.randn(6, 4, requires_grad=True)
        target = t.randint(0, 5, (6,) if options else (6, 2))
        loss = module(x, target)
        loss.backward()
        return [repr(module), list(module.state_dict()), loss, loss.grad_fn.name(), x.grad,
                module.linear.weight.grad, module.linear.bias.grad]

    same(program, rtol=1e-5, atol=1e-6)


def test_the_names_are_torchs():
    assert torch.nn.functional.linear_cross_entropy.__name__ == "linear_cross_entropy"
    assert torch.nn.LinearCrossEntropyOptions.__name__ == "LinearCrossEntropyOptions"
