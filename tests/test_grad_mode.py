"""Grad modes against PyTorch: no_grad, enable_grad, set_grad_enabled and inference_mode as
context managers and decorators, is_grad_enabled, and their per-thread state."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from tests.oracle import same


def flags(lib: Any, x: Any) -> tuple[bool, bool, bool]:
    """Grad mode, and whether an op on `x` records: as seen from inside a mode."""
    y = x * 2
    return lib.is_grad_enabled(), y.requires_grad, y.grad_fn is None


def leaf(lib: Any) -> Any:
    return lib.tensor([1.0, 2.0], requires_grad=True)


def test_context_managers_nest_and_restore() -> None:
    def program(lib):
        x = leaf(lib)
        seen = [flags(lib, x)]
        with lib.no_grad():
            seen.append(flags(lib, x))
            with lib.enable_grad():
                seen.append(flags(lib, x))
                with lib.set_grad_enabled(False):
                    seen.append(flags(lib, x))
                seen.append(flags(lib, x))
            with lib.set_grad_enabled(True):
                seen.append(flags(lib, x))
            seen.append(flags(lib, x))
        seen.append(flags(lib, x))
        return seen
    same(program)


def test_mode_is_restored_after_an_exception() -> None:
    def program(lib):
        try:
            with lib.no_grad():
                raise ValueError("inside")
        except ValueError:
            pass
        return lib.is_grad_enabled()
    same(program)


def test_tensors_made_under_no_grad() -> None:
    def program(lib):
        x = leaf(lib)
        with lib.no_grad():
            y = x * 2
            z = lib.ones(2, requires_grad=True)  # a factory still makes a leaf that requires grad
        w = lib.tensor([1.0, 2.0])
        with lib.enable_grad():
            v = w * 2
        return y.requires_grad, y.is_leaf, z.requires_grad, v.requires_grad, x.requires_grad
    same(program)


def test_decorators_with_and_without_parentheses() -> None:
    def program(lib):
        x = leaf(lib)

        @lib.no_grad()
        def called():
            return flags(lib, x)

        @lib.no_grad
        def bare():
            return flags(lib, x)

        @lib.enable_grad()
        def enabling():
            return flags(lib, x)

        @lib.enable_grad
        def enabling_bare():
            return flags(lib, x)

        @lib.inference_mode()
        def inference():
            return flags(lib, x), lib.is_inference_mode_enabled()

        @lib.inference_mode
        def inference_bare():
            return flags(lib, x), lib.is_inference_mode_enabled()

        with lib.no_grad():
            enabled = (enabling(), enabling_bare())
        return (called(), bare(), enabled, inference(), inference_bare(), lib.is_grad_enabled(),
                called.__name__, bare.__name__)
    same(program)


def test_set_grad_enabled_as_function_and_decorator() -> None:
    def program(lib):
        seen = [lib.is_grad_enabled()]

        @lib.set_grad_enabled(False)
        def disabled():
            return lib.is_grad_enabled()

        seen.append(lib.is_grad_enabled())  # decorating does not change the mode
        seen.append(disabled())
        seen.append(lib.is_grad_enabled())
        lib.set_grad_enabled(False)  # a plain call sets the mode at once
        seen.append(lib.is_grad_enabled())
        with lib.enable_grad():
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)
        seen.append(lib.is_grad_enabled())
        return seen
    same(program)


def test_decorated_generator_runs_every_step_in_the_mode() -> None:
    def program(lib):
        @lib.no_grad()
        def steps():
            received = yield lib.is_grad_enabled()
            yield lib.is_grad_enabled(), received
            return "done"

        generator = steps()
        first = next(generator)
        outside = lib.is_grad_enabled()
        second = generator.send("hello")
        try:
            next(generator)
        except StopIteration as stop:
            result = stop.value
        return first, outside, second, result, lib.is_grad_enabled()
    same(program)


def test_decorated_generator_sees_thrown_exceptions_and_close() -> None:
    def program(lib):
        events = []

        @lib.no_grad
        def steps():
            try:
                yield 1
            except KeyError:
                events.append(("caught", lib.is_grad_enabled()))
                yield 2
            finally:
                events.append(("closed", lib.is_grad_enabled()))

        generator = steps()
        next(generator)
        events.append(("thrown", generator.throw(KeyError("k"))))
        generator.close()
        return events, lib.is_grad_enabled()
    same(program)


def test_inference_mode() -> None:
    def program(lib):
        x = leaf(lib)
        normal = lib.ones(2)
        with lib.inference_mode():
            inside = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
            made = lib.ones(2)
            y = x * 2
            view = normal.view(2)
            with lib.inference_mode(False):
                nested = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        after = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        return (inside, nested, after, made.is_inference(), y.is_inference(), y.requires_grad,
                view.is_inference(), normal.is_inference(), made.detach().is_inference(),
                made.view(2).is_inference(), (made + 1).is_inference(),
                made.clone().is_inference())
    same(program)


@pytest.mark.parametrize("use", ["saved for backward", "not saved", "requires_grad_",
                                 "in-place", "version", "clone"])
def test_inference_tensors_outside_inference_mode(use: str) -> None:
    def program(lib):
        x = leaf(lib)
        with lib.inference_mode():
            made = lib.ones(2)
        if use == "saved for backward":
            return x * made
        if use == "not saved":
            return (x + made).requires_grad
        if use == "requires_grad_":
            return made.requires_grad_()
        if use == "in-place":
            return made.add_(1)
        if use == "version":
            return made._version
        (x * made.clone()).sum().backward()
        return x.grad.tolist()
    same(program)


def test_inplace_on_an_inference_tensor_inside_inference_mode() -> None:
    def program(lib):
        with lib.inference_mode():
            made = lib.ones(2)
            made.add_(1)
            return made.tolist()
    same(program)


def test_view_made_under_no_grad() -> None:
    def program(lib):
        x = leaf(lib)
        with lib.no_grad():
            view = x.view(2)
        return view.requires_grad, view.is_leaf, view.grad_fn is None
    same(program)


def test_two_threads_one_under_no_grad() -> None:
    """The mode is per thread: one thread records and runs backward while the other,
    under no_grad, records nothing; both interleave and both get PyTorch's results."""
    def program(lib):
        results: dict = {}
        barrier = threading.Barrier(2)

        def without_grad():
            with lib.no_grad():
                barrier.wait()
                seen = []
                for i in range(300):
                    x = lib.tensor([float(i)], requires_grad=True)
                    y = x * 2 + 1
                    seen.append((y.requires_grad, lib.is_grad_enabled(), y.item()))
                results["no_grad"] = seen

        def with_grad():
            barrier.wait()
            seen = []
            for i in range(300):
                x = lib.tensor([float(i), 1.0], requires_grad=True)
                (x * x * 3).sum().backward()
                seen.append((lib.is_grad_enabled(), x.grad.tolist()))
            results["grad"] = seen

        threads = [threading.Thread(target=without_grad), threading.Thread(target=with_grad)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results, lib.is_grad_enabled()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so that the loops interleave
    try:
        same(program)
    finally:
        sys.setswitchinterval(interval)


def test_inference_mode_in_one_thread_only() -> None:
    """One thread under inference_mode makes inference tensors while the other, at the same
    time, makes plain ones (a tensor's constructor reads its thread's flag only while some
    thread is in inference mode: runtime/grad_mode.py's INFERENCE_BLOCKS), nested blocks and
    a block left by an exception included; after both, no block is counted open."""
    def program(lib):
        results: dict = {}
        barrier = threading.Barrier(2)

        def inside():
            seen = []
            with lib.inference_mode():
                barrier.wait()
                for i in range(200):
                    with lib.inference_mode(i % 3 != 0):
                        y = lib.tensor([float(i)]) * 2
                    z = lib.ones(1) + i
                    seen.append((y.is_inference(), z.is_inference()))
            try:
                with lib.inference_mode():
                    raise ValueError
            except ValueError:
                pass
            results["inside"] = seen

        def outside():
            barrier.wait()
            results["outside"] = [(lib.ones(2) * i).is_inference() for i in range(200)]

        threads = [threading.Thread(target=inside), threading.Thread(target=outside)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results, (lib.ones(1) * 2).is_inference()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        same(program)
    finally:
        sys.setswitchinterval(interval)
    from runtime.grad_mode import INFERENCE_BLOCKS

    assert INFERENCE_BLOCKS.value == 0
