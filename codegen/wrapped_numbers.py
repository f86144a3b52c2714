"""Where PyTorch's Python binding lets a Python number stand for a Tensor argument.

`x * 2` and `torch.add(x, 2)` pass the number 2 where the schema says `Tensor other`:
PyTorch's argument parser wraps it in a 0-dim tensor (a "wrapped number", which type
promotion treats as weaker than any tensor). It does so only for some ops, and that is a
fact about each op's Python binding, known when the code is generated: the generated
wrapper tests for it with one isinstance (`isinstance(other, TENSOR_OR_NUMBER)`), and the
entry in generated OVERLOADS carries it to overload resolution (`Param(..., number=True)`).

The parser's own list takes a number for any Tensor argument of the arithmetic ops
(`torch.add(2, x)`), even for all of them (`torch.add(2, 3)` is `tensor(5)`). Other ops
take one where torch binds a Scalar overload that gradgen's spec may not have:
`torch.where(c, x, 0.)` is where.ScalarOther and `torch.eq(x, 2)` eq.Scalar, but
`torch.eq(2, x)` is a TypeError (eq has no Scalar `self`), and so is `torch.pow(2, 3)` (no
overload takes two Scalars). Everywhere else (`torch.maximum(x, 1.5)`, `torch.dot(x, 2)`)
a number is a TypeError.

`clamp` is not here: torch binds clamp.Tensor and clamp.Scalar, and `clamp(x, min=2)` is
clamp.Scalar, with no number standing for a Tensor (the spec has both overloads too).
"""

from __future__ import annotations

# The ops of PyTorch's parser's own list (should_allow_numbers_as_tensors): any and all of
# their Tensor arguments may be numbers.
PARSER_NUMBER_OPS = frozenset({"add", "sub", "subtract", "mul", "multiply", "div", "divide",
                               "true_divide", "floor_divide", "to", "copy"})

# By op (its base name: `add` for add.Tensor and add_), the Tensor arguments a number may
# stand for; None: all of them (but not all at once, outside the parser's list).
WRAPPED_NUMBER_OPS: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(PARSER_NUMBER_OPS),
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor", "remainder", "pow",
                     "xlogy")),
    "where": frozenset({"self", "other"}),  # where.ScalarSelf, ScalarOther, Scalar
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "rsub", "fmod"),
                    frozenset({"other"})),
    **dict.fromkeys(("masked_fill", "index_fill", "fill"), frozenset({"value"})),
    "lerp": frozenset({"weight"}),
}

# Ops whose Python binding in torch has more signatures than the spec binds (Scalar
# overloads, above): given a bad argument, torch cannot tell which signature was meant and
# says "received an invalid combination of arguments", where an op with one signature names
# the argument ("argument 'other' (position 2) must be Tensor, not NoneType").
SEVERAL_SIGNATURES = frozenset({"where", "bitwise_and", "bitwise_or", "bitwise_xor"})


def op_name(base: str) -> str:
    """The name the tables above use: `add` for `add` and for its in-place form `add_`."""
    return base.removesuffix("_")


def takes_number(base: str, argument: str) -> bool:
    """Whether torch's binding of op `base` takes a Python number for its Tensor `argument`
    (the schema's name: `self`, `other`)."""
    name = op_name(base)
    if name not in WRAPPED_NUMBER_OPS:
        return False
    allowed = WRAPPED_NUMBER_OPS[name]
    return allowed is None or argument in allowed


def has_several_signatures(base: str) -> bool:
    """Whether torch's error for a bad argument of op `base` is "invalid combination"."""
    return op_name(base) in SEVERAL_SIGNATURES


def takes_only_numbers(base: str) -> bool:
    """Whether torch's binding of op `base` takes numbers for all its Tensor arguments at
    once: `torch.mul(2, 3)` is a 0-dim tensor, `torch.pow(2, 3)` a TypeError."""
    return op_name(base) in PARSER_NUMBER_OPS
