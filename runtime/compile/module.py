"""What `compile(module)` returns: a module, as torch.compile's OptimizedModule is.

It holds the original module as its child `_orig_mod`, so its parameters, buffers and
`state_dict()` keys are the original's under that name (`_orig_mod.layer1.weight`: a
checkpoint saved from it has the prefix, as PyTorch's has, and programs written for
PyTorch strip it), and its forward is the compiled call of the original. Other
attributes are the original's, read and written through; `training` mirrors the
original's. `code`, `fallback_reason`, `traces` and `last` are the compiled step's.
"""

from __future__ import annotations

from typing import Any

from runtime.nn.module import Module


class OptimizedModule(Module):
    """`compile(module)`: the module, its forward compiled (torch._dynamo's name)."""

    # Attributes of the wrapper itself; any other is the original module's.
    _own = frozenset({"_orig_mod", "_compiled", "_ready"})

    def __init__(self, module: Module, compiled: Any) -> None:
        # Read (through `training`) while Module.__init__ runs: set first, and plainly.
        object.__setattr__(self, "_ready", False)
        object.__setattr__(self, "_orig_mod", module)
        super().__init__()
        Module.__setattr__(self, "_orig_mod", module)  # a child now, out of __dict__
        object.__setattr__(self, "_compiled", compiled)
        object.__setattr__(self, "_ready", True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        # (Module.__init__ sets the default: the original's flag is the one that counts.)
        if self.__dict__.get("_ready"):
            self._orig_mod.training = value

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._own or hasattr(type(self), name):
            Module.__setattr__(self, name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._own or hasattr(type(self), name):
            Module.__delattr__(self, name)
        else:
            delattr(self._orig_mod, name)

    def __len__(self) -> int:
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    def __dir__(self) -> list[str]:
        own = super().__dir__()
        return sorted(set(dir(self._orig_mod)) | set(own))


# What the compiled call reports, read from it.
for _name in ("code", "fallback_reason", "traces", "last"):
    setattr(OptimizedModule, _name, property(lambda self, n=_name: getattr(self._compiled, n)))
