"""torch.nn.factory_kwargs: the device / dtype / memory_format keywords a module passes on
to the factories that make its parameters."""

from __future__ import annotations

from typing import Any

__all__ = ["factory_kwargs"]

_SIMPLE_KEYS = ("device", "dtype", "memory_format")


def factory_kwargs(kwargs: dict | None) -> dict:
    """The factory keywords among `kwargs` as one dict (a nested `factory_kwargs` dict
    merged in); any other keyword, or one given both ways, is a TypeError."""
    if kwargs is None:
        return {}
    expected = {*_SIMPLE_KEYS, "factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    result: dict[str, Any] = dict(kwargs.get("factory_kwargs", {}))
    for key in _SIMPLE_KEYS:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
