"""runtime.nn: Module, Parameter and the common layers, as in torch.nn."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.nn import functional, init, utils
from runtime.nn.activation import (
    ELU,
    GELU,
    GLU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Tanh,
)
from runtime.nn.batchnorm import BatchNorm1d, BatchNorm2d
from runtime.nn.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from runtime.nn.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from runtime.nn.dropout import Dropout
from runtime.nn.flatten import Flatten, Unflatten
from runtime.nn.linear import Identity, Linear
from runtime.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineSimilarity,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from runtime.nn.margin import SoftMarginLoss
from runtime.nn.module import Module
from runtime.nn.nonlinear import (
    CELU,
    SELU,
    Hardshrink,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from runtime.nn.normalization import LayerNorm
from runtime.nn.parameter import Parameter
from runtime.nn.pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from runtime.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from runtime.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell
from runtime.nn.sparse import Embedding
from runtime.nn.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "functional", "init", "utils", "Module", "Parameter", "Identity", "Linear", "Flatten",
    "Unflatten", "ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax", "Dropout",
    "Embedding", "LayerNorm", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
    "MSELoss", "L1Loss", "SmoothL1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
    "BCEWithLogitsLoss",
    # batch norm, activations, losses
    "BatchNorm1d", "BatchNorm2d", "ELU", "GLU", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LeakyReLU", "LogSigmoid", "Mish", "ReLU6", "SiLU", "Softmin", "Softplus", "HuberLoss",
    "KLDivLoss", "CosineSimilarity",
    # recurrent layers and ParameterDict
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "ParameterDict",
    "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "ConvTranspose1d", "ConvTranspose2d",
    # nn kernels of torch's spec (family 4)
    "CELU", "SELU", "Hardshrink", "Softshrink", "Softsign", "Tanhshrink", "Threshold",
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "ChannelShuffle",
    "PixelShuffle", "PixelUnshuffle", "Conv3d", "ConvTranspose3d",
    "SoftMarginLoss",
]

# -- issue 28, helper nnB: channel and alpha dropout, padding, pooling, lazy modules --------
from runtime.nn.channel_dropout import (  # noqa: E402
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from runtime.nn.container import Container  # noqa: E402
from runtime.nn.kwargs import factory_kwargs  # noqa: E402
from runtime.nn.lazy import (  # noqa: E402
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyLinear,
)
from runtime.nn.padding import (  # noqa: E402
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from runtime.nn.parameter import (  # noqa: E402
    Buffer,
    UninitializedBuffer,
    UninitializedParameter,
)
from runtime.nn.pooling_more import (  # noqa: E402
    AdaptiveAvgPool3d,
    AdaptiveMaxPool3d,
    AvgPool3d,
    Fold,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    Unfold,
)
from runtime.nn.rnn import RNNCellBase  # noqa: E402

__all__ += [
    "factory_kwargs", "RNNCellBase", "Buffer", "Container", "UninitializedBuffer",
    "UninitializedParameter", "LazyBatchNorm1d",
    "LazyBatchNorm2d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyLinear", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d", "AvgPool3d", "Fold", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Unfold", "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]
# -- end of nnB's block ---------------------------------------------------------------------


# -- issue 28, helper nnlayers: attention, Transformer, norms, losses, activations ------------
from runtime.nn.transformer import (  # noqa: E402 - one block, appended for easy merging
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ += [
    "MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer",
]

from runtime.nn.norms import (  # noqa: E402
    BatchNorm3d,
    CrossMapLRN2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyBatchNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LocalResponseNorm,
    RMSNorm,
    SyncBatchNorm,
)

__all__ += [
    "BatchNorm3d", "CrossMapLRN2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LocalResponseNorm", "RMSNorm", "SyncBatchNorm", "LazyBatchNorm3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]

from runtime.nn.losses_more import (  # noqa: E402
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss2d,
    PairwiseDistance,
    PoissonNLLLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)

__all__ += [
    "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PairwiseDistance",
    "PoissonNLLLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "NLLLoss2d",
]

from runtime.nn.activation_more import (  # noqa: E402
    Bilinear,
    EmbeddingBag,
    PReLU,
    RReLU,
    Softmax2d,
)

__all__ += ["Bilinear", "EmbeddingBag", "PReLU", "RReLU", "Softmax2d"]

from runtime.nn.ctc import CTCLoss  # noqa: E402

__all__ += ["CTCLoss"]

from runtime.nn.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402

__all__ += ["AdaptiveLogSoftmaxWithLoss"]

from runtime.nn.data_parallel import DataParallel  # noqa: E402

__all__ += ["DataParallel"]

# issue 28, helper nnx: torch 2.13's linear cross entropy
from runtime.nn.linear_cross_entropy import LinearCrossEntropyOptions  # noqa: E402
from runtime.nn.linear_cross_entropy_loss import LinearCrossEntropyLoss  # noqa: E402

__all__ += ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
