"""runtime.nn's recurrent layers against torch.nn: RNN, LSTM, GRU and their cells.

Each layer is made after the same manual_seed in both libraries, so the parameters must
be torch's bit for bit; then outputs, final states and every gradient must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime as rt


def _pair(name: str, *args, seed: int = 0, **kwargs):
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    rt.manual_seed(seed)
    ours = getattr(rt.nn, name)(*args, **kwargs)
    return ours, theirs


def _ours(tensor: torch.Tensor, requires_grad: bool = False) -> rt.Tensor:
    return rt.tensor(tensor.detach().numpy(), requires_grad=requires_grad)


def _close(ours: rt.Tensor, theirs: torch.Tensor, tol: float = 1e-5) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def _flat(output) -> list:
    if isinstance(output, tuple):
        return [t for item in output for t in _flat(item)]
    return [output]


LAYERS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "batch_first": True}),
    ("LSTM", {"bidirectional": True, "num_layers": 2, "bias": False}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
]


@pytest.mark.parametrize(("name", "kwargs"), LAYERS)
def test_parameters_drawn_and_named_as_torch(name, kwargs):
    ours, theirs = _pair(name, 3, 4, **kwargs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for (_, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert repr(ours) == repr(theirs)
    assert ours._flat_weights_names == theirs._flat_weights_names


@pytest.mark.parametrize(("name", "kwargs"), LAYERS)
@pytest.mark.parametrize("with_state", [False, True])
def test_forward_and_backward_match_torch(name, kwargs, with_state):
    ours, theirs = _pair(name, 3, 4, **kwargs)
    x = torch.randn(5, 2, 3)
    x_t = x.clone().requires_grad_()
    x_o = _ours(x, requires_grad=True)
    args_t, args_o = [x_t], [x_o]
    if with_state:
        directions = 2 if kwargs.get("bidirectional") else 1
        layers = kwargs.get("num_layers", 1) * directions
        h_size = kwargs.get("proj_size") or 4
        batch = 5 if kwargs.get("batch_first") else 2
        h0 = torch.randn(layers, batch, h_size, requires_grad=True)
        h0_o = _ours(h0, requires_grad=True)
        if name == "LSTM":
            c0 = torch.randn(layers, batch, 4, requires_grad=True)
            c0_o = _ours(c0, requires_grad=True)
            args_t.append((h0, c0))
            args_o.append((h0_o, c0_o))
        else:
            args_t.append(h0)
            args_o.append(h0_o)
    out_t, out_o = _flat(theirs(*args_t)), _flat(ours(*args_o))
    for a, b in zip(out_o, out_t, strict=True):
        _close(a, b)
    weights = torch.randn(out_t[0].shape)
    (sum(t.sum() for t in out_t[1:]) + (out_t[0] * weights).sum()).backward()
    (sum(t.sum() for t in out_o[1:]) + (out_o[0] * _ours(weights)).sum()).backward()
    _close(x_o.grad, x_t.grad)
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert n and _close(a.grad, b.grad) is None
    if with_state:
        _close(h0_o.grad, h0.grad)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name):
    ours, theirs = _pair(name, 3, 4, num_layers=2)
    x = torch.randn(6, 3)
    for a, b in zip(_flat(ours(_ours(x))), _flat(theirs(x)), strict=True):
        _close(a, b)


def test_dropout_between_layers_draws_as_torch():
    ours, theirs = _pair("LSTM", 3, 4, num_layers=3, dropout=0.5)
    x = torch.randn(5, 2, 3)
    torch.manual_seed(7)
    rt.manual_seed(7)
    for a, b in zip(_flat(ours(_ours(x))), _flat(theirs(x)), strict=True):
        _close(a, b)
    ours.eval()
    theirs.eval()
    for a, b in zip(_flat(ours(_ours(x))), _flat(theirs(x)), strict=True):
        _close(a, b)


def test_rnn_positional_nonlinearity_and_repr():
    ours, theirs = _pair("RNN", 3, 4, 2, "relu", False, True, 0.25, True)
    assert repr(ours) == repr(theirs) == ("RNN(3, 4, num_layers=2, bias=False, "
                                          "batch_first=True, dropout=0.25, bidirectional=True)")
    assert ours.nonlinearity == theirs.nonlinearity == "relu"
    assert ours.mode == theirs.mode


@pytest.mark.parametrize(("name", "kwargs"), [
    ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
    ("LSTMCell", {}), ("GRUCell", {}), ("GRUCell", {"bias": False}),
])
def test_cells_match_torch(name, kwargs):
    ours, theirs = _pair(name, 3, 4, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    x = torch.randn(2, 3)
    h = torch.randn(2, 4)
    state_t = (h, torch.randn(2, 4)) if name == "LSTMCell" else h
    state_o = tuple(_ours(s) for s in state_t) if name == "LSTMCell" else _ours(h)
    for args_t, args_o in [((x,), (_ours(x),)), ((x, state_t), (_ours(x), state_o)),
                           ((x[0],), (_ours(x[0]),))]:
        out_t, out_o = _flat(theirs(*args_t)), _flat(ours(*args_o))
        for a, b in zip(out_o, out_t, strict=True):
            _close(a, b)
    sum(t.sum() for t in _flat(theirs(x))).backward()
    sum(t.sum() for t in _flat(ours(_ours(x)))).backward()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        _close(a.grad, b.grad)


def _same_error(make, call):
    """make(lib) builds, call(lib, module) runs: both libraries raise the same way."""
    outcomes = []
    for lib in (torch, rt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                module = make(lib)
                if call is not None:
                    call(lib, module)
            except Exception as error:  # noqa: BLE001 - compared below
                outcomes.append((type(error).__name__, str(error)))
            else:
                outcomes.append(None)
    assert outcomes[0] is not None
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda lib: lib.nn.RNN(3, 4, dropout=2),
    lambda lib: lib.nn.GRU(3, 0),
    lambda lib: lib.nn.GRU(3, 4, 0),
    lambda lib: lib.nn.LSTM(3, 4.0),
    lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
])
def test_constructor_errors(make):
    _same_error(make, None)


@pytest.mark.parametrize(("make", "call"), [
    (lambda lib: lib.nn.LSTM(3, 4), lambda lib, m: m(lib.zeros(2, 3, 5))),
    (lambda lib: lib.nn.LSTM(3, 4), lambda lib, m: m(lib.zeros(2, 3, 3, 1))),
    (lambda lib: lib.nn.LSTM(3, 4),
     lambda lib, m: m(lib.zeros(5, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4)))),
    (lambda lib: lib.nn.LSTM(3, 4),
     lambda lib, m: m(lib.zeros(5, 2, 3), (lib.zeros(1, 4), lib.zeros(1, 4)))),
    (lambda lib: lib.nn.LSTM(3, 4),
     lambda lib, m: m(lib.zeros(5, 2, 3), (lib.zeros(1, 3, 4), lib.zeros(1, 2, 4)))),
    (lambda lib: lib.nn.LSTM(3, 4),
     lambda lib, m: m(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(2, 2, 4)))),
    (lambda lib: lib.nn.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(1, 3, 4))),
    (lambda lib: lib.nn.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(2, 4))),
    (lambda lib: lib.nn.RNN(3, 4), lambda lib, m: m(lib.zeros(5, 3), lib.zeros(1, 2, 4))),
    (lambda lib: lib.nn.RNN(3, 4), lambda lib, m: m(lib.zeros(0, 2, 3))),
    (lambda lib: lib.nn.RNNCell(3, 4), lambda lib, m: m(lib.zeros(2, 5))),
    (lambda lib: lib.nn.RNNCell(3, 4), lambda lib, m: m(lib.zeros(2, 2, 3))),
    (lambda lib: lib.nn.RNNCell(3, 4), lambda lib, m: m(lib.zeros(2, 3), lib.zeros(3, 4))),
    (lambda lib: lib.nn.RNNCell(3, 4), lambda lib, m: m(lib.zeros(2, 3), lib.zeros(2, 5))),
    (lambda lib: lib.nn.RNNCell(3, 4), lambda lib, m: m(lib.zeros(2, 3), lib.zeros(2, 2, 4))),
    (lambda lib: lib.nn.LSTMCell(3, 4),
     lambda lib, m: m(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(3, 4)))),
    (lambda lib: lib.nn.GRUCell(3, 4), lambda lib, m: m(lib.zeros(2, 2, 3))),
    (lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="x"), lambda lib, m: m(lib.zeros(2, 3))),
])
def test_forward_errors(make, call):
    _same_error(make, call)


def test_dropout_warning_as_torch():
    messages = []
    for lib in (torch, rt):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.GRU(3, 4, dropout=0.2)
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[0] == messages[1] and messages[0]


def test_backward_graph_is_made_of_spec_nodes():
    rt.manual_seed(0)
    lstm = rt.nn.LSTM(2, 3)
    output, _ = lstm(rt.randn(4, 1, 2))
    assert output.grad_fn.name() == "StackBackward0"
    names, seen = set(), set()
    stack = [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.name())
        stack.extend(n for n, _ in node.next_functions)
    assert {"SigmoidBackward0", "TanhBackward0", "AddmmBackward0"} <= names


# -- ParameterDict (the container this task adds; its tests live here with the layers') -----

def _parameter_dicts():
    made = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        made.append(lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.randn(2, 3)),
                                          "a": lib.zeros(4), "c": "x"}))
    return made


def test_parameter_dict_like_torch():
    theirs, ours = _parameter_dicts()
    assert repr(ours) == repr(theirs)
    assert list(ours.keys()) == list(theirs.keys()) == ["a", "b", "c"]
    assert [type(v).__name__ for v in ours.values()] == ["Parameter", "Parameter", "str"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(ours) == 3 and "a" in ours and ours.get("zz", 5) == 5
    for d, lib in ((theirs, torch), (ours, rt)):
        d["d"] = lib.ones(1)
        assert isinstance(d.pop("d"), lib.nn.Parameter)
        assert d.popitem()[0] == "c"
        d.setdefault("k", lib.ones(2))
    assert list(ours) == list(theirs) == ["a", "b", "k"]
    assert repr(ours | {"q": rt.ones(1)}) == repr(theirs | {"q": torch.ones(1)})
    pairs = [("z", rt.zeros(1)), ("y", rt.zeros(1))]
    assert list(rt.nn.ParameterDict(pairs)) == ["z", "y"]
    ours.clear()
    assert len(ours) == 0 and list(ours.parameters()) == []
    assert repr(rt.nn.ParameterDict()) == repr(torch.nn.ParameterDict())


def test_parameter_dict_in_a_module():
    made = []
    for lib in (torch, rt):
        class M(lib.nn.Module):
            def __init__(self, lib=lib):
                super().__init__()
                self.p = lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2))})
        made.append(M())
    theirs, ours = made
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["p.w"]


@pytest.mark.parametrize("call", [
    lambda lib, d: d[1],
    lambda lib, d: d["nope"],
    lambda lib, d: lib.nn.ParameterDict(5),
    lambda lib, d: lib.nn.ParameterDict([(1,)]),
    lambda lib, d: lib.nn.ParameterDict([("a", 2, 3)]),
    lambda lib, d: d.update([1]),
])
def test_parameter_dict_errors(call):
    theirs, ours = _parameter_dicts()
    _same_error(lambda lib: theirs if lib is torch else ours, call)
