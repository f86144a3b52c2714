"""runtime.nn against torch.nn: the Module API, reprs, layers, losses and init."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest
import torch

import runtime as rt


def _copy_weights(source: torch.nn.Module, target: rt.nn.Module) -> None:
    target.load_state_dict({k: rt.tensor(v.numpy()) for k, v in source.state_dict().items()})


def _net(lib):
    """A model with nesting, a Sequential, a ModuleList, a shared module and a buffer."""

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = lib.nn.Embedding(10, 4)
            self.blocks = lib.nn.ModuleList([lib.nn.Linear(4, 4) for _ in range(2)])
            self.head = lib.nn.Sequential(lib.nn.LayerNorm(4), lib.nn.ReLU(),
                                          lib.nn.Linear(4, 3, bias=False))
            self.shared = self.blocks[0]
            self.register_buffer("scale", lib.ones(3))
            self.register_buffer("cache", lib.zeros(2), persistent=False)

        def forward(self, ids):
            h = self.embed(ids)
            for block in self.blocks:
                h = block(h)
            return self.head(h) * self.scale

    return Net()


# -- the module tree ----------------------------------------------------------------------

def test_named_parameters_like_torch():
    ours, theirs = _net(rt), _net(torch)
    names = [(n, tuple(p.shape)) for n, p in ours.named_parameters()]
    assert names == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters(prefix="net", recurse=True)] == \
        [n for n, _ in theirs.named_parameters(prefix="net", recurse=True)]
    assert list(ours.named_parameters(recurse=False)) == []
    assert [n for n, _ in ours.blocks.named_parameters(recurse=False)] == []
    assert [n for n, _ in ours.blocks[0].named_parameters(recurse=False)] == ["weight", "bias"]
    assert all(isinstance(p, rt.nn.Parameter) for p in ours.parameters())


def test_named_modules_children_and_buffers_like_torch():
    ours, theirs = _net(rt), _net(torch)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert len(list(ours.children())) == len(list(theirs.children()))
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert len(list(ours.buffers())) == 2


def test_state_dict_keys_and_round_trip():
    ours, theirs = _net(rt), _net(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "cache" not in ours.state_dict()
    _copy_weights(theirs, ours)
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    # state_dict values are detached views: no grad, same storage.
    weight = ours.state_dict()["blocks.0.weight"]
    assert not weight.requires_grad
    other = _net(rt)
    result = other.load_state_dict(ours.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, p), (_, q) in zip(ours.named_parameters(), other.named_parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=name)


def test_load_state_dict_bumps_version_and_keeps_parameters():
    model = rt.nn.Linear(2, 2)
    weight = model.weight
    version = weight._version
    model.load_state_dict({"weight": rt.ones(2, 2), "bias": rt.zeros(2)})
    assert model.weight is weight and weight._version > version
    assert weight.requires_grad and weight.is_leaf
    assert weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def _load_error(lib, state):
    model = _net(lib)
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    return str(error.value)


@pytest.mark.parametrize("case", ["missing", "unexpected", "both", "size"])
def test_load_state_dict_errors_like_torch(case):
    def state(lib):
        full = _net(lib).state_dict()
        if case in ("missing", "both"):
            del full["head.0.bias"], full["scale"]
        if case in ("unexpected", "both"):
            full["head.9.weight"] = lib.zeros(1)
            full["extra"] = lib.zeros(1)
        if case == "size":
            full["blocks.1.weight"] = lib.zeros(4, 5)
        return full

    assert _load_error(rt, state(rt)) == _load_error(torch, state(torch))


def test_load_state_dict_not_strict():
    model = rt.nn.Linear(2, 2)
    result = model.load_state_dict({"weight": rt.ones(2, 2), "junk": rt.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["junk"]
    theirs = torch.nn.Linear(2, 2).load_state_dict(
        {"weight": torch.ones(2, 2), "junk": torch.ones(1)}, strict=False)
    assert repr(result) == repr(theirs)


def test_zero_grad():
    model = rt.nn.Linear(3, 2)
    model(rt.ones(4, 3)).sum().backward()
    grad = model.weight.grad
    model.zero_grad(set_to_none=False)
    assert model.weight.grad is grad and not grad.detach().numpy().any()
    model.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None


def test_setattr_registers_and_rejects_like_torch():
    for lib in (rt, torch):
        model = lib.nn.Module()
        model.w = lib.nn.Parameter(lib.zeros(2))
        model.sub = lib.nn.Linear(1, 1)
        model.plain = lib.zeros(1)
        assert [n for n, _ in model.named_parameters()] == ["w", "sub.weight", "sub.bias"]
        assert [n for n, _ in model.named_children()] == ["sub"]
        model.w = None
        assert [n for n, _ in model.named_parameters()] == ["sub.weight", "sub.bias"]
    errors = []
    for lib in (rt, torch):
        model = lib.nn.Linear(1, 1)
        with pytest.raises(TypeError) as error:
            model.weight = lib.zeros(1, 1)
        errors.append(str(error.value))
        with pytest.raises(AttributeError) as error:
            model.missing  # noqa: B018
        errors.append(str(error.value))
        with pytest.raises(KeyError) as error:
            model.register_buffer("weight", lib.zeros(1))
        errors.append(str(error.value))
    assert errors[:3] == errors[3:]


def test_train_eval_and_dropout():
    model = rt.nn.Sequential(rt.nn.Linear(4, 4), rt.nn.Dropout(0.5))
    assert model.training and model[1].training
    assert model.eval() is model
    assert not model.training and not model[1].training
    x = rt.ones(200, 4)
    np.testing.assert_array_equal(model[1](x).numpy(), x.numpy())
    model.train()
    assert model[1].training
    out = model[1](x).detach().numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert 0.3 < (out == 0).mean() < 0.7
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("yes")


def test_apply_requires_grad_and_dtype_conversion():
    model = _net(rt)
    seen, expected = [], []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    _net(torch).apply(lambda m: expected.append(type(m).__name__))
    assert seen == expected
    parameters = list(model.parameters())
    assert model.double() is model
    assert all(p.dtype is rt.float64 for p in model.parameters())
    assert list(model.parameters()) == parameters  # the same Parameter objects
    assert model.scale.dtype is rt.float64
    model.float()
    assert all(p.dtype is rt.float32 for p in model.parameters())
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())


def test_parameter():
    data = rt.tensor([1.0, 2.0])
    parameter = rt.nn.Parameter(data)
    assert isinstance(parameter, rt.Tensor) and parameter.is_leaf and parameter.requires_grad
    assert repr(parameter) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    frozen = rt.nn.Parameter(data, requires_grad=False)
    assert repr(frozen) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0]),
                                                   requires_grad=False))
    result = parameter * 2
    assert type(result) is rt.Tensor and result.grad_fn.name() == "MulBackward0"


# -- containers ---------------------------------------------------------------------------

def test_sequential_indexing():
    layers = [rt.nn.Linear(2, 3), rt.nn.ReLU(), rt.nn.Linear(3, 1)]
    model = rt.nn.Sequential(*layers)
    assert len(model) == 3 and list(model) == layers
    assert model[0] is layers[0] and model[-1] is layers[2]
    assert isinstance(model[1:], rt.nn.Sequential) and list(model[1:]) == layers[1:]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        model[3]
    named = rt.nn.Sequential(OrderedDict([("fc", layers[0]), ("act", layers[1])]))
    assert [n for n, _ in named.named_children()] == ["fc", "act"]
    del model[0]
    assert [n for n, _ in model.named_children()] == ["0", "1"]


def test_module_list():
    blocks = rt.nn.ModuleList([rt.nn.Linear(2, 2)])
    blocks.append(rt.nn.ReLU()).extend([rt.nn.Tanh()])
    assert len(blocks) == 3 and isinstance(blocks[-1], rt.nn.Tanh)
    assert [n for n, _ in blocks.named_parameters()] == ["0.weight", "0.bias"]
    assert len(blocks[:2]) == 2


# -- reprs --------------------------------------------------------------------------------

def _layers(lib):
    return lib.nn.Sequential(
        lib.nn.Linear(1000, 100), lib.nn.Linear(3, 2, bias=False), lib.nn.ReLU(),
        lib.nn.Sigmoid(), lib.nn.Tanh(), lib.nn.GELU(), lib.nn.GELU(approximate="tanh"),
        lib.nn.Dropout(), lib.nn.Dropout(0.1), lib.nn.Embedding(10, 3),
        lib.nn.Embedding(10, 3, padding_idx=0), lib.nn.LayerNorm(4),
        lib.nn.LayerNorm([2, 3], eps=1e-6, elementwise_affine=False), lib.nn.Softmax(dim=1),
        lib.nn.LogSoftmax(-1), lib.nn.MSELoss(), lib.nn.CrossEntropyLoss(), lib.nn.L1Loss(),
        lib.nn.BCELoss(), lib.nn.BCEWithLogitsLoss(), lib.nn.Identity(),
        lib.nn.ModuleList([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2), lib.nn.ReLU()]),
        lib.nn.ModuleList(),
    )


def test_reprs_like_torch():
    assert repr(_layers(rt)) == repr(_layers(torch))
    assert repr(_net(rt)) == repr(_net(torch))


# -- layers against torch -----------------------------------------------------------------

def _compare_layer(make, inputs, dtype=np.float32, integer_input=False):
    """Forward values and the gradients of inputs and parameters against torch."""
    theirs, ours = make(torch), make(rt)
    _copy_weights(theirs, ours)
    t_in = torch.tensor(inputs) if integer_input else torch.tensor(inputs, requires_grad=True)
    r_in = rt.tensor(inputs) if integer_input else rt.tensor(inputs, requires_grad=True)
    t_out, r_out = theirs(t_in), ours(r_in)
    np.testing.assert_allclose(r_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    weights = np.random.default_rng(1).standard_normal(t_out.shape).astype(dtype)
    (t_out * torch.tensor(weights)).sum().backward()
    (r_out * rt.tensor(weights)).sum().backward()
    if not integer_input:
        np.testing.assert_allclose(r_in.grad.numpy(), t_in.grad.numpy(), rtol=1e-5, atol=1e-6)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(),
                                 strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


_X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)

LAYERS = {
    "Linear": lambda lib: lib.nn.Linear(4, 3),
    "Linear-nobias": lambda lib: lib.nn.Linear(4, 3, bias=False),
    "ReLU": lambda lib: lib.nn.ReLU(),
    "Sigmoid": lambda lib: lib.nn.Sigmoid(),
    "Tanh": lambda lib: lib.nn.Tanh(),
    "GELU": lambda lib: lib.nn.GELU(),
    "GELU-tanh": lambda lib: lib.nn.GELU(approximate="tanh"),
    "Softmax": lambda lib: lib.nn.Softmax(dim=1),
    "LogSoftmax": lambda lib: lib.nn.LogSoftmax(dim=-1),
    "LayerNorm": lambda lib: lib.nn.LayerNorm(4),
    "Dropout-eval": lambda lib: lib.nn.Dropout().eval(),
    "MLP": lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch(name):
    _compare_layer(LAYERS[name], _X)


def test_embedding_matches_torch():
    ids = np.array([[1, 2, 0], [4, 2, 9]])
    _compare_layer(lambda lib: lib.nn.Embedding(10, 3), ids, integer_input=True)
    _compare_layer(lambda lib: lib.nn.Embedding(10, 3, padding_idx=2), ids, integer_input=True)


def _loss_inputs(name):
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((6, 4)).astype(np.float32)
    if name in ("CrossEntropyLoss", "NLLLoss"):
        return scores, rng.integers(0, 4, 6)
    if name == "BCELoss":
        return 1 / (1 + np.exp(-scores)), rng.random((6, 4)).astype(np.float32)
    return scores, rng.standard_normal((6, 4)).astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss",
                                  "NLLLoss", "BCELoss", "BCEWithLogitsLoss"])
def test_loss_matches_torch(name, reduction):
    inputs, target = _loss_inputs(name)
    if name == "NLLLoss":
        inputs = inputs - np.log(np.exp(inputs).sum(1, keepdims=True))
    values = []
    for lib in (torch, rt):
        x = lib.tensor(inputs, requires_grad=True)
        loss = getattr(lib.nn, name)(reduction=reduction)(x, lib.tensor(target))
        loss.sum().backward()
        values.append((loss.detach().numpy(), x.grad.numpy()))
    (t_loss, t_grad), (r_loss, r_grad) = values
    np.testing.assert_allclose(r_loss, t_loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r_grad, t_grad, rtol=1e-5, atol=1e-6)


# -- init -----------------------------------------------------------------------------------

def test_default_initialisation_ranges():
    rt.manual_seed(0)
    linear = rt.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    weight, bias = linear.weight.detach().numpy(), linear.bias.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound
    assert np.abs(bias).max() <= bound
    assert abs(weight.std() - bound / math.sqrt(3)) < 0.01 * bound
    embedding = rt.nn.Embedding(1000, 50, padding_idx=3).weight.detach().numpy()
    assert abs(embedding.std() - 1) < 0.02 and not embedding[3].any()
    norm = rt.nn.LayerNorm(5)
    assert norm.weight.tolist() == [1.0] * 5 and norm.bias.tolist() == [0.0] * 5


@pytest.mark.parametrize(("nonlinearity", "param"), [
    ("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("selu", None), ("conv2d", None),
])
def test_calculate_gain_like_torch(nonlinearity, param):
    assert rt.nn.init.calculate_gain(nonlinearity, param) == \
        torch.nn.init.calculate_gain(nonlinearity, param)


def test_init_functions():
    rt.manual_seed(0)
    t = rt.nn.Parameter(rt.empty(200, 300))
    version = t._version
    assert rt.nn.init.uniform_(t, -2, 3) is t
    values = t.detach().numpy()
    assert values.min() >= -2 and values.max() <= 3 and abs(values.mean() - 0.5) < 0.05
    assert t._version > version and t.grad_fn is None and t.requires_grad
    rt.nn.init.normal_(t, 1.0, 0.5)
    assert abs(t.detach().numpy().mean() - 1) < 0.01 and abs(t.detach().numpy().std() - .5) < .01
    rt.nn.init.constant_(t, 0.25)
    assert (t.detach().numpy() == 0.25).all()
    rt.nn.init.zeros_(t)
    assert not t.detach().numpy().any()
    rt.nn.init.ones_(t)
    assert (t.detach().numpy() == 1).all()
    rt.nn.init.xavier_uniform_(t, gain=2.0)
    assert np.abs(t.detach().numpy()).max() <= 2.0 * math.sqrt(6 / 500)
    rt.nn.init.xavier_normal_(t)
    assert abs(t.detach().numpy().std() - math.sqrt(2 / 500)) < 0.01 * math.sqrt(2 / 500) * 5
    rt.nn.init.kaiming_uniform_(t, nonlinearity="relu")
    assert np.abs(t.detach().numpy()).max() <= math.sqrt(6 / 300)
    rt.nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(t.detach().numpy().std() - math.sqrt(2 / 200)) < 0.05 * math.sqrt(2 / 200)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        rt.nn.init.xavier_uniform_(rt.empty(3))


def test_forward_hooks_like_torch() -> None:
    """Forward pre-hooks may replace the arguments, forward hooks the output; handles
    remove them; both run in registration order."""
    def program(lib):
        seen = []
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]))
            layer.bias.copy_(lib.tensor([0.0, 1.0]))
        first = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        layer.register_forward_hook(lambda m, args, out: seen.append(args[0].tolist()))
        layer.register_forward_hook(lambda m, args, out: out + 10)
        x = lib.tensor([[1.0, 2.0, 3.0]])
        doubled = layer(x).tolist()
        first.remove()
        plain = layer(x).tolist()
        return doubled, plain, seen
    assert program(rt) == program(torch)
