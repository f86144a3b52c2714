"""Recurrent layers: RNN, LSTM and GRU over a whole sequence, and their one-step cells.

PyTorch runs these layers with fused native kernels; gradgen composes them from the ops
of the spec (linear, sigmoid, tanh, mul, add, stack, ...), so their backward pass is made
of the spec's nodes and can be stepped through like any other graph. The arithmetic
follows PyTorch's CPU kernels step by step, so that the values agree to rounding:

- the input projection `x W_ihᵀ + b_ih` is computed for the whole sequence at once, then
  each time step adds the hidden projection `h W_hhᵀ + b_hh` to its slice;
- LSTM gates are chunked in the order input, forget, cell, output:
  c' = f * c + i * g and h' = o * tanh(c') (then h' W_hrᵀ with `proj_size`);
- GRU gates in the order reset, update, new: n = tanh(x_n + r * h_n) and
  h' = (h - n) * z + n;
- between layers (not after the last), dropout with probability `dropout` in training.

Parameters are named and ordered as PyTorch's (`weight_ih_l0`, `weight_hh_l0`,
`bias_ih_l0`, `bias_hh_l0`, `weight_hr_l0`, then `..._reverse` for the backward
direction, layer by layer) and drawn as PyTorch draws them: every parameter from
U(-1/√hidden_size, 1/√hidden_size), in that order, so a layer made after
`manual_seed(s)` has torch's weights. The input is a padded tensor, (L, N, H_in),
(N, L, H_in) with `batch_first`, or unbatched (L, H_in), or a PackedSequence
(torch.nn.utils.rnn): then, as in torch, step t runs over the batch_sizes[t] sequences
still going, the others keep their last state, and the output is packed too.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from generated import ops
from runtime import factories
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn import functional as F
from runtime.nn import init
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.nn.utils.rnn import PackedSequence

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

# Gates per mode: the rows of weight_ih and weight_hh are this many times hidden_size.
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# -- one time step ------------------------------------------------------------------------------
# Each takes the input's projection (x W_ihᵀ + b_ih) for the step, the state and the
# parameters, and returns the new state, computed as PyTorch's CPU cells compute it.

def _rnn_step(projected: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
              nonlinearity: str) -> Tensor:
    gates = F.linear(h, w_hh, b_hh) + projected
    return ops.tanh(gates) if nonlinearity == "tanh" else ops.relu(gates)


def _lstm_step(projected: Tensor, h: Tensor, c: Tensor, w_hh: Tensor,
               b_hh: Tensor | None, w_hr: Tensor | None) -> tuple[Tensor, Tensor]:
    gates = F.linear(h, w_hh, b_hh) + projected
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    c = ops.sigmoid(forgetgate) * c + ops.sigmoid(ingate) * ops.tanh(cellgate)
    h = ops.sigmoid(outgate) * ops.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(projected: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    x_r, x_z, x_n = projected.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    reset = ops.sigmoid(h_r + x_r)
    update = ops.sigmoid(h_z + x_z)
    new = ops.tanh(x_n + h_n * reset)
    return (h - new) * update + new


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, their names and initialisation, the
    checks of input and state, and the loop over layers, directions and time steps."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_arguments(dropout, num_layers, hidden_size, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(factories.empty(*shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: every parameter from U(-1/√hidden_size, 1/√hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op, as on the CPU in PyTorch (it packs weights for cuDNN)."""

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters, one list per layer and direction."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _layer_parameters(self, layer: int, direction: int) -> dict[str, Tensor | None]:
        suffix = "_reverse" if direction == 1 else ""
        return {kind: getattr(self, f"{kind}_l{layer}{suffix}", None)
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")}

    # -- checks ---------------------------------------------------------------------------------
    def _state_shape(self, input: Tensor, cell: bool = False) -> tuple[int, int, int]:
        directions = 2 if self.bidirectional else 1
        batch = input.shape[0] if self.batch_first else input.shape[1]
        size = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * directions, batch, size)

    def _check_input(self, input: Tensor) -> None:
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    @staticmethod
    def _check_hidden(hx: Tensor, expected: tuple[int, ...], message: str) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(message.format(expected, list(hx.shape)))

    def _batched(self, input: Tensor) -> tuple[Tensor, bool]:
        """The input with a batch dimension, and whether it had one."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{self._get_name()}.forward(): input must be a Tensor, not "
                            f"{type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{self._get_name()}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, is_batched

    # -- the loop -------------------------------------------------------------------------------
    def _run(self, input: Tensor, states: list[Tensor]) -> tuple[Tensor, list[list[Tensor]]]:
        """(output, final states) of the whole stack; `states` holds the initial state
        tensors (h, and c for LSTM), each (layers * directions, N, size)."""
        sequence = input.transpose(0, 1) if self.batch_first else input
        if sequence.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        directions = 2 if self.bidirectional else 1
        finals: list[list[Tensor]] = [[] for _ in states]
        layer_input = sequence
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                output, last = self._direction(layer_input, [s[index] for s in states],
                                               self._layer_parameters(layer, direction),
                                               reverse=direction == 1)
                outputs.append(output)
                for kept, state in zip(finals, last, strict=True):
                    kept.append(state)
            layer_input = outputs[0] if directions == 1 else ops.cat(outputs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input.transpose(0, 1) if self.batch_first else layer_input
        return output, [ops.stack(kept) for kept in finals]

    def _direction(self, sequence: Tensor, state: list[Tensor], p: dict[str, Tensor | None],
                   reverse: bool) -> tuple[Tensor, list[Tensor]]:
        """One layer in one direction over the sequence: (outputs (L, N, H), last state)."""
        projected = F.linear(sequence, p["weight_ih"], p["bias_ih"])
        length = sequence.shape[0]
        outputs: list[Tensor | None] = [None] * length
        for t in (range(length - 1, -1, -1) if reverse else range(length)):
            state = self._step(projected[t], state, p)
            outputs[t] = state[0]
        return ops.stack(outputs), state

    def _step(self, projected: Tensor, state: list[Tensor],
              p: dict[str, Tensor | None]) -> list[Tensor]:
        if self.mode == "LSTM":
            return list(_lstm_step(projected, state[0], state[1], p["weight_hh"], p["bias_hh"],
                                   p["weight_hr"]))
        if self.mode == "GRU":
            return [_gru_step(projected, state[0], p["weight_hh"], p["bias_hh"])]
        nonlinearity = "tanh" if self.mode == "RNN_TANH" else "relu"
        return [_rnn_step(projected, state[0], p["weight_hh"], p["bias_hh"], nonlinearity)]

    # -- packed sequences -----------------------------------------------------------------------
    def _packed_forward(self, input: PackedSequence,
                        states: list[Tensor | None]) -> tuple[PackedSequence, list[Tensor]]:
        """(packed output, final states) for a PackedSequence; `states` holds the initial
        state tensors in the caller's order of sequences (or None), the final ones come back
        in that order."""
        data, batch_sizes = input.data, [int(b) for b in input.batch_sizes.tolist()]
        self._check_input(data)
        initial = self._packed_initial_states(input, states, batch_sizes[0])
        layer_input, final_states = self._packed_run(data, batch_sizes, initial)
        if input.unsorted_indices is not None:
            final_states = [s.index_select(1, input.unsorted_indices) for s in final_states]
        packed = PackedSequence(layer_input, input.batch_sizes, input.sorted_indices,
                                input.unsorted_indices)
        return packed, final_states

    def _packed_run(self, data: Tensor, batch_sizes: list[int],
                    initial: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        """(output data, final states) of the whole stack over packed data, its sequences
        and initial states in the packed (sorted) order."""
        directions = 2 if self.bidirectional else 1
        finals: list[list[Tensor]] = [[] for _ in initial]
        layer_input = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                output, last = self._packed_direction(
                    layer_input, batch_sizes, [s[index] for s in initial],
                    self._layer_parameters(layer, direction), reverse=direction == 1)
                outputs.append(output)
                for kept, state in zip(finals, last, strict=True):
                    kept.append(state)
            layer_input = outputs[0] if directions == 1 else ops.cat(outputs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, [ops.stack(kept) for kept in finals]

    def _packed_initial_states(self, input: PackedSequence, states: list[Tensor | None],
                               max_batch: int) -> list[Tensor]:
        """The initial states in the packed (sorted) order of the sequences, zeros where
        none is given, checked against their expected shapes."""
        directions = 2 if self.bidirectional else 1
        initial = []
        for kind, state in enumerate(states):
            size = self.proj_size if self.proj_size > 0 and kind == 0 else self.hidden_size
            expected = (self.num_layers * directions, max_batch, size)
            if state is None:
                state = factories.zeros(*expected, dtype=input.data.dtype)
            elif input.sorted_indices is not None:
                state = state.index_select(1, input.sorted_indices)
            message = ("Expected hidden size {}, got {}" if len(states) == 1
                       else f"Expected hidden[{kind}] size {{}}, got {{}}")
            self._check_hidden(state, expected, message)
            initial.append(state)
        return initial

    def _packed_direction(self, data: Tensor, batch_sizes: list[int], state: list[Tensor],
                          p: dict[str, Tensor | None],
                          reverse: bool) -> tuple[Tensor, list[Tensor]]:
        """One layer in one direction over packed data: step t reads the batch_sizes[t]
        rows of its time step. Forwards, the sequences that end keep their state (the
        rows past the batch); backwards, the sequences that start join with their initial
        state."""
        projected = F.linear(data, p["weight_ih"], p["bias_ih"])
        starts = [sum(batch_sizes[:t]) for t in range(len(batch_sizes))]
        outputs: list[Tensor | None] = [None] * len(batch_sizes)
        steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
        initial, current = state, [s[:0] for s in state] if reverse else state
        for t in steps:
            batch = batch_sizes[t]
            if reverse:
                have = current[0].shape[0]
                if batch > have:
                    current = [ops.cat([c, s[have:batch]]) for c, s in zip(current, initial,
                                                                           strict=True)]
                active = current
            else:
                active = [c[:batch] for c in current]
            new = self._step(projected[starts[t]:starts[t] + batch], active, p)
            outputs[t] = new[0]
            if reverse or batch == current[0].shape[0]:
                current = new
            else:
                current = [ops.cat([n, c[batch:]]) for n, c in zip(new, current, strict=True)]
        return ops.cat(outputs), current

    def _single_state_forward(self, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor]:
        """forward of RNN and GRU, whose state is one tensor h."""
        if isinstance(input, PackedSequence):
            output, (h_n,) = self._packed_forward(input, [hx])
            return output, h_n
        input, is_batched = self._batched(input)
        if hx is not None:
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            if not is_batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            if not is_batched:
                hx = hx.unsqueeze(1)
        self._check_input(input)
        expected = self._state_shape(input)
        if hx is None:
            hx = factories.zeros(*expected, dtype=input.dtype)
        self._check_hidden(hx, expected, "Expected hidden size {}, got {}")
        output, (h_n,) = self._run(input, [hx])
        if not is_batched:
            output, h_n = output.squeeze(0 if self.batch_first else 1), h_n.squeeze(1)
        return output, h_n

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text


def _check_arguments(dropout: Any, num_layers: int, hidden_size: Any, proj_size: int) -> None:
    """The constructor's checks, in PyTorch's order, with its messages."""
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warn_at_caller("dropout option adds dropout after all but last recurrent layer, so "
                       "non-zero dropout expects num_layers greater than 1, but got "
                       f"dropout={dropout} and num_layers={num_layers}")
    if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


def _no_projection(kwargs: dict) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh) (or relu).

    Arguments as torch.nn.RNN: (input_size, hidden_size, num_layers=1,
    nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0, bidirectional=False).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _no_projection(kwargs)
        if len(args) > 3:
            # torch.nn.RNN takes nonlinearity as its fourth positional argument.
            kwargs["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(output, h_n): output (L, N, D * H) (batch first if asked), h_n (layers * D, N, H)."""
        return self._single_state_forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit over a sequence, with torch.nn.GRU's arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _no_projection(kwargs)
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(output, h_n), shaped as RNN's."""
        return self._single_state_forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory over a sequence, with torch.nn.LSTM's arguments (including
    proj_size)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """(output, (h_n, c_n)); h_n has proj_size features if set, c_n hidden_size."""
        if isinstance(input, PackedSequence):
            output, (h_n, c_n) = self._packed_forward(input, [None, None] if hx is None
                                                      else [hx[0], hx[1]])
            return output, (h_n, c_n)
        input, is_batched = self._batched(input)
        if hx is not None:
            h0, c0 = hx[0], hx[1]
            if is_batched and (h0.dim() != 3 or c0.dim() != 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but "
                                   f"got ({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not is_batched and (h0.dim() != 2 or c0.dim() != 2):
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but "
                                   f"got ({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not is_batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        self._check_input(input)
        expected_h, expected_c = self._state_shape(input), self._state_shape(input, cell=True)
        if hx is None:
            h0 = factories.zeros(*expected_h, dtype=input.dtype)
            c0 = factories.zeros(*expected_c, dtype=input.dtype)
        self._check_hidden(h0, expected_h, "Expected hidden[0] size {}, got {}")
        self._check_hidden(c0, expected_c, "Expected hidden[1] size {}, got {}")
        output, (h_n, c_n) = self._run(input, [h0, c0])
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# -- cells ----------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """What the cells share: weight_ih, weight_hh, bias_ih, bias_hh, drawn as RNNBase's."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(factories.empty(num_chunks * hidden_size, input_size,
                                                   dtype=dtype))
        self.weight_hh = Parameter(factories.empty(num_chunks * hidden_size, hidden_size,
                                                   dtype=dtype))
        if bias:
            self.bias_ih = Parameter(factories.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(factories.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            text += f", nonlinearity={nonlinearity}"
        return text

    def _batched(self, input: Tensor, states: list[Tensor | None]) -> tuple[Tensor, list, bool]:
        """Input and states with a batch dimension (zeros for missing states), checked as
        PyTorch's cells check them."""
        name = self._get_name()
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for state in states:
            if state is not None and state.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {state.dim()}D "
                                 "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            states = [None if s is None else s.unsqueeze(0) for s in states]
        states = [factories.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
                  if s is None else s for s in states]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for position, state in enumerate(states):
            if state.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{position} batch size {state.shape[0]}")
            if state.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{position} has inconsistent hidden_size: got "
                                   f"{state.shape[1]}, expected {self.hidden_size}")
        return input, states, is_batched

    def _projected(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight_ih, self.bias_ih)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._batched(input, [hx])
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = _rnn_step(self._projected(input), h, self.weight_hh, self.bias_hh,
                      self.nonlinearity)
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        states = [None, None] if hx is None else [hx[0], hx[1]]
        input, (h, c), is_batched = self._batched(input, states)
        h, c = _lstm_step(self._projected(input), h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from x and h."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._batched(input, [hx])
        h = _gru_step(self._projected(input), h, self.weight_hh, self.bias_hh)
        return h if is_batched else h.squeeze(0)
