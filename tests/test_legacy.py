"""The legacy surface against torch: FloatTensor & co as constructors and isinstance targets,
Tensor.type with them, Variable, finfo/iinfo, the thread counts and torch.cuda's CPU-only
answers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime as rt

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor",
         "BoolTensor"]


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("args", [(), (2, 3), ([1, 0, 1],), ((2, 0),)])
def test_constructors_like_torch(name, args):
    ours, theirs = getattr(rt, name)(*args), getattr(torch, name)(*args)
    _same(ours, theirs)
    if args and isinstance(args[0], list | tuple):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", TYPES)
def test_isinstance_and_repr_like_torch(name):
    for dtype in ["float32", "float64", "int64", "int32", "bool", "uint8", "float16"]:
        ours = isinstance(rt.zeros(2, dtype=getattr(rt, dtype)), getattr(rt, name))
        theirs = isinstance(torch.zeros(2, dtype=getattr(torch, dtype)), getattr(torch, name))
        assert ours == theirs, dtype
    assert repr(getattr(rt, name)) == repr(getattr(torch, name))
    assert getattr(rt, name).__name__ == name
    assert not issubclass(getattr(rt, name), rt.Tensor)
    assert type(getattr(rt, name)).__name__ == type(getattr(torch, name)).__name__ == "tensortype"


def test_constructor_from_a_tensor_and_errors():
    t = rt.ones(2)
    u = rt.FloatTensor(t)
    u[0] = 5.0
    assert t[0].item() == 5.0  # the same data, as torch's
    assert rt.FloatTensor(rt.Size([2, 1])).shape == rt.Size([2, 1])
    cases = [lambda lib: lib.FloatTensor(lib.ones(2, dtype=lib.float64)),
             lambda lib: lib.FloatTensor("a"),
             lambda lib: lib.FloatTensor(2, device="cuda")]
    for case in cases:
        with pytest.raises(Exception) as expected:
            case(torch)
        with pytest.raises(type(expected.value)) as error:
            case(rt)
        if "TensorOptions" not in str(expected.value):
            assert str(error.value) == str(expected.value)


@pytest.mark.parametrize("target", ["DoubleTensor", "LongTensor", "torch.IntTensor"])
def test_tensor_type_with_legacy_types(target):
    def convert(lib):
        kind = target if target.startswith("torch.") else getattr(lib, target)
        return lib.tensor([1.5, -2.0]).type(kind)
    ours, theirs = convert(rt), convert(torch)
    _same(ours, theirs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.type() == theirs.type()


def test_variable_like_torch():
    from runtime.autograd import Variable
    from runtime.autograd.variable import Variable as same

    assert same is Variable
    a = rt.ones(2)
    v = Variable(a, requires_grad=True)
    assert v is not a and v.requires_grad and v.is_leaf and v.grad_fn is None
    (v * 3).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3.0, 3.0])
    assert isinstance(a, Variable) and not isinstance([1], Variable)
    assert not Variable(a).requires_grad
    with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got list$"):
        Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(a, volatile=True)


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16", "bfloat16"])
def test_finfo_like_torch(dtype):
    ours = rt.finfo() if dtype is None else rt.finfo(getattr(rt, dtype))
    theirs = torch.finfo() if dtype is None else torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_iinfo_like_torch(dtype):
    ours, theirs = rt.iinfo(getattr(rt, dtype)), torch.iinfo(getattr(torch, dtype))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("call", [lambda lib: lib.finfo(lib.int32),
                                  lambda lib: lib.iinfo(lib.float32),
                                  lambda lib: lib.iinfo(lib.bool),
                                  lambda lib: lib.set_num_threads(0),
                                  lambda lib: lib.set_num_interop_threads(-1)])
def test_info_and_thread_errors_like_torch(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as error:
        call(rt)
    assert str(error.value) == str(expected.value)


def test_thread_counts_read_back():
    before = rt.get_num_threads()
    try:
        rt.set_num_threads(3)
        assert rt.get_num_threads() == 3
    finally:
        rt.set_num_threads(before)
    assert rt.get_num_interop_threads() >= 1


@pytest.mark.parametrize("name", ["manual_seed", "manual_seed_all", "seed", "seed_all",
                                  "empty_cache", "memory_allocated", "max_memory_allocated",
                                  "memory_reserved", "max_memory_reserved", "is_bf16_supported",
                                  "get_rng_state_all", "synchronize", "get_device_name",
                                  "get_device_properties", "get_device_capability",
                                  "current_device", "initial_seed", "init", "get_rng_state",
                                  "mem_get_info", "ipc_collect"])
def test_cuda_answers_like_a_cpu_only_torch(name):
    args = (0,) if name.startswith("manual_seed") else ()
    try:
        expected = getattr(torch.cuda, name)(*args)
    except AssertionError as error:
        with pytest.raises(AssertionError, match=f"^{error}$"):
            getattr(rt.cuda, name)(*args)
    else:
        assert getattr(rt.cuda, name)(*args) == expected


@pytest.mark.parametrize(("name", "args"), [
    ("memory_stats", ()), ("memory_stats", (0,)), ("memory_stats_as_nested_dict", ()),
    ("host_memory_stats", ()), ("host_memory_stats_as_nested_dict", ()),
    ("memory_cached", ()), ("max_memory_cached", ()), ("get_arch_list", ()),
    ("get_gencode_flags", ()), ("is_tf32_supported", ()), ("caching_allocator_enable", (True,)),
    ("set_device", (0,)), ("set_device", ("cuda:0",)), ("reset_peak_memory_stats", ()),
    ("reset_peak_memory_stats", (0,)), ("reset_max_memory_allocated", ()),
    ("reset_max_memory_cached", ()), ("reset_accumulated_memory_stats", ()),
    ("memory_snapshot", ()), ("current_stream", ()), ("default_stream", ()),
    ("set_per_process_memory_fraction", (0.5,)), ("get_per_process_memory_fraction", ()),
    ("get_sync_debug_mode", ())])
def test_more_cuda_answers_like_a_cpu_only_torch(name, args):
    """What a CPU-only torch returns, raises (class and message) and warns, for the memory
    and device functions programs call unguarded (the custom-Function conv-bn tutorial
    resets the peak memory statistics)."""
    import warnings

    def outcome(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = ("returns", getattr(lib.cuda, name)(*args))
            except Exception as error:  # noqa: BLE001 - the class and message are compared
                result = (type(error).__name__, str(error))
        return result, [(w.category, str(w.message)) for w in caught]

    assert outcome(rt) == outcome(torch)
