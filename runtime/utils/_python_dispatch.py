"""`torch.utils._python_dispatch`: TorchDispatchMode, a mode that hears the ops themselves.

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)                          # aten.addmm.default, aten.relu.default, ...
            return func(*args, **(kwargs or {}))

Where a TorchFunctionMode hears what a program calls (`F.linear`), a TorchDispatchMode hears
the ops of the spec that run (`aten.t.default`, `aten.addmm.default`), the ops of a backward
included: while one is on, backward runs its formulas on Tensors, through the ops, instead
of on arrays. It is an op mode of runtime/modes.py; `func` is an `OpOverload` that runs the
op's generated wrapper. Unlike torch's, it hears an op above the graph's recording, not
below it (gradgen has no dispatcher under its autograd layer): the func it calls records
the op's node as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generated import ops as generated_ops
from runtime import modes

__all__ = ["TorchDispatchMode", "OpOverload", "OpOverloadPacket"]


class OpOverloadPacket:
    """An op's name with all its overloads (`aten.add`)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __repr__(self) -> str:
        return f"aten.{self.__name__}"


class OpOverload:
    """One overload of an op of the spec (`aten.add.Tensor`), callable: it runs the
    overload's generated wrapper."""

    def __init__(self, name: str, overload: str, schema: str, wrapper: Callable) -> None:
        self._overloadname = overload or "default"
        self.__name__ = f"{name}.{self._overloadname}"
        self.overloadpacket = OpOverloadPacket(name)
        self._schema = schema
        self._op = wrapper

    def name(self) -> str:
        """`aten::add.Tensor`; an overload without a name is `aten::addmm`."""
        base = f"aten::{self.overloadpacket.__name__}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._op(*args, **kwargs)

    def __str__(self) -> str:
        return f"aten.{self.__name__}"

    def __repr__(self) -> str:
        return (f"<OpOverload(op='aten.{self.overloadpacket.__name__}', "
                f"overload='{self._overloadname}')>")


_OVERLOADS: dict[Callable, OpOverload] = {}


def overload_of(wrapper: Callable) -> OpOverload | None:
    """The OpOverload a generated wrapper runs (`ops.add_Tensor_` is `aten.add_.Tensor`)."""
    if not _OVERLOADS:
        for name, overloads in generated_ops.BY_NAME.items():
            for overload in overloads:
                full_name = overload.schema.split("(", 1)[0]
                _OVERLOADS.setdefault(overload.wrapper, OpOverload(
                    name, full_name.partition(".")[2], overload.schema, overload.wrapper))
        for key, overload in generated_ops.OVERLOADS.items():
            base, _, name = key.partition(".")
            _OVERLOADS.setdefault(overload.wrapper, OpOverload(
                base, name, overload.schema, overload.wrapper))
    return _OVERLOADS.get(wrapper)


class TorchDispatchMode(modes.OpMode):
    """Override what every op of the spec does inside a `with` block:
    `__torch_dispatch__(func, types, args, kwargs)` is called instead, `func` an
    OpOverload. While it runs, the mode is off the stack: calling `func` runs the op."""

    tensor_backward = True  # backward runs through the ops, so that the mode hears them

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def hear(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        return self.__torch_dispatch__(overload_of(func) or func, (), args, kwargs)

    def __torch_dispatch__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError
