"""torch.distributions.HalfCauchy: |X| for a centred Cauchy X."""

from __future__ import annotations

import math
from typing import Any

from runtime import factories
from runtime._tensor import Tensor
from runtime.distributions.cauchy import Cauchy
from runtime.distributions.half_normal import _Half
from runtime.distributions.transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_Half):
    """|X| for X ~ Cauchy(0, scale)."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return factories.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
