"""gradgen's random numbers against torch's, bit for bit.

Each test runs one program on torch and on gradgen after the same seed (or with
Generators seeded alike) and compares the results' dtypes, shapes and raw bytes. torch's
float32 normal kernel for 16 or more elements is its AVX2 one (what CPUs with AVX2 or
AVX512 run): the tests that draw with it say so.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import runtime as rt

SEEDS = [0, 1, 2**40 + 7]  # the last above 2^32: only its low 32 bits seed the state
SIZES = [0, 1, 7, 15, 16, 17, 100, 1000, 10**5]
FLOATS = ["float32", "float64"]

needs_avx2 = pytest.mark.skipif(
    torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"),
    reason="torch's float32 normal kernel here is not its AVX2 one, which gradgen reproduces")


def _bits(value: Any) -> np.ndarray:
    array = value.detach().numpy() if hasattr(value, "detach") else np.asarray(value)
    return np.ascontiguousarray(array)


def assert_same(ours: Any, theirs: Any) -> None:
    """Same dtype, shape and bytes; tuples and lists element by element."""
    if isinstance(theirs, tuple | list):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            assert_same(o, t)
        return
    if not hasattr(theirs, "detach"):
        assert ours == theirs
        return
    ours, theirs = _bits(ours), _bits(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    assert np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8))


def check(program: Callable[[Any], Any], seeds: list[int] = SEEDS) -> None:
    """program(lib) gives the same bits on torch and gradgen after each seed."""
    for seed in seeds:
        torch.manual_seed(seed)
        theirs = program(torch)
        rt.manual_seed(seed)
        ours = program(rt)
        assert_same(ours, theirs)


def check_error(program: Callable[[Any], Any]) -> None:
    """program raises the same exception type with the same message in both."""
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - any error, compared below
        program(torch)
    with pytest.raises(type(theirs.value)) as ours:
        program(rt)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def _seeds_for(size: int) -> list[int]:
    return SEEDS if size <= 1000 else SEEDS[:1]


# -- the distributions, over sizes and dtypes ---------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_and_uniform_(dtype, size):
    check(lambda L: (L.rand(size, dtype=getattr(L, dtype)),
                     L.empty(size, dtype=getattr(L, dtype)).uniform_(-0.7, 1.9)),
          _seeds_for(size))


@needs_avx2
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_and_normal_(dtype, size):
    # Twice in a row: a Box-Muller value left over by one call is the next call's first.
    check(lambda L: (L.randn(size, dtype=getattr(L, dtype)),
                     L.randn(size, dtype=getattr(L, dtype)),
                     L.empty(size, dtype=getattr(L, dtype)).normal_(0.3, 2.5)),
          _seeds_for(size))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int64", "int32", "bool"])
def test_bernoulli_with_a_number(dtype, size):
    check(lambda L: L.empty(size, dtype=getattr(L, dtype)).bernoulli_(0.3), _seeds_for(size))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_with_probabilities(dtype, size):
    def program(L):
        p = L.linspace(0, 1, size, dtype=getattr(L, dtype))
        return (L.bernoulli(p), L.empty(size, dtype=L.int64).bernoulli_(p), p.bernoulli())

    check(program, _seeds_for(size))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_exponential_(dtype, size):
    check(lambda L: L.empty(size, dtype=getattr(L, dtype)).exponential_(1.7), _seeds_for(size))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int64", "int32", "bool"])
def test_random_(dtype, size):
    def program(L):
        make = lambda: L.empty(size, dtype=getattr(L, dtype))  # noqa: E731
        high = 2 if dtype == "bool" else 100
        return make().random_(), make().random_(high), make().random_(0, high)

    check(program, _seeds_for(size))


@pytest.mark.parametrize("size", SIZES)
def test_randperm(size):
    check(lambda L: (L.randperm(size), L.randperm(size, dtype=L.float32)), _seeds_for(size))


# -- randint and random_'s bounds ---------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_randint_forms(size):
    check(lambda L: (L.randint(10, (size,)), L.randint(-5, 7, (size,)),
                     L.randint(3, 9, size=(size,)), L.randint(high=4, size=(size,)),
                     L.randint(low=1, high=4, size=(size,))), _seeds_for(size))


@pytest.mark.parametrize(("low", "high"), [
    (0, 2), (-5, 7), (0, 2**24), (3, 2**28 - 1), (3, 2**28 + 3), (0, 2**31), (0, 2**32),
    (-(2**40), 2**40), (-(2**63), 2**63 - 1),
])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64", "bool"])
def test_randint_ranges_and_dtypes(low, high, dtype):
    """Ranges from 2^28 on draw 64-bit words; float dtypes move bounds their rounding would
    cross; a dtype that cannot hold the bounds refuses them."""
    def program(L):
        return L.randint(low, high, (1000,), dtype=getattr(L, dtype))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float dtypes warn about ranges past 2^mantissa
        try:
            program(torch)
        except RuntimeError:
            check_error(program)
            return
        check(program)


@pytest.mark.parametrize(("low", "high"), [(5, None), (-(2**63), None), (-3, 2**24 + 5)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64"])
def test_random_from_to(low, high, dtype):
    def program(L):
        return L.empty(1000, dtype=getattr(L, dtype)).random_(low, high)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            program(torch)
        except RuntimeError:
            check_error(program)
            return
        check(program)


def test_randint_warns_as_torch_does():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        rt.randint(0, 2**25, (3,), dtype=rt.float32)


# -- the other forms ----------------------------------------------------------------------------

@needs_avx2
def test_normal_overloads():
    check(lambda L: (L.normal(L.arange(40.0).reshape(8, 5), 2.0),
                     L.normal(L.arange(40.0)),
                     L.normal(1.5, L.arange(40, dtype=L.float64)),
                     L.normal(L.arange(5.0), L.ones(3, 1) * 0.5),
                     L.normal(L.zeros(20), L.ones(20, dtype=L.float64)),
                     L.normal(0.5, 3.0, (4, 6)),
                     L.normal(0.0, 1.0, size=(3,), dtype=L.float64)))


@needs_avx2
def test_like_factories_follow_the_input_layout():
    """A transposed input gives a transposed result, filled in memory order (and, not
    being contiguous, by the one-pair-at-a-time normal kernel)."""
    def program(L):
        transposed = L.zeros(5, 7).t()
        return (L.rand_like(transposed).contiguous(), L.randn_like(transposed).contiguous(),
                L.randint_like(transposed, 9).contiguous(), L.rand_like(L.zeros(3, 4)),
                L.randn_like(L.zeros(40), dtype=L.float64), L.randint_like(L.zeros(6), 2, 5),
                L.randint_like(L.zeros(6, dtype=L.int64), 2, 5))

    check(program)


@needs_avx2
@pytest.mark.parametrize("method", ["uniform_", "normal_", "exponential_", "random_"])
def test_in_place_fills_on_views(method):
    """A view is filled in its memory order; a non-contiguous one normal_ fills a Box-Muller
    pair at a time."""
    def program(L):
        base = L.zeros(6, 10)
        getattr(base.t(), method)()
        getattr(base[:, ::2], method)()
        getattr(base[1:4, 2:9], method)()
        return base

    check(program)


@needs_avx2
def test_the_normal_cache_carries_across_calls_and_dtypes():
    check(lambda L: (L.randn(3), L.randn(5, dtype=L.float64), L.normal(L.zeros(3), 1.0),
                     L.empty(4, 4).t().normal_(), L.randn(1), L.randn(40)))


@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial(replacement, dtype):
    weights = [[0.1, 0.5, 0.2, 0.0, 1.2], [1.0, 1.0, 1.0, 1.0, 1.0]]

    def program(L):
        rows = L.tensor(weights, dtype=getattr(L, dtype))
        draws = [L.multinomial(rows, 1, replacement), L.multinomial(rows[0], 4, replacement),
                 rows.multinomial(3, replacement), L.multinomial(L.rand(7, 300), 100)]
        if replacement:
            draws.append(L.multinomial(rows, 1000, True))
            draws.append(L.multinomial(L.rand(7, 300, dtype=rows.dtype), 1000, True))
        return draws

    check(program)


# -- generators ---------------------------------------------------------------------------------

@needs_avx2
def test_generator_objects_keep_their_own_streams():
    def program(L):
        g, h = L.Generator().manual_seed(123), L.Generator()
        return (L.rand(5, generator=g), L.randn(20, generator=g), L.rand(3),
                L.randint(3, 9, (4,), generator=h), L.randperm(9, generator=g),
                L.empty(5).normal_(generator=h), L.randn(2), g.initial_seed(), h.initial_seed())

    check(program)


@needs_avx2
def test_every_generator_argument():
    def program(L):
        g = L.Generator().manual_seed(99)
        x = L.zeros(20)
        p = L.full((20,), 0.4)
        return (L.rand(4, generator=g), L.randn(20, generator=g), L.randint(5, (4,), generator=g),
                L.randint(1, 5, (4,), generator=g), L.randperm(6, generator=g),
                L.normal(x, 1.0, generator=g), L.normal(0.0, p, generator=g),
                L.normal(x, p, generator=g), L.normal(1.0, 2.0, (3,), generator=g),
                L.bernoulli(p, generator=g), L.bernoulli(p, 0.2, generator=g),
                p.bernoulli(generator=g), L.multinomial(p, 3, generator=g),
                L.multinomial(p, 30, True, generator=g), p.multinomial(2, generator=g),
                L.rand_like(x, generator=g), L.randn_like(x, generator=g),
                L.randint_like(x, 7, generator=g), L.zeros(5).uniform_(generator=g),
                L.zeros(20).normal_(generator=g), L.zeros(5).bernoulli_(0.5, generator=g),
                L.zeros(5).bernoulli_(p[:5], generator=g),
                L.zeros(5).exponential_(generator=g), L.zeros(5).random_(generator=g),
                L.zeros(5).random_(4, generator=g), L.zeros(5).random_(1, 4, generator=g),
                L.rand(3))

    check(program)


def test_seeds_as_torch_reads_them():
    for seed in [0, 5, -1, -(2**63), 2**64 - 1, 2**63]:
        theirs, ours = torch.Generator().manual_seed(seed), rt.Generator().manual_seed(seed)
        assert ours.initial_seed() == theirs.initial_seed()
        assert_same(ours.get_state(), theirs.get_state())
    assert rt.manual_seed(1.5).initial_seed() == torch.manual_seed(1.5).initial_seed() == 1
    assert rt.manual_seed(3) is rt.default_generator and rt.initial_seed() == 3
    assert rt.Generator().initial_seed() == torch.Generator().initial_seed()
    for bad in [2**64, -(2**63) - 1, 1.5, "3", True]:
        check_error(lambda L, bad=bad: L.Generator().manual_seed(bad))
    check_error(lambda L: L.manual_seed(2**64))


def test_seed_picks_a_fresh_seed():
    first = rt.seed()
    assert 0 <= first < 2**64 and rt.initial_seed() == first
    assert rt.Generator().seed() != first
    g = rt.Generator()
    value = g.seed()
    assert g.initial_seed() == value


# -- states -------------------------------------------------------------------------------------

STATE_PREPARATIONS = {
    "seeded": lambda L: None,
    "three words": lambda L: L.rand(3),
    "a block used up": lambda L: L.rand(624),
    "a block and one": lambda L: L.rand(625),
    "a cached normal": lambda L: L.randn(3, dtype=L.float64),
    "a used cached normal": lambda L: L.randn(2, dtype=L.float64),
}


@pytest.mark.parametrize("prepare", STATE_PREPARATIONS.values(), ids=STATE_PREPARATIONS.keys())
def test_states_are_torchs(prepare):
    """get_rng_state has torch's bytes, and a state moves either way mid-stream."""
    torch.manual_seed(11)
    prepare(torch)
    rt.manual_seed(11)
    prepare(rt)
    assert_same(rt.get_rng_state(), torch.get_rng_state())
    rt.manual_seed(0)
    rt.set_rng_state(torch.get_rng_state())
    assert_same(rt.randn(7, dtype=rt.float64), torch.randn(7, dtype=torch.float64))
    torch.set_rng_state(torch.from_numpy(rt.get_rng_state().numpy().copy()))
    assert_same(rt.rand(700), torch.rand(700))


def test_state_round_trips():
    g = rt.Generator().manual_seed(5)
    rt.randn(3, generator=g, dtype=rt.float64)
    state = g.get_state()
    first = rt.randn(50, generator=g)
    assert g.set_state(state) is g
    assert_same(rt.randn(50, generator=g), first)
    with rt.random.fork_rng():
        inside = rt.rand(4)
    assert_same(rt.rand(4), inside)
    with rt.random.fork_rng(enabled=False):
        rt.rand(1)


def test_state_errors():
    check_error(lambda L: L.Generator().set_state(L.zeros(10, dtype=L.uint8)))
    check_error(lambda L: L.Generator().set_state(L.zeros(5056, dtype=L.int64)))
    check_error(lambda L: L.Generator().set_state(L.zeros(5056, dtype=L.uint8)))
    check_error(lambda L: L.Generator().set_state(b"abc"))


# -- arguments and errors -----------------------------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda L: L.rand(3, dtype=L.int64),
    lambda L: L.randn(3, dtype=L.int64),
    lambda L: L.rand(-1),
    lambda L: L.randint(5, 5, (3,)),
    lambda L: L.randint(6, 5, (3,)),
    lambda L: L.randint(0, 5, (3,), requires_grad=True),
    lambda L: L.randint(-1, 1, (3,), dtype=L.bool),
    lambda L: L.randint(0, 2**32, (3,), dtype=L.int32),
    lambda L: L.randperm(-1),
    lambda L: L.randperm(5, dtype=L.bool),
    lambda L: L.randperm(2**24 + 2, dtype=L.float32),
    lambda L: L.normal(L.zeros(3), -1.0),
    lambda L: L.normal(L.zeros(3), L.tensor([1.0, -1.0, 1.0])),
    lambda L: L.normal(L.zeros(3, dtype=L.int64), 1.0),
    lambda L: L.empty(3).uniform_(2, 1),
    lambda L: L.empty(3, dtype=L.int64).uniform_(),
    lambda L: L.empty(3).normal_(0, -1),
    lambda L: L.empty(3, dtype=L.int64).normal_(),
    lambda L: L.empty(3).exponential_(0),
    lambda L: L.empty(3, dtype=L.int64).exponential_(),
    lambda L: L.empty(3).bernoulli_(1.5),
    lambda L: L.bernoulli(L.full((3,), 1.5)),
    lambda L: L.bernoulli(L.zeros(3, dtype=L.int64)),
    lambda L: L.multinomial(L.tensor([1.0, 2.0]), 0),
    lambda L: L.multinomial(L.tensor([1.0, 2.0]), 3),
    lambda L: L.multinomial(L.tensor([1.0, -2.0]), 1),
    lambda L: L.multinomial(L.tensor([1.0, -2.0]), 2, True),
    lambda L: L.multinomial(L.tensor([1.0, math.inf]), 2, True),
    lambda L: L.multinomial(L.tensor([1.0, math.nan]), 2, True),
    lambda L: L.multinomial(L.tensor([1.0, math.nan]), 1),
    lambda L: L.multinomial(L.tensor([0.0, 0.0]), 2, True),
    lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
    lambda L: L.multinomial(L.tensor([1, 2]), 1),
    lambda L: L.multinomial(L.tensor(1.0), 1),
    lambda L: L.empty(3).random_(5, 5),
    lambda L: L.empty(3, dtype=L.bool).random_(-(2**63), None),
    lambda L: L.empty(3, dtype=L.int32).random_(0, 2**31 + 1),
    lambda L: L.zeros(3, requires_grad=True).normal_(),
    lambda L: L.zeros(3, requires_grad=True).uniform_(),
])
def test_errors_are_torchs(program):
    check_error(program)


def test_shapes_and_requires_grad():
    for size in [(), (0,), (2, 3), (2, 0, 4)]:
        assert rt.rand(size).shape == torch.rand(size).shape
        assert rt.randn(size).shape == torch.randn(size).shape
        assert rt.randn(*size or (1,)).shape == torch.randn(*size or (1,)).shape
        assert rt.randint(5, size).shape == torch.randint(5, size).shape
    assert rt.rand(2, 3).dtype is rt.float32 and rt.randint(5, (2,)).dtype is rt.int64
    x = rt.randn(3, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert rt.randint(5, (3,), dtype=rt.float32, requires_grad=True).requires_grad
    rt.set_default_dtype(rt.float64)
    try:
        assert rt.rand(2).dtype is rt.float64 and rt.randn(20).dtype is rt.float64
    finally:
        rt.set_default_dtype(rt.float32)


def test_in_place_methods_on_tensors_with_history():
    """An in-place random fill replaces values and their history: no gradient reaches them."""
    leaf = rt.ones(4, requires_grad=True)
    y = leaf * 2
    version = y._version
    assert y.uniform_() is y and y._version > version
    y.sum().backward()
    assert not leaf.grad.numpy().any()


# -- dropout ------------------------------------------------------------------------------------

def test_dropout_draws_torchs_masks():
    def program(L):
        x = L.arange(1.0, 301.0).reshape(20, 15)
        layer = L.nn.Dropout(0.5)
        return (L.nn.functional.dropout(x, 0.3), layer(x), L.nn.functional.dropout(x.t(), 0.2),
                L.nn.functional.dropout(x.double(), 0.7), L.native_dropout(x, 0.25, True),
                L.native_dropout(x.t(), 0.6, True),
                L.nn.functional.dropout(x.clone(), 0.4, inplace=True),
                L.nn.functional.dropout(x, 1.0), L.nn.functional.dropout(x, 0.0))

    check(program)


def test_dropout_gradient_is_torchs():
    outputs = []
    for lib, seed in ((torch, 3), (rt, 3)):
        lib.manual_seed(seed)
        x = lib.arange(1.0, 41.0, requires_grad=True)
        y = lib.nn.functional.dropout(x, 0.35)
        y.sum().backward()
        outputs.append((y.grad_fn.name(), x.grad))
    (ours_name, ours), (theirs_name, theirs) = outputs[1], outputs[0]
    assert ours_name == theirs_name == "MulBackward0"
    assert_same(ours, theirs)


# -- nn.init and the layers' default initialisation ---------------------------------------------

INIT_CASES = [
    ("uniform_", (-0.2, 0.4)), ("normal_", (0.1, 0.3)), ("xavier_uniform_", (1.5,)),
    ("xavier_normal_", ()), ("kaiming_uniform_", (0.2, "fan_out", "relu")),
    ("kaiming_normal_", ()), ("trunc_normal_", ()), ("trunc_normal_", (0.5, 2.0, -1.0, 3.0)),
    ("trunc_normal_", (0.0, 1.0, 2.0, 5.0)),  # a narrow window: uniform proposals
]


@needs_avx2
@pytest.mark.parametrize(("name", "args"), INIT_CASES)
@pytest.mark.parametrize("shape", [(3, 4), (40, 30), (8, 3, 5)])
def test_init_functions(name, args, shape):
    def program(L):
        g = L.Generator().manual_seed(8)
        with_default = getattr(L.nn.init, name)(L.empty(*shape), *args)
        with_generator = getattr(L.nn.init, name)(L.empty(*shape), *args, generator=g)
        return with_default, with_generator

    check(program)


def test_orthogonal_agrees_to_rounding():
    """The same normal draws; numpy's LAPACK QR (OpenBLAS) rounds differently from torch's
    (MKL), by a few float32 ulps of 1.0 (runtime/nn/init.py's orthogonal_ says why)."""
    for shape in [(4, 6), (6, 4), (5, 2, 3), (64, 64), (100, 50)]:
        torch.manual_seed(2)
        theirs = torch.nn.init.orthogonal_(torch.empty(*shape), gain=2.0)
        rt.manual_seed(2)
        ours = rt.nn.init.orthogonal_(rt.empty(*shape), gain=2.0)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=2.0 * 4e-6)
        assert_same(rt.rand(3), torch.rand(3))  # both drew as many numbers


def test_orthogonal_with_generators_and_float64():
    """A generator's stream, float64 (differences near 1e-15) and the (semi-)orthogonality."""
    for shape in [(3, 7), (7, 3), (30, 30)]:
        theirs = torch.nn.init.orthogonal_(torch.empty(*shape, dtype=torch.float64),
                                           generator=torch.Generator().manual_seed(4))
        ours = rt.nn.init.orthogonal_(rt.empty(*shape, dtype=rt.float64),
                                      generator=rt.Generator().manual_seed(4))
        assert ours.dtype is rt.float64
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=1e-13)
        q = ours.numpy() if shape[0] <= shape[1] else ours.numpy().T
        np.testing.assert_allclose(q @ q.T, np.eye(min(shape)), atol=1e-13)
    check_error(lambda L: L.nn.init.orthogonal_(L.empty(3)))
    assert rt.nn.init.orthogonal_(rt.empty(0, 3)).shape == (0, 3)


@needs_avx2
def test_layers_start_with_torchs_weights():
    def program(L):
        return [p.detach() for module in (L.nn.Linear(3, 4), L.nn.Linear(5, 2, bias=False),
                                          L.nn.Linear(3, 4, dtype=L.float64),
                                          L.nn.Embedding(10, 3, padding_idx=2),
                                          L.nn.Embedding(100, 30), L.nn.LayerNorm(6),
                                          L.nn.Linear(1000, 100))
                for p in module.parameters()]

    check(program)


def _tiny_model(lib):
    """examples/seed_tinymodel.py's model: Linear 1000 -> 100, ReLU, Linear 100 -> 10."""
    return lib.nn.Sequential(lib.nn.Linear(1000, 100), lib.nn.ReLU(), lib.nn.Linear(100, 10))


@needs_avx2
def test_seeded_tinymodel_trains_as_torchs():
    """Same seed: identical weights and data, and losses over SGD steps within 1e-5."""
    runs = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        model = _tiny_model(lib)
        weights = [p.detach().clone() for p in model.parameters()]
        x, target = lib.randn(16, 1000), lib.randn(16, 10)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.001)
        losses = []
        for _ in range(4):
            optimizer.zero_grad()
            loss = (target - model(x)).pow(2).sum()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        runs.append((weights, x, target, losses))
    (t_weights, t_x, t_target, t_losses), (r_weights, r_x, r_target, r_losses) = runs
    assert_same(r_weights, t_weights)
    assert_same([r_x, r_target], [t_x, t_target])
    np.testing.assert_allclose(r_losses, t_losses, rtol=1e-5)


# -- the rest of torch.Generator and torch.random -------------------------------------------------

@needs_avx2
def test_generator_copies_continue_the_stream():
    """clone_state, copy.deepcopy and pickle give a generator in the same state, drawing
    the same numbers as torch's copies and independent of the original."""
    import copy
    import pickle

    def program(L):
        g = L.Generator().manual_seed(21)
        L.randn(3, generator=g, dtype=L.float64)  # leaves a cached normal
        copies = [g.clone_state(), copy.deepcopy(g), pickle.loads(pickle.dumps(g))]
        assert all(c is not g and c.initial_seed() == 21 for c in copies)
        drawn = [L.randn(5, generator=c, dtype=L.float64) for c in copies]
        return drawn, L.randn(5, generator=g, dtype=L.float64), [c.get_state() for c in copies]

    check(program)


@pytest.mark.parametrize("program", [
    lambda L: L.Generator().get_offset(),
    lambda L: L.Generator().set_offset(3),
    lambda L: L.Generator().graphsafe_get_state(),
    lambda L: L.Generator().graphsafe_set_state(L.Generator()),
])
def test_generator_methods_torch_refuses_on_cpu(program):
    check_error(program)


def test_thread_safe_generator_outside_a_thread_worker():
    assert rt.random.thread_safe_generator() is torch.random.thread_safe_generator() is None
    assert rt.thread_safe_generator() is None


def test_fork_rng_as_torchs():
    """fork_rng restores the default generator's state (a cached normal included) when the
    block ends, also by an exception; nested; enabled=False leaves the draws in the stream;
    other generators are not touched."""
    def program(L):
        g = L.Generator().manual_seed(5)
        drawn = [L.randn(3, dtype=L.float64)]
        with L.random.fork_rng():
            drawn += [L.rand(4), L.randn(1, dtype=L.float64), L.rand(3, generator=g)]
            with L.random.fork_rng(devices=[]):
                drawn.append(L.rand(700))
            drawn.append(L.rand(2))
        drawn.append(L.randn(3, dtype=L.float64))
        try:
            with L.random.fork_rng():
                drawn.append(L.rand(2))
                raise KeyError("inside")
        except KeyError:
            pass
        with L.random.fork_rng(enabled=False):
            drawn.append(L.rand(2))
        return drawn, L.rand(3), L.rand(2, generator=g), L.get_rng_state()

    check(program)


def test_a_generator_s_state_moves_between_torch_and_gradgen():
    """A Generator object's state (with a cached float64 normal) loaded into the other
    library's Generator continues the stream there, both ways."""
    ours, theirs = rt.Generator().manual_seed(77), torch.Generator().manual_seed(77)
    rt.randn(5, generator=ours, dtype=rt.float64)
    rt.rand(1000, generator=ours)
    moved = torch.Generator().set_state(torch.from_numpy(ours.get_state().numpy().copy()))
    assert_same(rt.randn(9, generator=ours, dtype=rt.float64),
                torch.randn(9, generator=moved, dtype=torch.float64))
    torch.rand(3, generator=theirs)
    back = rt.Generator().set_state(rt.from_numpy(theirs.get_state().numpy().copy()))
    assert back.initial_seed() == theirs.initial_seed() == 77
    assert_same(rt.rand(50, generator=back), torch.rand(50, generator=theirs))


@needs_avx2
def test_every_layer_starts_with_torchs_weights():
    """The default initialisation of the layers gradgen has beyond Linear, Embedding and
    LayerNorm, drawn in torch's order (parameters, then buffers)."""
    def program(L):
        nn = L.nn
        modules = (nn.Conv1d(3, 5, 4), nn.Conv2d(2, 6, (3, 2), groups=2, bias=False),
                   nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm1d(4), nn.BatchNorm2d(3),
                   nn.RNN(4, 6, num_layers=2), nn.LSTM(3, 5, bidirectional=True),
                   nn.GRU(4, 3, batch_first=True, bias=False), nn.RNNCell(3, 4),
                   nn.LSTMCell(2, 5), nn.GRUCell(5, 2), nn.Embedding(7, 4, max_norm=1.0))
        return [t.detach() for module in modules
                for t in (*module.parameters(), *module.buffers())], L.rand(2)

    check(program)


# -- DataLoader workers' streams ------------------------------------------------------------------
# torch runs real worker processes here; gradgen plays them in its own process.

def _worker_draws(lib):
    """What a worker's dataset code sees: its torch, Python and numpy draws and its info."""
    import random

    info = lib.utils.data.get_worker_info()
    return [lib.rand(2).tolist(), random.random(), float(np.random.rand()),
            lib.initial_seed(), None if info is None else [info.id, info.num_workers, info.seed]]


class _NoisyDataset:
    """A map-style dataset that draws an 'augmentation' for each sample."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 10

    def __getitem__(self, index):
        return [index, *_worker_draws(self.lib)]


def _plain_batches(loader):
    return [batch.tolist() if hasattr(batch, "tolist") else batch for batch in loader]


def _seed_numpy_from_torch(worker_id):
    """The usual worker_init_fn: numpy seeded from the worker's torch seed."""
    lib = rt if rt.utils.data.get_worker_info() is not None else torch
    np.random.seed((lib.initial_seed() + worker_id) % 2**32)


@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # torch: more than 2 CPUs
@pytest.mark.parametrize(("workers", "persistent", "init"), [
    (2, False, False), (3, False, True), (2, True, False), (3, True, True)])
def test_dataloader_workers_draw_torch_s_streams(workers, persistent, init):
    """A dataset drawing random numbers in 2 or 3 workers, shuffled, over two epochs: each
    worker's draws (torch, Python's random, numpy), seed and info are torch's, and the main
    stream moves as torch's (with persistent workers: one base seed, streams continued)."""
    import random

    def program(lib):
        lib.manual_seed(6)
        random.seed(1)
        np.random.seed(2)
        loader = lib.utils.data.DataLoader(
            _NoisyDataset(lib), batch_size=3, shuffle=True, num_workers=workers,
            persistent_workers=persistent, collate_fn=lambda samples: samples,
            worker_init_fn=_seed_numpy_from_torch if init else None)
        epochs = [_plain_batches(loader) for _ in range(2)]
        return epochs, _worker_draws(lib)

    ours, theirs = program(rt), program(torch)
    assert theirs[0][0][0][0][-1][0] == 0 and theirs[0][0][1][0][-1][0] == 1 % workers
    assert ours == theirs
    assert rt.utils.data.get_worker_info() is None


class _CountingStream:
    """An IterableDataset of `count` noisy samples, split between workers or not."""

    def __init__(self, lib, count, split):
        self.lib, self.count, self.split = lib, count, split

    def __iter__(self):
        info = self.lib.utils.data.get_worker_info()
        start, step = (info.id, info.num_workers) if self.split and info else (0, 1)
        for index in range(start, self.count, step):
            yield [index, self.lib.rand(1).item()]


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_datasets_in_workers_as_torch_s(split, drop_last):
    """Each worker iterates the dataset (split by get_worker_info() or duplicated), their
    batches interleaved round-robin until each runs out."""
    def program(lib):
        data = lib.utils.data
        lib.manual_seed(4)
        dataset = type("Stream", (_CountingStream, data.IterableDataset), {})(lib, 11, split)
        loader = data.DataLoader(dataset, batch_size=2, num_workers=3, drop_last=drop_last,
                                 collate_fn=lambda samples: samples)
        return _plain_batches(loader), _plain_batches(loader), lib.rand(2).tolist()

    assert program(rt) == program(torch)
