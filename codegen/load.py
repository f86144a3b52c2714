"""Load `derivatives.yaml` into checked `OpInfo`s, or raise a located `SpecError`.

The YAML is composed (not constructed) so that every key and value keeps its line and
column, and so that no tag outside plain YAML can ever construct an object.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import yaml

from codegen.formula import (
    SIZE_ATTRIBUTES,
    SIZE_METHODS,
    FormulaError,
    Scope,
    Signature,
    analyze,
    local_name,
    parse_expression,
)
from codegen.model import (
    SAMPLE_KEYS,
    Derivative,
    ForwardDerivative,
    ForwardKind,
    Input,
    Location,
    OpInfo,
    SavedAttribute,
    SpecError,
)
from codegen.names import LOCAL_NAMES, MODULE_NAMES, NODE_MODULE_NAMES
from codegen.schema import FunctionSchema, SchemaError, parse_schema

# Keys gradgen adds to torchgen's: how an op is exposed, and its sample inputs for tests.
BINDING_KEYS = ("variants", "inplace", "python_binding", "samples", "node")
# Every key an entry may have besides its arguments' and outputs' formulas.
ENTRY_KEYS = ("name", "output_differentiability", *BINDING_KEYS)
# Lists and mappings in lists and mappings: a spec needs about six levels.
MAX_YAML_DEPTH = 32
_OPENING_TOKENS = (yaml.BlockSequenceStartToken, yaml.BlockMappingStartToken,
                   yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)
_CLOSING_TOKENS = (yaml.BlockEndToken, yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)
_SAFE_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "seq", "map")
}
# Control characters but tab and newline, and lone surrogates (only a YAML escape makes one).
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# All matched with fullmatch, in ASCII (see codegen/schema.py).
_QUALIFIED = re.compile(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*", re.ASCII)
_RESULT_KEY = re.compile(r"result\d*", re.ASCII)
_NOT_IMPLEMENTED = re.compile(r"not_implemented\((?P<arg>.*)\)", re.S)


def node_name_prefix(base: str) -> str:
    """torchgen's class prefix: CamelCase of the base name, `_softmax` -> SoftmaxBackward."""
    camel = "".join(part.title() for part in base.split("_"))
    return (camel + "Backward").replace("ForwardBackward", "Backward")


def module_functions(path: Path, private: bool = False) -> frozenset[str]:
    """Top-level functions of a runtime module, read with ast: codegen never imports runtime."""
    if not path.exists():
        return frozenset()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                     and (private or not n.name.startswith("_")))


def manual_helpers(path: Path) -> frozenset[str]:
    """The helpers formulas may call: the public functions of runtime/manual.py."""
    return module_functions(path)


def function_signatures(path: Path, private: bool = False) -> dict[str, Signature]:
    """The top-level functions of a runtime module and the calls they take, read with ast
    (codegen never imports runtime); {} if there is no such file."""
    if not path.exists():
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {n.name: Signature.of_function(n) for n in tree.body
            if isinstance(n, ast.FunctionDef) and (private or not n.name.startswith("_"))}


def check_kernels(infos: list[OpInfo], kernels: Mapping[str, Signature], source: str) -> None:
    """Every op's wrapper calls `kernels.<base>_<overload>(...)` with all of its arguments,
    in schema order: the kernel must exist in `source` and take them."""
    for info in infos:
        name = info.schema.kernel_name
        arguments = [a.name for a in info.schema.arguments]
        kernel = kernels.get(name)
        if kernel is None:
            close = difflib.get_close_matches(name, list(kernels), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SpecError(info.location, info.name,
                            f"no kernel {name!r} in {source}{hint}: the op's forward, on "
                            f"numpy arrays, is `def {name}({', '.join(arguments)}):` there")
        problem = kernel.mismatch(len(arguments), [])
        if problem is not None:
            raise SpecError(info.location, info.name,
                            f"the kernel {kernel.name} in {source} {problem}: the op passes "
                            f"{len(arguments)} ({', '.join(arguments)})")


class _Reader:
    """Turns composed YAML nodes into Python values, refusing anything but plain YAML."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.constructor = yaml.constructor.SafeConstructor()

    def location(self, node: yaml.Node, index: int = 0) -> Location:
        """Where character `index` of a scalar's value is in the file.

        A value is not always a slice of the file: quotes, `|`/`>` headers and the folding
        of a plain scalar over several lines change it. Only whitespace changes, so the
        n-th non-blank character of the value is the n-th non-blank one of its source.
        """
        start = node.start_mark.index
        if not isinstance(node, yaml.ScalarNode) or not index:
            return self._at(start + (node.style in ("'", '"') if isinstance(
                node, yaml.ScalarNode) else 0))
        source = self.text[start : node.end_mark.index]
        skip = 1 if node.style in ("'", '"') else 0
        if node.style in ("|", ">"):
            skip = source.index("\n") + 1
        wanted = sum(not c.isspace() for c in node.value[:index])
        seen = 0
        for offset in range(skip, len(source)):
            if source[offset].isspace():
                continue
            if seen == wanted:
                return self._at(start + offset)
            seen += 1
        return self._at(node.end_mark.index)

    def _at(self, index: int) -> Location:
        line = self.text.count("\n", 0, index)
        column = index - (self.text.rfind("\n", 0, index) + 1)
        return Location(self.path, line + 1, column + 1)

    def check_plain(self, node: yaml.Node, entry: str) -> None:
        """Only plain YAML: the tags of str, int, float, bool, null, lists and mappings, and
        text without control characters or lone surrogates (a `"\\0"` or `"\\ud800"` escape)."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.tag not in _SAFE_TAGS:
                raise SpecError(
                    self.location(current), entry, f"tag {current.tag!r} is not allowed"
                )
            if isinstance(current, yaml.ScalarNode):
                bad = _UNPRINTABLE.search(current.value)
                if bad:
                    raise SpecError(self.location(current, bad.start()), entry,
                                    f"character {bad[0]!r} is not allowed in the spec")
            if isinstance(current, yaml.SequenceNode):
                stack.extend(current.value)
            elif isinstance(current, yaml.MappingNode):
                for key, value in current.value:
                    stack.extend((key, value))

    def value(self, node: yaml.Node) -> object:
        """The plain Python value of a node whose tags were checked."""
        if isinstance(node, yaml.SequenceNode):
            return [self.value(v) for v in node.value]
        if isinstance(node, yaml.MappingNode):
            return {self.value(k): self.value(v) for k, v in node.value}
        return self.constructor.construct_object(node)


def _compose(reader: _Reader) -> yaml.SequenceNode:
    """The spec's YAML, composed (never constructed); raises SpecError."""
    text, path = reader.text, reader.path
    try:
        depth = 0
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            mark = token.start_mark
            # No aliases: `*name` shares a node, and a few nested ones blow up exponentially.
            if isinstance(token, yaml.AliasToken):
                raise SpecError(
                    Location(path, mark.line + 1, mark.column + 1), "<yaml>",
                    "YAML aliases (*name) are not allowed in the spec",
                )
            # PyYAML composes recursively: bound the nesting before it does.
            depth += isinstance(token, _OPENING_TOKENS) - isinstance(token, _CLOSING_TOKENS)
            if depth > MAX_YAML_DEPTH:
                raise SpecError(
                    Location(path, mark.line + 1, mark.column + 1), "<yaml>",
                    f"YAML nested more than {MAX_YAML_DEPTH} levels deep",
                )
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        location = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path, 1, 1)
        raise SpecError(location, "<yaml>", f"YAML syntax error: {error.problem}") from None
    except yaml.YAMLError as error:
        raise SpecError(Location(path, 1, 1), "<yaml>", f"YAML error: {error}") from None
    if root is None:
        raise SpecError(Location(path, 1, 1), "<spec>", "the spec is empty: no entries")
    if root.tag not in _SAFE_TAGS:
        raise SpecError(reader.location(root), "<spec>", f"tag {root.tag!r} is not allowed")
    if not isinstance(root, yaml.SequenceNode):
        raise SpecError(
            Location(path, root.start_mark.line + 1, root.start_mark.column + 1),
            "<spec>",
            "the spec must be a list of entries (`- name: ...`)",
        )
    if not root.value:
        raise SpecError(Location(path, 1, 1), "<spec>", "the spec is empty: no entries")
    return root


def load_spec(path: Path | str, helpers_path: Path | str | None = None) -> list[OpInfo]:
    """Read and check a spec; the first mistake raises SpecError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SpecError(Location(str(path), 1, 1), "<spec>", f"cannot read: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
        raise SpecError(Location(path.name, line, column), "<spec>",
                        f"not UTF-8: byte 0x{data[error.start]:02x} cannot start or continue a "
                        "character here") from None
    if helpers_path is None:
        helpers_path = Path(__file__).resolve().parent.parent / "runtime" / "manual.py"
    return parse_spec(text, path.name, manual_helpers(Path(helpers_path)),
                      function_signatures(Path(helpers_path)))


def parse_spec(text: str, path: str, helpers: frozenset[str],
               helper_signatures: Mapping[str, Signature] | None = None) -> list[OpInfo]:
    """Check a spec's text (`path` names it in errors); the first mistake raises SpecError.

    `helpers` names the functions of runtime/manual.py that formulas may call;
    `helper_signatures`, when given, the calls they take, so that formulas are checked.
    """
    reader = _Reader(path, text)
    root = _compose(reader)
    entries: list[tuple[FunctionSchema, dict[str, tuple[yaml.Node, yaml.Node]]]] = []
    seen: dict[str, Location] = {}
    for index, node in enumerate(root.value):
        label = f"<entry {index + 1}>"
        reader.check_plain(node, label)
        if not isinstance(node, yaml.MappingNode):
            raise SpecError(
                reader.location(node), label, "an entry must be a mapping with `name:`"
            )
        keys: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise SpecError(reader.location(key), label, "keys must be plain strings")
            if key.value in keys:
                raise SpecError(reader.location(key), label, f"key {key.value!r} appears twice")
            keys[key.value] = (key, value)
        if "name" not in keys:
            raise SpecError(reader.location(node), label, "entry has no `name:`")
        name_node = keys["name"][1]
        if not isinstance(name_node, yaml.ScalarNode) or not isinstance(name_node.value, str):
            raise SpecError(reader.location(name_node), label, "`name:` must be a schema string")
        try:
            schema = parse_schema(name_node.value)
        except SchemaError as error:
            raise SpecError(
                reader.location(name_node, error.column), label, f"malformed schema: {error}"
            ) from None
        _check_names(reader, schema, name_node)
        location = reader.location(name_node)
        if schema.name in seen:
            raise SpecError(
                location, schema.name, f"duplicate schema: {schema.name} is already declared at "
                f"line {seen[schema.name].line}"
            )
        seen[schema.name] = location
        entries.append((schema, keys))

    signatures: dict[str, tuple[Signature, ...]] = {
        name: (signature,) for name, signature in (helper_signatures or {}).items()}
    method_signatures: dict[str, tuple[Signature, ...]] = {}
    for schema, keys in entries:
        signatures[schema.base] = (*signatures.get(schema.base, ()), Signature.of_schema(schema))
        method = Signature.of_schema(schema, method=True)
        for name, declared in ((schema.base, _variants(reader, schema, keys)[1]),
                               (f"{schema.base}_", "inplace" in keys)):
            if declared:
                method_signatures[name] = (*method_signatures.get(name, ()), method)
    scope = Scope(
        schema=entries[0][0],  # each entry's own replaces it
        ops=frozenset(s.base for s, _ in entries if s.arguments),
        methods=frozenset(method_signatures), helpers=helpers,
        signatures=signatures, method_signatures=method_signatures,
    )
    counter: Counter[str] = Counter()
    return [_load_entry(reader, schema, keys, replace(scope, schema=schema), counter)
            for schema, keys in entries]


def _check_names(reader: _Reader, schema: FunctionSchema, name_node: yaml.ScalarNode) -> None:
    """Refuse spec names that would replace a name of the generated code (codegen/names.py)
    or one that generated code derives from another spec name (`self` -> `self_`, `x_p`)."""
    text = name_node.value

    def fail(name: str, message: str) -> SpecError:
        return SpecError(reader.location(name_node, _argument_index(text, name)), schema.name,
                         message)

    for name in (schema.base, schema.kernel_name, f"{schema.base}_default"):
        if name in MODULE_NAMES or name.startswith("__"):
            raise SpecError(reader.location(name_node, len(text) - len(text.lstrip())),
                            schema.name, f"an op may not be named {name!r}: generated code "
                            "uses that name")
    tensors = [a.name for a in schema.arguments if a.type.is_tensor_like]
    suffixes = [s for _, s in SIZE_ATTRIBUTES.values()] + [s for _, s in SIZE_METHODS.values()]
    derived = {f"{t}_{end}": t for t in tensors for end in ("p", "t", "args_sizes")}
    derived |= {f"{local_name(t).rstrip('_')}_{end}": t for t in tensors for end in suffixes}
    derived |= {f"{prefix}{o}{suffix}": o for o in schema.return_names()
                for prefix, suffix in (("grad_", ""), ("", "_t"))}
    for name in [a.name for a in schema.arguments] + [r.name for r in schema.returns if r.name]:
        if name in LOCAL_NAMES:
            raise fail(name, f"{name!r} may not name an argument or output: generated code "
                             "uses that name")
        if name.startswith("_") or name.endswith("_"):
            raise fail(name, f"{name!r}: argument and output names may not begin or end with "
                             "'_' (generated code writes `self_` for `self`; a namedtuple "
                             "refuses a field `_x`)")
        if name in derived and derived[name] != name:
            raise fail(name, f"{name!r} is the name generated code gives to something of "
                             f"{derived[name]!r}: rename it")


def _variants(reader: _Reader, schema: FunctionSchema, keys: dict) -> tuple[bool, bool]:
    """(function, method): like native_functions.yaml's `variants:`."""
    if "variants" not in keys:
        first = schema.arguments[0] if schema.arguments else None
        is_method = first is not None and first.name == "self" and first.type.is_tensor
        return True, is_method
    key, value = keys["variants"]
    raw = reader.value(value)
    words = [w.strip() for w in str(raw).split(",")] if isinstance(raw, str) else None
    if not words or any(w not in ("function", "method") for w in words):
        raise SpecError(
            reader.location(value), schema.name,
            "variants must be 'function', 'method' or 'function, method'",
        )
    return "function" in words, "method" in words


def _inplace(reader: _Reader, schema: FunctionSchema, keys: dict) -> tuple[bool, bool]:
    """(an in-place method `base_`, also an in-place function): `inplace: True` makes the
    method, as `x.add_(y)`; `inplace: function, method` the function too, as `torch.sin_(x)`."""
    if "inplace" not in keys:
        return False, False
    value = keys["inplace"][1]
    raw = reader.value(value)
    if isinstance(raw, bool):
        return raw, False
    words = [w.strip() for w in raw.split(",")] if isinstance(raw, str) else []
    if not words or any(w not in ("function", "method") for w in words) \
            or "method" not in words:
        raise SpecError(reader.location(value), schema.name,
                        "inplace must be True, False, 'method' or 'function, method'")
    return True, "function" in words


def _bool_key(
    reader: _Reader, schema: FunctionSchema, keys: dict, name: str, default: bool
) -> bool:
    if name not in keys:
        return default
    value = keys[name][1]
    raw = reader.value(value)
    if not isinstance(raw, bool):
        raise SpecError(reader.location(value), schema.name, f"{name} must be True or False")
    return raw


def _load_entry(
    reader: _Reader,
    schema: FunctionSchema,
    keys: dict[str, tuple[yaml.Node, yaml.Node]],
    scope: Scope,
    counter: Counter[str],
) -> OpInfo:
    entry = schema.name
    arguments = {a.name: a for a in schema.arguments}
    outputs = schema.return_names()
    function, method = _variants(reader, schema, keys)

    def fail(node: yaml.Node, message: str, index: int = 0) -> SpecError:
        return SpecError(reader.location(node, index), entry, message)

    output_differentiability = tuple(True for _ in outputs)
    if "output_differentiability" in keys:
        value = keys["output_differentiability"][1]
        raw = reader.value(value)
        if not isinstance(raw, list) or not all(isinstance(v, bool) for v in raw):
            raise fail(value, "output_differentiability must be a list of True/False")
        if len(raw) != len(outputs):
            raise fail(
                value,
                f"output_differentiability has {len(raw)} value(s) but the op has "
                f"{len(outputs)} output(s)",
            )
        output_differentiability = tuple(raw)

    derivatives: list[Derivative] = []
    forward_keys: list[tuple[list[str], yaml.Node, yaml.ScalarNode]] = []
    non_differentiable: list[str] = []
    covered: set[str] = set()
    for key_text, (key, value) in keys.items():
        if key_text in ENTRY_KEYS:
            continue
        names = [n.strip() for n in key_text.split(",")]
        forward_key = all(n in outputs or _RESULT_KEY.fullmatch(n) for n in names)
        for n in names:
            if n not in arguments and not forward_key:
                raise fail(key, _unknown_key(n, schema), key_text.index(n))
        if not isinstance(value, yaml.ScalarNode) or not isinstance(reader.value(value), str):
            raise fail(value, f"the formula for {key_text!r} must be a string")
        formula = value.value
        if forward_key:  # checked once every input's backward formula is known
            forward_keys.append((names, key, value))
            continue
        for n in names:
            if not arguments[n].type.is_tensor_like:
                raise fail(
                    key, f"{n!r} is a {arguments[n].type}, not a Tensor: it has no gradient",
                    key_text.index(n),
                )
            if n in covered:
                raise fail(key, f"{n!r} has two formulas", key_text.index(n))
            covered.add(n)
        if formula.strip() == "non_differentiable":
            non_differentiable.extend(names)
            continue
        not_implemented = _NOT_IMPLEMENTED.fullmatch(formula.strip())
        if not_implemented:
            message = _string_literal(not_implemented["arg"])
            if message is None:
                raise fail(
                    value, 'not_implemented takes one string literal: not_implemented("why")'
                )
            derivatives.append(
                Derivative(tuple(names), formula, "", (), (), not_implemented=message,
                           line=value.start_mark.line + 1)
            )
            continue
        try:
            analyzed = analyze(formula, replace(scope, fused=len(names) > 1))
        except FormulaError as error:
            message = f"in the formula for {key_text!r}: {error}"
            raise fail(value, message, error.index(formula)) from None
        derivatives.append(
            Derivative(
                tuple(names), formula, analyzed.code, analyzed.saved, analyzed.grad_indices,
                analyzed.grad_names, line=value.start_mark.line + 1,
            )
        )

    differentiable_outputs = any(output_differentiability)
    if differentiable_outputs:
        for arg in schema.arguments:
            if arg.type.is_tensor_like and arg.name not in covered:
                raise fail(
                    keys["name"][1],
                    f"Tensor input {arg.name!r} has no formula: give it one, or say "
                    f"`{arg.name}: non_differentiable`",
                    _argument_index(keys["name"][1].value, arg.name),
                )
    inputs_names = [a.name for a in schema.arguments if a.name in covered
                    and a.name not in non_differentiable]
    forward = _forward_formulas(
        schema, forward_keys, output_differentiability, derivatives,
        replace(scope, forward=True, tangents=frozenset(inputs_names)),
        keys["name"][1], fail,
    )
    list_inputs = [n for n in inputs_names if arguments[n].type.is_tensor_list]
    if list_inputs and len(inputs_names) > 1:
        raise fail(
            keys["name"][1],
            f"a Tensor[] input ({list_inputs[0]!r}) must be the only differentiable input",
        )
    inputs = tuple(
        Input(n, i, arguments[n].type.is_tensor_list) for i, n in enumerate(inputs_names)
    )

    # As torchgen: an entry with a formula takes a number even if no output is
    # differentiable (then no node is ever made, so no class is generated).
    node_name = None
    qualified_name = None
    if "node" in keys:
        # A node PyTorch writes by hand (copy_'s torch::autograd::CopyBackwards) is not in
        # its derivatives.yaml: it has its own name and takes no number.
        value = keys["node"][1]
        qualified_name = reader.value(value)
        if not isinstance(qualified_name, str) or not _QUALIFIED.fullmatch(qualified_name):
            raise fail(value, "node must be a class name, optionally qualified: "
                              "torch::autograd::CopyBackwards")
        class_name = qualified_name.rsplit("::", 1)[-1]
        if class_name in NODE_MODULE_NAMES or class_name.startswith("__") \
                or keyword.iskeyword(class_name):
            raise fail(value, f"a node may not be named {class_name!r}: "
                              "generated code uses that name")
        if derivatives and differentiable_outputs:
            node_name = qualified_name.rsplit("::", 1)[-1]
    elif derivatives:
        prefix = node_name_prefix(schema.base)
        if differentiable_outputs:
            node_name = f"{prefix}{counter[prefix]}"
        counter[prefix] += 1

    saved: list[SavedAttribute] = []
    for derivative in derivatives:
        for attr in derivative.saved:
            if attr not in saved:
                saved.append(attr)
    view_of = None
    for ret in schema.returns:
        if ret.type.alias:
            view_of = next(
                (a.name for a in schema.arguments if a.type.alias == ret.type.alias), None
            )
            if view_of is None:
                raise fail(keys["name"][1], f"return alias ({ret.type.alias}) matches no argument")

    samples = _samples(reader, schema, keys["samples"][1]) if "samples" in keys else None
    inplace, inplace_function = _inplace(reader, schema, keys)
    return OpInfo(
        schema=schema,
        location=reader.location(keys["name"][1]),
        node_name=node_name,
        qualified_name=qualified_name if node_name else None,
        derivatives=tuple(derivatives),
        forward_derivatives=forward,
        inputs=inputs,
        non_differentiable=tuple(non_differentiable),
        output_differentiability=output_differentiability,
        saved=tuple(saved),
        method=method,
        function=function,
        inplace=inplace,
        inplace_function=inplace_function,
        python_binding=_bool_key(reader, schema, keys, "python_binding", True),
        view_of=view_of,
        samples=_freeze(samples),
    )


def _samples(reader: _Reader, schema: FunctionSchema, node: yaml.Node) -> list:
    """`samples:` as plain values: a list of mappings from argument names (or flags)."""
    if not isinstance(node, yaml.SequenceNode):
        raise SpecError(reader.location(node), schema.name, "samples must be a list of mappings")
    known = [a.name for a in schema.arguments] + list(SAMPLE_KEYS)
    for sample in node.value:
        if not isinstance(sample, yaml.MappingNode):
            raise SpecError(
                reader.location(sample), schema.name,
                "a sample must be a mapping like {self: [3, 4]}",
            )
        for key, _ in sample.value:
            if key.value not in known:
                close = difflib.get_close_matches(str(key.value), known, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise SpecError(
                    reader.location(key), schema.name,
                    f"sample key {key.value!r} is neither an argument nor one of "
                    f"{', '.join(SAMPLE_KEYS)}{hint}",
                )
    return reader.value(node)


def _unknown_key(key: str, schema: FunctionSchema) -> str:
    """The error for a key that is neither an entry key, an argument nor an output."""
    known = [*(a.name for a in schema.arguments), *schema.return_names(), *ENTRY_KEYS]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    arguments = ", ".join(a.name for a in schema.arguments) or "none"
    return (
        f"unknown key {key!r}: {hint}A key is an argument ({arguments}), an output "
        f"({', '.join(schema.return_names())}) or one of {', '.join(ENTRY_KEYS)}"
    )


def _argument_index(schema_text: str, name: str) -> int:
    """Where argument `name` is declared in a schema's text (after its type and a blank)."""
    match = re.search(rf"(?<=\s){re.escape(name)}(?=\s*[=,)])", schema_text)
    return match.start() if match else 0


def _freeze(value: object) -> object:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in value.items())
    return value


def _string_literal(text: str) -> str | None:
    try:
        tree = parse_expression(text)
    except FormulaError:
        return None
    body = tree.body
    return body.value if isinstance(body, ast.Constant) and isinstance(body.value, str) else None


def _forward_formulas(
    schema: FunctionSchema,
    forward_keys: list[tuple[list[str], yaml.Node, yaml.ScalarNode]],
    output_differentiability: tuple[bool, ...],
    derivatives: list[Derivative],
    scope: Scope,
    name_node: yaml.Node,
    fail: Callable[..., SpecError],
) -> tuple[ForwardDerivative, ...]:
    """The `result:` keys, checked: each differentiable output gets exactly one formula.

    An entry may have none (as in torchgen, forward AD then raises at run time), but not
    only some: a formula for `values` and none for another differentiable output is a slip.
    """
    outputs = schema.return_names()
    owner: dict[str, int] = {}
    forward = []
    for names, key, value in forward_keys:
        key_text = key.value
        for n in names:
            if n not in outputs:
                raise fail(key, f"key {n!r} names no output (outputs: {', '.join(outputs)})",
                           key_text.index(n))
            if not output_differentiability[outputs.index(n)]:
                raise fail(key, f"output {n!r} is not differentiable (output_differentiability): "
                           "it has no forward formula", key_text.index(n))
            if n in owner:
                raise fail(key, f"output {n!r} has two forward formulas", key_text.index(n))
            owner[n] = len(forward)
        forward.append(_forward_formula(schema, value, names, derivatives, scope, fail))
    missing = [n for n, d in zip(outputs, output_differentiability, strict=True)
               if d and n not in owner]
    if forward and missing:
        raise fail(name_node, f"output {missing[0]!r} has no forward formula, though "
                   f"{next(iter(owner))!r} has one: give it `{missing[0]}: ...`")
    return tuple(forward)


def _forward_formula(
    schema: FunctionSchema,
    value: yaml.ScalarNode,
    names: list[str],
    derivatives: list[Derivative],
    scope: Scope,
    fail: Callable[..., SpecError],
) -> ForwardDerivative:
    """One `result:` key: a checked JVP formula, auto_element_wise or auto_linear."""
    formula = value.value.strip()
    line = value.start_mark.line + 1
    key_text = ", ".join(names)
    if formula == ForwardKind.AUTO_LINEAR:
        return ForwardDerivative(tuple(names), value.value, ForwardKind.AUTO_LINEAR, line=line)
    derived = ""
    if formula == ForwardKind.AUTO_ELEMENT_WISE:
        derived = _auto_element_wise(schema, names, derivatives, scope, value, fail)
        formula = derived
    try:
        analyzed = analyze(formula, replace(scope, fused=len(names) > 1))
    except FormulaError as error:
        if derived:
            raise fail(value, f"auto_element_wise gives `{derived}`, which is not a forward "
                       f"formula: {error}") from None
        message = f"in the forward formula for {key_text!r}: {error}"
        raise fail(value, message, error.index(value.value)) from None
    kind = ForwardKind.AUTO_ELEMENT_WISE if derived else ForwardKind.FORMULA
    return ForwardDerivative(tuple(names), value.value, kind, analyzed.code, derived, line)


def _auto_element_wise(
    schema: FunctionSchema,
    names: list[str],
    derivatives: list[Derivative],
    scope: Scope,
    value: yaml.ScalarNode,
    fail: Callable[..., SpecError],
) -> str:
    """torchgen's auto_element_wise: the one input's backward formula with `grad` replaced by
    its tangent and every tensor argument `x` by its primal `x_p`."""
    inputs = sorted(scope.tangents, key=[a.name for a in schema.arguments].index)
    if len(inputs) != 1:
        raise fail(
            value,
            "auto_element_wise needs exactly one differentiable input "
            f"(this op has {len(inputs)}: {', '.join(inputs) or 'none'})",
        )
    if len(names) != 1 or len(schema.returns) != 1 or schema.returns[0].type.is_list:
        raise fail(value, "auto_element_wise needs an op with one Tensor output")
    (name,) = inputs
    backward = next(d for d in derivatives if name in d.var_names)
    if backward.not_implemented is not None or backward.grad_names != ("grad",):
        raise fail(value, f"auto_element_wise needs a backward formula for {name!r} that "
                   f"reads grad; this one is `{backward.formula.strip()}`")
    arguments = {a.name: a for a in schema.arguments}

    class ToForward(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id == "grad":
                node.id = f"{name}_t"
            elif node.id in arguments and arguments[node.id].type.is_tensor_like:
                node.id = f"{node.id}_p"
            return node

    return ast.unparse(ToForward().visit(parse_expression(backward.formula)))
