"""The checked model of the spec: what the templates render, as frozen dataclasses.

Text -> `load.load_spec` -> `list[OpInfo]` -> `render.render_all` -> files.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from codegen.schema import FunctionSchema


@dataclass(frozen=True)
class Location:
    path: str
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


class SpecError(Exception):
    """A mistake in the spec, reported as `file:LINE:COL: entry: message`."""

    def __init__(self, location: Location, entry: str, message: str) -> None:
        super().__init__(f"{location}: {entry}: {message}")
        self.location = location
        self.entry = entry
        self.message = message


class SavedKind(enum.StrEnum):
    """What a Node keeps from the forward pass for one argument or output of its op.

    formula.py finds the kind by reading the backward formulas; render.py maps each size
    kind to the runtime function that computes it (render.SIZE_SAVERS). A StrEnum, so that
    a kind also compares equal to its plain name (`attr.kind == "output"`).
    """

    # A tensor argument whose values a formula reads, kept as a SavedVariable.
    # E.g. mul.Tensor's `self: grad * other` saves other as `other_`.
    TENSOR = "tensor"
    # An output a formula reads, saved without its grad_fn (no reference cycle).
    # E.g. exp's `self: grad * result` saves result as `result_`.
    OUTPUT = "output"
    # A Tensor[] argument a formula reads, kept as a list of SavedVariable.
    # E.g. index.Tensor's `index_backward(grad, self.shape, indices)` saves `indices_`.
    TENSOR_LIST = "tensor_list"
    # Only `x.shape`: the sizes, not the tensor.
    # E.g. sum.dim_IntList's `sum_backward(grad, self.shape, ...)` saves `self_sym_sizes`.
    SIZES = "sizes"
    # Only `x.ndim`: the number of dimensions, not the tensor.
    # E.g. `grad.unsqueeze(self.ndim)` would save `self_dim`.
    DIM = "dim"
    # Only `x.dtype`: the dtype, not the tensor.
    # E.g. _to_copy's `self: grad.to(self.dtype)` saves `self_scalar_type`.
    SCALAR_TYPE = "scalar_type"
    # Only `x.numel()`: the element count, not the tensor.
    # E.g. mean.dim's `mean_backward(grad, self.shape, dim, self.numel(), keepdim)` saves
    # `self_sym_numel` (and `self_sym_sizes`).
    NUMEL = "numel"
    # Only `x.stride()`: the strides, not the tensor.
    # E.g. mm's `mm_mat1_backward(grad, mat2, self.shape, self.stride(), 1)` saves
    # `self_sym_strides`.
    STRIDES = "strides"
    # Only `to_args_sizes(xs)`: the shapes of a Tensor[]'s tensors, not the tensors.
    # E.g. cat's `cat_tensors_backward(grad, to_args_sizes(tensors), dim)` saves
    # `tensors_args_sizes`.
    LIST_SIZES = "list_sizes"
    # Only `TensorGeometry(x)`: x's sizes, strides and storage offset, not the tensor.
    # E.g. as_strided's `as_strided_backward(grad, TensorGeometry(self), size, stride,
    # storage_offset)` saves `self_geometry`.
    GEOMETRY = "geometry"
    # A non-tensor argument a formula reads, kept by value.
    # E.g. add.Tensor's `other: maybe_multiply(grad, alpha)` saves `alpha`.
    VALUE = "value"


@dataclass(frozen=True)
class SavedAttribute:
    """One field a Node keeps from the forward pass, found by reading the formulas."""

    kind: SavedKind
    source: str  # the argument or output it comes from
    name: str  # the local name in apply() and the suffix of `_saved_<name>`

    @property
    def is_saved_variable(self) -> bool:
        return self.kind in (SavedKind.TENSOR, SavedKind.OUTPUT, SavedKind.TENSOR_LIST)


@dataclass(frozen=True)
class Derivative:
    """One backward formula: the gradient of one or more inputs (`self, other: ...`)."""

    var_names: tuple[str, ...]
    formula: str  # as written in the spec
    code: str  # the Python expression emitted into apply()
    saved: tuple[SavedAttribute, ...]
    grad_indices: tuple[int, ...]  # which grads[i] the formula reads
    grad_names: tuple[str, ...] = ()  # which of `grad`, `grad_<name>` it reads
    not_implemented: str | None = None
    line: int = 0


class ForwardKind(enum.StrEnum):
    """Where a forward-mode (JVP) formula comes from, as in torchgen.

    A str enum, so that render.py's `fwd.kind == "auto_linear"` keeps working.
    """

    # Written in the spec, with `x_p` (primal) and `x_t` (tangent) names.
    # E.g. mul.Tensor's `result: other_t * self_p + self_t * other_p`.
    FORMULA = "formula"
    # The backward formula of the one differentiable input, with `grad` replaced by that
    # input's tangent and each tensor argument by its primal.
    # E.g. sin's `result: auto_element_wise` stands for `self_t * self_p.cos()`
    # (from `self: grad * self.cos()`).
    AUTO_ELEMENT_WISE = "auto_element_wise"
    # The op itself applied to the tangents. render.py writes the call, since it knows the
    # wrappers' names, so the ForwardDerivative's `code` is empty.
    # E.g. clone's `result: auto_linear` is `clone(self_t)`.
    AUTO_LINEAR = "auto_linear"


@dataclass(frozen=True)
class ForwardDerivative:
    """A forward-mode (JVP) formula: the tangent of one or more outputs."""

    var_names: tuple[str, ...]
    formula: str  # as written in the spec
    kind: ForwardKind
    code: str = ""  # the Python expression a generated JVP function returns
    derived: str = ""  # auto_element_wise: the formula it stands for, in the spec's terms
    line: int = 0


@dataclass(frozen=True)
class ForwardFormula:
    """`forward:`, the op's result as an expression over its arguments and other ops of the
    spec (`forward: self * self * self`). gradgen derives the op's kernel from it (on numpy
    arrays, generated/spec_kernels.py) when runtime/kernels.py has none, checks it against
    the kernel when both exist (verify's `kernel` row), and export-torch runs it in torch
    ops for an op torch lacks."""

    formula: str  # as written in the spec
    code: str  # checked and rewritten as a backward formula is (`ops.NAME(...)`)
    line: int = 0


@dataclass(frozen=True)
class Input:
    """A differentiable tensor input: one next_functions slot (a Tensor[] gives one per tensor)."""

    name: str
    index: int
    is_list: bool


# The flags a sample may set besides its arguments (`random: true`), and what each changes in
# the checks codegen/verify.py runs on that sample; error messages list them in this order.
SAMPLE_FLAGS: dict[str, str] = {
    "kink": "the sample sits where the derivative jumps (relu at 0), where finite differences "
            "mean nothing: the checks against them (fd, gg, jvp fd) do not run",
    "no_gradgrad": "the second-order check (gg) does not run",
    "no_torch": "nothing is compared with torch (an op torch lacks)",
    "random": "the op's outputs are random (dropout): nothing is compared but the raw form "
              "and the grad_fn name",
    "torch_only": "as kink, where finite differences do not apply for another reason "
                  "(a gradient that by design is not a derivative)",
    "no_jvp_rev": "forward mode is not compared with reverse mode (a backward that by design "
                  "is not the transpose of the derivative)",
    "no_jvp_torch": "forward mode is not compared with torch's (torch has no forward formula "
                    "for the op; jvp fd and jvp rev still prove gradgen's)",
}
SAMPLE_KEYS = tuple(SAMPLE_FLAGS)


@dataclass(frozen=True)
class NumpyForm:
    """One `numpy:` form of a kernel: what it computes, as a numpy expression over the op's
    arguments, where `when` holds (a condition on its non-Tensor arguments; None: always),
    and whether the kernel computes it with numpy's warnings off (`quiet`)."""

    form: str
    when: str | None = None
    quiet: bool = False


@dataclass(frozen=True)
class OpInfo:
    schema: FunctionSchema
    location: Location
    node_name: str | None  # None when nothing is differentiable
    derivatives: tuple[Derivative, ...]
    forward_derivatives: tuple[ForwardDerivative, ...]
    inputs: tuple[Input, ...]  # the differentiable inputs, in schema order
    non_differentiable: tuple[str, ...]
    output_differentiability: tuple[bool, ...]
    saved: tuple[SavedAttribute, ...]
    method: bool  # also a Tensor method
    function: bool  # also a function in the namespace
    inplace: bool  # also an in-place Tensor method `base_`
    inplace_function: bool  # and an in-place function `base_` in the namespace
    python_binding: bool  # reachable by overload resolution from Python
    view_of: str | None  # the argument whose storage the output shares
    samples: tuple = field(default=())
    # A hand-written PyTorch node's full name (`torch::autograd::CopyBackwards`), which
    # its name() returns; None for the generated `*Backward<N>` names.
    qualified_name: str | None = None
    # `numpy:`, the kernel's result as numpy expressions over the arguments, for
    # runtime.compile to write instead of the kernel call (empty: call the kernel).
    numpy_forms: tuple[NumpyForm, ...] = ()
    # `forward:`, the op's result written with other ops of the spec (None: only a kernel).
    forward_formula: ForwardFormula | None = None

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def differentiable(self) -> bool:
        return self.node_name is not None
