"""nn.utils' fusion, skip_init, stateless.functional_call, clip_grad_norm and prune against
torch: each program is written once and run with `torch` and with `runtime`
(tests/oracle.py); values after the same seed, state-dict keys, warnings and errors."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - torch imports it only on demand
import torch.nn.utils.stateless  # noqa: F401

from tests.oracle import close, same


def rounded(tensor: Any) -> Any:
    """A tensor's values for tests.oracle.close, which compares them to within rounding."""
    return tensor.detach()


# -- fusion -----------------------------------------------------------------------------------

def _trained_bn(lib: Any, bn: Any, shape: tuple) -> Any:
    """A batch norm with running statistics of its own, and affine parameters not 1 and 0."""
    for _ in range(3):
        bn(lib.randn(shape) * 2 + 1)
    with lib.no_grad():
        if bn.weight is not None:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-1, 1)
    return bn.eval()


@pytest.mark.parametrize("bias, affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval(bias: bool, affine: bool) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(2, 3, 3, bias=bias).eval()
        bn = _trained_bn(lib, lib.nn.BatchNorm2d(3, affine=affine), (4, 3, 5, 5))
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn)
        x = lib.randn(2, 2, 6, 6)
        return [repr(fused), list(fused.state_dict()), fused is conv, rounded(fused(x)),
                rounded(bn(conv(x))), rounded(fused.weight), rounded(fused.bias),
                fused.weight.requires_grad, fused.bias.requires_grad]
    close(program)


def test_fuse_conv_transpose_bn_weights() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        conv = lib.nn.ConvTranspose2d(3, 2, 2).eval()
        bn = _trained_bn(lib, lib.nn.BatchNorm2d(2), (4, 2, 3, 3))
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=True)
        x = lib.randn(1, 3, 3, 3)
        return [rounded(fused(x)), rounded(bn(conv(x)))]
    close(program)


def test_fuse_linear_bn_eval() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        linear = lib.nn.Linear(4, 3).eval()
        bn = _trained_bn(lib, lib.nn.BatchNorm1d(3), (8, 3))
        fused = lib.nn.utils.fuse_linear_bn_eval(linear, bn)
        x = lib.randn(5, 4)
        weights = lib.nn.utils.fuse_linear_bn_weights(linear.weight, None, bn.running_mean,
                                                      bn.running_var, bn.eps, bn.weight, bn.bias)
        return [rounded(fused(x)), rounded(bn(linear(x))), [rounded(w) for w in weights],
                type(weights[0]).__name__]
    close(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv1d(2, 3, 1), lib.nn.BatchNorm1d(3)),
    lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(),
                                                 lib.nn.BatchNorm1d(4).eval()),
    lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv1d(2, 3, 1).eval(), lib.nn.BatchNorm1d(3, track_running_stats=False).eval()),
])
def test_fusion_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


# -- skip_init, stateless, clip_grad_norm -----------------------------------------------------

def test_skip_init_draws_nothing() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.skip_init(lib.nn.Linear, 4, 3, bias=True)
        return [repr(module), list(module.state_dict()), module.weight.shape == (3, 4),
                module.weight.requires_grad, lib.rand(3).tolist()]
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.skip_init(int, 3),
    lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU),
])
def test_skip_init_errors(call: Any) -> None:
    outcome = same(call)[0]
    assert outcome[:2] == ("raises", "RuntimeError")


def test_stateless_functional_call() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.Linear(3, 2)
        weight = lib.ones(2, 3, requires_grad=True)
        y = lib.nn.utils.stateless.functional_call(module, {"weight": weight},
                                                   (lib.ones(1, 3),))
        y.sum().backward()
        return [rounded(y), weight.grad, rounded(module.weight)]
    close(program)
    same(lambda lib: program(lib)[1].tolist())  # with its FutureWarning


def test_clip_grad_norm_deprecated() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.Linear(3, 2)
        module(lib.randn(4, 3)).pow(2).sum().backward()
        total = lib.nn.utils.clip_grad_norm(module.parameters(), 0.5)
        return [rounded(total), rounded(module.weight.grad)]
    close(program)
    same(lambda lib: len(program(lib)))  # with its FutureWarning


# -- prune ------------------------------------------------------------------------------------

def test_prune_combined_methods() -> None:
    def program(lib: Any) -> list:
        prune = lib.nn.utils.prune
        lib.manual_seed(0)
        module = lib.nn.Linear(4, 3)
        prune.random_unstructured(module, "weight", 0.3)
        first = module.weight_mask.tolist()
        prune.l1_unstructured(module, "weight", 2)
        prune.ln_structured(module, "weight", 1, 2, 0)
        prune.random_structured(module, "weight", 1, 1)
        prune.l1_unstructured(module, "bias", 0.34)
        y = module(lib.randn(2, 4))
        y.sum().backward()
        hook = next(iter(module._forward_pre_hooks.values()))
        state = [first, module.weight_mask.tolist(), module.bias_mask.tolist(),
                 list(module.state_dict()), [n for n, _ in module.named_parameters()],
                 prune.is_pruned(module), type(hook).__name__, len(hook), rounded(y),
                 rounded(module.weight_orig.grad)]
        prune.remove(module, "weight")
        return [*state, list(module.state_dict()), rounded(module.weight),
                prune.is_pruned(lib.nn.Sequential(lib.nn.Linear(1, 1))),
                prune.is_pruned(lib.nn.Sequential(module))]
    close(program)


@pytest.mark.parametrize("amount", [0.5, 3, 0.0])
def test_prune_global_and_custom(amount: Any) -> None:
    def program(lib: Any) -> list:
        prune = lib.nn.utils.prune
        lib.manual_seed(1)
        first, second = lib.nn.Linear(3, 2), lib.nn.Linear(2, 2)
        prune.global_unstructured([(first, "weight"), (second, "weight")],
                                  prune.L1Unstructured, amount=amount)
        prune.custom_from_mask(second, "bias", lib.tensor([0.0, 1.0]))
        prune.identity(first, "bias")
        return [first.weight_mask.tolist(), second.weight_mask.tolist(),
                second.bias.tolist(), first.bias_mask.tolist(),
                rounded(prune.RandomUnstructured(2).prune(lib.arange(6.0)))]
    close(program)


def test_prune_importance_scores() -> None:
    def program(lib: Any) -> list:
        prune = lib.nn.utils.prune
        lib.manual_seed(0)
        module = lib.nn.Conv2d(2, 4, 3)
        scores = lib.arange(72.0).reshape(4, 2, 3, 3).flip(0)
        prune.ln_structured(module, "weight", 0.5, float("inf"), 0, importance_scores=scores)
        prune.l1_unstructured(module, "bias", 1, importance_scores=lib.tensor([3.0, 1, 2, 4]))
        return [module.weight_mask.sum((1, 2, 3)).tolist(), module.bias_mask.tolist()]
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 1.5),
    lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", -1),
    lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", "a"),
    lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 5),
    lambda lib: lib.nn.utils.prune.random_structured(lib.nn.Linear(2, 2), "bias", 1, 0),
    lambda lib: lib.nn.utils.prune.ln_structured(lib.nn.Linear(2, 2), "weight", 1, 2, 3),
    lambda lib: lib.nn.utils.prune.remove(lib.nn.Linear(2, 2), "weight"),
])
def test_prune_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def test_global_prune_needs_unstructured_method() -> None:
    def program(lib: Any) -> str:
        try:
            lib.nn.utils.prune.global_unstructured(
                [(lib.nn.Linear(2, 2), "weight")], lib.nn.utils.prune.RandomStructured, amount=1)
        except TypeError as error:  # the message names the class, module path and all
            return str(error).replace("runtime.nn.utils.prune", "torch.nn.utils.prune")
        return "no error"
    assert same(program)[0][1].startswith('Only "unstructured" PRUNING_TYPE')


def test_failed_prune_leaves_module_unchanged() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.Linear(2, 2)
        try:
            lib.nn.utils.prune.l1_unstructured(module, "weight", 5)
        except ValueError:
            pass
        return [list(module.state_dict()), lib.nn.utils.prune.is_pruned(module)]
    same(program)


def test_torch_has_these_names() -> None:
    for name in ("fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
                 "fuse_linear_bn_weights", "skip_init", "clip_grad_norm", "weight_norm",
                 "remove_weight_norm", "spectral_norm", "remove_spectral_norm"):
        assert hasattr(torch.nn.utils, name)
