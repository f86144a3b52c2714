"""The checked model of the spec: what the templates render, as frozen dataclasses.

Text -> `load.load_spec` -> `list[OpInfo]` -> `render.render_all` -> files.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class SavedAttribute:
    """One field a Node keeps from the forward pass, found by reading the formulas.

    `kind` says what is kept:
      tensor      a tensor argument, as a SavedVariable           (`self_`)
      output      an output, saved without a reference cycle      (`result_`)
      tensor_list a Tensor[] argument, as a list of SavedVariable (`tensors_`)
      sizes       `x.shape` only                                  (`self_sym_sizes`)
      dim         `x.ndim` only                                   (`self_dim`)
      scalar_type `x.dtype` only                                  (`self_scalar_type`)
      numel       `x.numel()` only                                (`self_sym_numel`)
      list_sizes  `to_args_sizes(xs)`: the shapes of a Tensor[]   (`tensors_args_sizes`)
      value       a non-tensor argument, by value                 (`alpha`)
    """

    kind: str
    source: str  # the argument or output it comes from
    name: str  # the local name in apply() and the suffix of `_saved_<name>`

    @property
    def is_saved_variable(self) -> bool:
        return self.kind in ("tensor", "output", "tensor_list")


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


@dataclass(frozen=True)
class ForwardDerivative:
    """A forward-mode (JVP) formula: the tangent of one or more outputs.

    `kind` says where it comes from, as in torchgen:
      formula            written in the spec, with `x_p` (primal) and `x_t` (tangent) names
      auto_element_wise  the backward formula of the one differentiable input, with `grad`
                         replaced by that input's tangent (`derived` holds the result)
      auto_linear        the op itself applied to the tangents; render.py writes the call,
                         since it knows the wrappers' names, so `code` is empty
    """

    var_names: tuple[str, ...]
    formula: str  # as written in the spec
    kind: str
    code: str = ""  # the Python expression a generated JVP function returns
    derived: str = ""  # auto_element_wise: the formula it stands for, in the spec's terms
    line: int = 0


@dataclass(frozen=True)
class Input:
    """A differentiable tensor input: one next_functions slot (a Tensor[] gives one per tensor)."""

    name: str
    index: int
    is_list: bool


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

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def differentiable(self) -> bool:
        return self.node_name is not None
