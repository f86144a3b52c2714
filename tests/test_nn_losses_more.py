"""Margin ranking, hinge embedding, cosine embedding, triplet margin (and with a distance),
Poisson and Gaussian NLL, multi-label margin, multi-label soft margin and multi-margin
losses, pairwise_distance and pdist, against PyTorch: values and gradients for each
reduction, the modules' reprs and buffers, legacy flags, warnings and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close, same

REDUCTIONS = ["mean", "sum", "none"]


def _data(shape: tuple[int, ...], seed: int = 0, dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _signs(shape: tuple[int, ...], seed: int = 5) -> np.ndarray:
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0)


def _leaves(lib: Any, *arrays: np.ndarray) -> list:
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def _run(lib: Any, loss: Any, leaves: list) -> list:
    loss.pow(2).sum().backward() if loss.dim() else (loss * 3).backward()
    return [loss, *[leaf.grad for leaf in leaves]]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_margin_ranking_loss(reduction: str, margin: float) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data((6,), 1), _data((6,), 2))
        loss = lib.nn.functional.margin_ranking_loss(*leaves, lib.tensor(_signs((6,))),
                                                     margin, reduction=reduction)
        module = lib.nn.MarginRankingLoss(margin, reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module),
                module(*leaves, lib.tensor(_signs((6,))))]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_loss(reduction: str) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data((3, 4), 1))
        target = lib.tensor(_signs((3, 4)))
        loss = lib.nn.functional.hinge_embedding_loss(*leaves, target, 0.7, reduction=reduction)
        module = lib.nn.HingeEmbeddingLoss(reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), module(*leaves, target)]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss(reduction: str, batched: bool) -> None:
    shape, target_shape = ((5, 3), (5,)) if batched else ((3,), ())

    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data(shape, 1), _data(shape, 2))
        target = lib.tensor(_signs(target_shape))
        loss = lib.nn.functional.cosine_embedding_loss(*leaves, target, 0.1,
                                                       reduction=reduction)
        module = lib.nn.CosineEmbeddingLoss(reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), module(*leaves, target)]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("p", "swap", "shape"), [(2.0, False, (4, 3)), (1.0, True, (4, 3)),
                                                  (3.0, True, (5,))])
def test_triplet_margin_loss(reduction: str, p: float, swap: bool, shape: tuple) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data(shape, 1), _data(shape, 2), _data(shape, 3))
        loss = lib.nn.functional.triplet_margin_loss(*leaves, margin=2.0, p=p, swap=swap,
                                                     reduction=reduction)
        module = lib.nn.TripletMarginLoss(margin=2.0, p=p, swap=swap, reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), module(*leaves)]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("distance", [None, "cosine"])
def test_triplet_margin_with_distance_loss(reduction: str, distance: str | None) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data((4, 3), 1), _data((4, 3), 2), _data((4, 3), 3))
        function = None if distance is None else (
            lambda a, b: 1.0 - lib.nn.functional.cosine_similarity(a, b))
        loss = lib.nn.functional.triplet_margin_with_distance_loss(
            *leaves, distance_function=function, margin=1.5, swap=True, reduction=reduction)
        module = lib.nn.TripletMarginWithDistanceLoss(distance_function=function,
                                                      reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), module(*leaves)]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize(("shapes", "p", "keepdim"), [
    (((4, 3), (4, 3)), 2.0, False), (((4, 3), (3,)), 1.0, True), (((5,), (5,)), 3.0, False),
    (((2, 4, 3), (4, 3)), 0.5, False),
])
def test_pairwise_distance(shapes: tuple, p: float, keepdim: bool) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data(shapes[0], 1), _data(shapes[1], 2))
        distance = lib.nn.functional.pairwise_distance(*leaves, p, 1e-3, keepdim)
        module = lib.nn.PairwiseDistance(p, keepdim=keepdim)
        return [*_run(lib, distance, leaves), module(*leaves), repr(module)]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize(("rows", "p"), [(4, 2.0), (5, 1.0), (3, 3.0), (1, 2.0), (6, 0.0)])
def test_pdist(rows: int, p: float) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data((rows, 3), 1))
        distances = lib.nn.functional.pdist(*leaves, p)
        if distances.numel():
            distances.pow(2).sum().backward()
        return [distances, leaves[0].grad]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("log_input", "full"), [(True, False), (False, True), (True, True)])
def test_poisson_nll_loss(reduction: str, log_input: bool, full: bool) -> None:
    target = np.array([[0.0, 1.0, 2.0, 5.0], [3.0, 0.5, 1.5, 8.0]])

    def program(lib: Any) -> list:
        data = _data((2, 4), 1)
        leaves = _leaves(lib, data if log_input else np.abs(data) + 0.1)
        loss = lib.nn.functional.poisson_nll_loss(*leaves, lib.tensor(target), log_input, full,
                                                  reduction=reduction)
        module = lib.nn.PoissonNLLLoss(log_input, full, reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), module(*leaves, lib.tensor(target))]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1), "float"])
def test_gaussian_nll_loss(reduction: str, var_shape: Any) -> None:
    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data((4, 3), 1), _data((4, 3), 2))
        if var_shape == "float":
            var = 0.5
        else:
            var = lib.tensor(np.abs(_data(var_shape, 3)) + 1e-7, requires_grad=True)
        loss = lib.nn.functional.gaussian_nll_loss(*leaves, var, full=True, reduction=reduction)
        module = lib.nn.GaussianNLLLoss(reduction=reduction, eps=1e-3)
        out = _run(lib, loss, leaves)
        return [*out, None if var_shape == "float" else var.grad, repr(module),
                module(*leaves, var)]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("p", "weighted", "batched"), [(1, False, True), (2, True, True),
                                                        (1, True, False)])
def test_multi_margin_loss(reduction: str, p: int, weighted: bool, batched: bool) -> None:
    shape, target = ((4, 5), np.array([0, 3, 4, 1])) if batched else ((5,), np.array(2))

    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data(shape, 1))
        weight = lib.tensor([0.5, 1.0, 2.0, 1.5, 0.2], dtype=lib.float64) if weighted else None
        loss = lib.nn.functional.multi_margin_loss(*leaves, lib.tensor(target), p, 0.8, weight,
                                                   reduction=reduction)
        module = lib.nn.MultiMarginLoss(p, weight=weight, reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), list(module.state_dict()),
                module(*leaves, lib.tensor(target))]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("batched", [True, False])
def test_multilabel_margin_loss(reduction: str, batched: bool) -> None:
    targets = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, 1, -1, 2]])
    shape, target = ((3, 4), targets) if batched else ((4,), targets[0])

    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data(shape, 1))
        loss = lib.nn.functional.multilabel_margin_loss(*leaves, lib.tensor(target),
                                                        reduction=reduction)
        module = lib.nn.MultiLabelMarginLoss(reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), module(*leaves, lib.tensor(target))]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [True, False])
def test_multilabel_soft_margin_loss(reduction: str, weighted: bool) -> None:
    target = (np.random.default_rng(4).random((3, 4)) < 0.5).astype("float64")

    def program(lib: Any) -> list:
        leaves = _leaves(lib, _data((3, 4), 1))
        weight = lib.tensor([0.5, 1.0, 2.0, 1.5], dtype=lib.float64) if weighted else None
        loss = lib.nn.functional.multilabel_soft_margin_loss(*leaves, lib.tensor(target),
                                                             weight, reduction=reduction)
        module = lib.nn.MultiLabelSoftMarginLoss(weight, reduction=reduction)
        return [*_run(lib, loss, leaves), repr(module), list(module.state_dict()),
                module(*leaves, lib.tensor(target))]

    close(program, 1e-10, 1e-12)


def test_legacy_flags_set_the_reduction_with_torch_s_warning() -> None:
    def program(lib: Any) -> list:
        modules = [lib.nn.MarginRankingLoss(size_average=False),
                   lib.nn.HingeEmbeddingLoss(reduce=False),
                   lib.nn.MultiMarginLoss(size_average=True, reduce=True),
                   lib.nn.MultiLabelSoftMarginLoss(reduce=False),
                   lib.nn.PoissonNLLLoss(size_average=False)]
        value = lib.nn.functional.hinge_embedding_loss(lib.ones(3), lib.ones(3),
                                                       size_average=False)
        return [m.reduction for m in modules] + [value.item()]

    same(program)


LOSS_ERRORS = [
    "F.margin_ranking_loss(lib.ones(3), lib.ones(3, 1), lib.ones(3))",
    "F.margin_ranking_loss(lib.ones(3), lib.ones(3), lib.ones(3), reduction='avg')",
    "F.cosine_embedding_loss(lib.ones(3, 2), lib.ones(3, 2), lib.ones(3, 1))",
    "F.cosine_embedding_loss(lib.ones(3), lib.ones(3), lib.ones(3))",
    "F.cosine_embedding_loss(lib.ones(3, 2), lib.ones(3, 2), lib.ones(()))",
    "F.triplet_margin_loss(lib.ones(3, 2), lib.ones(3, 2), lib.ones(3))",
    "F.triplet_margin_loss(lib.ones(3, 2), lib.ones(3, 2), lib.ones(3, 2), margin=0)",
    "F.triplet_margin_with_distance_loss(lib.ones(2), lib.ones(2), lib.ones(2), margin=-1)",
    "F.triplet_margin_with_distance_loss(lib.ones(2), lib.ones(2), lib.ones(2),"
    " reduction='max')",
    "F.triplet_margin_with_distance_loss(lib.ones(2), lib.ones(2, 1), lib.ones(2))",
    "lib.nn.TripletMarginLoss(margin=0)",
    "lib.nn.TripletMarginWithDistanceLoss(margin=-0.5)",
    "F.poisson_nll_loss(lib.ones(2), lib.ones(2), reduction='avg')",
    "F.gaussian_nll_loss(lib.ones(2), lib.ones(2), -1.0)",
    "F.gaussian_nll_loss(lib.ones(2), lib.ones(2), -lib.ones(2))",
    "F.gaussian_nll_loss(lib.ones(4, 3), lib.ones(4, 3), lib.ones(2, 3))",
    "F.gaussian_nll_loss(lib.ones(4, 3), lib.ones(4, 3), lib.ones(4, 3), reduction='avg')",
    "F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), p=3)",
    "F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), weight=lib.ones(3, 1))",
    "F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1, 2]))",
    "F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), weight=lib.ones(2))",
    "F.multi_margin_loss(lib.ones(2, 0), lib.tensor([0, 1]))",
    "F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 3]))",
    "lib.nn.MultiMarginLoss(p=0)",
    "F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0.0, 1.0]))",
    "F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([[0.0, 1.0, -1.0], [0, 1, 2]]))",
    "lib.nn.MultiMarginLoss(weight=lib.ones(2, 2))",
    "F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]))",
    "F.multilabel_margin_loss(lib.ones(3), lib.tensor([[0, 1, 2]]))",
    "F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([[0, 5, -1], [0, 1, 2]]))",
    "F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([[0, -2, -1], [0, 1, 2]]))",
    "F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([[0, -1, 7], [0, 1, 2]]))",
    "F.multi_margin_loss(lib.ones(3), lib.tensor([0, 1]))",
    "F.multi_margin_loss(lib.ones(3), lib.tensor([1]), reduction='none')",
    "F.multilabel_soft_margin_loss(lib.ones(2, 3), lib.ones(2, 3), reduction='avg')",
    "F.pdist(lib.ones(3))",
    "F.pdist(lib.ones(3, 2), -1.0)",
    "F.pdist(lib.ones(3, 2, dtype=lib.int64))",
]


@pytest.mark.parametrize("call", LOSS_ERRORS)
def test_loss_errors_are_torch_s(call: str) -> None:
    def program(lib: Any) -> Any:
        F = lib.nn.functional  # noqa: F841 - read by eval
        result = eval(call)
        return repr(result) if isinstance(result, lib.nn.Module) else result.tolist()

    same(program)


def test_nll_loss_2d_is_nll_loss_under_its_deprecated_name() -> None:
    def build(lib: Any) -> tuple:
        legacy = lib.nn.NLLLoss2d(size_average=False)
        module = lib.nn.NLLLoss2d(weight=lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64),
                                  ignore_index=1)
        return legacy, module

    def construction(lib: Any) -> list:
        legacy, module = build(lib)
        return [repr(legacy), legacy.reduction, legacy.ignore_index, repr(module),
                list(module.state_dict())]

    def values(lib: Any) -> list:
        legacy, module = build(lib)
        scores = lib.tensor(_data((2, 3, 2, 2), 1), requires_grad=True)
        target = lib.tensor([[[0, 1], [2, 2]], [[1, 0], [0, 2]]])
        loss = module(scores.log_softmax(1), target)
        loss.backward()
        return [loss, scores.grad, legacy(scores.log_softmax(1), target)]

    same(construction)
    close(values, 1e-10, 1e-12)


@pytest.mark.parametrize("name, args", [
    ("L1Loss", (False,)), ("MSELoss", (None, False)), ("SmoothL1Loss", (False, True)),
    ("NLLLoss", (None, False, -100)), ("CrossEntropyLoss", (None, True, 1, False)),
    ("BCELoss", (None, False)), ("BCEWithLogitsLoss", (None, None, False)),
    ("KLDivLoss", (False,)),
])
def test_the_legacy_reduction_flags_by_position(name: str, args: tuple) -> None:
    """torch's loss modules take size_average and reduce before reduction (deprecated, with
    a warning), by position as well as by keyword."""
    def program(lib: Any) -> Any:
        return getattr(lib.nn, name)(*args).reduction

    same(program)
