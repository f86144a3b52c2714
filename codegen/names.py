"""Names that generated code owns, which no name from the spec may take.

The spec's names become Python names in generated/: an op `add` is a function `add`, its
argument `other` a parameter, its output `result` a local. A spec name equal to a name the
templates write would replace it: an op `kernels` would hide the kernels module from every
wrapper, an argument `grad_fn` would be overwritten by the node. `load.py` refuses such
names at their line; tests/test_hostile_specs.py checks that these lists hold every name
the generated files bind or read besides the spec's, so a new template name cannot be
forgotten here.
"""

from __future__ import annotations

# Module-level names of the generated files: imports, tables, and the builtins that
# ops.py, forward.py and tensor_methods.py call. Ops (and their wrappers,
# aliases and dispatchers) are module-level functions there.
MODULE_NAMES = frozenset({
    "runtime", "ops", "manual", "forward", "kernels", "Node",
    "SavedVariable", "SavedVariableList", "NOT_SAVED", "namedtuple", "OVERLOADS", "BY_NAME",
    "Overload", "Param", "MISSING", "tensor_ops", "NUMBER", "NUMBER_OR_NONE", "TENSOR_OR_NUMBER",
    "DTYPE_OF", "SAVED", "FREED",
    "TensorMethods", "recording", "forward_grad", "_arguments",
    "map", "tuple", "TypeError", "NotImplemented", "Tensor", "isinstance", "type",
    "int",  # a method's test for sizes given one by one (`x.view(3, 4)`)
    "_out",  # runtime/out.py, which a wrapper hands an out= call to
    "_modes",  # runtime/modes.py, which every wrapper and method asks first
    "_grad_state", "gradient_edge",  # a recorded op's own test and edges (the fast path)
    "globals",  # a wrapper whose argument shadows its own name finds itself through it
    "spec_kernels",  # generated/spec_kernels.py: the kernels derived from `forward:` formulas
})
# Node classes are module-level names of functions.py (imported into ops.py), which also
# calls these builtins.
NODE_MODULE_NAMES = MODULE_NAMES | {"any", "len", "range", "property", "RuntimeError",
                                    "NotImplementedError"}
# Locals and builtins of generated function bodies (wrappers, apply, JVP functions), where
# arguments and outputs are locals too.
LOCAL_NAMES = NODE_MODULE_NAMES | {
    "grad_fn", "needs_grad", "forward_ad", "original_self", "tangent", "returned",
    "grad", "grads", "grad_inputs", "any_grad_defined", "results", "grad_input_mask",
    "args", "kwargs", "total", "term", "error",
    "heard",  # what a mode answered for the call (runtime/modes.py)
    "out",  # the keyword-only out= of the wrappers of torch's out= overloads
    "deprecated",  # the extra positionals of torch's deprecated forms (x.add_(alpha, other))
    "extra",  # the positionals past a wrapper's parameters (torch's too-many-arguments error)
    "branch1", "branch2",  # a JVP where(c, a, b)'s branches, summed of their defined terms
}
