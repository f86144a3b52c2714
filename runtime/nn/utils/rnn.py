"""Sequences of different lengths for the recurrent layers (torch.nn.utils.rnn).

A PackedSequence holds the time steps of a batch of sequences, sorted longest first, one
after the other: `data` has the batch_sizes[0] first elements of every sequence, then the
batch_sizes[1] second elements of those that have one, and so on. RNN, LSTM and GRU accept
it and run each step over the sequences still going. Packing and padding are gathers of
rows (differentiable, as torch's are), computed from the lengths.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from generated import ops
from runtime import dtypes, factories
from runtime._tensor import Tensor
from runtime.composite import pad

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """(data, batch_sizes, sorted_indices, unsorted_indices): made by pack_padded_sequence
    and pack_sequence, not by hand. sorted_indices is the order the sequences were sorted
    into (None when they came sorted), unsorted_indices its inverse."""

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, list | tuple) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The same sequences with `data` converted (the indices stay int64)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(*args, **kwargs)

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=dtypes.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=dtypes.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=dtypes.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=dtypes.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    inverse = np.empty_like(permutation.numpy())
    inverse[permutation.numpy()] = np.arange(permutation.numel())
    return factories.tensor(inverse, dtype=permutation.dtype)


def _packed_rows(lengths: np.ndarray, steps: int, batch: int, batch_first: bool) -> np.ndarray:
    """For each row of the packed data, its row in a padded batch of `steps` positions
    seen as (steps * batch) rows, position-major (or batch-major when batch_first)."""
    time, sample = np.nonzero(np.arange(int(lengths[0]))[:, None] < lengths[None, :])
    return sample * steps + time if batch_first else time * batch + sample


def _check_lengths(lengths: np.ndarray, batch: int) -> None:
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lengths[:-1] < lengths[1:]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")


def _pack_padded(input: Tensor, lengths: np.ndarray, batch_first: bool) -> tuple[Tensor, Tensor]:
    """(data, batch_sizes) of a padded input whose lengths are sorted longest first."""
    batch = input.shape[0 if batch_first else 1]
    _check_lengths(lengths, batch)
    return ops._pack_padded_sequence(input, factories.tensor(lengths, dtype=dtypes.int64),
                                     batch_first)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, N, *) (or (N, L, *)) of sequences of the given lengths;
    without enforce_sorted the sequences are sorted here, and the order is remembered."""
    lengths = lengths.to(dtypes.int64) if isinstance(lengths, Tensor) else factories.tensor(
        lengths, dtype=dtypes.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = ops.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths.numpy(), batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack to (padded batch, lengths), the sequences back in their original order."""
    batch_sizes = sequence.batch_sizes.numpy()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = int(batch_sizes[0])
    lengths = (np.arange(batch)[None, :] < batch_sizes[:, None]).sum(0)
    data = sequence.data
    filler = factories.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    # Each padded position reads its packed row, or the filler row after the data.
    source = np.full(steps * batch, data.shape[0], dtype=np.int64)
    source[_packed_rows(lengths, steps, batch, batch_first)] = np.arange(data.shape[0])
    padded = ops.cat([data, filler])[factories.tensor(source, dtype=dtypes.int64)]
    shape = (batch, steps) if batch_first else (steps, batch)
    padded = padded.reshape(*shape, *data.shape[1:])
    lengths_tensor = factories.tensor(lengths, dtype=dtypes.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths_tensor = lengths_tensor[sequence.unsorted_indices]
    return padded, lengths_tensor


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths into (L, N, *) (or (N, L, *)), padding each
    at its end (or its start, padding_side='left')."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        amounts = [0, 0] * (s.ndim - 1) + ([0, missing] if padding_side == "right"
                                           else [missing, 0])
        padded.append(pad(s, amounts, value=padding_value) if missing else s)
    return ops.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length (torch's transposes a
    time-major batch in place, and so does this)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    positions = factories.arange(padded_sequences.shape[1])
    return [sequence[positions < length]
            for sequence, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (longest first, unless enforce_sorted=False)."""
    lengths = factories.tensor([s.shape[0] for s in sequences], dtype=dtypes.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
