"""runtime.nn: Module, Parameter and the common layers, as in torch.nn."""

from __future__ import annotations

from runtime.nn import functional, init
from runtime.nn.activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from runtime.nn.container import ModuleList, Sequential
from runtime.nn.dropout import Dropout
from runtime.nn.linear import Identity, Linear
from runtime.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from runtime.nn.module import Module
from runtime.nn.normalization import LayerNorm
from runtime.nn.parameter import Parameter
from runtime.nn.sparse import Embedding

__all__ = [
    "functional", "init", "Module", "Parameter", "Identity", "Linear", "ReLU", "Sigmoid",
    "Tanh", "GELU", "Softmax", "LogSoftmax", "Dropout", "Embedding", "LayerNorm", "Sequential",
    "ModuleList", "MSELoss", "L1Loss", "SmoothL1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
    "BCEWithLogitsLoss",
]
