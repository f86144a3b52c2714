"""torch.random: the CPU generator, its seeding and its state, as PyTorch's.

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) whose state is initialised
from the low 32 bits of a 64-bit seed by the reference initialisation (init_genrand).
numpy's MT19937 with its legacy seeding is that same engine, so gradgen's generator is
one, and draws its words at numpy's speed. A 64-bit draw is two 32-bit draws, the first
one the high half. The state (get_state) has the layout of torch's CPU generator state, so
states move between torch and gradgen in both directions.
"""

from __future__ import annotations

import contextlib
import operator
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from runtime import kernels
from runtime import modes as _modes
from runtime._tensor import Tensor

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "fork_rng", "thread_safe_generator",
]

_N = 624  # words of mt19937's state
DEFAULT_SEED = 67280421310721  # a new torch.Generator()'s seed

# torch's CPUGeneratorImplState, byte for byte: the legacy generator's fields (the state
# words widened to 64 bits, a cached double normal), then a cached float normal.
_STATE = np.dtype({
    "names": ["the_initial_seed", "left", "seeded", "next", "state", "normal_x", "normal_y",
              "normal_rho", "normal_is_valid", "next_float_normal_sample",
              "is_next_float_normal_sample_valid"],
    "formats": [np.uint64, np.int32, np.int32, np.uint64, (np.uint64, _N), np.float64,
                np.float64, np.float64, np.int32, np.float32, np.bool_],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": 5056,
})


def _seed_value(seed: Any) -> int:
    """A seed as torch's Generator.manual_seed reads it: an int in [-2^63, 2^64), negative
    ones taken modulo 2^64."""
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    value = operator.index(seed)
    if not -(2**63) <= value < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return value % 2**64


class Generator:
    """A CPU random number generator: torch.Generator, with the same stream as torch's."""

    def __init__(self, device: Any = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"gradgen has only CPU generators, not {device!r}")
        self._engine = np.random.MT19937(0)
        # torch's Box-Muller caches: a normal sample drawn but not yet used (float64 and
        # float32 kernels keep their own).
        self.next_double_normal_sample: float | None = None
        self.next_float_normal_sample: float | None = None
        self.manual_seed(DEFAULT_SEED)

    @property
    def device(self) -> str:
        return "cpu"

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed` (an int in [-2^63, 2^64)); returns the generator."""
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Generator.manual_seed, (self, seed), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        value = _seed_value(seed)
        self._engine._legacy_seeding(value & 0xFFFFFFFF)
        self._initial_seed = value
        # torch's `next` field reads 0 right after seeding, 624 once a block is used up;
        # numpy's position reads 624 in both cases.
        self._next_when_exhausted = 0
        self.next_double_normal_sample = None
        self.next_float_normal_sample = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the new seed."""
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Generator.seed, (self,), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        value = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._initial_seed

    # -- draws (what the sampling kernels read) ---------------------------------------------

    def draw32(self, count: int) -> np.ndarray:
        """The next `count` 32-bit words (torch's random()), as uint64."""
        if count:
            self._next_when_exhausted = _N
        return self._engine.random_raw(count)

    def draw64(self, count: int) -> np.ndarray:
        """The next `count` 64-bit words (torch's random64()): two words each, high first."""
        words = self.draw32(2 * count)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    # -- state ------------------------------------------------------------------------------

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor of torch's layout (5056 bytes)."""
        engine = self._engine.state["state"]
        position = int(engine["pos"])
        state = np.zeros((), _STATE)
        state["the_initial_seed"] = self._initial_seed
        state["seeded"] = 1
        if position == _N:  # the next draw regenerates the block
            state["left"], state["next"] = 1, self._next_when_exhausted
        else:
            state["left"], state["next"] = _N + 1 - position, position
        state["state"] = engine["key"]
        if self.next_double_normal_sample is not None:
            state["normal_is_valid"] = 1
            state["normal_y"] = self.next_double_normal_sample
        if self.next_float_normal_sample is not None:
            state["is_next_float_normal_sample_valid"] = True
            state["next_float_normal_sample"] = self.next_float_normal_sample
        return Tensor._make(np.frombuffer(state.tobytes(), np.uint8).copy(), None)

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from get_state, gradgen's or torch's (a uint8 tensor)."""
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Generator.set_state, (self, new_state), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        state = _read_state(new_state)
        left, position = int(state["left"]), int(state["next"])
        if left == 1:
            self._next_when_exhausted, position = position, _N
        elif left + position != _N + 1:
            raise RuntimeError(
                f"gradgen's generator cannot hold an mt19937 state with left={left} and "
                f"next={position}: torch's own draws keep left + next = 625")
        key = state["state"].astype(np.uint32)
        self._engine.state = {"bit_generator": "MT19937",
                              "state": {"key": key, "pos": position}}
        self._initial_seed = int(state["the_initial_seed"])
        self.next_double_normal_sample = (float(state["normal_y"])
                                          if state["normal_is_valid"] else None)
        self.next_float_normal_sample = (float(state["next_float_normal_sample"])
                                         if state["is_next_float_normal_sample_valid"] else None)
        return self

    def clone_state(self) -> Generator:
        """A new generator in this one's state (its stream continues independently)."""
        return Generator().set_state(self.get_state())

    # A CPU generator's stream is a Mersenne Twister, not a counter with an offset (as
    # CUDA's Philox is), and CUDA graphs do not capture it: torch refuses these four.
    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self) -> Generator:
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state: Generator) -> Generator:
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    # copy.deepcopy and pickle carry the state, as torch's Generator does.
    def __reduce__(self) -> tuple:
        return (Generator, ("cpu",), (self._initial_seed, None, self.get_state()))

    def __setstate__(self, state: tuple) -> None:
        _initial_seed, _offset, generator_state = state
        self.set_state(generator_state)


def _read_state(new_state: Any) -> np.ndarray:
    """The fields of a state tensor, checked as torch checks them."""
    if isinstance(new_state, bytes | bytearray):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    array = np.asarray(new_state)
    if array.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    if array.size != _STATE.itemsize:
        raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE.itemsize} but "
                           f"found the input RNG state size to be {array.size}")
    state = np.frombuffer(np.ascontiguousarray(array).tobytes(), _STATE)[0]
    if not (state["seeded"] and 0 < state["left"] <= _N and state["next"] <= _N):
        raise RuntimeError("Invalid mt19937 state")
    return state


default_generator = Generator()
default_generator.seed()
kernels.set_generator(default_generator)  # the dropout kernel draws from it


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator (torch.manual_seed); returns it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 tensor, torch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    default_generator.set_state(new_state)


def thread_safe_generator() -> Generator | None:
    """The generator of the DataLoader thread worker this runs in, else None (use the
    default generator): gradgen starts no workers, so always None."""
    return None


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str | None = None) -> Iterator[None]:
    """Run a block with the default generator's state restored afterwards (gradgen has no
    other devices, so `devices` and `device_type` change nothing)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
