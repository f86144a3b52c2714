"""torch.save / torch.load beyond tensors (issue 28, point 7), against torch 2.13: the
plain containers and values torch's weights_only loader accepts load by default, both
ways; numpy arrays and other objects load once their globals are allowed
(add_safe_globals, safe_globals) or with weights_only=False, the caller's explicit choice;
the default stays safe."""

from __future__ import annotations

import collections
import io
import pickle

import numpy as np
import pytest
import torch

import runtime as rt

PLAIN = {
    "set": {1, 2},
    "complex": complex(1, 2),
    "bytes": b"ab\x00",
    "bytearray": bytearray(b"xy"),
    "counter": collections.Counter("aab"),
    "nested": {"s": {3}, "b": [b"x", (complex(0, 1),)]},
}


def _saved(save, obj) -> io.BytesIO:
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("name", PLAIN)
def test_plain_values_load_by_default_both_ways(name):
    value = PLAIN[name]
    assert rt.load(_saved(torch.save, value)) == value
    assert torch.load(_saved(rt.save, value), weights_only=True) == value
    assert rt.load(_saved(rt.save, value), weights_only=True) == value


def test_tensors_devices_and_narrow_ints_both_ways():
    ours = rt.load(_saved(torch.save, {"c": torch.tensor([-3, 4], dtype=torch.int8),
                                       "d": torch.device("cpu"),
                                       "s": torch.tensor([7], dtype=torch.int16)}))
    assert ours["c"].dtype == rt.int8 and ours["c"].tolist() == [-3, 4]
    assert ours["s"].dtype == rt.int16 and str(ours["d"]) == "cpu"
    theirs = torch.load(_saved(rt.save, {"c": rt.tensor([-3, 4], dtype=rt.int8),
                                         "d": rt.device("cpu")}), weights_only=True)
    assert theirs["c"].dtype == torch.int8 and theirs["c"].tolist() == [-3, 4]
    assert theirs["d"] == torch.device("cpu")


def _numpy_globals():
    return [np._core.multiarray._reconstruct, np.ndarray, np.dtype,
            type(np.dtype(np.int64)), type(np.dtype(np.float32))]


@pytest.mark.parametrize("save", [torch.save, rt.save], ids=["torch_file", "gradgen_file"])
def test_numpy_arrays_need_the_caller_s_consent(save):
    obj = {"a": np.arange(3), "f": np.ones((2, 2), np.float32)}
    for load in (torch.load, rt.load):
        with pytest.raises(pickle.UnpicklingError, match="_reconstruct"):
            load(_saved(save, obj))
        loaded = load(_saved(save, obj), weights_only=False)
        assert loaded["a"].tolist() == [0, 1, 2] and loaded["f"].dtype == np.float32
    with rt.serialization.safe_globals(_numpy_globals()):
        allowed = rt.load(_saved(save, obj))
    assert allowed["a"].tolist() == [0, 1, 2]
    assert rt.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):  # the block is over: refused again
        rt.load(_saved(save, obj))


def test_add_and_clear_safe_globals():
    obj = {"a": np.arange(2)}
    rt.serialization.add_safe_globals(_numpy_globals())
    try:
        assert rt.load(_saved(torch.save, obj))["a"].tolist() == [0, 1]
        assert len(rt.serialization.get_safe_globals()) == len(_numpy_globals())
    finally:
        rt.serialization.clear_safe_globals()
    assert rt.serialization.get_safe_globals() == []


class Holder:
    """An object of the caller's, holding a tensor."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.note = "kept"


def test_an_object_of_the_caller_s_with_weights_only_false():
    saved = _saved(rt.save, Holder(rt.arange(3.0)))
    with pytest.raises(pickle.UnpicklingError, match="Holder"):
        rt.load(saved)
    saved.seek(0)
    loaded = rt.load(saved, weights_only=False)
    assert isinstance(loaded, Holder) and loaded.note == "kept"
    assert isinstance(loaded.tensor, rt.Tensor) and loaded.tensor.tolist() == [0.0, 1.0, 2.0]
    theirs = torch.load(_saved(torch.save, Holder(torch.arange(3.0))), weights_only=False)
    assert theirs.tensor.tolist() == loaded.tensor.tolist()


def test_weights_only_false_maps_torch_names_and_refuses_what_gradgen_lacks():
    loaded = rt.load(_saved(torch.save, {"s": torch.Size([2, 3]), "t": torch.float64,
                                         "x": torch.ones(2)}), weights_only=False)
    assert loaded["s"] == rt.Size([2, 3]) and loaded["t"] is rt.float64
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        rt.load(_saved(torch.save, torch.nn.Linear(2, 2)), weights_only=False)


def test_the_default_stays_safe(tmp_path, monkeypatch):
    marker = tmp_path / "ran.txt"

    class Boom:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').write('ran')",))

    for weights_only in (None, True):
        with pytest.raises(pickle.UnpicklingError, match="exec"):
            rt.load(_saved(torch.save, {"w": Boom()}), weights_only=weights_only)
    assert not marker.exists()


def test_unsafe_globals_in_a_checkpoint():
    obj = {"a": np.arange(3), "c": collections.Counter("a"), "t": torch.ones(1), "s": {1}}
    for save in (torch.save, rt.save):
        theirs = torch.serialization.get_unsafe_globals_in_checkpoint(_saved(save, obj))
        ours = rt.serialization.get_unsafe_globals_in_checkpoint(_saved(save, obj))
        assert sorted(theirs) == ours
        assert "numpy.ndarray" in ours
    assert rt.serialization.get_unsafe_globals_in_checkpoint(_saved(rt.save, rt.ones(2))) == []
    with rt.serialization.safe_globals([np.ndarray]):
        assert "numpy.ndarray" not in rt.serialization.get_unsafe_globals_in_checkpoint(
            _saved(torch.save, obj))
