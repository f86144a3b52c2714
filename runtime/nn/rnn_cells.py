"""torch's functional recurrent cells (torch.lstm_cell, gru_cell, rnn_tanh_cell,
rnn_relu_cell): one step from an input (batch, input_size), a hidden state and the layer's
weights, in ATen's argument layout, computed as torch's CPU cells compute it (linear maps
of input and hidden, the gates chunked and activated), so the recorded nodes are torch's
(MulBackward0 and AddBackward0 for an LSTM step, AddBackward0 for a GRU step, TanhBackward0
or ReluBackward0 for a plain one)."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import composite
from runtime import modes as _modes
from runtime._tensor import Tensor

__all__ = ["gru_cell", "lstm_cell", "rnn_relu_cell", "rnn_tanh_cell"]


def _size(tensor: Tensor, dim: int) -> int:
    """tensor.size(dim) with torch's error for a dimension it lacks."""
    if not -max(tensor.dim(), 1) <= dim < max(tensor.dim(), 1):
        bound = max(tensor.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, "
                         f"{bound - 1}], but got {dim})")
    return tensor.shape[dim] if tensor.dim() else 1


def _check_input(input: Tensor, input_size: int) -> None:
    if _size(input, 1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {_size(input, 1)} expected "
                           f"{input_size}")


def _check_cell(input: Tensor, hiddens: tuple, w_ih: Tensor, w_hh: Tensor,
                gates: int) -> None:
    """torch's checks of a cell's arguments, in its order: the input's size, the hidden
    states' batch, the weights' first dimensions, the hidden states' size."""
    _check_input(input, _size(w_ih, 1))
    hidden_size = _size(w_hh, 1)
    for label, hidden in enumerate(hiddens):
        if _size(input, 0) != _size(hidden, 0):
            raise RuntimeError(f"Input batch size {_size(input, 0)} doesn't match "
                               f"hidden{label} batch size {_size(hidden, 0)}")
    for name, weight in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if _size(weight, 0) != gates * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden_size}, but got {_size(weight, 0)}")
    for label, hidden in enumerate(hiddens):
        if _size(hidden, 1) != hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got "
                               f"{_size(hidden, 1)}, expected {hidden_size}")


def _gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
           b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    return composite.linear(input, w_ih, b_ih), composite.linear(hx, w_hh, b_hh)


def lstm_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """(hy, cy): i, f, o = sigmoid and g = tanh of the gates, cy = f cx + i g,
    hy = o tanh(cy)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lstm_cell, (input, hx, w_ih, w_hh, b_ih, b_hh), {})
        if heard is not _modes.PASS:
            return heard
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_cell(input, tuple(hx), w_ih, w_hh, 4)
    from_input, from_hidden = _gates(input, hx[0], w_ih, w_hh, b_ih, b_hh)
    ingate, forgetgate, cellgate, outgate = (from_input + from_hidden).chunk(4, 1)
    cy = ops.sigmoid(forgetgate) * hx[1] + ops.sigmoid(ingate) * ops.tanh(cellgate)
    return ops.sigmoid(outgate) * ops.tanh(cy), cy


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """r, z = sigmoid of the reset and update gates, n = tanh(i_n + r h_n),
    hy = (hx - n) z + n."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(gru_cell, (input, hx, w_ih, w_hh, b_ih, b_hh), {})
        if heard is not _modes.PASS:
            return heard
    _check_cell(input, (hx,), w_ih, w_hh, 3)
    from_input, from_hidden = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    input_r, input_z, input_n = from_input.chunk(3, 1)
    hidden_r, hidden_z, hidden_n = from_hidden.chunk(3, 1)
    resetgate = ops.sigmoid(hidden_r + input_r)
    updategate = ops.sigmoid(hidden_z + input_z)
    newgate = ops.tanh(input_n + hidden_n * resetgate)
    return (hx - newgate) * updategate + newgate


def _plain_cell(activation: Any, input: Tensor, hx: Tensor, w_ih: Tensor,
                w_hh: Tensor, b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor:
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    from_input, from_hidden = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return activation(from_input + from_hidden)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """tanh of the two linear maps' sum."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rnn_tanh_cell, (input, hx, w_ih, w_hh, b_ih, b_hh), {})
        if heard is not _modes.PASS:
            return heard
    return _plain_cell(ops.tanh, input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """relu of the two linear maps' sum."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rnn_relu_cell, (input, hx, w_ih, w_hh, b_ih, b_hh), {})
        if heard is not _modes.PASS:
            return heard
    return _plain_cell(ops.relu, input, hx, w_ih, w_hh, b_ih, b_hh)
