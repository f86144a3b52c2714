"""torch.save / torch.load: gradgen's files round-trip, torch reads gradgen's files (with
weights_only=True), gradgen reads torch's, and no file ever runs code on load."""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime as rt

DTYPES = ["float32", "float64", "int64", "int32", "bool", "uint8"]


def _tensors(lib):
    """Tensors of every dtype gradgen has, of awkward shapes and layouts."""
    base = lib.arange(12.0).reshape(3, 4)
    values = {f"t_{name}": lib.tensor([[0, 1, 2], [2, 0, 1]], dtype=getattr(lib, name))
              for name in DTYPES}
    values.update({
        "scalar": lib.tensor(2.5, dtype=lib.float64),
        "empty": lib.zeros(0, 3),
        "transposed": base.t(),
        "row": base[1],
        "column": base[:, 2],
        "requires_grad": lib.ones(2, requires_grad=True),
        "parameter": lib.nn.Parameter(lib.full((2, 2), 3.0)),
        "frozen": lib.nn.Parameter(lib.ones(3), requires_grad=False),
    })
    return values


def _object(lib):
    return {"tensors": _tensors(lib), "epoch": 7, "loss": 0.25, "name": "run-1",
            "flags": [True, False, None], "shape": (3, -4, 2**40, -(2**70), 3**700),
            "ordered": OrderedDict(b=1, a=[1.5, "x"]), "size": lib.Size([2, 3]),
            "dtype": lib.float64, "text": "ünïcode"}


def _check_tensor(loaded, original, lib):
    assert isinstance(loaded, lib.Tensor)
    assert str(loaded.dtype) == str(original.dtype)
    assert tuple(loaded.shape) == tuple(original.shape)
    assert loaded.requires_grad == original.requires_grad
    assert isinstance(loaded, lib.nn.Parameter) == isinstance(original, torch.nn.Parameter
                                                              | rt.nn.Parameter)
    assert loaded.is_leaf
    np.testing.assert_array_equal(loaded.detach().numpy(), original.detach().numpy())


def _check(loaded, original, lib):
    """`loaded` (a `lib` object) equals `original` (either library's)."""
    if isinstance(original, torch.Tensor | rt.Tensor):
        _check_tensor(loaded, original, lib)
    elif isinstance(original, dict):
        assert type(loaded) is type(original)
        assert list(loaded) == list(original)
        for key in original:
            _check(loaded[key], original[key], lib)
    elif isinstance(original, torch.Size | rt.Size):
        assert isinstance(loaded, lib.Size) and tuple(loaded) == tuple(original)
    elif isinstance(original, list | tuple):
        assert type(loaded) is type(original) and len(loaded) == len(original)
        for a, b in zip(loaded, original, strict=True):
            _check(a, b, lib)
    elif isinstance(original, torch.dtype | rt.dtype):
        assert loaded is getattr(lib, str(original).split(".")[1])
    else:
        assert type(loaded) is type(original) and loaded == original


def _buffer(save, obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_round_trip_in_gradgen():
    original = _object(rt)
    _check(rt.load(_buffer(rt.save, original)), original, rt)


def test_round_trip_through_a_path(tmp_path):
    original = _object(rt)
    for path in (tmp_path / "model.pt", str(tmp_path / "other.pth")):
        rt.save(original, path)
        _check(rt.load(path, map_location="cpu"), original, rt)
        _check(rt.load(path, map_location=rt.device("cpu"), weights_only=True), original, rt)
        _check(rt.load(path, map_location={"cuda:0": "cpu"}), original, rt)


def test_torch_reads_gradgen_s_files_with_weights_only(tmp_path):
    original = _object(rt)
    rt.save(original, tmp_path / "gradgen.pt")
    _check(torch.load(tmp_path / "gradgen.pt", weights_only=True), original, torch)


def test_gradgen_reads_torch_s_files(tmp_path):
    original = _object(torch)
    torch.save(original, tmp_path / "torch.pt")
    _check(rt.load(tmp_path / "torch.pt"), original, rt)
    _check(rt.load(_buffer(torch.save, original)), original, rt)


def test_views_saved_by_torch_share_one_storage_and_load_as_their_values():
    base = torch.arange(20.0).reshape(4, 5)
    views = {"base": base, "strided": base[1:, ::2], "transposed": base.t(), "item": base[2, 3]}
    loaded = rt.load(_buffer(torch.save, views))
    for key, view in views.items():
        assert loaded[key].shape == view.shape
        np.testing.assert_array_equal(loaded[key].numpy(), view.numpy())


def test_the_same_tensor_twice_loads_as_one_object():
    t = rt.ones(3)
    loaded = rt.load(_buffer(rt.save, [t, t, {"again": t}]))
    assert loaded[0] is loaded[1] is loaded[2]["again"]
    theirs = torch.load(_buffer(rt.save, [t, t]), weights_only=True)
    assert theirs[0] is theirs[1]


def _model(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


@pytest.mark.parametrize("writer", ["gradgen", "torch"])
def test_model_load_state_dict_of_torch_load(tmp_path, writer):
    """The usual checkpoint: model.load_state_dict(torch.load(PATH))."""
    source = _model(rt if writer == "gradgen" else torch)
    (rt if writer == "gradgen" else torch).save(source.state_dict(), tmp_path / "weights.pt")
    target = rt.nn.Sequential(rt.nn.Linear(4, 3), rt.nn.ReLU(), rt.nn.Linear(3, 2))
    result = target.load_state_dict(rt.load(tmp_path / "weights.pt"))
    assert not result.missing_keys and not result.unexpected_keys
    x = np.linspace(-1, 1, 8).reshape(2, 4)
    np.testing.assert_allclose(target(rt.tensor(x, dtype=rt.float32)).detach().numpy(),
                               source(torch.tensor(x, dtype=torch.float32)
                                      if writer == "torch" else rt.tensor(x, dtype=rt.float32))
                               .detach().numpy(), rtol=1e-6)
    # and torch's own model loads gradgen's file
    if writer == "gradgen":
        theirs = _model(torch)
        theirs.load_state_dict(torch.load(tmp_path / "weights.pt", weights_only=True))
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(value.numpy(), source.state_dict()[key].numpy())


def test_a_checkpoint_with_an_optimizer_resumes_training(tmp_path):
    def setup(lib):
        model = _model(lib)
        optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
        return model, optimizer

    def train(lib, model, optimizer, steps):
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float32)
        for _ in range(steps):
            optimizer.zero_grad()
            model(x).pow(2).sum().backward()
            optimizer.step()

    model, optimizer = setup(rt)
    train(rt, model, optimizer, 3)
    rt.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3},
            tmp_path / "checkpoint.pt")
    checkpoint = rt.load(tmp_path / "checkpoint.pt")
    assert checkpoint["epoch"] == 3
    resumed, resumed_optimizer = setup(rt)
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    train(rt, resumed, resumed_optimizer, 3)
    reference, reference_optimizer = setup(torch)
    train(torch, reference, reference_optimizer, 6)
    for (key, value), expected in zip(resumed.state_dict().items(),
                                      reference.state_dict().values(), strict=True):
        np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=1e-5, atol=1e-7,
                                   err_msg=key)
    # torch reads the same checkpoint, optimizer state keyed by index
    theirs = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert sorted(theirs["optimizer"]["state"]) == list(range(4))
    assert theirs["optimizer"]["param_groups"][0]["params"] == [0, 1, 2, 3]


# -- safety: nothing in a file runs ---------------------------------------------------------

class Boom:
    def __reduce__(self):
        return (exec, ("open(__import__('os').environ['BOOM_FILE'], 'w').write('ran')",))


def _zip_with_pickle(data: bytes) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", data)
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")
    buffer.seek(0)
    return buffer


def test_a_file_that_would_run_code_is_refused(tmp_path, monkeypatch):
    marker = tmp_path / "ran.txt"
    monkeypatch.setenv("BOOM_FILE", str(marker))
    for file in (_zip_with_pickle(pickle.dumps({"w": Boom()}, protocol=2)),
                 _buffer(torch.save, {"w": Boom()})):
        with pytest.raises(pickle.UnpicklingError,
                           match=r"refuses the global (__builtin__|builtins)\.exec"):
            rt.load(file)
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError):  # torch's weights_only refuses it too
        torch.load(_buffer(torch.save, {"w": Boom()}), weights_only=True)
    assert not marker.exists()


def test_a_whole_torch_module_is_refused_as_by_weights_only():
    file = _buffer(torch.save, torch.nn.Linear(2, 2))
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        rt.load(file)


@pytest.mark.parametrize(("content", "match"), [
    (pickle.dumps({"a": 1}), "never a bare pickle"),
    (b"", "never a bare pickle"),
    (b"PK\x03\x04 not really a zip", "not a readable torch.save file"),
])
def test_files_gradgen_did_not_write_are_refused(content, match):
    with pytest.raises(pickle.UnpicklingError, match=match):
        rt.load(io.BytesIO(content))


def test_a_zip_without_data_pkl_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/other", "x")
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="no <folder>/data.pkl"):
        rt.load(buffer)


def test_a_tensor_reaching_outside_its_storage_is_refused():
    data = _buffer(torch.save, torch.arange(4.0)).getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        records = {name: archive.read(name) for name in archive.namelist()}
    name = next(n for n in records if n.endswith("data/0"))
    records[name] = records[name][:8]  # two of the four floats
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for key, value in records.items():
            archive.writestr(key, value)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="shorter than its storage"):
        rt.load(buffer)


def test_saving_what_cannot_be_pickled_is_refused_and_writes_nothing(tmp_path):
    """Other objects are pickled as torch.save pickles them (tests/test_weights_only.py);
    what Python cannot pickle fails, before the file is opened. (Python's C pickler, torch's,
    says AttributeError for a local function; its pure pickler, gradgen's, PicklingError.)"""
    path = tmp_path / "x.pt"
    with pytest.raises((pickle.PicklingError, AttributeError), match="pickle"):
        rt.save({"value": lambda: 0}, path)
    with pytest.raises((pickle.PicklingError, AttributeError), match="pickle"):
        torch.save({"value": lambda: 0}, tmp_path / "torch.pt")
    assert not path.exists()


def test_map_location_other_than_the_cpu_is_refused():
    file = _buffer(rt.save, rt.ones(1))
    with pytest.raises(RuntimeError, match="only the CPU"):
        rt.load(file, map_location="cuda:0")


def test_torch_names():
    assert rt.save is rt.serialization.save and rt.load is rt.serialization.load
    assert Path(rt.serialization.__file__).name == "serialization.py"


class _QuantizedStoragePickler(pickle.Pickler):
    """The string "STORAGE" pickles as a storage of quantized int8s (a dtype gradgen lacks)."""

    def persistent_id(self, obj):
        if isinstance(obj, str) and obj == "STORAGE":
            return ("storage", torch.QInt8Storage, "0", "cpu", 4)
        return None


def test_a_dtype_gradgen_lacks_is_named():
    data = io.BytesIO()
    _QuantizedStoragePickler(data, protocol=2).dump(_Rebuild("STORAGE", 0, (4,), (1,), False,
                                                             OrderedDict()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", data.getvalue())
        archive.writestr("archive/data/0", bytes(4))
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="no dtype for the tensors of "
                                                     "torch.QInt8Storage"):
        rt.load(buffer)


class _Rebuild:
    """Pickles as a call of torch's (allowed) rebuild function with the given arguments."""

    def __init__(self, *arguments):
        self.arguments = arguments

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.arguments)


class _StoragePickler(pickle.Pickler):
    """The string "STORAGE" pickles as the persistent id of a 4-float storage, data/0."""

    def persistent_id(self, obj):
        if isinstance(obj, str) and obj == "STORAGE":
            return ("storage", torch.FloatStorage, "0", "cpu", 4)
        return None


@pytest.mark.parametrize("arguments", [
    ("not a storage", 0, (2,), (1,)), ("STORAGE", 0, (2,), (1, 1)),
    ("STORAGE", 0, (-2,), (1,)), ("STORAGE", 1.5, (2,), (1,)), ("STORAGE", 3, (2,), (1,)),
    ("STORAGE", 0, (3,), (2,)),
])
def test_a_tensor_laid_out_as_torch_never_does_is_refused(arguments):
    """A made-up file calling the (allowed) rebuild function with bad arguments."""
    data = io.BytesIO()
    _StoragePickler(data, protocol=2).dump(_Rebuild(*arguments, False, OrderedDict()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", data.getvalue())
        archive.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="outside its storage|not laid out"):
        rt.load(buffer)
    good = io.BytesIO()
    _StoragePickler(good, protocol=2).dump(_Rebuild("STORAGE", 1, (3,), (1,), False,
                                                    OrderedDict()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", good.getvalue())
        archive.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
    buffer.seek(0)
    np.testing.assert_array_equal(rt.load(buffer).numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize(("name", "kwargs"), [("RMSprop", {"momentum": 0.9, "centered": True}),
                                              ("Adagrad", {}), ("Adadelta", {}),
                                              ("SGD", {"lr": 0.1, "momentum": 0.9})])
def test_torch_resumes_a_gradgen_checkpoint(name, kwargs):
    """Model and optimizer saved by gradgen after one step; torch loads both and takes the
    second step: the same parameters as gradgen's second step."""
    rt.manual_seed(0)
    model = rt.nn.Linear(3, 2)
    optimizer = getattr(rt.optim, name)(model.parameters(), **kwargs)
    model(rt.ones(1, 3)).sum().backward()
    optimizer.step()
    checkpoint = torch.load(_buffer(rt.save, {"model": model.state_dict(),
                                              "optimizer": optimizer.state_dict()}),
                            weights_only=True)
    theirs = torch.nn.Linear(3, 2)
    their_optimizer = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    theirs.load_state_dict(checkpoint["model"])
    their_optimizer.load_state_dict(checkpoint["optimizer"])
    for lib, net, opt in ((torch, theirs, their_optimizer), (rt, model, optimizer)):
        opt.zero_grad()
        net(lib.ones(1, 3)).sum().backward()
        opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)
    assert not np.array_equal(model.weight.detach().numpy(),
                              checkpoint["model"]["weight"].numpy())


def test_a_file_cannot_change_gradgen_s_objects():
    """A BUILD opcode would set attributes of the object below it, here gradgen's float32
    dtype (its name slot): refused, and the dtype is untouched."""
    data = (b"\x80\x02ctorch\nfloat32\nN}X\x04\x00\x00\x00nameX\x06\x00\x00\x00hacked"
            b"s\x86b.")
    with pytest.raises(pickle.UnpicklingError, match="refuses to set the attributes of a dtype"):
        rt.load(_zip_with_pickle(data))
    assert rt.float32.name == "float32"


def test_a_state_dict_s_metadata_is_kept():
    """torch's module state_dict carries `_metadata` (set by BUILD): it survives the trip."""
    loaded = rt.load(_buffer(torch.save, torch.nn.Linear(2, 2).state_dict()))
    assert loaded._metadata == {"": {"version": 1}}
    assert torch.load(_buffer(rt.save, loaded), weights_only=True)._metadata == \
        {"": {"version": 1}}
