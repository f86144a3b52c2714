"""Storages against torch 2.13 (runtime/storage.py): a tensor's untyped and typed storage
share its memory both ways; the legacy FloatStorage & co; set_ and is_set_to."""

from __future__ import annotations

import pytest
import torch

import runtime
from runtime import storage as _storage
from tests.names_oracle import same


@pytest.fixture(autouse=True)
def _typed_storage_warned():
    """torch warns once per process that TypedStorage is deprecated: both have warned before
    each test, so that the test's order does not decide what it sees."""
    torch.ones(1).storage()
    runtime.ones(1).storage()


def test_the_deprecation_warning_comes_once():
    def program(t):
        x = t.arange(3.0)
        return x.storage().tolist(), x.storage().size(), t.FloatStorage(2).size()

    torch.storage._reset_warn_typed_storage_removal()
    _storage._warned[0] = False
    same(program)


def test_untyped_storage_shares_memory():
    def program(t):
        x = t.arange(6.0).reshape(2, 3)
        u = x.untyped_storage()
        facts = [u.size(), u.nbytes(), len(u), u.element_size(), u.data_ptr() == x.data_ptr(),
                 str(u.device), u.type(), u.tolist()[:8], u[7], u[4:8].tolist()]
        u[3] = 64  # the float 0.0 at x[0, 0] becomes 2.0
        x[1, 2] = -1.0
        row = x[1]
        facts += [x, u.tolist()[-4:], row.untyped_storage().data_ptr() == u.data_ptr(),
                  row.storage_offset(), repr(t.UntypedStorage([1, 255])),
                  t.UntypedStorage(3).fill_(7).tolist(), u.clone().data_ptr() == u.data_ptr()]
        return facts

    same(program)


def test_typed_storage_shares_memory():
    def program(t):
        x = t.arange(6.0).reshape(2, 3)
        s = x.storage()
        facts = [s.size(), s.nbytes(), len(s), s.element_size(), str(s.dtype), s.tolist(),
                 s[1], s[-1], s.type(), s.data_ptr() == x.data_ptr(), repr(s),
                 s.untyped().nbytes(), type(s).__name__]
        s[0] = 9
        x[1, 1] = -4
        facts += [x, s.tolist(), s.untyped().data_ptr() == x.untyped_storage().data_ptr()]
        return facts

    same(program)


def test_legacy_storages():
    def program(t):
        made = [t.FloatStorage([1, 2, 3]), t.DoubleStorage([0.5]), t.LongStorage([1, 2]),
                t.IntStorage([3]), t.ByteStorage([255]), t.BoolStorage([True, False]),
                t.HalfStorage([1.5]), t.FloatStorage()]
        facts = [(repr(s), s.size(), s.type(), str(s.dtype)) for s in made]
        facts += [t.FloatStorage(2).size(), t.Storage(3).size()]  # (torch's are not zeroed)
        x = t.ones(2, dtype=t.int64)
        facts += [isinstance(x.storage(), t.LongStorage), isinstance(x.storage(), t.FloatStorage),
                  isinstance(x.storage(), t.TypedStorage), x.storage_type().__name__,
                  t.ones(1, dtype=t.bool).storage_type().__name__, str(t.Storage),
                  t.FloatStorage.__module__, issubclass(t.FloatStorage, t.TypedStorage),
                  issubclass(t.UntypedStorage, t.StorageBase), type(t.LongStorage(2)).__name__,
                  t.typename(t.FloatStorage(1)), t.typename(x.untyped_storage()),
                  t.is_storage(x.storage()), t.is_storage(x.untyped_storage()),
                  t.is_storage(t.FloatStorage(1)), t.is_storage(x)]
        return facts

    same(program)


STORAGE_ERRORS = {
    "base": lambda t: t.StorageBase(),
    "untyped_index": lambda t: t.UntypedStorage(3)[5],
    "typed_index": lambda t: t.FloatStorage(3)[5],
    "typed_slice": lambda t: t.FloatStorage(3)[0:2],
    "legacy_dtype": lambda t: t.FloatStorage(3, dtype=t.float64),
    "set_wrong_dtype": lambda t: t.empty(0, dtype=t.int64).set_(t.ones(2).storage()),
    "set_negative_offset": lambda t: t.empty(0).set_(t.ones(2).storage(), -1, (2,)),
    "set_leaf": lambda t: t.ones(2, requires_grad=True).set_(t.zeros(2)),
    "is_set_to": lambda t: t.ones(2).is_set_to(3),
}


@pytest.mark.parametrize("name", STORAGE_ERRORS)
def test_storage_errors(name):
    same(STORAGE_ERRORS[name])


def test_typed_storage_constructors_and_conversions():
    def program(t):
        wrapped = t.TypedStorage(wrap_storage=t.UntypedStorage(8).fill_(0), dtype=t.float32)
        made = [wrapped, t.TypedStorage([1, 2], dtype=t.float64), t.TypedStorage([1.5]),
                t.TypedStorage(), t.LongStorage([1, 2]).float(), t.FloatStorage([1.5]).long(),
                t.FloatStorage([1.5]).double(), t.IntStorage([0, 2]).bool()]
        return [(repr(s), str(s.dtype)) for s in made]

    same(program)


def test_set_and_is_set_to():
    def program(t):
        x = t.arange(6.0)
        y = t.empty(0)
        result = y.set_(x.storage(), 1, (2,), (2,))
        facts = [result is y, y, y.stride(), y.storage_offset(), y.is_set_to(x),
                 y._version]
        y[0] = -1
        z = t.empty(0).set_(x[2:])
        w = t.tensor([1.0, 2.0])
        w.set_()
        v = t.empty(0).set_(x.untyped_storage())
        with t.no_grad():
            leaf = t.ones(2, requires_grad=True)
            leaf.set_(t.zeros(3))
        facts += [x, z, z.storage_offset(), z.is_set_to(x[2:]), z.is_set_to(x), w, w.shape,
                  w.untyped_storage().size(), v, leaf, t.empty(0).set_(x).is_set_to(x)]
        z[0] = 100
        facts.append(x)
        return facts

    same(program)


def test_complex_storages_refuse():
    for name in ("ComplexFloatStorage", "ComplexDoubleStorage"):
        with pytest.raises(TypeError, match="no complex numbers"):
            getattr(runtime, name)(2)
