"""Sequential and ModuleList: modules holding an ordered list of modules."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from runtime.nn.module import Module, _indent

__all__ = ["ModuleList", "Sequential"]


def _index(index: int, length: int) -> int:
    """A position in 0..length-1 from a possibly negative index."""
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range")
    return index % length


class Sequential(Module):
    """Feeds its input through each module in turn: `Sequential(Linear(2, 3), ReLU())`.

    Children are named "0", "1", ... unless given as an OrderedDict of names.
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for position, module in enumerate(args):
                self.add_module(str(position), module)

    def __getitem__(self, index: int | slice) -> Module:
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return list(self._modules.values())[_index(index, len(self))]

    def __setitem__(self, index: int, module: Module) -> None:
        name = list(self._modules)[_index(index, len(self))]
        setattr(self, name, module)

    def __delitem__(self, index: int | slice) -> None:
        names = list(self._modules)
        for name in names[index] if isinstance(index, slice) else [names[_index(index, len(self))]]:
            delattr(self, name)
        # Keep the names 0, 1, ... after a deletion, as PyTorch does.
        modules = list(self._modules.values())
        self._modules.clear()
        for position, module in enumerate(modules):
            self._modules[str(position)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules whose parameters the parent registers; it has no forward."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Module | ModuleList:
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[str(_index(index, len(self)))]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, str(_index(index, len(self))), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for position, item in enumerate(modules):
            self._modules[str(position)] = item

    def __repr__(self) -> str:
        """Runs of identical children are shown once, as `(0-2): 3 x Linear(...)`."""
        if not self._modules:
            return f"{self._get_name()}()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for position, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = position
            else:
                runs.append([position, position, text])
        lines = [f"({first}): {text}" if first == last
                 else f"({first}-{last}): {last - first + 1} x {text}"
                 for first, last, text in runs]
        return self._get_name() + "(\n  " + "\n  ".join(_indent(line, 2) for line in lines) + "\n)"
