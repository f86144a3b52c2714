"""nn.utils.rnn (pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence,
unpad_sequence, unpack_sequence, invert_permutation, PackedSequence) and RNN / LSTM / GRU
over packed sequences, against torch: values, gradients, batch sizes, orders and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import runtime
from tests.oracle import close, same


def _sequences(lib: Any, lengths: tuple, features: int = 3) -> list:
    lib.manual_seed(0)
    return [lib.randn(n, features, requires_grad=True) for n in lengths]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first: bool, padding_side: str) -> None:
    def program(lib: Any) -> list:
        seqs = _sequences(lib, (2, 4, 1))
        padded = lib.nn.utils.rnn.pad_sequence(seqs, batch_first, -2.0, padding_side)
        (padded * padded).sum().backward()
        return [padded, *[s.grad for s in seqs]]
    close(program)


@pytest.mark.parametrize("lengths, enforce_sorted", [((4, 2, 1), True), ((2, 4, 1), False),
                                                     ((3, 3, 1, 2), False), ((1,), True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad(lengths: tuple, enforce_sorted: bool, batch_first: bool) -> None:
    def program(lib: Any) -> list:
        R = lib.nn.utils.rnn
        seqs = _sequences(lib, lengths)
        padded = R.pad_sequence(seqs, batch_first)
        packed = R.pack_padded_sequence(padded, lib.tensor(lengths), batch_first,
                                        enforce_sorted)
        again = R.pack_sequence(seqs, enforce_sorted)
        unpacked, found = R.pad_packed_sequence(packed, batch_first, 0.5,
                                                total_length=max(lengths) + 1)
        (unpacked.pow(3).sum() + again.data.sum()).backward()
        indices = [packed.sorted_indices, packed.unsorted_indices]
        return [packed.data, packed.batch_sizes, again.data, again.batch_sizes, unpacked, found,
                *[None if i is None else i.tolist() for i in indices],
                *[s.grad for s in seqs], type(packed).__name__,
                [tuple(s.shape) for s in R.unpack_sequence(packed)]]
    close(program)


def test_unpad_sequence_and_invert_permutation() -> None:
    def program(lib: Any) -> list:
        R = lib.nn.utils.rnn
        seqs = _sequences(lib, (3, 1, 2))
        padded = R.pad_sequence(seqs)
        pieces = R.unpad_sequence(padded, lib.tensor([3, 1, 2]))
        return [*[p.detach() for p in pieces], tuple(padded.shape),
                R.invert_permutation(lib.tensor([2, 0, 3, 1])), R.invert_permutation(None)]
    close(program)


def test_packed_sequence_conversions() -> None:
    def program(lib: Any) -> list:
        packed = lib.nn.utils.rnn.pack_sequence(_sequences(lib, (2, 1)))
        converted = packed.double()
        return [str(converted.data.dtype), converted.batch_sizes, packed.to(lib.float32) is packed,
                packed.is_cuda, packed.is_pinned(), tuple(packed._fields)]
    close(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.rnn.pack_sequence([lib.zeros(1, 2), lib.zeros(3, 2)]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 0]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 2, 1]),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.pad_sequence(3),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="middle"),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.zeros(3, 1)]), total_length=2),
    lambda lib: lib.nn.GRU(3, 4)(lib.nn.utils.rnn.pack_sequence([lib.zeros(2, 3)]),
                                 lib.zeros(1, 2, 4)),
])
def test_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


LAYERS = [("LSTM", {"num_layers": 2, "bidirectional": True}), ("GRU", {"bidirectional": True}),
          ("RNN", {"num_layers": 2, "nonlinearity": "relu"}), ("LSTM", {"proj_size": 2}),
          ("GRU", {"num_layers": 3, "batch_first": True})]


@pytest.mark.parametrize("name, options", LAYERS)
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layers_over_packed_sequences(name: str, options: dict,
                                                with_state: bool) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        layer = getattr(lib.nn, name)(3, 4, **options)
        seqs = [lib.randn(n, 3, requires_grad=True) for n in (2, 5, 3, 5)]
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        rows = layer.num_layers * (2 if layer.bidirectional else 1)
        state = None
        if with_state:
            h0 = lib.randn(rows, 4, layer.proj_size or 4)
            state = (h0, lib.randn(rows, 4, 4)) if name == "LSTM" else h0
        output, final = layer(packed, state)
        h_n = final[0] if name == "LSTM" else final
        padded, lengths = lib.nn.utils.rnn.pad_packed_sequence(output, batch_first=True)
        (padded.pow(2).sum() + h_n.sum()).backward()
        results = [type(output).__name__, output.data, output.batch_sizes, padded, lengths,
                   output.sorted_indices, h_n, *[s.grad for s in seqs]]
        results += [p.grad for p in layer.parameters()]
        if name == "LSTM":
            results.append(final[1])
        return results
    close(program, rtol=1e-4, atol=1e-5)


def test_packed_dropout_between_layers_draws_as_torch() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        layer = lib.nn.LSTM(3, 4, num_layers=3, dropout=0.5)
        packed = lib.nn.utils.rnn.pack_sequence([lib.randn(n, 3) for n in (4, 2, 1)])
        output, _ = layer(packed)
        return [output.data, lib.rand(3)]
    close(program, rtol=1e-4, atol=1e-5)


def test_packed_matches_padded_run() -> None:
    """A packed batch gives each sequence what it gets when run alone."""
    runtime.manual_seed(0)
    layer = runtime.nn.GRU(3, 4, bidirectional=True)
    seqs = [runtime.randn(n, 3) for n in (5, 2)]
    output, h_n = layer(runtime.nn.utils.rnn.pack_sequence(seqs))
    padded, _ = runtime.nn.utils.rnn.pad_packed_sequence(output)
    for index, seq in enumerate(seqs):
        alone, h_alone = layer(seq.unsqueeze(1))
        np.testing.assert_allclose(padded[:len(seq), index].detach().numpy(),
                                   alone[:, 0].detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h_n[:, index].detach().numpy(),
                                   h_alone[:, 0].detach().numpy(), rtol=1e-5, atol=1e-6)
