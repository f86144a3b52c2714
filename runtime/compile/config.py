"""torch._dynamo.config (this module, under that name too): the settings programs set
around torch.compile. gradgen reads `recompile_limit` (`cache_size_limit` is its older
name, and sets the same number): how many traces one compiled step keeps before it runs
eagerly. Any other setting is kept and changes nothing (`suppress_errors`: gradgen falls
back to eager anyway)."""

from __future__ import annotations

import sys
import types


class _Config(types.ModuleType):
    """The module's class: `cache_size_limit` reads and sets `recompile_limit`."""

    @property
    def cache_size_limit(self) -> int:
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        self.recompile_limit = value


recompile_limit = 8  # torch._dynamo's default
suppress_errors = False

sys.modules[__name__].__class__ = _Config
