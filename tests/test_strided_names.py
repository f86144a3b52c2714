"""Shape and tensor-identity names against torch: chunk's graph (split's nodes, as torch's
chunk decomposes), Tensor.view(dtype), hash_tensor, conj_physical_,
_new_zeros_with_same_feature_meta, _efficientzerotensor and Tensor.index."""

from __future__ import annotations

import pytest

from tests.oracle import same, same_outcome


def test_chunk_records_split_s_nodes_as_torch_s() -> None:
    def program(lib):
        x = lib.arange(1.0, 13.0, requires_grad=True)
        y = x.view(3, 4) * 1
        pieces = lib.chunk(y, 3, dim=1)
        more = y.chunk(2)
        empty = lib.zeros(2, 0, requires_grad=True).chunk(3, dim=1)
        loss = sum((p * (i + 1)).sum() for i, p in enumerate(pieces)) + (more[1] ** 2).sum()
        loss.backward()
        return ([p.grad_fn.name() for p in pieces], [list(p.shape) for p in pieces],
                [m.grad_fn.name() for m in more], [e.grad_fn.name() for e in empty],
                [list(e.shape) for e in empty], x.grad.tolist())
    same(program)


@pytest.mark.parametrize("make, chunks, dim", [
    (lambda lib: lib.tensor(1.0), 2, 0), (lambda lib: lib.ones(3), 0, 0),
    (lambda lib: lib.ones(3), -1, 0), (lambda lib: lib.ones(3), 2, 1),
])
def test_chunk_errors(make, chunks, dim) -> None:
    def program(lib):
        return [p.tolist() for p in lib.chunk(make(lib), chunks, dim)]
    same(program)


@pytest.mark.parametrize("make, dtype", [
    (lambda lib: lib.arange(6.0), "int32"), (lambda lib: lib.arange(6.0), "float16"),
    (lambda lib: lib.arange(6.0), "float64"), (lambda lib: lib.arange(6.0), "bool"),
    (lambda lib: lib.arange(4.0), "complex64"), (lambda lib: lib.tensor(1.0), "int32"),
    (lambda lib: lib.tensor(1.0), "float16"),
    (lambda lib: lib.arange(12.0).view(3, 4).t(), "float16"),
    (lambda lib: lib.arange(12.0).view(3, 4).t(), "int32"),
    (lambda lib: lib.arange(12.0).view(3, 4)[:, :3], "float64"),
    (lambda lib: lib.arange(12.0).view(3, 4)[:, 1:3], "float64"),
    (lambda lib: lib.arange(12.0).view(6, 2)[1:], "float64"),
    (lambda lib: lib.arange(12.0).view(4, 3)[:, :2], "float64"),
    (lambda lib: lib.arange(5.0)[1:], "float64"),
    (lambda lib: lib.arange(6, dtype=lib.int16), "complex64"),
    (lambda lib: lib.arange(8, dtype=lib.uint8), "float32"),
    (lambda lib: lib.zeros(2, 0), "float64"),
])
def test_view_dtype_reads_the_bytes_as_torch_does(make, dtype) -> None:
    def program(lib):
        result = make(lib).view(getattr(lib, dtype))
        return (str(result.dtype), list(result.shape), result.stride(),
                result.storage_offset(), result.tolist())
    same(program)


def test_view_dtype_shares_memory_and_version_but_is_no_view_for_autograd() -> None:
    def program(lib):
        x = lib.arange(1.0, 5.0, requires_grad=True)
        y = x * 1
        bits = y.view(lib.int32)
        by_keyword = y.view(dtype=lib.int64)
        facts = (bits.requires_grad, bits.grad_fn, bits._base, bits._is_view(),
                 by_keyword.tolist())
        plain = lib.arange(4.0)
        ints = plain.view(lib.int32)
        ints[0] = 1
        y.add_(1)
        return (facts, plain.tolist(), plain._version, ints._version, ints._base,
                (bits + 1).requires_grad, bits.grad_fn, lib.view_copy(y, lib.int16).tolist()[:4])
    same(program)


def test_conj_physical_in_place_records_its_node_as_torch_s() -> None:
    def program(lib):
        z = lib.tensor([1.0 + 2.0j, -3.0 + 0.5j], requires_grad=True)
        y = z * 1
        returned = lib.conj_physical_(y)
        facts = (returned is y, y.tolist(), y.grad_fn.name(), y._version)
        (y * lib.tensor([2.0 - 1.0j, 0.5 + 3.0j])).real.sum().backward()
        r = lib.tensor([1.0, -3.0], requires_grad=True) * 1
        r.conj_physical_()
        (r * 2).sum().backward()
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(z.detach().clone(), lib.tensor([1j, 1.0]))
            dual.conj_physical_()
            tangent = lib.autograd.forward_ad.unpack_dual(dual).tangent
        return facts, z.grad.tolist(), r.grad_fn.name(), r._version, tangent.tolist()
    same_outcome(program)  # (torch's first forward-mode use may warn once per process)


@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(5.0), lambda lib: lib.arange(5), lambda lib: lib.tensor([1.0]),
    lambda lib: lib.tensor([1.0, -2.5, 1e30], dtype=lib.float64),
    lambda lib: lib.tensor([True, False, True]), lambda lib: lib.tensor([-1, 7], dtype=lib.int8),
    lambda lib: lib.tensor([1.5, -0.25], dtype=lib.float16),
    lambda lib: lib.tensor([1.5, 3.0], dtype=lib.bfloat16),
    lambda lib: lib.tensor([float("nan"), float("inf"), -0.0]),
    lambda lib: lib.tensor([3, 200], dtype=lib.uint8), lambda lib: lib.tensor(3.0),
    lambda lib: lib.tensor([1 + 2j]), lambda lib: lib.zeros(0),
])
def test_hash_tensor_bit_for_bit(make) -> None:
    def program(lib):
        result = lib.hash_tensor(make(lib))
        return str(result.dtype), list(result.shape), result.tolist(), repr(result)
    same(program)


@pytest.mark.parametrize("kwargs", [
    {"dim": 1}, {"dim": (0, 1)}, {"dim": 0, "keepdim": True}, {"dim": -1, "keepdim": True},
    {"mode": 1}, {"dim": 2}, {"dim": (1, 1)},
])
def test_hash_tensor_over_dims_and_its_errors(kwargs) -> None:
    def program(lib):
        x = lib.arange(12.0).view(3, 4) - 5.5
        return (lib.hash_tensor(x, **kwargs).tolist(), x.hash_tensor(**kwargs).tolist(),
                lib.hash_tensor(lib.zeros(2, 0), dim=0).tolist())
    same(program)


def test_hash_tensor_of_an_empty_dimension() -> None:
    def program(lib):
        return lib.hash_tensor(lib.zeros(2, 0), dim=1).tolist()
    same(program)


@pytest.mark.parametrize("make_self, make_other, batch_dims", [
    (lambda lib: lib.ones(3, 4), lambda lib: lib.ones(2, 5, 6), 0),
    (lambda lib: lib.ones(3, 4), lambda lib: lib.ones(2, 5, 6), 1),
    (lambda lib: lib.ones(3, 4, 2), lambda lib: lib.ones(2, 5, 6).transpose(0, 2), 2),
    (lambda lib: lib.ones(5, 3, dtype=lib.float64), lambda lib: lib.arange(10.0)[2:].view(2, 4),
     1),
    (lambda lib: lib.ones(3), lambda lib: lib.tensor(2, dtype=lib.int64), 0),
])
def test_new_zeros_with_same_feature_meta_lays_zeros_out_as_torch(make_self, make_other,
                                                                  batch_dims) -> None:
    """torch's op is torch.ops.aten's only; gradgen's is the spec's (generated.ops)."""
    import torch

    import runtime
    from generated import ops

    ours = ops._new_zeros_with_same_feature_meta(make_self(runtime), make_other(runtime),
                                                 self_num_batch_dims=batch_dims)
    theirs = torch.ops.aten._new_zeros_with_same_feature_meta(
        make_self(torch), make_other(torch), self_num_batch_dims=batch_dims)
    assert (str(ours.dtype), ours.shape, ours.stride(), ours.storage_offset(),
            ours.untyped_storage().nbytes(), ours.tolist(), ours.requires_grad) == \
        (str(theirs.dtype), theirs.shape, theirs.stride(), theirs.storage_offset(),
         theirs.untyped_storage().nbytes(), theirs.tolist(), theirs.requires_grad)


@pytest.mark.parametrize("size, dtype", [((2, 3), None), ((4,), "float64"), ((), "int64"),
                                         ((3, 1), "bool"), ((2, -1), None)])
def test_efficientzerotensor_gives_torch_s_zeros(size, dtype) -> None:
    """torch's result is a ZeroTensor (no memory, read with force=True); gradgen's, the
    spec's op (generated.ops, not bound to Python), plain zeros of the same dtype."""
    import torch

    import runtime
    from generated import ops

    def outcome(make, lib):
        try:
            result = make(size, dtype=None if dtype is None else getattr(lib, dtype))
        except RuntimeError as error:
            return str(error)
        values = result.numpy(force=True) if lib is torch else result.numpy()
        return str(result.dtype), tuple(result.shape), result.stride(), values.tolist()

    assert outcome(ops._efficientzerotensor, runtime) == \
        outcome(torch._efficientzerotensor, torch)
