"""More activations and lookup layers: PReLU, RReLU (drawing torch's random numbers in
training), Softmax2d, the in-place functional forms (relu_, elu_, selu_, celu_, leaky_relu_,
hardtanh_), Bilinear, EmbeddingBag and F.gumbel_softmax.

Each is a composite of existing differentiable ops (where, mul, einsum, index_select,
matmul, softmax), so autograd flows through its pieces.
"""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import composite, dtypes, factories, kernels, random_ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.grad_mode import no_grad
from runtime.nn import init
from runtime.nn.embedding_bag import embedding_bag as torch_embedding_bag
from runtime.nn.module import Module
from runtime.nn.nonlinear import celu, selu
from runtime.nn.parameter import Parameter

__all__ = [
    "Bilinear", "EmbeddingBag", "PReLU", "RReLU", "Softmax2d", "bilinear", "celu_", "elu_",
    "embedding_bag", "gumbel_softmax", "hardtanh_", "leaky_relu_", "prelu", "relu_", "rrelu",
    "rrelu_", "selu_",
]


# -- in-place functional forms --------------------------------------------------------------------

def relu_(input: Tensor) -> Tensor:
    """relu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(relu_, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return ops.relu_(input)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """elu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(elu_, (input, alpha), {})
        if heard is not _modes.PASS:
            return heard
    return composite.elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """selu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(selu_, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """celu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(celu_, (input, alpha), {})
        if heard is not _modes.PASS:
            return heard
    return celu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """leaky_relu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(leaky_relu_, (input, negative_slope), {})
        if heard is not _modes.PASS:
            return heard
    return composite.leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """hardtanh, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hardtanh_, (input, min_val, max_val), {})
        if heard is not _modes.PASS:
            return heard
    return composite.hardtanh(input, min_val, max_val, inplace=True)


# -- PReLU ----------------------------------------------------------------------------------------

def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x above 0, weight · x below, with one weight per channel (dimension 1) or one for all."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(prelu, (input, weight), {})
        if heard is not _modes.PASS:
            return heard
    if not input.dtype.is_floating_point and input.dtype is weight.dtype:
        raise NotImplementedError(f'"prelu_cpu" not implemented for \'{_type_name(input)}\'')
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_type_name(input)} and "
                           f"{_type_name(weight)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if input.dim() >= 2:
        weight = weight.reshape(-1, *([1] * (input.dim() - 2)))
    else:
        weight = weight.reshape(-1) if input.dim() == 1 else weight.reshape(())
    return ops._prelu_kernel(input, weight)


class NnMethods:
    """Tensor methods for the functions above (installed by runtime/methods.py)."""

    __slots__ = ()

    def prelu(self, weight: Tensor) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(NnMethods.prelu, (self, weight), {})
            if heard is not _modes.PASS:
                return heard
        return prelu(self, weight)


class PReLU(Module):
    """Leaky ReLU whose negative slope is learned: one per channel, or one for all."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(factories.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


# -- RReLU ----------------------------------------------------------------------------------------

def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False, generator: Any = None) -> Tensor:
    """Leaky ReLU with a random slope in [lower, upper] per element in training, and the
    mean slope (lower + upper) / 2 in eval: the spec's rrelu_with_noise with a fresh noise
    tensor, as torch.rrelu runs it (RreluWithNoiseBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rrelu, (input, lower, upper, training, inplace, generator), {})
        if heard is not _modes.PASS:
            return heard
    if inplace:
        return rrelu_(input, lower, upper, training, generator)
    return _with_noise(ops.rrelu_with_noise, input, lower, upper, training, generator)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Any = None) -> Tensor:
    """rrelu, in place: the spec's rrelu_with_noise_ (RreluWithNoiseBackward1)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rrelu_, (input, lower, upper, training, generator), {})
        if heard is not _modes.PASS:
            return heard
    return _with_noise(ops.rrelu_with_noise_, input, lower, upper, training, generator)


def _with_noise(op: Any, input: Tensor, lower: float, upper: float, training: bool,
                generator: Any) -> Tensor:
    """`op(input, noise, ...)` with a fresh contiguous noise tensor, the bounds checked first
    as torch.rrelu checks them."""
    if not float(lower) <= float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    noise = random_ops.empty_like_layout(input)
    return op(input, noise, lower, upper, training, generator)


def _type_name(tensor: Tensor) -> str:
    """`Long`, `Int`, `Bool`: how torch's kernel messages name a dtype."""
    return kernels._dtype_name(tensor.detach()._data)


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes in training, their mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class Softmax2d(Module):
    """Softmax over the channels at every spatial location of a (N, C, H, W) or (C, H, W)
    input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return composite.softmax(input, -3)


# -- Bilinear -------------------------------------------------------------------------------------

def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y[..., o] = input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(bilinear, (input1, input2, weight, bias), {})
        if heard is not _modes.PASS:
            return heard
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for dim, (size1, size2) in enumerate(zip(input1.shape[:-1], input2.shape[:-1],
                                             strict=True)):
        if size1 != size2:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: "
                               f"got {size1} and {size2}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")
    # as torch: the batch flattened, one _trilinear, the batch shape put back
    output = ops._trilinear(input1.reshape(-1, input1.shape[-1]), weight,
                            input2.reshape(-1, input2.shape[-1]), [1, 3], [0], [1, 2], [2, 3])
    output = output.reshape(*input1.shape[:-1], weight.shape[0])
    return output if bias is None else output + bias


class Bilinear(Module):
    """y = x1ᵀ A x2 + b, one matrix A per output feature."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(factories.empty((out_features, in1_features, in2_features),
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(factories.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/√in1_features, 1/√in1_features) for the weight and the bias."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# -- EmbeddingBag ---------------------------------------------------------------------------------

_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def _flat_bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool,
               per_sample_weights: Tensor | None) -> tuple:
    """(input, offsets, include_last_offset, per_sample_weights) for torch.embedding_bag: a
    2-D input's rows become the bags of its flat form; a 1-D input's offsets are checked."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {_type_string(offsets)}")
        offsets = factories.arange(0, input.numel(), input.shape[1], dtype=input.dtype)
        flat_weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return input.reshape(-1), offsets, False, flat_weights
    if input.dim() != 1:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    return input, offsets, include_last_offset, per_sample_weights


def _type_string(value: Any) -> str:
    """str(type(value)) as torch's message shows it (a Tensor is a torch.Tensor there)."""
    return "<class 'torch.Tensor'>" if isinstance(value, Tensor) else str(type(value))


def _bag_mode(mode: str, scale_grad_by_freq: bool, sparse: bool) -> int:
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    return _BAG_MODES[mode]


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of embedding rows, without the rows in between:
    bags are the rows of a 2-D input, or the runs of a 1-D input that `offsets` start
    (torch.embedding_bag's first result: its node is EmbeddingBagBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(embedding_bag, (input, weight, offsets, max_norm, norm_type,
                                scale_grad_by_freq, mode, sparse, per_sample_weights,
                                include_last_offset, padding_idx), {})
        if heard is not _modes.PASS:
            return heard
    if weight.dtype is dtypes.int64 and input.dtype.is_floating_point:
        warn_at_caller("Argument order of nn.functional.embedding_bag was changed. Usage "
                       "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                       "`embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    input, offsets, include_last_offset, per_sample_weights = _flat_bags(
        input, offsets, include_last_offset, per_sample_weights)
    mode_number = _bag_mode(mode, scale_grad_by_freq, sparse)
    if max_norm is not None:  # as torch's: the rows input names renormalized in place first
        with no_grad():
            ops.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    return torch_embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_number, sparse,
                               per_sample_weights, include_last_offset, padding_idx)[0]


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, without the embeddings in between."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(factories.empty((num_embeddings, embedding_dim),
                                                    dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """N(0, 1), with the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx!r}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag holding these embeddings (frozen unless freeze=False)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


# -- gumbel softmax -------------------------------------------------------------------------------

def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau) along dim; with hard, the one-hot of its
    argmax in the forward pass and the soft sample's gradient in the backward one."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(gumbel_softmax, (logits, tau, hard, eps, dim), {})
        if heard is not _modes.PASS:
            return heard
    if eps != 1e-10:
        warn_at_caller("`eps` parameter is deprecated and has no effect.")
    gumbels = -random_ops.empty_like_layout(logits).exponential_().log()
    soft = composite.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = ops.max(soft, dim, True)[1]
    one_hot = factories.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft
