"""runtime.nn.utils: gradient clipping, parameters as one vector, weight and spectral
normalisation, parametrizations, fusion, pruning and packed sequences, as torch.nn.utils."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.nn.utils import clip_grad, convert_parameters
from runtime.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from runtime.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "convert_parameters", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters"]

# -- issue 28, helper nnB -----------------------------------------------------------------
from runtime.nn.utils import parametrizations, parametrize, prune, rnn, stateless  # noqa: E402
from runtime.nn.utils.clip_grad import clip_grad_norm  # noqa: E402
from runtime.nn.utils.fusion import (  # noqa: E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from runtime.nn.utils.init import skip_init  # noqa: E402
from runtime.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from runtime.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ += ["clip_grad_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
            "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init", "stateless",
            "prune", "rnn",
            "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
            "spectral_norm", "weight_norm"]
# -- end of nnB's block -------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
