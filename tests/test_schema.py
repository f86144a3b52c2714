"""The schema grammar: canonical schemas round-trip, malformed ones fail at the right column."""

from __future__ import annotations

import pytest

from codegen.schema import FunctionSchema, SchemaError, parse_schema

ROUND_TRIP = [
    # every type
    "relu(Tensor self) -> Tensor",
    "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None) -> Tensor",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "t(Tensor(a) self) -> Tensor(a)",
    "zero_(Tensor(a!) self) -> Tensor(a!)",
    "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) "
    "-> Tensor",
    "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
    "narrow(Tensor(a) self, int dim, int? start=None, int? length=None) -> Tensor(a)",
    "dropout(Tensor input, float p, bool train) -> Tensor",
    "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "_to_copy(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    'pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor',
    "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
    # defaults: ints, floats, negative numbers, lists, None, True/False, strings, Mean
    "softmax.int(Tensor self, int dim=-1) -> Tensor",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent=-2.5) -> Tensor",
    "batch_norm(Tensor input, Tensor? weight, bool training=True, float momentum=0.1, "
    "float eps=1e-05) -> Tensor",
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "flatten(Tensor(a) self, int[] dims=[0, 1]) -> Tensor(a)",
    "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
    "SymInt ignore_index=-100) -> Tensor",
    "norm(Tensor self, Scalar? p=2, float scale=.5, float big=1e+10) -> Tensor",
    # keyword-only arguments
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    # returns: none named, tuple, named tuple, Tensor[]
    "ones_like_stub() -> Tensor",
    "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    "unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]",
    "split.Tensor(Tensor(a) self, SymInt split_size, int dim=0) -> Tensor[]",
    "single_in_parens(Tensor self) -> (Tensor)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text: str) -> None:
    assert str(parse_schema(text)) == text


def test_round_trip_covers_every_type() -> None:
    spelled = {str(a.type) for text in ROUND_TRIP for a in parse_schema(text).arguments}
    spelled |= {str(r.type) for text in ROUND_TRIP for r in parse_schema(text).returns}
    wanted = {"Tensor", "Tensor?", "Tensor[]", "Tensor(a)", "Tensor(a!)", "int", "int[]",
              "int[1]?", "int[2]", "int?", "float", "float?", "bool", "Scalar", "Scalar?",
              "ScalarType?", "str", "str?", "SymInt", "SymInt[]", "Tensor(a)[]", "Tensor?[]"}
    assert wanted <= spelled, wanted - spelled


def test_parsed_fields() -> None:
    schema = parse_schema(
        "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor"
    )
    assert isinstance(schema, FunctionSchema)
    assert (schema.base, schema.overload, schema.name) == ("sum", "dim_IntList", "sum.dim_IntList")
    assert schema.kernel_name == "sum_dim_IntList"
    dim = schema.argument("dim")
    assert dim is not None and dim.type.is_list and dim.type.list_size == 1 and dim.type.optional
    keepdim = schema.argument("keepdim")
    assert keepdim is not None and keepdim.default == "False" and not keepdim.kwarg_only
    dtype = schema.argument("dtype")
    assert dtype is not None and dtype.kwarg_only and dtype.default == "None"
    assert schema.return_names() == ["result"]


def test_return_names() -> None:
    named = parse_schema("max.dim(Tensor self, int dim) -> (Tensor values, Tensor indices)")
    assert named.return_names() == ["values", "indices"] and named.tuple_return
    unnamed = parse_schema("f(Tensor self) -> (Tensor, Tensor)")
    assert unnamed.return_names() == ["result0", "result1"]
    alias = parse_schema("t(Tensor(a) self) -> Tensor(a)")
    assert alias.returns[0].type.alias == "a" and alias.arguments[0].type.alias == "a"
    assert parse_schema("f(Tensor(a!) self) -> Tensor(a!)").arguments[0].type.alias == "a!"


# (schema, message fragment, the text the error column points at)
MALFORMED = [
    ("f(Tensor self) Tensor", "missing '->'", "Tensor"),
    ("f(Tensor self) -> ", "missing return type", ""),
    ("f(Tensr self) -> Tensor", "unknown type 'Tensr' (did you mean 'Tensor'?)", "Tensr self"),
    ("f(Tensor self) -> Tensr", "unknown type 'Tensr'", "Tensr"),
    ("f(Tensor self, Device device) -> Tensor", "unknown type 'Device'", "Device"),
    ("f(Tensor self, int(a) x) -> Tensor", "only Tensor types take an alias", "int(a)"),
    ("f(Tensor self, Tensor self) -> Tensor", "'self' is declared twice", "self)"),
    ("f(Tensor 1self) -> Tensor", "malformed argument name '1self'", "1self"),
    ("f(Tensor self, int class) -> Tensor", "'class' is a Python keyword", "class)"),
    ("f(Tensor self) -> (Tensor lambda, Tensor b)", "'lambda' is a Python keyword", "lambda"),
    ("f(Tensor self, int x=) -> Tensor", "'x' has an empty default", ")"),
    ("f(Tensor self, int x= ) -> Tensor", "'x' has an empty default", " )"),
    ("f(Tensor self -> Tensor", "'(' is never closed", "(Tensor self"),
    ("f(Tensor self)) -> Tensor", "')' closes nothing", ") -> Tensor"),
    ("f(Tensor self) -> (Tensor, Tensor", "'(' is never closed", "(Tensor, Tensor"),
    ("f(int[ x) -> Tensor", "never closed", "[ x"),
    ("f(Tensor result) -> Tensor", "'result' is reserved", "result"),
    ("f(Tensor self) -> (Tensor a, Tensor)", "name all returns or none", "Tensor)"),
    ("f(Tensor self) -> (Tensor a, Tensor a)", "two returns are named 'a'", "a)"),
    ("f(Tensor self) -> (Tensor self)", "'self' has the name of an argument", "self)"),
    ("f(Tensor self) -> ()", "at least one value", "()"),
    ("f(Tensor self) -> (Tensor) x", "unexpected text after the returns", "x"),
    ("f(Tensor self, int a=1, int b) -> Tensor", "'b' without a default follows", "b)"),
    ("f(Tensor self, *, int a, *, int b) -> Tensor", "'*' appears twice", "*, int b"),
    ("f(Tensor self, *) -> Tensor", "'*' must be followed by keyword-only", "*)"),
    ("f(Tensor self, , int a) -> Tensor", "empty argument", ", int a"),
    ("f(Tensor) -> Tensor", "needs a type and a name", "Tensor)"),
    ("2f(Tensor self) -> Tensor", "malformed operator name '2f'", "2f"),
    ("f.over-load(Tensor self) -> Tensor", "malformed operator name", "f.over"),
    ("f Tensor self -> Tensor", "expected 'name(arguments) -> returns'", ""),
    # defaults are pasted into generated code: only literals of the argument's type pass
    ('f(Tensor self, int x=__import__("os").getcwd()) -> Tensor', "bad default for 'x'",
     "__import__"),
    ("f(Tensor self, int x=None) -> Tensor", "None is a default only for an optional", "None)"),
    ("f(Tensor self, int x=1.5) -> Tensor", "not a literal of type int", "1.5"),
    ("f(Tensor self, bool b=1) -> Tensor", "expected True or False", "1)"),
    ("f(Tensor self, str s=mean) -> Tensor", "expected a quoted string", "mean"),
    ("f(Tensor self, int[] s=[a]) -> Tensor", "expected a list of numbers", "[a]"),
    ("f(Tensor self, float x=Mean) -> Tensor", "not a literal of type float", "Mean"),
    ("f(Tensor self, ScalarType dtype=long) -> Tensor", "not a literal of type ScalarType",
     "long"),
    ("f(Tensor self=0) -> Tensor", "not a literal of type Tensor", "0"),
]


@pytest.mark.parametrize(("text", "message", "at"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed(text: str, message: str, at: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    assert message in str(info.value)
    assert text[info.value.column:].startswith(at), (
        f"column {info.value.column} points at {text[info.value.column:]!r}, not {at!r}"
    )
