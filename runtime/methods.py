"""Tensor's op methods, set on the class once everything they call exists.

The Tensor class (runtime/_tensor.py) sits below the nodes, the generated wrappers and the
composite ops, so it cannot inherit its methods from them. Instead, as HIPS autograd's
numpy_boxes.py does for its ArrayBox, this module (imported by runtime/__init__.py) sets
them on the class: `backward`, then the spec's methods and operators
(generated/tensor_methods.py), then the `new_*` factories (runtime/factories.py), then the
composite ones (runtime/composite.py), then the predicates (runtime/predicates.py) and the
random ones (runtime/random_ops.py). A name already on the class keeps its first
definition, so Tensor's own methods come first, then the spec's, then the others, as a
class inheriting from all of them would resolve them.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import FunctionType

from generated.ops import alias
from generated.tensor_methods import TensorMethods
from runtime import arguments, modes
from runtime._tensor import Tensor
from runtime.autograd import gradients
from runtime.composite import CompositeMethods, TensorOpsMethods, clone_method
from runtime.counting import CountingMethods
from runtime.factories import FactoryMethods, legacy_new
from runtime.fft import SpectralMethods
from runtime.histograms import HistogramMethods
from runtime.nn.activation_more import NnMethods
from runtime.old_linalg import OldLinalgMethods
from runtime.other_names import OtherNameMethods
from runtime.predicates import PredicateMethods
from runtime.random_ops import RandomMethods
from runtime.tensor_attributes import AttributeMethods
from runtime.tensor_functions import FunctionMethods


def backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Tensor] | Tensor | None = None,
) -> None:
    """Accumulate this tensor's gradient into the leaves' `.grad` (autograd.backward)."""
    if modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = modes.dispatch(Tensor.backward, (self,), {
            "gradient": gradient, "retain_graph": retain_graph, "create_graph": create_graph,
            "inputs": inputs})
        if heard is not modes.PASS:
            return heard
    gradients.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def install(methods: type, numpy_keywords: bool = False) -> None:
    """Set each function and property of `methods` on Tensor, unless Tensor has the name;
    with `numpy_keywords`, each method torch binds through its argument parser takes the
    numpy-style keywords too (`x.softmax(axis=1)`: runtime/arguments.py)."""
    for name, value in vars(methods).items():
        if isinstance(value, FunctionType | property) and name not in vars(Tensor):
            if numpy_keywords and isinstance(value, FunctionType) and \
                    name not in arguments.TORCH_PYTHON_METHODS:
                value = arguments.numpy_keywords(value, method=True)
            setattr(Tensor, name, value)


Tensor.backward = backward


def tensor_new(cls: type, *args: object, **kwargs: object) -> Tensor:
    """`torch.Tensor(...)`, the legacy constructor: a Tensor argument gives its alias (an
    AliasBackward0 node, as in PyTorch), anything else factories.legacy_new."""
    if len(args) == 1 and isinstance(args[0], Tensor) and not kwargs:
        return alias(args[0])
    return legacy_new(cls, *args, **kwargs)


Tensor.__new__ = staticmethod(tensor_new)
install(TensorMethods)
install(FactoryMethods)  # new_zeros, ...: before composite's, so these are the ones
install(CompositeMethods, numpy_keywords=True)
install(PredicateMethods, numpy_keywords=True)
install(RandomMethods)
install(TensorOpsMethods, numpy_keywords=True)  # tensor ops: argsort, narrow, mT, `//`, ...
install(OtherNameMethods)  # torch's other names: arccos, clip_, swapaxes, ...
install(AttributeMethods)  # is_signed, itemsize, data_ptr, conj, H, apply_, ...
install(FunctionMethods)  # kron, diff, tile, cov, det, ...
install(NnMethods)  # Tensor.prelu (issue 28, helper nnlayers)
install(CountingMethods)  # bincount, histc, gcd, logical_xor, ...
install(HistogramMethods)  # Tensor.histogram
install(OldLinalgMethods)  # Tensor.orgqr
install(SpectralMethods)  # Tensor.stft, Tensor.istft
Tensor.clone = clone_method  # the spec's clone, and memory_format= (runtime/composite.py)
