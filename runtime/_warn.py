"""Warnings in torch's words, reported at the user's line.

torch's C++ warnings point at the Python line that called the op, and its Python warnings
mostly at the caller of the public function. gradgen's public functions call one another,
so a fixed `stacklevel` would often point inside gradgen; `warn_at_caller` walks out of
gradgen's own code instead and reports the warning at the first line outside it (the
user's program, or a test). tests/test_warnings_location.py holds every warning of
runtime/ to it.
"""

from __future__ import annotations

import os
import sys
import warnings

# The directories of gradgen's own code: a warning is reported at the first line outside them.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_CODE = tuple(os.path.join(_ROOT, d) + os.sep for d in ("runtime", "generated"))


def warn_at_caller(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """warnings.warn, reported at the first frame outside gradgen's own code."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(OWN_CODE):
        frame = frame.f_back
    if frame is None:  # called from gradgen's code alone (a thread, an atexit hook)
        warnings.warn(message, category, stacklevel=2)
        return
    if isinstance(message, Warning):
        category = type(message)
    module_globals = frame.f_globals
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=module_globals.get("__name__", "<string>"),
                           registry=module_globals.setdefault("__warningregistry__", {}))
