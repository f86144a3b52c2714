"""runtime.func against torch.func: each case runs the same code with both libraries (the
`lib` argument) and compares every tensor it returns, and whether it requires grad."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime as rt


def _leaves(value):
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [(key, leaf) for key, item in value.items() for leaf in _leaves(item)]
    return [value]


def _compare(ours, theirs, tol=1e-5):
    ours_leaves, theirs_leaves = _leaves(ours), _leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves, strict=True):
        if isinstance(a, tuple):  # a dict entry
            assert a[0] == b[0]
            a, b = a[1], b[1]
        if isinstance(b, torch.Tensor):
            assert isinstance(a, rt.Tensor)
            assert tuple(a.shape) == tuple(b.shape)
            assert a.requires_grad == b.requires_grad
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol,
                                       atol=tol)
        else:
            assert a == b


def _both(case):
    """Run case(lib) with torch and with gradgen from the same seed; compare results."""
    torch.manual_seed(0)
    theirs = case(torch)
    rt.manual_seed(0)
    ours = case(rt)
    _compare(ours, theirs)
    return ours


def _mlp_loss(lib, params, x, y):
    h = lib.tanh(x @ params["w1"] + params["b1"])
    return ((h @ params["w2"]).squeeze(-1) - y).pow(2).mean()


def _mlp_params(lib):
    return {"w1": lib.randn(3, 5), "b1": lib.randn(5), "w2": lib.randn(5, 1)}


CASES = {
    "grad_sin_sum": lambda lib: lib.func.grad(lambda x: x.sin().sum())(lib.randn(4)),
    "grad_of_grad": lambda lib: lib.func.grad(lib.func.grad(lib.sin))(lib.randn([])),
    "grad_argnums_tuple": lambda lib: lib.func.grad(lambda x, y: (x * y.exp()).sum(),
                                                    argnums=(0, 1))(lib.randn(3), lib.randn(3)),
    "grad_negative_argnum": lambda lib: lib.func.grad(lambda x, y: (x * y.exp()).sum(),
                                                      argnums=-1)(lib.randn(3), lib.randn(3)),
    "grad_has_aux": lambda lib: lib.func.grad(lambda x: (x.sin().sum(), x.cos()),
                                              has_aux=True)(lib.randn(3)),
    "grad_and_value": lambda lib: lib.func.grad_and_value(lambda x: x.pow(3).sum())(
        lib.randn(3)),
    "grad_unused_input": lambda lib: lib.func.grad(lambda x, y: y.sum())(lib.randn(2),
                                                                         lib.randn(2)),
    "grad_mlp_dict": lambda lib: lib.func.grad(lambda p, x, y: _mlp_loss(lib, p, x, y))(
        _mlp_params(lib), lib.randn(8, 3), lib.randn(8)),
    "grad_input_requires_grad": lambda lib: lib.func.grad(lambda x: x.sin().sum())(
        lib.randn(3, requires_grad=True)),
    "grad_closure_requires_grad": lambda lib: (lambda w: lib.func.grad(
        lambda x: (x * w).sin().sum())(lib.randn(3)))(lib.randn(3, requires_grad=True)),
    "aux_is_the_users_leaf": lambda lib: (lambda w: lib.func.grad(
        lambda x: ((x * w).sum(), w), has_aux=True)(lib.randn(3)))(
        lib.randn(3, requires_grad=True)),
    "jacrev_identity": lambda lib: lib.func.jacrev(lambda x: x)(lib.randn(3)),
    "vjp": lambda lib: (lambda out_fn: (out_fn[0], out_fn[1](lib.ones(3))))(
        lib.func.vjp(lambda x: x.sin(), lib.randn(3))),
    "vjp_two_primals_tuple_out": lambda lib: (lambda r: (r[0], r[1]((lib.ones(2), lib.ones(2)))))(
        lib.func.vjp(lambda x, y: (x * y, x + y), lib.randn(2), lib.randn(2))),
    "vjp_has_aux": lambda lib: (lambda r: (r[0], r[1](lib.ones(3)), r[2]))(
        lib.func.vjp(lambda x: (x.exp(), x.sum()), lib.randn(3), has_aux=True)),
    "jvp": lambda lib: lib.func.jvp(lib.sin, (lib.randn(5),), (lib.ones(5),)),
    "jvp_two_inputs": lambda lib: lib.func.jvp(lambda x, y: x * y.tanh(),
                                               (lib.randn(3), lib.randn(3)),
                                               (lib.randn(3), lib.randn(3))),
    "jvp_has_aux": lambda lib: lib.func.jvp(lambda x: (x.exp(), x.sum()), (lib.randn(3),),
                                            (lib.ones(3),), has_aux=True),
    "jacrev": lambda lib: lib.func.jacrev(lib.sin)(lib.randn(4)),
    "jacfwd": lambda lib: lib.func.jacfwd(lib.sin)(lib.randn(4)),
    "jacrev_matrix": lambda lib: (lambda a: lib.func.jacrev(lambda x: a @ x.tanh())(
        lib.randn(3, 2)))(lib.randn(4, 3)),
    "jacfwd_matrix": lambda lib: (lambda a: lib.func.jacfwd(lambda x: a @ x.tanh())(
        lib.randn(3, 2)))(lib.randn(4, 3)),
    "jacrev_argnums": lambda lib: lib.func.jacrev(lambda x, y: x * y.sum(), argnums=(0, 1))(
        lib.randn(3), lib.randn(2)),
    "jacfwd_argnums": lambda lib: lib.func.jacfwd(lambda x, y: x * y.sum(), argnums=(0, 1))(
        lib.randn(3), lib.randn(2)),
    "jacrev_has_aux": lambda lib: lib.func.jacrev(lambda x: (x.sin(), x.cos()),
                                                  has_aux=True)(lib.randn(3)),
    "jacrev_tuple_output": lambda lib: lib.func.jacrev(lambda x: (x.sin(), x.sum()))(
        lib.randn(3)),
    "hessian": lambda lib: lib.func.hessian(lambda x: x.sin().sum())(lib.randn(3)),
    "hessian_mlp": lambda lib: lib.func.hessian(
        lambda w1: _mlp_loss(lib, {"w1": w1, "b1": lib.ones(5), "w2": lib.ones(5, 1)},
                             lib.ones(4, 3), lib.zeros(4)))(lib.randn(3, 5)),
    "jacrev_jacrev": lambda lib: lib.func.jacrev(lib.func.jacrev(lambda x: x.pow(3).sum()))(
        lib.randn(3)),
    "jacrev_jacfwd": lambda lib: lib.func.jacrev(lib.func.jacfwd(lambda x: x.pow(3).sum()))(
        lib.randn(3)),
    "jacfwd_jacrev": lambda lib: lib.func.jacfwd(lib.func.jacrev(lambda x: x.sin() * x))(
        lib.randn(3)),
    "grad_of_jvp": lambda lib: lib.func.grad(
        lambda x: lib.func.jvp(lib.sin, (x,), (lib.ones(3),))[1].sum())(lib.randn(3)),
    "vmap_dot": lambda lib: lib.func.vmap(lib.dot)(lib.randn(4, 3), lib.randn(4, 3)),
    "vmap_in_dims": lambda lib: lib.func.vmap(lambda x, y: x * y, in_dims=(1, None))(
        lib.randn(2, 3), lib.randn(2)),
    "vmap_out_dims": lambda lib: lib.func.vmap(lambda x: (x.sin(), x.sum()), out_dims=(1, 0))(
        lib.randn(4, 3)),
    "vmap_nested": lambda lib: lib.func.vmap(lib.func.vmap(lib.mul))(lib.randn(2, 3),
                                                                     lib.randn(2, 3)),
    "vmap_per_sample_grads": lambda lib: lib.func.vmap(
        lib.func.grad(lambda p, x, y: _mlp_loss(lib, p, x, y)), in_dims=(None, 0, 0))(
        _mlp_params(lib), lib.randn(6, 1, 3), lib.randn(6, 1)),
    "vmap_dict_input": lambda lib: lib.func.vmap(lambda d: d["a"] + d["b"])(
        {"a": lib.randn(3, 2), "b": lib.randn(3, 2)}),
    "vmap_same_randomness": lambda lib: (lib.func.vmap(
        lambda x: lib.nn.functional.dropout(x, 0.5), randomness="same")(lib.ones(3, 8)),
        lib.rand(2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_func(name):
    _both(CASES[name])


def test_grad_result_detached_from_the_transform():
    x = rt.randn(3)
    g = rt.func.grad(lambda x: x.sin().sum())(x)
    assert not g.requires_grad and g.grad_fn is None
    value = rt.func.grad_and_value(lambda x: x.sin().sum())(x)[1]
    assert not value.requires_grad


def test_grad_connects_to_the_users_graph():
    """A gradient with respect to an input that requires grad can itself be backpropagated,
    as torch.func's: here d/dx of sum(cos x) is -sin x."""
    for lib in (torch, rt):
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        lib.func.grad(lambda x: x.sin().sum())(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), -np.sin([0.1, 0.2, 0.3]), rtol=1e-6)


def test_vjp_fn_called_twice():
    def case(lib):
        out, fn = lib.func.vjp(lambda x: x.exp(), lib.randn(3))
        return fn(lib.ones(3)), fn(lib.full((3,), 2.0))
    _both(case)


def test_functional_call_matches_torch_and_restores():
    def case(lib):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
        before = [p.clone() for p in model.parameters()]
        params = {k: lib.zeros_like(v) + 0.5 for k, v in model.named_parameters()}
        x = lib.randn(2, 3)
        out = lib.func.functional_call(model, params, (x,))
        out_single_arg = lib.func.functional_call(model, params, x)
        grads = lib.func.grad(lambda p: lib.func.functional_call(model, p, x).sum())(params)
        assert all(lib.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
        assert all(isinstance(p, lib.nn.Parameter) for p in model.parameters())
        return out, out_single_arg, grads, model(x)
    _both(case)


def test_functional_call_tied_weights_and_strict():
    def case(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2))
        model[1].weight = model[0].weight
        x = lib.ones(1, 2)
        tied = lib.func.functional_call(model, {"0.weight": lib.eye(2)}, (x,))
        untied = lib.func.functional_call(model, {"0.weight": lib.eye(2)}, (x,),
                                          tie_weights=False)
        return tied, untied
    _both(case)
    for lib in (torch, rt):
        with pytest.raises(RuntimeError, match="Missing key"):
            lib.func.functional_call(lib.nn.Linear(2, 2), {"weight": lib.eye(2)},
                                     (lib.ones(2),), strict=True)


def test_stack_module_state_and_ensemble_vmap():
    """Model ensembling as torch's tutorial does it: the models' parameters stacked, and
    vmap over functional_call."""
    def case(lib):
        models = [lib.nn.Linear(3, 2) for _ in range(4)]
        params, buffers = lib.func.stack_module_state(models)
        assert all(p.is_leaf and p.requires_grad for p in params.values())

        def fmodel(params, buffers, x):
            return lib.func.functional_call(models[0], (params, buffers), (x,))

        x = lib.randn(5, 3)
        return params, buffers, lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    _both(case)


@pytest.mark.parametrize("models", [
    lambda lib: [],
    lambda lib: [lib.nn.Linear(2, 3), lib.nn.ReLU()],
    lambda lib: [lib.nn.Linear(2, 3), lib.nn.Linear(2, 3).eval()],
])
def test_stack_module_state_errors(models):
    _same_error(lambda lib: lib.func.stack_module_state(models(lib)))


def _same_error(call):
    outcomes = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        try:
            call(lib)
        except Exception as error:  # noqa: BLE001 - compared below
            outcomes.append((type(error).__name__, str(error)))
        else:
            outcomes.append(None)
    assert outcomes[0] is not None
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("call", [
    lambda lib: lib.func.grad(lambda x: x.sin())(lib.randn(3)),
    lambda lib: lib.func.grad(lambda x: 3.0)(lib.randn(3)),
    lambda lib: lib.func.grad(lambda x: (x.sum(), 1))(lib.randn(3)),
    lambda lib: lib.func.grad(lambda x: x.sum(), argnums=2)(lib.randn(3)),
    lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.randn(3)),
    lambda lib: lib.func.jvp(lib.sin, lib.randn(3), lib.ones(3)),
    lambda lib: lib.func.jvp(lib.sin, (lib.randn(3),), (lib.ones(2),)),
    lambda lib: lib.func.vmap(lambda x, y: x + y)(lib.randn(2, 3), lib.randn(3, 3)),
    lambda lib: lib.func.vmap(lambda x: 1.0)(lib.randn(2, 3)),
    lambda lib: lib.func.vmap(lambda x: x, in_dims=2)(lib.randn(2, 3)),
    lambda lib: lib.func.vmap(lambda x: x)(5.0),
    lambda lib: lib.func.vmap(lambda x: x + lib.rand(3))(lib.randn(2, 3)),
    lambda lib: lib.func.vmap(lambda x: x, randomness="sometimes")(lib.randn(2, 3)),
])
def test_errors_as_torch(call):
    _same_error(call)


def test_vmap_random_error_draws_nothing():
    rt.manual_seed(3)
    x = rt.randn(2, 3)
    state = rt.get_rng_state()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        rt.func.vmap(lambda x: x + rt.rand(3))(x)
    assert rt.equal(rt.get_rng_state(), state)


def test_vmap_different_randomness_is_refused_when_drawing():
    with pytest.raises(NotImplementedError, match="not in gradgen"):
        rt.func.vmap(lambda x: x + rt.rand(3), randomness="different")(rt.randn(2, 3))
    out = rt.func.vmap(lambda x: x * 2, randomness="different")(rt.ones(2, 3))
    assert out.tolist() == [[2.0] * 3] * 2


def test_torch_func_import_under_the_hook(tmp_path):
    """`import torch.func` and `from torch.func import ...` give runtime.func under
    `python -m runtime`; a name gradgen lacks says so."""
    program = tmp_path / "prog.py"
    program.write_text(
        "import torch.func\n"
        "from torch.func import grad\n"
        "import runtime\n"
        "print(torch.func is runtime.func, grad is runtime.func.grad)\n"
        "try:\n"
        "    torch.func.not_a_transform\n"
        "except AttributeError as error:\n"
        "    print(error)\n")
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-m", "runtime", str(program)], cwd=root,
                            capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.splitlines() == [
        "True True", "module 'torch.func' has no attribute 'not_a_transform': "
        "torch.func.not_a_transform is not in gradgen (yet)"]
