"""torch.lstm, torch.gru, torch.rnn_tanh and torch.rnn_relu: the functions nn.LSTM, nn.GRU
and nn.RNN call in torch, with the weights as one flat list (per layer and direction:
w_ih, w_hh, then b_ih, b_hh when has_biases, then LSTM's w_hr with projections).

Each has torch's two forms: (input, hx, params, has_biases, num_layers, dropout, train,
bidirectional, batch_first) over a padded 3-D input, and (data, batch_sizes, hx, params,
has_biases, num_layers, dropout, train, bidirectional) over a packed sequence's data, its
sequences and states in the packed order. The math is nn.RNNBase's own loop
(runtime/nn/rnn.py), run on a stack these arguments describe."""

from __future__ import annotations

from typing import Any

from runtime import dtypes
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn.rnn import RNNBase

__all__ = ["gru", "lstm", "rnn_relu", "rnn_tanh"]

_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")


class _FlatStack:
    """A stack of recurrent layers given by a flat weight list, run by RNNBase's loop."""

    _run = RNNBase._run
    _direction = RNNBase._direction
    _step = RNNBase._step
    _packed_run = RNNBase._packed_run
    _packed_direction = RNNBase._packed_direction

    def __init__(self, mode: str, params: Any, options: tuple, projections: bool,
                 dtype: Any) -> None:
        """torch's messages for a wrong weight count are its oneDNN LSTM's (float32 without
        projections) or its general kernel's."""
        has_biases, num_layers, dropout, train, bidirectional, batch_first = options
        self.mode, self.num_layers, self.dropout = mode, num_layers, dropout
        self.training, self.bidirectional, self.batch_first = train, bidirectional, batch_first
        kinds = [k for k in _KINDS if (has_biases or "bias" not in k)
                 and (projections or k != "weight_hr")]
        params = list(params)
        stride = len(kinds)
        onednn = mode == "LSTM" and not projections and dtype in (dtypes.float32,
                                                                   dtypes.bfloat16)
        if len(params) % stride:
            raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by "
                               f"stride {stride}" if onednn
                               else "got an incorrect number of RNN parameters")
        self._layers = []
        for index in range(num_layers * (2 if bidirectional else 1)):
            if (index + 1) * stride > len(params):
                raise RuntimeError(f"ArrayRef: invalid slice, N = {index * stride}; "
                                   f"M = {stride}; size = {len(params)}" if onednn
                                   else "Expected more weights in stacked_rnn")
            group = dict(zip(kinds, params[index * stride:(index + 1) * stride], strict=True))
            self._layers.append({kind: group.get(kind) for kind in _KINDS})

    def _layer_parameters(self, layer: int, direction: int) -> dict[str, Tensor | None]:
        return self._layers[layer * (2 if self.bidirectional else 1) + direction]


def _check_input(input: Tensor) -> None:
    if input.dim() != 3:  # torch indexes its dimension 2 first
        rank = max(input.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got 2)")


def _is_packed(args: tuple, states: int) -> bool:
    """Whether a call is the packed form: its batch_sizes where the padded form has hx (an
    LSTM's is a pair) or its hx where the padded form has the weight list."""
    if states == 2:
        return len(args) > 1 and isinstance(args[1], Tensor)
    return len(args) > 2 and isinstance(args[2], Tensor)


def _recurrent(mode: str, args: tuple, states: int) -> tuple[Tensor, ...]:
    """Either form of a recurrent function: (output, final states...)."""
    if _is_packed(args, states):
        data, batch_sizes, hx, params, *options = args
        options.append(False)  # (no batch_first: packed data has no batch dimension)
    else:
        data, hx, params, *options = args
        _check_input(data)
    hx = list(hx) if states == 2 else [hx]
    _check_states(hx, states)
    stack = _FlatStack(mode, params, tuple(options), _projected(mode, hx), data.dtype)
    if _is_packed(args, states):
        output, finals = stack._packed_run(data, [int(b) for b in batch_sizes.tolist()], hx)
    else:
        output, finals = stack._run(data, hx)
    return (output, *finals)


def _check_states(hx: list, states: int) -> None:
    if states == 2 and len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")


def _projected(mode: str, hx: list) -> bool:
    """torch tells an LSTM with projections by its states: h's features differ from c's."""
    return mode == "LSTM" and hx[0].shape[-1] != hx[1].shape[-1]


def _heard(function: Any, args: tuple) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        return _modes.dispatch(function, args, {})
    return _modes.PASS


def lstm(*args: Any) -> tuple[Tensor, Tensor, Tensor]:
    """(output, h_n, c_n) of a stack of LSTM layers; hx is (h_0, c_0)."""
    heard = _heard(lstm, args)
    return heard if heard is not _modes.PASS else _recurrent("LSTM", args, 2)


def gru(*args: Any) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a stack of GRU layers."""
    heard = _heard(gru, args)
    return heard if heard is not _modes.PASS else _recurrent("GRU", args, 1)


def rnn_tanh(*args: Any) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a stack of Elman layers with tanh."""
    heard = _heard(rnn_tanh, args)
    return heard if heard is not _modes.PASS else _recurrent("RNN_TANH", args, 1)


def rnn_relu(*args: Any) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a stack of Elman layers with relu."""
    heard = _heard(rnn_relu, args)
    return heard if heard is not _modes.PASS else _recurrent("RNN_RELU", args, 1)
