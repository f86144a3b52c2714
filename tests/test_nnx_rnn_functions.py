"""torch.lstm, torch.gru, torch.rnn_tanh and torch.rnn_relu (the functions nn.LSTM & co call
in torch, weights as one flat list) against torch 2.13: outputs, final states and the
gradients of input, states and every weight, in their padded and packed forms, and their
errors."""

from __future__ import annotations

import pytest
import torch

import runtime
from tests.names_oracle import same

MODULES = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}
CONFIGS = {
    "plain": {},
    "deep_bidirectional": {"num_layers": 2, "bidirectional": True},
    "batch_first_no_bias": {"batch_first": True, "bias": False},
    "dropout": {"num_layers": 2, "dropout": 0.5},
}


def _module(t, name, config):
    kwargs = dict(config)
    if name == "rnn_relu":
        kwargs["nonlinearity"] = "relu"
    return getattr(t.nn, MODULES[name])(3, 4, **kwargs).double()


def _states(t, name, module, batch):
    shape = (module.num_layers * (2 if module.bidirectional else 1), batch,
             module.proj_size or module.hidden_size)
    h0 = t.linspace(-1, 1, shape[0] * shape[1] * shape[2], dtype=t.float64).reshape(shape)
    if name != "lstm":
        return h0.requires_grad_()
    c_shape = shape[:2] + (module.hidden_size,)
    c0 = t.linspace(1, -0.5, c_shape[0] * c_shape[1] * c_shape[2], dtype=t.float64)
    return (h0.requires_grad_(), c0.reshape(c_shape).requires_grad_())


def _leaves(hx):
    return list(hx) if isinstance(hx, tuple) else [hx]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", MODULES)
def test_padded_form(name, config):
    def program(t):
        t.manual_seed(0)
        module = _module(t, name, CONFIGS[config])
        x = t.randn(5, 2, 3, dtype=t.float64, requires_grad=True)
        hx = _states(t, name, module, 5 if module.batch_first else 2)
        train = "dropout" in config
        result = getattr(t, name)(x, hx, module._flat_weights, module.bias, module.num_layers,
                                  module.dropout, train, module.bidirectional,
                                  module.batch_first)
        sum(r.pow(2).sum() for r in result).backward()
        # (batch_first: torch's GRU and RNN turn their output with transpose_, recording
        # TransposeBackward1; gradgen's loop, shared with nn.GRU / nn.RNN, with transpose)
        names = [r.grad_fn.name() for r in result] if name == "lstm" or \
            not module.batch_first else None
        return [type(result).__name__, names, *[r.detach() for r in result], x.grad,
                *[h.grad for h in _leaves(hx)], *[w.grad for w in module._flat_weights]]

    same(program, rtol=1e-9, atol=1e-12)


def test_lstm_with_projections():
    def program(t):
        t.manual_seed(1)
        module = t.nn.LSTM(3, 4, proj_size=2, num_layers=2).double()
        x = t.randn(4, 2, 3, dtype=t.float64, requires_grad=True)
        hx = (t.zeros(2, 2, 2, dtype=t.float64), t.zeros(2, 2, 4, dtype=t.float64))
        out, h, c = t.lstm(x, hx, module._flat_weights, True, 2, 0.0, False, False, False)
        (out.sum() + h.sum() * 2 + c.sum()).backward()
        return [out, h, c, x.grad, *[w.grad for w in module._flat_weights]]

    same(program, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", MODULES)
def test_packed_form(name):
    def program(t):
        t.manual_seed(2)
        module = _module(t, name, {"bidirectional": True})
        x = t.randn(5, 3, 3, dtype=t.float64)
        packed = t.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2])
        data = packed.data.requires_grad_()
        hx = _states(t, name, module, 3)
        result = getattr(t, name)(data, packed.batch_sizes, hx, module._flat_weights, True, 1,
                                  0.0, False, True)
        sum(r.pow(2).sum() for r in result).backward()
        return [*result, data.grad, *[h.grad for h in _leaves(hx)],
                *[w.grad for w in module._flat_weights]]

    same(program, rtol=1e-9, atol=1e-12)


def _weights(t, name):
    t.manual_seed(0)
    return _module(t, name, {})._flat_weights


BAD_CALLS = {
    "one_state": lambda t: t.lstm(t.zeros(5, 2, 3, dtype=t.float64),
                                  (t.zeros(1, 2, 4, dtype=t.float64),),
                                  _weights(t, "lstm"), True, 1, 0.0, False, False, False),
    "three_weights": lambda t: t.lstm(t.zeros(5, 2, 3, dtype=t.float64),
                                      (t.zeros(1, 2, 4, dtype=t.float64),) * 2,
                                      _weights(t, "lstm")[:3], True, 1, 0.0, False, False,
                                      False),
    "three_weights_float32": lambda t: t.lstm(t.zeros(5, 2, 3), (t.zeros(1, 2, 4),) * 2,
                                              [w.float() for w in _weights(t, "lstm")[:3]],
                                              True, 1, 0.0, False, False, False),
    "too_few_layers_float32": lambda t: t.lstm(t.zeros(5, 2, 3), (t.zeros(2, 2, 4),) * 2,
                                               [w.float() for w in _weights(t, "lstm")], True,
                                               2, 0.0, False, False, False),
    "gru_weights": lambda t: t.gru(t.zeros(5, 2, 3, dtype=t.float64),
                                   t.zeros(1, 2, 4, dtype=t.float64), _weights(t, "gru")[:3],
                                   True, 1, 0.0, False, False, False),
    "too_few_layers": lambda t: t.gru(t.zeros(5, 2, 3, dtype=t.float64),
                                      t.zeros(2, 2, 4, dtype=t.float64), _weights(t, "gru"),
                                      True, 2, 0.0, False, False, False),
    "two_d_input": lambda t: t.lstm(t.zeros(5, 3), (t.zeros(1, 4),) * 2,
                                    [w.float() for w in _weights(t, "lstm")], True, 1, 0.0,
                                    False, False, False),
    "empty_sequence": lambda t: t.gru(t.zeros(0, 2, 3, dtype=t.float64),
                                      t.zeros(1, 2, 4, dtype=t.float64), _weights(t, "gru"),
                                      True, 1, 0.0, False, False, False),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_errors_as_torchs(name):
    def program(t):
        try:
            BAD_CALLS[name](t)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return type(error).__name__, str(error)
        return None

    (kind, outcome), _ = same(program)
    assert kind == "returns" and outcome is not None


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", MODULES)
def test_the_flat_weight_list_is_torchs(name, config):
    """The functions read the weights in nn's order, which is torch's (names, shapes)."""
    ours, theirs = _module(runtime, name, CONFIGS[config]), _module(torch, name, CONFIGS[config])
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [tuple(w.shape) for w in ours._flat_weights] == \
        [tuple(w.shape) for w in theirs._flat_weights]
