"""torch names issue 28 still lacked, each against torch 2.13 (tests/names_oracle.py): the
`*_copy` functions, sym_* on Python numbers, the deprecated linear algebra's errors, and the
other functions of the torch namespace."""

from __future__ import annotations

import warnings

import pytest

from tests.names_oracle import same

# -- the *_copy functions -------------------------------------------------------------------

COPIES = {
    "alias_copy": lambda t, x: t.alias_copy(x),
    "diagonal_copy": lambda t, x: t.diagonal_copy(x, 1, 2, 0),
    "diagonal_copy_default": lambda t, x: t.diagonal_copy(x),
    "expand_copy": lambda t, x: t.expand_copy(x, (2, 2, 3, 4)),
    "permute_copy": lambda t, x: t.permute_copy(x, (2, 0, 1)),
    "select_copy": lambda t, x: t.select_copy(x, 1, -1),
    "slice_copy": lambda t, x: t.slice_copy(x, 2, 1, None, 2),
    "slice_copy_default": lambda t, x: t.slice_copy(x),
    "squeeze_copy": lambda t, x: t.squeeze_copy(x.unsqueeze(1)),
    "squeeze_copy_dim": lambda t, x: t.squeeze_copy(x.unsqueeze(1), 1),
    "squeeze_copy_dims": lambda t, x: t.squeeze_copy(x.unsqueeze(1), (0, 1)),
    "t_copy": lambda t, x: t.t_copy(x[0]),
    "transpose_copy": lambda t, x: t.transpose_copy(x, 0, 2),
    "unfold_copy": lambda t, x: t.unfold_copy(x, 2, 2, 1),
    "unsqueeze_copy": lambda t, x: t.unsqueeze_copy(x, -1),
    "view_copy": lambda t, x: t.view_copy(x, (6, -1)),
    "split_copy": lambda t, x: t.split_copy(x, 3, 2),
    "split_with_sizes_copy": lambda t, x: t.split_with_sizes_copy(x, [1, 3], 2),
    "unbind_copy": lambda t, x: t.unbind_copy(x, 1),
}


@pytest.mark.parametrize("name", COPIES)
def test_copy_values_node_and_gradient(name):
    def program(t):
        x = t.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = COPIES[name](t, x)
        parts = y if isinstance(y, tuple) else (y,)
        weights = [t.arange(float(p.numel())).reshape(p.shape) for p in parts]
        total = sum((p * w).sum() for p, w in zip(parts, weights, strict=True))
        total.backward()
        fresh = [p.is_contiguous() and p.data_ptr() != x.data_ptr() for p in parts]
        return y, x.grad, fresh, [p.output_nr for p in parts]

    same(program)


@pytest.mark.parametrize("name", COPIES)
def test_copy_is_not_a_view(name):
    def program(t):
        x = t.arange(24.0).reshape(2, 3, 4)
        y = COPIES[name](t, x)
        parts = y if isinstance(y, tuple) else (y,)
        for p in parts:
            p.fill_(-1)
        return x, [p._base is None for p in parts]

    same(program)


def test_copies_under_no_grad_and_of_constants():
    def program(t):
        x = t.ones(2, 3, requires_grad=True)
        with t.no_grad():
            a = t.t_copy(x)
        b = t.permute_copy(t.ones(2, 3), (1, 0))
        return a, b, t.unbind_copy(t.ones(2, 2, dtype=t.int64)), t.split_copy(x.detach(), 1)

    same(program)


def test_copy_out_and_second_order():
    def program(t):
        x = t.arange(6.0).reshape(2, 3)
        out = t.empty(0)
        result = t.t_copy(x, out=out)
        leaf = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = t.unsqueeze_copy(leaf * leaf, 0)
        (g,) = t.autograd.grad(y.sum(), leaf, create_graph=True)
        (gg,) = t.autograd.grad(g.sum(), leaf)
        return result is out, out, g, gg

    same(program)


def test_copy_forward_mode():
    def program(t):
        ad = t.autograd.forward_ad
        with ad.dual_level():
            x = ad.make_dual(t.arange(6.0).reshape(2, 3), t.ones(2, 3) * 2)
            y = t.transpose_copy(x, 0, 1)
            return ad.unpack_dual(y).tangent

    import torch

    program(torch)  # torch's first dual tensor imports modules that warn: once, before
    same(program)


def test_copy_out_of_a_tensor_that_requires_grad():
    def program(t):
        x = t.ones(2, 3, requires_grad=True)
        out = t.empty(0)
        result = t.t_copy(x, out=out)
        outcome = [result is out, out, out.is_leaf]
        try:
            out.sum().backward()
        except RuntimeError as error:
            outcome.append(str(error))
        return outcome

    same(program)


def test_detach_copy():
    def program(t):
        x = t.ones(2, requires_grad=True)
        y = t.detach_copy(x * 2)
        outcome = [y, y.grad_fn.name(), y._base is None]
        try:
            y.sum().backward()
        except RuntimeError as error:
            outcome.append(str(error))
        with t.no_grad():
            outcome.append(t.detach_copy(x))
        return outcome

    same(program)


ERRORS = {
    "slice_step": lambda t, x: t.slice_copy(x, 2, 0, 10, 0),
    "select_range": lambda t, x: t.select_copy(x, 0, 5),
    "t_3d": lambda t, x: t.t_copy(x),
    "transpose_dim": lambda t, x: t.transpose_copy(x, 0, 3),
    "view_size": lambda t, x: t.view_copy(x, (5, 5)),
    "expand_sizes": lambda t, x: t.expand_copy(x, (3,)),
    "diagonal_same": lambda t, x: t.diagonal_copy(x, 0, 0, 0),
    "indices": lambda t, x: t.indices_copy(x),
    "values": lambda t, x: t.values_copy(x),
    "out_bad": lambda t, x: t.t_copy(x[0], out=t.zeros(4, 3, dtype=t.int64)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_copy_errors(name):
    same(lambda t: ERRORS[name](t, t.arange(24.0).reshape(2, 3, 4)))


DTYPE_VIEWS = {
    "same_size": lambda t, x: t.view_copy(x, t.int32),
    "same_size_strided": lambda t, x: t.view_copy(x.t(), t.int32),
    "smaller": lambda t, x: t.view_copy(x, t.uint8),
    "larger": lambda t, x: t.view_copy(x.reshape(3, 2), t.float64),
    "larger_odd": lambda t, x: t.view_copy(x, t.float64),
    "scalar": lambda t, x: t.view_copy(x[0, 0], t.float64),
    "strided_smaller": lambda t, x: t.view_copy(x.reshape(3, 2).t(), t.float16),
    "no_graph": lambda t, x: t.view_copy(x.requires_grad_(), t.float32),
}


@pytest.mark.parametrize("name", DTYPE_VIEWS)
def test_view_copy_to_a_dtype(name):
    same(lambda t: DTYPE_VIEWS[name](t, t.arange(6.0).reshape(2, 3)))


# -- sym_* on Python numbers --------------------------------------------------------------------

SYMS = {
    "int": lambda t: [t.sym_int(2.7), t.sym_int(-2.7), t.sym_int(3), t.sym_int(True)],
    "int_str": lambda t: t.sym_int("a"),
    "int_tensor": lambda t: t.sym_int(t.tensor(2.5)),
    "float": lambda t: [t.sym_float(3), t.sym_float(3.5), t.sym_float(t.tensor(2))],
    "float_str": lambda t: t.sym_float("x"),
    "max_min": lambda t: [t.sym_max(2, 3.5), t.sym_max(2, 3), t.sym_max(2.0, 3),
                          t.sym_min(2, 3.5), t.sym_min(5, 3)],
    "max_types": lambda t: [type(t.sym_max(2, 3)), type(t.sym_max(2.0, 3)),
                            type(t.sym_min(2, 3.5))],
    "max_tensor": lambda t: "numpy.integer" in str(_error(lambda: t.sym_max(t.tensor(2), 3))),
    "not": lambda t: [t.sym_not(True), t.sym_not(0), t.sym_not(t.tensor(True))],
    "sqrt": lambda t: [t.sym_sqrt(4), t.sym_sqrt(t.tensor(4.0))],
    "sqrt_negative": lambda t: t.sym_sqrt(-1),
    "sum": lambda t: [t.sym_sum([1, 2, 3]), t.sym_sum([1, 2.5]), t.sym_sum([]),
                      t.sym_sum(1, 2)],
    "ite": lambda t: [t.sym_ite(True, 1, 2), t.sym_ite(False, 1, 2)],
    "ite_int": lambda t: t.sym_ite(1, 1, 2),
    "ite_types": lambda t: t.sym_ite(True, 1, 2.0),
    "fresh_size": lambda t: [t.sym_fresh_size(5), t.sym_fresh_size(2.5)],
    "range": lambda t: [t.sym_constrain_range(2, min=0, max=3), t.sym_constrain_range(-5),
                        t.sym_constrain_range_for_size(0), t.sym_constrain_range(size=3)],
    "range_above": lambda t: t.sym_constrain_range(5, min=0, max=3),
    "range_max": lambda t: t.sym_constrain_range(5, max=3),
    "range_min": lambda t: t.sym_constrain_range(-5, min=3),
    "range_bool": lambda t: t.sym_constrain_range(True, min=6),
    "range_tensor": lambda t: t.sym_constrain_range(t.tensor(5), min=6),
    "range_float_bound": lambda t: t.sym_constrain_range(5, min=6.0),
    "range_positional": lambda t: t.sym_constrain_range(5, 0, 3),
    "size_negative": lambda t: t.sym_constrain_range_for_size(-2),
    "size_max": lambda t: t.sym_constrain_range_for_size(5, max=3),
}


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the message is looked at
        return error
    return None


@pytest.mark.parametrize("name", SYMS)
def test_sym(name):
    same(SYMS[name])


# -- removed linear algebra, dense products, error classes, memory formats ---------------------

REMOVED = {
    "matrix_rank": lambda t, x: t.matrix_rank(x),
    "solve": lambda t, x: t.solve(x, x),
    "lstsq": lambda t, x: t.lstsq(x, x),
    "symeig": lambda t, x: t.symeig(x, eigenvectors=True),
    "eig": lambda t, x: t.eig(x),
    "method_solve": lambda t, x: x.solve(x),
    "method_lstsq": lambda t, x: x.lstsq(x),
    "method_symeig": lambda t, x: x.symeig(),
    "method_eig": lambda t, x: x.eig(True),
}


@pytest.mark.parametrize("name", REMOVED)
def test_removed_linear_algebra(name):
    same(lambda t: REMOVED[name](t, t.eye(3)))


def test_products_on_dense_inputs():
    def program(t):
        a = t.arange(6.0).reshape(2, 3).requires_grad_()
        b = t.arange(6.0).reshape(3, 2)
        y = t.dsmm(a, b) + t.spmm(a, b)
        y.sum().backward()
        return y, a.grad, str(_error(lambda: t.saddmm(t.ones(2, 2), a, b)))

    same(program)
    import torch

    import runtime

    for lib in (torch, runtime):
        error = _error(lambda lib=lib: lib.hsmm(lib.ones(2, 3), lib.ones(3, 2)))
        assert type(error) is NotImplementedError
        assert str(error).startswith("Could not run 'aten::hspmm' with arguments from the "
                                     "'CPU' backend. This could be because the operator "
                                     "doesn't exist for this backend")


def test_error_classes_and_memory_formats():
    def program(t):
        classes = [t.AcceleratorError, t.OutOfMemoryError, t.FatalError]
        bases = [[b.__name__ for b in c.__mro__[1:]] for c in classes]
        formats = [repr(f) for f in (t.contiguous_format, t.preserve_format, t.channels_last,
                                     t.channels_last_3d)]
        kinds = [isinstance(t.channels_last, t.memory_format), t.memory_format.__name__]
        return bases, formats, kinds, str(_error(t.memory_format))

    same(program)


def test_error_classes_are_raised_and_caught():
    import runtime

    for name in ("AcceleratorError", "OutOfMemoryError"):
        with pytest.raises(RuntimeError, match="boom"):
            raise getattr(runtime, name)("boom")


# -- tensors over other objects' memory ---------------------------------------------------------

ASARRAY = {
    "numpy": lambda t, np: t.asarray(np.arange(3.0)),
    "list": lambda t, np: [t.asarray([1, 2.5]), t.asarray([1, 2]), t.asarray(3.5)],
    "tensor_same": lambda t, np: [t.asarray(x := t.ones(2)) is x,
                                  t.asarray(x, copy=True) is x,
                                  t.asarray(x, dtype=t.float64)],
    "tensor_alias_dtype": lambda t, np: t.asarray(t.ones(2), copy=False, dtype=t.float64),
    "numpy_alias_dtype": lambda t, np: t.asarray(np.ones(2), copy=False, dtype=t.float32),
    "list_alias": lambda t, np: t.asarray([1, 2], copy=False),
    "requires_grad": lambda t, np: [t.asarray(x := t.ones(2), requires_grad=True) is x,
                                    x.requires_grad, t.asarray(np.ones(2), requires_grad=True)],
    "bytes": lambda t, np: t.asarray(bytearray(b"\x01\x02"), dtype=t.uint8),
    "bytes_float": lambda t, np: t.asarray(bytearray(b"\x01\x02")),
    "tensors": lambda t, np: t.asarray([t.tensor(1.0), t.tensor(2.0)]),
    "str": lambda t, np: t.asarray("abc"),
    "numpy_scalar": lambda t, np: t.asarray(np.int64(3)),
}


@pytest.mark.parametrize("name", ASARRAY)
def test_asarray(name):
    import numpy

    same(lambda t: ASARRAY[name](t, numpy))


def test_asarray_shares_a_numpy_array():
    import numpy as np

    def program(t):
        array = np.arange(3.0)
        shared, copied = t.asarray(array), t.asarray(array, copy=True)
        array[0] = 9
        return shared, copied

    same(program)


FROMBUFFER = {
    "int32": lambda t: t.frombuffer(bytearray(b"\x01\x02\x03\x04"), dtype=t.int32),
    "count_offset": lambda t: t.frombuffer(bytearray(range(8)), dtype=t.uint8, count=3,
                                           offset=4),
    "not_a_multiple": lambda t: t.frombuffer(bytearray(6), dtype=t.int32),
    "offset_past": lambda t: t.frombuffer(bytearray(8), dtype=t.int32, offset=9),
    "count_past": lambda t: t.frombuffer(bytearray(8), dtype=t.int32, count=3),
    "empty": lambda t: t.frombuffer(bytearray(0), dtype=t.int32),
    "count_zero": lambda t: t.frombuffer(bytearray(8), dtype=t.int32, count=0),
    "no_buffer": lambda t: t.frombuffer([1, 2], dtype=t.int32),
    "requires_grad": lambda t: t.frombuffer(bytearray(8), dtype=t.float32, requires_grad=True),
}


@pytest.mark.parametrize("name", FROMBUFFER)
def test_frombuffer(name):
    same(FROMBUFFER[name])


def test_frombuffer_shares_the_buffer():
    def program(t):
        buffer = bytearray(8)
        x = t.frombuffer(buffer, dtype=t.int32)
        x[1] = 258
        buffer[0] = 5
        return x, bytes(buffer)

    same(program)


def test_from_file(tmp_path):
    import numpy as np

    path = tmp_path / "data.bin"

    def program(t):
        np.arange(6, dtype=np.float32).tofile(path)
        plain = t.from_file(str(path), size=4)
        shared = t.from_file(str(path), shared=True, size=6, dtype=t.float32)
        shared[0] = 42
        again = t.from_file(str(path), size=2)
        grown = t.from_file(str(tmp_path / "new.bin"), shared=True, size=3)
        return [plain, shared, again, grown, (tmp_path / "new.bin").stat().st_size,
                str(_error(lambda: t.from_file(str(path), size=10))),
                str(_error(lambda: t.from_file(str(tmp_path / "none.bin"), size=1))),
                t.from_file(str(path))]

    same(program)


def test_dlpack_both_ways():
    import numpy as np
    import torch

    import runtime

    ours = runtime.arange(4.0)
    theirs = torch.from_dlpack(runtime.to_dlpack(ours))
    theirs[0] = 7
    assert ours.tolist() == [7.0, 1.0, 2.0, 3.0]
    back = runtime.from_dlpack(torch.to_dlpack(theirs))
    back[1] = 8
    assert theirs.tolist() == [7.0, 8.0, 2.0, 3.0]
    array = np.arange(3)
    shared = runtime.from_dlpack(array)
    array[2] = 5
    assert shared.tolist() == [0, 1, 5] and shared.dtype == runtime.int64
    same(lambda t: t.from_dlpack(t.to_dlpack(t.ones(2, requires_grad=True))))


# -- gradient ---------------------------------------------------------------------------------

GRADIENTS = {
    "default": lambda t, x: t.gradient(x),
    "spacing": lambda t, x: t.gradient(x, spacing=0.5, dim=1),
    "spacings": lambda t, x: t.gradient(x, spacing=[2.0, 0.5]),
    "order_2": lambda t, x: t.gradient(x, edge_order=2, dim=-1),
    "coordinates": lambda t, x: t.gradient(x, spacing=(t.tensor([0.0, 1.0, 1.5, 3.5]),),
                                           dim=1),
    "coordinates_2": lambda t, x: t.gradient(x, spacing=(t.tensor([0.0, 1.0, 1.5, 3.5]),),
                                             dim=1, edge_order=2),
    "dims": lambda t, x: t.gradient(x, dim=(0, 1)),
    "ints": lambda t, x: t.gradient(t.tensor([1, 4, 9, 16])),
    "bad_order": lambda t, x: t.gradient(x, edge_order=3),
    "too_short": lambda t, x: t.gradient(x, edge_order=2),
    "bad_spacing": lambda t, x: t.gradient(x, spacing=[1.0, 2.0, 3.0]),
}


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradient(name):
    def program(t):
        x = t.tensor([[1.0, 2.0, 4.0, 7.0], [0.0, 3.0, 2.0, 9.0]], requires_grad=True)
        results = GRADIENTS[name](t, x)
        total = sum((r * t.arange(float(r.numel())).reshape(r.shape)).sum() for r in results
                    if r.is_floating_point())
        if total.requires_grad:
            total.backward()
        return [r.detach() for r in results], x.grad

    same(program)


# -- the rest ------------------------------------------------------------------------------

def test_dropout_in_place_and_vmap():
    def program(t):
        t.manual_seed(0)
        x = t.ones(8)
        y = t.dropout_(x, 0.5, True)
        kept = t.dropout_(t.ones(3), 0.5, False)
        batched = t.vmap(lambda row: row.sum())(t.arange(6.0).reshape(2, 3))
        return y is x, x, kept, batched

    same(program)


def test_get_device_module():
    def program(t):
        cpu = t.get_device_module()
        return [cpu.is_available(), cpu.device_count(), cpu.current_device(),
                t.get_device_module("cpu") is cpu, t.get_device_module(t.device("cpu")) is cpu,
                t.get_device_module("cuda") is t.cuda, str(_error(lambda: t.get_device_module(3))),
                str(_error(lambda: t.get_device_module("meta")))]

    same(program)


def test_reinforce_and_module_load():
    def program(t):
        p = t.nn.Parameter(t.zeros(3))
        loaded = p.module_load(t.ones(3))
        other = t.full((3,), 2.0, requires_grad=True)
        assigned = p.module_load(other, assign=True)
        return [str(_error(lambda: t.ones(1).reinforce(1.0))), loaded, p.detach(), loaded is p,
                assigned, assigned is other, str(_error(lambda: t.ones(1).record_stream(None))),
                str(_error(lambda: t.ones(1).record_stream(1)))]

    same(program)


# -- int8 and int16 -------------------------------------------------------------------------

NARROW_INTS = {
    "repr": lambda t: [t.tensor([1, -2, 3], dtype=t.int8), t.tensor([[1, -200], [3, 4]],
                                                                    dtype=t.int16)],
    "char_short": lambda t: [t.tensor([1.7, -2.5, 300.0]).char(),
                             t.tensor([1.7, -2.5, 70000.0]).short()],
    "promotion": lambda t: [t.tensor([1, 2], dtype=t.int8) + t.tensor([1, 2], dtype=t.uint8),
                            t.tensor([1, 2], dtype=t.int8) + t.tensor([1, 2], dtype=t.int16),
                            t.tensor([1, 2], dtype=t.int16) + t.tensor([1, 2], dtype=t.int32),
                            t.tensor([1, 2], dtype=t.int8) * 1.5,
                            t.tensor([1, 2], dtype=t.int16) / 2,
                            t.promote_types(t.int8, t.uint8), t.promote_types(t.int16, t.float16)],
    "wrapping": lambda t: [t.tensor([100, 2], dtype=t.int8) + 100,
                           t.tensor([100, 2], dtype=t.int8) + 1000,
                           t.tensor([100, 2], dtype=t.uint8) + 1000,
                           t.tensor([100, 2], dtype=t.int16) - 70000,
                           -t.tensor([-128, 2], dtype=t.int8),
                           t.tensor([100], dtype=t.int8).mul_(3)],
    "reductions": lambda t: [t.tensor([100, 100], dtype=t.int8).sum(),
                             t.tensor([100, 100], dtype=t.int8).cumsum(0),
                             t.tensor([1, 5, 2], dtype=t.int8).max(),
                             t.tensor([100, 100], dtype=t.int16).prod()],
    "legacy": lambda t: [t.CharTensor([1, 2]), t.ShortTensor([3]),
                         isinstance(t.tensor([1], dtype=t.int8), t.CharTensor),
                         t.tensor([1], dtype=t.int8).type(), t.tensor([1], dtype=t.int16).type(),
                         t.ones(2).type("torch.CharTensor"), t.short, t.int8,
                         t.iinfo(t.int8).min, t.iinfo(t.int16).max],
    "facts": lambda t: [t.ones(1, dtype=t.int8).element_size(),
                        t.ones(1, dtype=t.int16).is_signed(),
                        t.zeros(2, dtype=t.int8), t.arange(3, dtype=t.int16),
                        t.tensor([1], dtype=t.int16).tolist(),
                        t.tensor([-7], dtype=t.int8) // 2],
    "mean": lambda t: t.tensor([100, 100], dtype=t.int8).mean(),
    "full_overflow": lambda t: t.full((2,), 300, dtype=t.int8),
    "mm_mixed": lambda t: t.ones(2, 2, dtype=t.int8).mm(t.ones(2, 2)),
    "in_place_float": lambda t: t.tensor([1], dtype=t.int8).add_(1.5),
    "requires_grad": lambda t: t.ones(2, dtype=t.int8).requires_grad_(),
    "index": lambda t: t.arange(5)[t.tensor([1, 2], dtype=t.int8)],
    "index_select": lambda t: t.arange(5).gather(0, t.tensor([1, 2], dtype=t.int16)),
    "embedding": lambda t: t.nn.functional.embedding(t.tensor([1], dtype=t.int16), t.ones(3, 2)),
    "cross_entropy": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3),
                                                             t.tensor([1, 2], dtype=t.int8)),
}


@pytest.mark.parametrize("name", NARROW_INTS)
def test_int8_and_int16(name):
    same(NARROW_INTS[name])


def test_int8_and_int16_numpy_round_trip():
    import numpy as np

    same(lambda t: [t.from_numpy(np.array([1, -2], np.int8)), t.tensor(np.array([3], np.int16)),
                    t.tensor([1], dtype=t.int8).numpy().dtype.name])


# -- svd_lowrank, pca_lowrank ------------------------------------------------------------------
# Singular vectors are defined up to their signs (LAPACK's choice may differ from numpy's):
# compared are the singular values, the vectors' magnitudes, the low-rank product and the
# gradient of a sign-blind function of them.

LOWRANK = {
    "svd_tall": lambda t: t.svd_lowrank(t.randn(6, 4, requires_grad=True), q=2, niter=3),
    "svd_wide": lambda t: t.svd_lowrank(t.randn(3, 7, requires_grad=True), q=3),
    "svd_batch_M": lambda t: t.svd_lowrank(t.randn(2, 5, 3, requires_grad=True), q=2,
                                           M=t.ones(5, 3)),
    "pca": lambda t: t.pca_lowrank(t.randn(7, 3, requires_grad=True)),
    "pca_q": lambda t: t.pca_lowrank(t.randn(5, 4, requires_grad=True), q=2, niter=1),
    "pca_uncentered": lambda t: t.pca_lowrank(t.randn(4, 6, requires_grad=True), center=False),
}


@pytest.mark.parametrize("name", LOWRANK)
def test_lowrank(name):
    def program(t):
        t.manual_seed(0)
        U, S, V = LOWRANK[name](t)
        A = U @ t.diag_embed(S) @ V.mT  # noqa: N806
        leaf = next(iter(x for x in (U, S, V) if x.requires_grad)).grad_fn is not None
        (S.sum() + A.pow(2).sum() + U.abs().sum() + V.abs().sum()).backward()
        return S.detach(), U.detach().abs(), V.detach().abs(), A.detach(), leaf

    same(program, rtol=1e-4, atol=1e-5)


def test_lowrank_gradient():
    def program(t):
        t.manual_seed(0)
        A = t.randn(6, 4, requires_grad=True)  # noqa: N806
        U, S, V = t.svd_lowrank(A, q=2)
        (S.sum() + U.abs().sum()).backward()
        return A.grad

    same(program, rtol=1e-4, atol=1e-5)


LOWRANK_ERRORS = {
    "q_large": lambda t: t.pca_lowrank(t.ones(3, 2), q=3),
    "q_negative": lambda t: t.pca_lowrank(t.ones(3, 2), q=-1),
    "niter": lambda t: t.pca_lowrank(t.ones(3, 2), niter=-1),
}


@pytest.mark.parametrize("name", LOWRANK_ERRORS)
def test_lowrank_errors(name):
    same(LOWRANK_ERRORS[name])


def test_a_tensor_speaks_dlpack():
    import numpy as np
    import torch

    import runtime

    x = runtime.arange(3.0)
    np.from_dlpack(x)[0] = 5
    torch.from_dlpack(x)[1] = 7
    assert x.tolist() == [5.0, 7.0, 2.0]
    assert tuple(x.__dlpack_device__()) == tuple(torch.ones(1).__dlpack_device__())
    same(lambda t: t.ones(2, requires_grad=True).__dlpack__())

    def program(t):
        x = t.ones(2)
        y = t.from_dlpack(x)
        y.add_(1)
        return [y is x, x, y.data_ptr() == x.data_ptr(),
                str(_error(lambda: t.from_dlpack(t.ones(2, requires_grad=True))))]

    same(program)


# -- lobpcg ---------------------------------------------------------------------------------
# gradgen's iteration is the textbook LOBPCG, torch's its "ortho" variant: both stop at the
# tolerance, so the eigenvalues agree to it and the eigenvectors up to sign.

def _spd(t, size, dtype):
    m = t.randn(size, size, dtype=dtype)
    return m @ m.mT + t.eye(size, dtype=dtype)


LOBPCG = {
    "largest": lambda t: t.lobpcg(_spd(t, 20, t.float64), k=3),
    "smallest": lambda t: t.lobpcg(_spd(t, 20, t.float64), k=2, largest=False),
    "generalized": lambda t: t.lobpcg(_spd(t, 15, t.float64), k=2, B=2 * t.eye(15,
                                                                             dtype=t.float64)),
    "float32": lambda t: t.lobpcg(_spd(t, 12, t.float32), k=1),
    "start_block": lambda t: t.lobpcg(_spd(t, 16, t.float64), X=t.randn(16, 3,
                                                                         dtype=t.float64)),
    "batched": lambda t: t.lobpcg(t.stack([_spd(t, 9, t.float64)] * 2) * t.tensor(
        [1.0, 2.0], dtype=t.float64).reshape(2, 1, 1), k=1),
    "preconditioned": lambda t: t.lobpcg(_spd(t, 12, t.float64), k=1,
                                         iK=t.eye(12, dtype=t.float64) * 0.5),
}


@pytest.mark.parametrize("name", LOBPCG)
def test_lobpcg(name):
    def program(t):
        t.manual_seed(0)
        values, vectors = LOBPCG[name](t)
        return values, vectors.abs()

    # float32's tolerance (the root of its epsilon) leaves the vectors that far apart
    same(program, rtol=1e-3, atol=5e-3 if name == "float32" else 1e-4)


LOBPCG_ERRORS = {
    "not_square": lambda t: t.lobpcg(t.ones(4, 3)),
    "shapes": lambda t: t.lobpcg(t.eye(6), B=t.eye(5)),
    "too_many": lambda t: t.lobpcg(t.eye(6), k=3),
    "start_shape": lambda t: t.lobpcg(t.eye(9), k=2, n=2, X=t.ones(8, 2)),
}


@pytest.mark.parametrize("name", LOBPCG_ERRORS)
def test_lobpcg_errors(name):
    same(LOBPCG_ERRORS[name])


def test_lobpcg_refuses_a_gradient_it_cannot_give():
    import runtime

    a = runtime.eye(9, requires_grad=True)
    with pytest.raises(NotImplementedError, match="no gradient"):
        runtime.lobpcg(a, k=1)
    with runtime.no_grad():
        values, _ = runtime.lobpcg(a * 2, k=1)
    assert values.tolist() == pytest.approx([2.0])


# -- embedding_renorm_ and embedding's max_norm ---------------------------------------------------

RENORM = {
    "l2": lambda t: t.embedding_renorm_(t.arange(12.0).reshape(4, 3), t.tensor([0, 2, 2]),
                                        5.0, 2.0),
    "l1_int32": lambda t: t.embedding_renorm_(t.arange(12.0).reshape(4, 3),
                                              t.tensor([1], dtype=t.int32), 1.0, 1.0),
    "3d": lambda t: t.embedding_renorm_(t.ones(2, 2, 2), t.tensor([1]), 1.0, 1.0),
    "float_indices": lambda t: t.embedding_renorm_(t.ones(2, 2), t.tensor([1.0]), 1.0, 1.0),
    "out_of_range": lambda t: t.embedding_renorm_(t.ones(2, 2), t.tensor([5]), 1.0, 1.0),
    "leaf": lambda t: t.embedding_renorm_(t.ones(2, 2, requires_grad=True), t.tensor([1]),
                                          1.0, 1.0),
    "functional": lambda t: (lambda w: (t.nn.functional.embedding(t.tensor([[0, 3]]), w,
                                                                  max_norm=2.0), w))(
        t.arange(12.0).reshape(4, 3).requires_grad_()),
}


@pytest.mark.parametrize("name", RENORM)
def test_embedding_renorm(name):
    same(RENORM[name])


def test_embedding_module_with_max_norm():
    def program(t):
        t.manual_seed(0)
        layer = t.nn.Embedding(5, 3, max_norm=1.0, norm_type=1.5)
        y = layer(t.tensor([1, 1, 4]))
        y.sum().backward()
        return y, layer.weight, layer.weight.grad, layer.weight._version

    same(program)


# -- chain_matmul, native_channel_shuffle, BFloat16Tensor ---------------------------------------

@pytest.fixture
def _chain_matmul_warned():
    """torch warns once per process (per call site) that chain_matmul is deprecated: both
    have warned before the compared programs run."""
    import torch

    import runtime

    for lib in (torch, runtime):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.chain_matmul(lib.ones(1, 1))
            lib.chain_matmul(lib.ones(1, 1), out=lib.empty(0))


CHAIN = {
    "three": lambda t: t.chain_matmul(t.arange(6.0).reshape(2, 3).requires_grad_(),
                                      t.ones(3, 2), t.ones(2, 2)),
    "one": lambda t: t.chain_matmul(t.ones(2, 2, requires_grad=True)),
    "none": lambda t: t.chain_matmul(),
    "3d": lambda t: t.chain_matmul(t.ones(2, 3, 4), t.ones(4, 2)),
    "1d": lambda t: t.chain_matmul(t.ones(3)),
    "mismatch": lambda t: t.chain_matmul(t.ones(2, 3), t.ones(2, 3)),
    "out": lambda t: t.chain_matmul(t.ones(2, 2), t.ones(2, 2), out=t.empty(0)),
}


@pytest.mark.usefixtures("_chain_matmul_warned")
@pytest.mark.parametrize("name", CHAIN)
def test_chain_matmul(name):
    same(CHAIN[name])


def test_chain_matmul_warns_once_as_torch():
    import runtime

    runtime.more_names._warned_chain_matmul[0] = False
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        runtime.chain_matmul(runtime.ones(1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runtime.chain_matmul(runtime.ones(1, 1))


def test_native_channel_shuffle():
    def program(t):
        x = t.arange(16.0).reshape(1, 4, 2, 2).requires_grad_()
        y = t.native_channel_shuffle(x, 2)
        outcome = [y, y.grad_fn.name(), str(_error(lambda: y.sum().backward())),
                   str(_error(lambda: t.native_channel_shuffle(x, 3)))]
        with t.no_grad():
            outcome.append(t.native_channel_shuffle(x, 4))
        return outcome

    same(program)


def test_bfloat16_tensor_type():
    def program(t):
        return [t.BFloat16Tensor.__name__, isinstance(t.ones(1), t.BFloat16Tensor),
                str(t.BFloat16Tensor)]

    same(program)
    same(lambda t: [t.BFloat16Tensor([1.0, 2.5]), t.BFloat16Tensor(2, 3).shape])
