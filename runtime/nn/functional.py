"""torch.nn.functional's names for the ops layers are made of.

Nothing is defined here: each name is a spec op (generated/ops.py) or a composite
(runtime/composite.py), re-exported so that `import runtime.nn.functional as F` code
reads as it does with PyTorch.
"""

from __future__ import annotations

from typing import Any

from generated.ops import gelu, sigmoid, tanh
from runtime.aliases import missing_attribute
from runtime.composite import (
    batch_norm,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_similarity,
    cross_entropy,
    dropout,
    elu,
    embedding,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    huber_loss,
    kl_div,
    l1_loss,
    layer_norm,
    leaky_relu,
    linear,
    log_softmax,
    logsigmoid,
    mish,
    mse_loss,
    nll_loss,
    normalize,
    one_hot,
    pad,
    relu,
    relu6,
    scaled_dot_product_attention,
    silu,
    smooth_l1_loss,
    softmax,
    softmin,
    softplus,
)
from runtime.nn.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from runtime.nn.margin import soft_margin_loss
from runtime.nn.nonlinear import (
    celu,
    hardshrink,
    selu,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from runtime.nn.pixelshuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle
from runtime.nn.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from runtime.nn.upsampling import (
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "dropout",
    "embedding", "gelu", "l1_loss", "layer_norm", "linear", "log_softmax", "mse_loss",
    "nll_loss", "relu", "sigmoid", "smooth_l1_loss", "softmax", "tanh",
    # batch norm, activations, losses
    "batch_norm", "cosine_similarity", "elu", "glu", "hardsigmoid", "hardswish", "hardtanh",
    "huber_loss", "kl_div", "leaky_relu", "logsigmoid", "mish", "normalize", "one_hot", "pad",
    "relu6", "scaled_dot_product_attention", "silu", "softmin", "softplus",
    "conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "conv_transpose1d", "conv_transpose2d",
    # nn kernels of torch's spec (family 4)
    "celu", "hardshrink", "selu", "softshrink", "softsign", "tanhshrink", "threshold",
    "threshold_", "interpolate", "upsample", "upsample_bilinear", "upsample_nearest",
    "channel_shuffle", "pixel_shuffle", "pixel_unshuffle", "conv3d", "conv_transpose3d",
    "soft_margin_loss",
]

# -- issue 28, helper nnB: channel and alpha dropout, pooling, fold/unfold ------------------
from runtime.nn.channel_dropout import (  # noqa: E402
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from runtime.nn.pooling_more import (  # noqa: E402
    adaptive_avg_pool3d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    fold,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
    unfold,
)

__all__ += [
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
    "adaptive_avg_pool3d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "avg_pool3d", "fold", "lp_pool1d", "lp_pool2d",
    "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d",
    "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]
# -- end of nnB's block ---------------------------------------------------------------------


# -- issue 28, helper nnlayers: attention, norms, losses, activations --------------------------
from runtime.nn.attention import multi_head_attention_forward  # noqa: E402

__all__ += ["multi_head_attention_forward"]

from runtime.nn.norm_functions import (  # noqa: E402
    group_norm,
    instance_norm,
    local_response_norm,
    rms_norm,
)

__all__ += ["group_norm", "instance_norm", "local_response_norm", "rms_norm"]

from runtime.nn.loss_functions import (  # noqa: E402
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    pairwise_distance,
    pdist,
    poisson_nll_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)

__all__ += [
    "cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "pairwise_distance", "pdist", "poisson_nll_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

from runtime.nn.activation_more import (  # noqa: E402
    bilinear,
    celu_,
    elu_,
    embedding_bag,
    gumbel_softmax,
    hardtanh_,
    leaky_relu_,
    prelu,
    relu_,
    rrelu,
    rrelu_,
    selu_,
)

__all__ += [
    "bilinear", "celu_", "elu_", "embedding_bag", "gumbel_softmax", "hardtanh_",
    "leaky_relu_", "prelu", "relu_", "rrelu", "rrelu_", "selu_",
]

from runtime.nn.ctc import ctc_loss  # noqa: E402

__all__ += ["ctc_loss"]

# issue 27, helper nnA: grid sampling
from runtime.nn.grid_sample import affine_grid, grid_sample  # noqa: E402

__all__ += ["affine_grid", "grid_sample"]

# issue 28, helper nnx: the remaining names (F.Tensor is torch.Tensor; conv_tbc and
# native_channel_shuffle are torch's functions of the same name)
from generated.ops import conv_tbc  # noqa: E402
from runtime._tensor import Tensor  # noqa: E402
from runtime.nn.functional_more import assert_int_or_pair  # noqa: E402
from runtime.nn.linear_cross_entropy import linear_cross_entropy  # noqa: E402
from runtime.nn.pixelshuffle import native_channel_shuffle  # noqa: E402

__all__ += ["Tensor", "assert_int_or_pair", "conv_tbc", "linear_cross_entropy",
            "native_channel_shuffle"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
