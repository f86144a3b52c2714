"""Load `derivatives.yaml` into checked `OpInfo`s, or raise a located `SpecError`.

The YAML is composed (not constructed) so that every key and value keeps its line and
column, and so that no tag outside plain YAML can ever construct an object.

Loading runs in phases, each a small function: the text is read (`_read_text`) and
composed (`_compose`); each entry's keys and schema are read (`_entries`) and its names
checked (`_check_names`); the scope of every formula is built from all entries
(`_scope`); then each entry, in `_load_entry`, gets its output_differentiability, its
formula keys (backward formulas checked as they come, forward ones kept), the coverage of
its Tensor inputs, its forward formulas, its differentiable inputs, its node name (the
numbering), its view, its samples and its bindings, in the order its mistakes are reported.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
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
    ForwardFormula,
    ForwardKind,
    Input,
    Location,
    NumpyForm,
    OpInfo,
    SavedAttribute,
    SpecError,
)
from codegen.names import LOCAL_NAMES, MODULE_NAMES, NODE_MODULE_NAMES
from codegen.schema import FunctionSchema, SchemaError, parse_schema

# Keys gradgen adds to torchgen's: how an op is exposed, and its sample inputs for tests.
BINDING_KEYS = ("variants", "inplace", "python_binding", "samples", "node")
# Keys for runtime.compile (docs/compile.md): what the generator of a compiled step may
# write instead of calling the kernel.
COMPILE_KEYS = ("numpy",)
# The op's result written with other ops of the spec (see _forward_formula_key below).
FORWARD_KEYS = ("forward",)
# Every key an entry may have besides its arguments' and outputs' formulas.
ENTRY_KEYS = ("name", "output_differentiability", *BINDING_KEYS, *COMPILE_KEYS,
              *FORWARD_KEYS)
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


def _top_level_functions(path: Path) -> list[ast.FunctionDef]:
    """The top-level functions of a module, each parsed from its `def` header alone (a
    line that starts with `def `, and the lines its parameters run on): ten times faster
    than parsing the module (runtime/kernels.py is thousands of lines), which
    `python -m codegen --check` would do on every run. Bodies are never read; a header
    is whole once it parses with a `pass` body."""
    lines = path.read_text(encoding="utf-8").splitlines()
    functions = []
    for start, line in enumerate(lines):
        if not line.startswith("def "):
            continue
        end = start
        while True:
            header = "\n".join(lines[start:end + 1])
            try:
                functions.append(ast.parse(header + "\n    pass").body[0])
                break
            except SyntaxError:
                end += 1
                if end == len(lines) or end - start > 50:
                    raise SpecError(Location(str(path), start + 1, 1), "<runtime>",
                                    "a function header that does not parse") from None
    return functions


def module_functions(path: Path, private: bool = False) -> frozenset[str]:
    """Top-level functions of a runtime module, read with ast: codegen never imports runtime."""
    if not path.exists():
        return frozenset()
    return frozenset(n.name for n in _top_level_functions(path)
                     if private or not n.name.startswith("_"))


def manual_helpers(path: Path) -> frozenset[str]:
    """The helpers formulas may call: the public functions of runtime/manual.py."""
    return module_functions(path)


def function_signatures(path: Path, private: bool = False) -> dict[str, Signature]:
    """The top-level functions of a runtime module and the calls they take, read with ast
    (codegen never imports runtime); {} if there is no such file."""
    if not path.exists():
        return {}
    return {n.name: Signature.of_function(n) for n in _top_level_functions(path)
            if private or not n.name.startswith("_")}


def check_kernels(infos: list[OpInfo], kernels: Mapping[str, Signature], source: str) -> None:
    """Every op's wrapper calls `kernels.<base>_<overload>(...)` with all of its arguments,
    in schema order: the kernel must exist in `source` and take them, unless the entry gives
    its result as a `forward:` formula (its kernel is then derived from it)."""
    for info in infos:
        name = info.schema.kernel_name
        arguments = [a.name for a in info.schema.arguments]
        kernel = kernels.get(name)
        if kernel is None and info.forward_formula is not None:
            continue
        if kernel is None:
            close = difflib.get_close_matches(name, list(kernels), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SpecError(info.location, info.name,
                            f"no kernel {name!r} in {source}{hint}: the op's forward, on "
                            f"numpy arrays, is `def {name}({', '.join(arguments)}):` there "
                            "(or give the entry a `forward:` formula in ops of the spec)")
        problem = kernel.mismatch(len(arguments), [])
        if problem is not None:
            raise SpecError(info.location, info.name,
                            f"the kernel {kernel.name} in {source} {problem}: the op passes "
                            f"{len(arguments)} ({', '.join(arguments)})")


# -- reading and composing the YAML -----------------------------------------------------------

def load_spec(path: Path | str, helpers_path: Path | str | None = None) -> list[OpInfo]:
    """Read and check a spec; the first mistake raises SpecError."""
    path = Path(path)
    text = _read_text(path)
    if helpers_path is None:
        helpers_path = Path(__file__).resolve().parent.parent / "runtime" / "manual.py"
    return parse_spec(text, path.name, manual_helpers(Path(helpers_path)),
                      function_signatures(Path(helpers_path)))


def one_line(path: str) -> str:
    """A file name as errors print it: every character that is not printable (a newline, a
    tab, a line separator) as its Python escape, so `file:LINE:COL: entry: message` stays
    one line whatever the file is called."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in path)


def _read_text(path: Path) -> str:
    """The spec's text; a file that cannot be read, or is not UTF-8, raises SpecError."""
    try:
        data = path.read_bytes()
    except OSError as error:
        message = one_line(f"cannot read: {error}")
        raise SpecError(Location(one_line(str(path)), 1, 1), "<spec>", message) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
        raise SpecError(Location(one_line(path.name), line, column), "<spec>",
                        f"not UTF-8: byte 0x{data[error.start]:02x} cannot start or continue a "
                        "character here") from None


def parse_spec(text: str, path: str, helpers: frozenset[str],
               helper_signatures: Mapping[str, Signature] | None = None) -> list[OpInfo]:
    """Check a spec's text (`path` names it in errors); the first mistake raises SpecError.

    `helpers` names the functions of runtime/manual.py that formulas may call;
    `helper_signatures`, when given, the calls they take, so that formulas are checked.
    """
    reader = _Reader(one_line(path), text)
    entries = _entries(reader, _compose(reader))
    scope = _scope(entries, helpers, helper_signatures or {})
    counter: Counter[str] = Counter()
    return [_load_entry(entry, replace(scope, schema=entry.schema), counter)
            for entry in entries]


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


# libyaml's parser, where PyYAML was built with it, reads the spec ten times faster than the
# pure-Python one and gives the same nodes and marks; a spec it refuses is read again by the
# pure-Python parser, whose error messages are the ones reported.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None) if yaml.__with_libyaml__ else None


def _compose(reader: _Reader) -> yaml.SequenceNode:
    """The spec's YAML, composed (never constructed); raises SpecError."""
    if _FAST_LOADER is not None:
        try:
            return _compose_with(reader, _FAST_LOADER)
        except SpecError as error:
            if error.entry != "<yaml>":  # not a syntax error: the same from either parser
                raise
    return _compose_with(reader, yaml.SafeLoader)


def _compose_with(reader: _Reader, loader: type) -> yaml.SequenceNode:
    text, path = reader.text, reader.path
    try:
        depth = 0
        for token in yaml.scan(text, Loader=loader):
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
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as error:
        location, message = _syntax_error(path, error)
        raise SpecError(location, "<yaml>", message) from None
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


# What PyYAML was reading when it met a syntax error, for the errors whose cause is where
# that began: a `[`, `{` or quote that is never closed (or holds a mistake).
_OPENED = {"while parsing a flow sequence": "[", "while parsing a flow mapping": "{",
           "while scanning a quoted scalar": "quote"}


def _syntax_error(path: str, error: yaml.MarkedYAMLError) -> tuple[Location, str]:
    """Where a YAML syntax error is reported, and its message.

    PyYAML notes the mistake where it could no longer go on (`problem_mark`): for an unclosed
    `[` that is the next `key:` or the end of the file, which is not where the mistake is.
    When what it was reading is a bracket or a quote (`context_mark`), the error is put where
    that opens and says where the parser gave up."""
    problem, context = error.problem_mark, error.context_mark
    opened = _OPENED.get((error.context or "").strip())
    if opened and context is not None and problem is not None:
        what = "the quoted text that starts here, never closed" if opened == "quote" \
            else f"the {opened!r} opened here"
        return (Location(path, context.line + 1, context.column + 1),
                f"YAML syntax error in {what}: {error.problem} (at line "
                f"{problem.line + 1}, column {problem.column + 1})")
    mark = problem or context
    location = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path, 1, 1)
    return location, f"YAML syntax error: {error.problem}"


# -- entries and schemas ----------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Entry:
    """One entry of the spec with its schema parsed: what each phase of loading it reads."""

    reader: _Reader
    schema: FunctionSchema
    keys: dict[str, tuple[yaml.Node, yaml.Node]]  # key text -> (key, value), in spec order

    @property
    def name_node(self) -> yaml.ScalarNode:
        return self.keys["name"][1]

    def value(self, key: str) -> yaml.Node | None:
        """The value of `key:`, or None when the entry has no such key."""
        return self.keys[key][1] if key in self.keys else None

    def fail(self, node: yaml.Node, message: str, index: int = 0) -> SpecError:
        """The error for a mistake at character `index` of `node`'s value."""
        return SpecError(self.reader.location(node, index), self.schema.name, message)


def _entries(reader: _Reader, root: yaml.SequenceNode) -> list[_Entry]:
    """Every entry, its keys read and its schema parsed, in spec order; no schema twice."""
    entries: list[_Entry] = []
    seen: dict[str, Location] = {}
    for index, node in enumerate(root.value):
        entry = _entry(reader, node, f"<entry {index + 1}>")
        name = entry.schema.name
        location = reader.location(entry.name_node)
        if name in seen:
            raise SpecError(
                location, name, f"duplicate schema: {name} is already declared at "
                f"line {seen[name].line}"
            )
        seen[name] = location
        entries.append(entry)
    return entries


def _entry(reader: _Reader, node: yaml.Node, label: str) -> _Entry:
    """One entry: plain YAML, a mapping of distinct plain keys, with a `name:` that parses.

    Until its schema is parsed, an entry is named by `label` (`<entry 3>`) in errors.
    """
    reader.check_plain(node, label)
    keys = _keys(reader, node, label)
    entry = _Entry(reader, _schema(reader, node, keys, label), keys)
    _check_names(entry)
    return entry


def _keys(reader: _Reader, node: yaml.Node, label: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """An entry's keys, each a plain string that appears once."""
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
    return keys


def _schema(reader: _Reader, node: yaml.Node, keys: dict[str, tuple[yaml.Node, yaml.Node]],
            label: str) -> FunctionSchema:
    """The schema of an entry's `name:`."""
    if "name" not in keys:
        raise SpecError(reader.location(node), label, "entry has no `name:`")
    name_node = keys["name"][1]
    if not isinstance(name_node, yaml.ScalarNode) or not isinstance(name_node.value, str):
        raise SpecError(reader.location(name_node), label, "`name:` must be a schema string")
    try:
        return parse_schema(name_node.value)
    except SchemaError as error:
        raise SpecError(
            reader.location(name_node, error.column), label, f"malformed schema: {error}"
        ) from None


# -- names ------------------------------------------------------------------------------------

def _check_names(entry: _Entry) -> None:
    """Refuse spec names that would replace a name of the generated code (codegen/names.py)
    or one that generated code derives from another spec name (`self` -> `self_`, `x_p`)."""
    schema = entry.schema
    _check_op_names(entry)
    derived = _derived_names(schema)
    for name in [a.name for a in schema.arguments] + [r.name for r in schema.returns if r.name]:
        _check_argument_name(entry, name, derived)


def _check_op_names(entry: _Entry) -> None:
    """The op's own names in generated code: its wrapper, its kernel and its default."""
    schema, text = entry.schema, entry.name_node.value
    for name in (schema.base, schema.kernel_name, f"{schema.base}_default"):
        if name in MODULE_NAMES or name.startswith("__"):
            raise entry.fail(entry.name_node, f"an op may not be named {name!r}: generated "
                             "code uses that name", len(text) - len(text.lstrip()))


def _derived_names(schema: FunctionSchema) -> dict[str, str]:
    """The names generated code derives from the op's arguments and outputs (`self_p`,
    `self_sym_sizes`, `grad_values`), each mapped to the name it derives from."""
    tensors = [a.name for a in schema.arguments if a.type.is_tensor_like]
    suffixes = [s for _, s in SIZE_ATTRIBUTES.values()] + [s for _, s in SIZE_METHODS.values()]
    derived = {f"{t}_{end}": t for t in tensors for end in ("p", "t", "args_sizes")}
    derived |= {f"{local_name(t).rstrip('_')}_{end}": t for t in tensors for end in suffixes}
    derived |= {f"{prefix}{o}{suffix}": o for o in schema.return_names()
                for prefix, suffix in (("grad_", ""), ("", "_t"))}
    return derived


def _check_argument_name(entry: _Entry, name: str, derived: dict[str, str]) -> None:
    """One argument's or output's name: not one generated code uses or derives."""
    index = _argument_index(entry.name_node.value, name)
    if name in LOCAL_NAMES:
        raise entry.fail(entry.name_node, f"{name!r} may not name an argument or output: "
                         "generated code uses that name", index)
    if name.startswith("_") or name.endswith("_"):
        raise entry.fail(entry.name_node, f"{name!r}: argument and output names may not begin "
                         "or end with '_' (generated code writes `self_` for `self`; a "
                         "namedtuple refuses a field `_x`)", index)
    if name in derived and derived[name] != name:
        raise entry.fail(entry.name_node, f"{name!r} is the name generated code gives to "
                         f"something of {derived[name]!r}: rename it", index)


def _argument_index(schema_text: str, name: str) -> int:
    """Where argument `name` is declared in a schema's text (after its type and a blank)."""
    match = re.search(rf"(?<=\s){re.escape(name)}(?=\s*[=,)])", schema_text)
    return match.start() if match else 0


# -- the scope of every formula ---------------------------------------------------------------

def _scope(entries: list[_Entry], helpers: frozenset[str],
           helper_signatures: Mapping[str, Signature]) -> Scope:
    """What formulas may call, and how: the spec's ops, its Tensor methods (by `variants:`
    and `inplace:`) and the helpers. Each entry's scope replaces `schema` with its own."""
    signatures: dict[str, tuple[Signature, ...]] = {
        name: (signature,) for name, signature in helper_signatures.items()}
    method_signatures: dict[str, tuple[Signature, ...]] = {}
    for entry in entries:
        schema = entry.schema
        signatures[schema.base] = (*signatures.get(schema.base, ()), Signature.of_schema(schema))
        method = Signature.of_schema(schema, method=True)
        for name, declared in ((schema.base, _variants(entry)[1]),
                               (f"{schema.base}_", "inplace" in entry.keys)):
            if declared:
                method_signatures[name] = (*method_signatures.get(name, ()), method)
    return Scope(
        schema=entries[0].schema,  # each entry's own replaces it
        ops=frozenset(e.schema.base for e in entries if e.schema.arguments),
        methods=frozenset(method_signatures), helpers=helpers,
        signatures=signatures, method_signatures=method_signatures,
    )


# -- one entry, phase by phase ----------------------------------------------------------------

def _load_entry(entry: _Entry, scope: Scope, counter: Counter[str]) -> OpInfo:
    """Check one entry and build its OpInfo. The phases run in the order in which an entry's
    mistakes are reported; `counter` numbers the node classes of the spec so far."""
    output_differentiability = _output_differentiability(entry)
    formulas = _formulas(entry, scope)
    _check_coverage(entry, formulas, output_differentiability)
    input_names = _input_names(entry.schema, formulas)
    forward = _forward_formulas(
        entry, formulas, output_differentiability,
        replace(scope, forward=True, tangents=frozenset(input_names)),
    )
    inputs = _inputs(entry, input_names)
    node_name, qualified_name = _node_name(
        entry, bool(formulas.derivatives), any(output_differentiability), counter
    )
    view_of = _view_of(entry)
    samples = _samples(entry)
    bindings = _bindings(entry)
    return OpInfo(
        schema=entry.schema,
        location=entry.reader.location(entry.name_node),
        node_name=node_name,
        qualified_name=qualified_name,
        derivatives=tuple(formulas.derivatives),
        forward_derivatives=forward,
        inputs=inputs,
        non_differentiable=tuple(formulas.non_differentiable),
        output_differentiability=output_differentiability,
        saved=_saved(formulas.derivatives),
        method=bindings.method,
        function=bindings.function,
        inplace=bindings.inplace,
        inplace_function=bindings.inplace_function,
        python_binding=bindings.python_binding,
        view_of=view_of,
        samples=samples,
        numpy_forms=_numpy_forms(entry),
        forward_formula=_forward_formula_key(entry, scope),
    )


# -- differentiability and backward formulas --------------------------------------------------

def _output_differentiability(entry: _Entry) -> tuple[bool, ...]:
    """`output_differentiability:`, one True/False per output; all True when absent."""
    outputs = entry.schema.return_names()
    value = entry.value("output_differentiability")
    if value is None:
        return tuple(True for _ in outputs)
    raw = entry.reader.value(value)
    if not isinstance(raw, list) or not all(isinstance(v, bool) for v in raw):
        raise entry.fail(value, "output_differentiability must be a list of True/False")
    if len(raw) != len(outputs):
        raise entry.fail(
            value,
            f"output_differentiability has {len(raw)} value(s) but the op has "
            f"{len(outputs)} output(s)",
        )
    return tuple(raw)


@dataclass
class _Formulas:
    """An entry's formula keys, read in spec order: the backward formulas checked and
    rewritten, the forward ones kept until every backward formula is known."""

    derivatives: list[Derivative] = field(default_factory=list)
    forward_keys: list[tuple[list[str], yaml.ScalarNode, yaml.ScalarNode]] = field(
        default_factory=list)
    non_differentiable: list[str] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)  # inputs given a formula or non_differentiable


def _formulas(entry: _Entry, scope: Scope) -> _Formulas:
    """Every key but the entry keys is a formula: `self, other: ...` for inputs (backward),
    `result: ...` for outputs (forward). Each is checked as it comes, in spec order."""
    formulas = _Formulas()
    for key_text, (key, value) in entry.keys.items():
        if key_text in ENTRY_KEYS:
            continue
        names, forward = _formula_key(entry, key_text, key, value)
        if forward:  # checked once every input's backward formula is known
            formulas.forward_keys.append((names, key, value))
            continue
        _claim_inputs(entry, key_text, key, names, formulas.covered)
        if value.value.strip() == "non_differentiable":
            formulas.non_differentiable.extend(names)
        else:
            formulas.derivatives.append(_backward_formula(entry, scope, key_text, names, value))
    return formulas


def _formula_key(entry: _Entry, key_text: str, key: yaml.ScalarNode,
                 value: yaml.Node) -> tuple[list[str], bool]:
    """The names a formula key lists, and whether it is a forward key (it names outputs
    only); every name must be an argument or an output, and the formula a string."""
    schema = entry.schema
    outputs = schema.return_names()
    arguments = {a.name for a in schema.arguments}
    names = [n.strip() for n in key_text.split(",")]
    forward = all(n in outputs or _RESULT_KEY.fullmatch(n) for n in names)
    for n in names:
        if n not in arguments and not forward:
            raise entry.fail(key, _unknown_key(n, schema), key_text.index(n))
    if not isinstance(value, yaml.ScalarNode) or not isinstance(entry.reader.value(value), str):
        raise entry.fail(value, f"the formula for {key_text!r} must be a string")
    return names, forward


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


def _claim_inputs(entry: _Entry, key_text: str, key: yaml.ScalarNode, names: list[str],
                  covered: set[str]) -> None:
    """A backward key's inputs: Tensors (only they have gradients), each in one key only."""
    arguments = {a.name: a for a in entry.schema.arguments}
    for n in names:
        if not arguments[n].type.is_tensor_like:
            raise entry.fail(
                key, f"{n!r} is a {arguments[n].type}, not a Tensor: it has no gradient",
                key_text.index(n),
            )
        if n in covered:
            raise entry.fail(key, f"{n!r} has two formulas", key_text.index(n))
        covered.add(n)


def _backward_formula(entry: _Entry, scope: Scope, key_text: str, names: list[str],
                      value: yaml.ScalarNode) -> Derivative:
    """One backward formula, checked and rewritten by formula.py, or `not_implemented("why")`."""
    formula = value.value
    line = value.start_mark.line + 1
    not_implemented = _NOT_IMPLEMENTED.fullmatch(formula.strip())
    if not_implemented:
        message = _string_literal(not_implemented["arg"])
        if message is None:
            raise entry.fail(
                value, 'not_implemented takes one string literal: not_implemented("why")'
            )
        return Derivative(tuple(names), formula, "", (), (), not_implemented=message, line=line)
    try:
        analyzed = analyze(formula, replace(scope, fused=len(names) > 1))
    except FormulaError as error:
        message = f"in the formula for {key_text!r}: {error}"
        raise entry.fail(value, message, error.index(formula)) from None
    return Derivative(
        tuple(names), formula, analyzed.code, analyzed.saved, analyzed.grad_indices,
        analyzed.grad_names, line=line,
    )


def _string_literal(text: str) -> str | None:
    try:
        tree = parse_expression(text)
    except FormulaError:
        return None
    body = tree.body
    return body.value if isinstance(body, ast.Constant) and isinstance(body.value, str) else None


# -- coverage and the differentiable inputs ---------------------------------------------------

def _check_coverage(entry: _Entry, formulas: _Formulas,
                    output_differentiability: tuple[bool, ...]) -> None:
    """When an output is differentiable, every Tensor input needs a formula, or to be said
    `non_differentiable`: a forgotten input would silently get no gradient."""
    if not any(output_differentiability):
        return
    for arg in entry.schema.arguments:
        if arg.type.is_tensor_like and arg.name not in formulas.covered:
            raise entry.fail(
                entry.name_node,
                f"Tensor input {arg.name!r} has no formula: give it one, or say "
                f"`{arg.name}: non_differentiable`",
                _argument_index(entry.name_node.value, arg.name),
            )


def _input_names(schema: FunctionSchema, formulas: _Formulas) -> list[str]:
    """The differentiable inputs, in schema order: those with a formula that is not
    `non_differentiable`."""
    return [a.name for a in schema.arguments if a.name in formulas.covered
            and a.name not in formulas.non_differentiable]


def _inputs(entry: _Entry, names: list[str]) -> tuple[Input, ...]:
    """The differentiable inputs as next_functions slots; a Tensor[] must be the only one."""
    arguments = {a.name: a for a in entry.schema.arguments}
    list_inputs = [n for n in names if arguments[n].type.is_tensor_list]
    if list_inputs and len(names) > 1:
        raise entry.fail(
            entry.name_node,
            f"a Tensor[] input ({list_inputs[0]!r}) must be the only differentiable input",
        )
    return tuple(Input(n, i, arguments[n].type.is_tensor_list) for i, n in enumerate(names))


# -- forward formulas -------------------------------------------------------------------------

def _forward_formulas(
    entry: _Entry,
    formulas: _Formulas,
    output_differentiability: tuple[bool, ...],
    scope: Scope,
) -> tuple[ForwardDerivative, ...]:
    """The `result:` keys, checked: each differentiable output gets exactly one formula.

    An entry may have none (as in torchgen, forward AD then raises at run time), but not
    only some: a formula for `values` and none for another differentiable output is a slip.
    """
    outputs = entry.schema.return_names()
    owner: dict[str, int] = {}
    forward = []
    for names, key, value in formulas.forward_keys:
        key_text = key.value
        for n in names:
            if n not in outputs:
                raise entry.fail(key, f"key {n!r} names no output (outputs: "
                                 f"{', '.join(outputs)})", key_text.index(n))
            if not output_differentiability[outputs.index(n)]:
                raise entry.fail(key, f"output {n!r} is not differentiable "
                                 "(output_differentiability): it has no forward formula",
                                 key_text.index(n))
            if n in owner:
                raise entry.fail(key, f"output {n!r} has two forward formulas",
                                 key_text.index(n))
            owner[n] = len(forward)
        forward.append(_forward_formula(entry, value, names, formulas.derivatives, scope))
    missing = [n for n, d in zip(outputs, output_differentiability, strict=True)
               if d and n not in owner]
    if forward and missing:
        raise entry.fail(entry.name_node, f"output {missing[0]!r} has no forward formula, "
                         f"though {next(iter(owner))!r} has one: give it `{missing[0]}: ...`")
    return tuple(forward)


def _forward_formula(
    entry: _Entry,
    value: yaml.ScalarNode,
    names: list[str],
    derivatives: list[Derivative],
    scope: Scope,
) -> ForwardDerivative:
    """One `result:` key: a checked JVP formula, auto_element_wise or auto_linear."""
    formula = value.value.strip()
    line = value.start_mark.line + 1
    key_text = ", ".join(names)
    if formula == ForwardKind.AUTO_LINEAR:
        return ForwardDerivative(tuple(names), value.value, ForwardKind.AUTO_LINEAR, line=line)
    derived = ""
    if formula == ForwardKind.AUTO_ELEMENT_WISE:
        derived = _auto_element_wise(entry, names, derivatives, scope, value)
        formula = derived
    try:
        analyzed = analyze(formula, replace(scope, fused=len(names) > 1))
    except FormulaError as error:
        if derived:
            raise entry.fail(value, f"auto_element_wise gives `{derived}`, which is not a "
                             f"forward formula: {error}") from None
        message = f"in the forward formula for {key_text!r}: {error}"
        raise entry.fail(value, message, error.index(value.value)) from None
    kind = ForwardKind.AUTO_ELEMENT_WISE if derived else ForwardKind.FORMULA
    return ForwardDerivative(tuple(names), value.value, kind, analyzed.code, derived, line)


def _auto_element_wise(
    entry: _Entry,
    names: list[str],
    derivatives: list[Derivative],
    scope: Scope,
    value: yaml.ScalarNode,
) -> str:
    """torchgen's auto_element_wise: the one input's backward formula with `grad` replaced by
    its tangent and every tensor argument `x` by its primal `x_p`."""
    schema = entry.schema
    inputs = sorted(scope.tangents, key=[a.name for a in schema.arguments].index)
    if len(inputs) != 1:
        raise entry.fail(
            value,
            "auto_element_wise needs exactly one differentiable input "
            f"(this op has {len(inputs)}: {', '.join(inputs) or 'none'})",
        )
    if len(names) != 1 or len(schema.returns) != 1 or schema.returns[0].type.is_list:
        raise entry.fail(value, "auto_element_wise needs an op with one Tensor output")
    (name,) = inputs
    backward = next(d for d in derivatives if name in d.var_names)
    if backward.not_implemented is not None or backward.grad_names != ("grad",):
        raise entry.fail(value, f"auto_element_wise needs a backward formula for {name!r} "
                         f"that reads grad; this one is `{backward.formula.strip()}`")
    arguments = {a.name: a for a in schema.arguments}

    class ToForward(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id == "grad":
                node.id = f"{name}_t"
            elif node.id in arguments and arguments[node.id].type.is_tensor_like:
                node.id = f"{node.id}_p"
            return node

    derived = ast.unparse(ToForward().visit(parse_expression(backward.formula)))
    if "conj" not in backward.formula:
        return derived  # a formula for real values: the tangent goes in as grad did
    # torchgen's complex form: (the backward formula of conj(tangent)) conjugated, which
    # for an analytic function is the tangent times the derivative
    return f"({derived.replace(f'{name}_t', f'{name}_t.conj()')}).conj()"


# -- the node, what it saves, the view --------------------------------------------------------

def _node_name(entry: _Entry, has_formula: bool, differentiable: bool,
               counter: Counter[str]) -> tuple[str | None, str | None]:
    """(the node's class name, PyTorch's qualified name of a hand-written node): both None
    when no node is made, the qualified name None for a generated `*Backward<N>`.

    As torchgen: an entry with a formula takes a number even if no output is
    differentiable (then no node is ever made, so no class is generated).
    """
    if "node" in entry.keys:
        # A node PyTorch writes by hand (copy_'s torch::autograd::CopyBackwards) is not in
        # its derivatives.yaml: it has its own name and takes no number.
        qualified_name = _hand_written_node(entry)
        if has_formula and differentiable:
            return qualified_name.rsplit("::", 1)[-1], qualified_name
        return None, None
    if not has_formula:
        return None, None
    prefix = node_name_prefix(entry.schema.base)
    number = counter[prefix]
    counter[prefix] += 1
    return (f"{prefix}{number}" if differentiable else None), None


def _hand_written_node(entry: _Entry) -> str:
    """`node:`, a class name that generated code does not use, optionally qualified."""
    value = entry.keys["node"][1]
    qualified_name = entry.reader.value(value)
    if not isinstance(qualified_name, str) or not _QUALIFIED.fullmatch(qualified_name):
        raise entry.fail(value, "node must be a class name, optionally qualified: "
                                "torch::autograd::CopyBackwards")
    class_name = qualified_name.rsplit("::", 1)[-1]
    if class_name in NODE_MODULE_NAMES or class_name.startswith("__") \
            or keyword.iskeyword(class_name):
        raise entry.fail(value, f"a node may not be named {class_name!r}: "
                                "generated code uses that name")
    return qualified_name


def _saved(derivatives: list[Derivative]) -> tuple[SavedAttribute, ...]:
    """What the node saves: every attribute a formula saves, once, in first-saved order."""
    saved: list[SavedAttribute] = []
    for derivative in derivatives:
        for attr in derivative.saved:
            if attr not in saved:
                saved.append(attr)
    return tuple(saved)


def _view_of(entry: _Entry) -> str | None:
    """The argument whose storage the output shares: the one with the alias a return has
    (`Tensor(a) self -> Tensor(a)`)."""
    schema = entry.schema
    view_of = None
    for ret in schema.returns:
        if ret.type.alias:
            view_of = next(
                (a.name for a in schema.arguments if a.type.alias == ret.type.alias), None
            )
            if view_of is None:
                raise entry.fail(entry.name_node,
                                 f"return alias ({ret.type.alias}) matches no argument")
    return view_of


# -- `forward:`, the op's result in ops of the spec --------------------------------------------

def _forward_formula_key(entry: _Entry, scope: Scope) -> ForwardFormula | None:
    """`forward: self * self * self`: the op's outputs from its arguments, checked by
    formula.py as a backward formula is (the same scope of ops, helpers and builtins), but
    reading no gradient and no output, and not calling the op itself. Its rewritten code is
    what the derived kernel runs on numpy arrays and export-torch runs on torch tensors."""
    node = entry.value("forward")
    if node is None:
        return None
    if not isinstance(node, yaml.ScalarNode) or not isinstance(entry.reader.value(node), str):
        raise entry.fail(node, "forward must be a formula: an expression over the op's "
                         "arguments, like self * self * self")
    formula = node.value
    try:
        analyzed = analyze(formula, replace(scope, kernel=True))
    except FormulaError as error:
        raise entry.fail(node, f"in the forward: formula: {error}",
                         error.index(formula)) from None
    return ForwardFormula(formula, analyzed.code, line=node.start_mark.line + 1)


# -- runtime.compile's keys ------------------------------------------------------------------

# What a `numpy:` form may contain besides the op's arguments and `np`: an expression of
# calls, attributes, operators, subscripts and literals (no lambda, comprehension, walrus).
_NUMPY_FORM_NODES = (ast.Expression, ast.Call, ast.Attribute, ast.Name, ast.Load, ast.Constant,
                     ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Subscript,
                     ast.Tuple, ast.Slice, ast.keyword, ast.Compare, ast.cmpop)
# The array attributes a form may read: layout and arithmetic, nothing that reads or writes
# a file (`tofile`, `dump`) or reaches Python's internals. `np.NAME` must be a ufunc.
# (`__iadd__`, only on a product the form makes: an array no argument owns.)
_NUMPY_FORM_ATTRIBUTES = frozenset({"T", "mT", "copy", "reshape", "transpose", "astype", "sum",
                                    "ravel", "view", "dtype", "__iadd__"})


def _numpy_forms(entry: _Entry) -> tuple[NumpyForm, ...]:
    """`numpy:`, the kernel's result as numpy expressions over the op's arguments (see the
    spec's header): one expression, or a list of them, each a string or a mapping
    {form, when, quiet}. Checked here: a form is a Python expression of the allowed kinds,
    reading only the op's argument names and `np`'s ufuncs; a `when` compares the op's
    non-Tensor arguments, and its Tensor arguments' dtypes, with literals. A form becomes
    code of a compiled step (runtime/compile/forms.py), so it can say no more than that."""
    node = entry.value("numpy")
    if node is None:
        return ()
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    return tuple(_numpy_form(entry, item) for item in items)


_NUMPY_FORM_KEYS = ("form", "when", "quiet")


def _numpy_form(entry: _Entry, node: yaml.Node) -> NumpyForm:
    if not isinstance(node, yaml.MappingNode):
        return NumpyForm(_numpy_expression(entry, node))
    fields = {entry.reader.value(key): value for key, value in node.value}
    unknown = [key for key in fields if key not in _NUMPY_FORM_KEYS]
    if unknown or "form" not in fields:
        raise entry.fail(node, "a numpy form is an expression or a mapping with `form` and "
                         f"optionally `when` and `quiet` (got {', '.join(map(str, fields))})")
    quiet = entry.reader.value(fields["quiet"]) if "quiet" in fields else False
    if type(quiet) is not bool:
        raise entry.fail(fields["quiet"], "quiet must be true or false")
    when = _numpy_condition(entry, fields["when"]) if "when" in fields else None
    return NumpyForm(_numpy_expression(entry, fields["form"]), when, quiet)


def _numpy_expression(entry: _Entry, node: yaml.Node) -> str:
    tree = _parsed(entry, node)
    if tree is None:
        raise entry.fail(node, "numpy must be a Python expression, like np.matmul(self, mat2)")
    arguments = {a.name for a in entry.schema.arguments}
    for part in ast.walk(tree):
        problem = _numpy_form_problem(part, arguments)
        if problem:
            raise entry.fail(node, f"numpy {problem}")
    return ast.unparse(tree)  # the checked tree, not the text (which may hold a comment)


def _parsed(entry: _Entry, node: yaml.Node) -> ast.Expression | None:
    text = entry.reader.value(node)
    try:
        return ast.parse(text, mode="eval") if isinstance(text, str) else None
    except SyntaxError:
        return None


# What a form's `when` may contain: comparisons with literals of the op's non-Tensor
# arguments (numbers, flags, sizes) and of its Tensor arguments' dtypes (`self.dtype ==
# 'float32'`), all constants of a traced step, joined by `and`, `or`, `not`.
_NUMPY_CONDITION_NODES = (ast.Expression, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Name,
                          ast.Load, ast.Constant, ast.Tuple, ast.cmpop, ast.boolop, ast.Not,
                          ast.USub, ast.Attribute)


def _numpy_condition(entry: _Entry, node: yaml.Node) -> str:
    tree = _parsed(entry, node)
    if tree is None:
        raise entry.fail(node, "when must be a Python condition, like alpha == 1")
    scalars = {a.name for a in entry.schema.arguments if not a.type.is_tensor_like}
    tensors = {a.name for a in entry.schema.arguments if a.type.is_tensor_like}
    dtypes = {id(part.value) for part in ast.walk(tree) if isinstance(part, ast.Attribute)}
    for part in ast.walk(tree):
        if not isinstance(part, _NUMPY_CONDITION_NODES):
            raise entry.fail(node, f"when may not contain {type(part).__name__} (comparisons "
                             "of non-Tensor arguments and of Tensor arguments' dtypes with "
                             "literals only)")
        if isinstance(part, ast.Attribute) and not (
                part.attr == "dtype" and isinstance(part.value, ast.Name)
                and part.value.id in tensors):
            raise entry.fail(node, "when may read a Tensor argument's .dtype only (like "
                             f"self.dtype == 'float32'), not {ast.unparse(part)}")
        if isinstance(part, ast.Name) and part.id not in scalars and id(part) not in dtypes:
            raise entry.fail(node, f"when reads {part.id!r}, which is not a non-Tensor "
                             f"argument ({', '.join(sorted(scalars)) or 'none'}); of a "
                             "Tensor argument, a condition may read the dtype only")
    return ast.unparse(tree)


def _numpy_form_problem(part: ast.AST, arguments: set[str]) -> str | None:
    """What is wrong with one node of a `numpy:` form (None: nothing)."""
    if not isinstance(part, _NUMPY_FORM_NODES):
        return (f"may not contain {type(part).__name__} (calls, attributes, operators, "
                "comparisons, subscripts and literals only)")
    if isinstance(part, ast.Name) and part.id not in arguments and part.id != "np":
        return (f"reads {part.id!r}, which is neither an argument "
                f"({', '.join(sorted(arguments))}) nor np")
    if isinstance(part, ast.Attribute):
        on_numpy = isinstance(part.value, ast.Name) and part.value.id == "np"
        if on_numpy and not isinstance(getattr(np, part.attr, None), np.ufunc):
            return f"may call numpy's ufuncs only, not np.{part.attr}"
        if part.attr == "__iadd__" and not (isinstance(part.value, ast.BinOp) and
                                            isinstance(part.value.op, ast.MatMult)):
            return "may add in place (.__iadd__) only into a product it makes (a @ b)"
        if not on_numpy and part.attr not in _NUMPY_FORM_ATTRIBUTES:
            return (f"may not read .{part.attr} (an array's "
                    f"{', '.join(sorted(_NUMPY_FORM_ATTRIBUTES))} only)")
    if isinstance(part, ast.Call) and not isinstance(part.func, ast.Attribute):
        return "may call numpy's ufuncs and an array's methods only"
    return None


# -- samples ----------------------------------------------------------------------------------

def _samples(entry: _Entry) -> tuple | None:
    """`samples:`, frozen: a list of mappings from argument names or flags (SAMPLE_KEYS)."""
    node = entry.value("samples")
    if node is None:
        return None
    if not isinstance(node, yaml.SequenceNode):
        raise entry.fail(node, "samples must be a list of mappings")
    known = [a.name for a in entry.schema.arguments] + list(SAMPLE_KEYS)
    for sample in node.value:
        if not isinstance(sample, yaml.MappingNode):
            raise entry.fail(sample, "a sample must be a mapping like {self: [3, 4]}")
        for key, _ in sample.value:
            if key.value not in known:
                close = difflib.get_close_matches(str(key.value), known, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise entry.fail(
                    key, f"sample key {key.value!r} is neither an argument nor one of "
                    f"{', '.join(SAMPLE_KEYS)}{hint}",
                )
    return _freeze(entry.reader.value(node))


def _freeze(value: object) -> object:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in value.items())
    return value


# -- bindings: how the op is exposed ----------------------------------------------------------

@dataclass(frozen=True)
class _Bindings:
    function: bool  # a function in the namespace
    method: bool  # a Tensor method
    inplace: bool  # an in-place Tensor method `base_`
    inplace_function: bool  # an in-place function `base_` in the namespace
    python_binding: bool  # reachable by overload resolution from Python


def _bindings(entry: _Entry) -> _Bindings:
    """`variants:` (already checked, when the scope was built), `inplace:` and
    `python_binding:`."""
    function, method = _variants(entry)
    inplace, inplace_function = _inplace(entry)
    return _Bindings(function, method, inplace, inplace_function,
                     _bool_key(entry, "python_binding", True))


def _variants(entry: _Entry) -> tuple[bool, bool]:
    """(function, method): like native_functions.yaml's `variants:`."""
    schema = entry.schema
    value = entry.value("variants")
    if value is None:
        first = schema.arguments[0] if schema.arguments else None
        is_method = first is not None and first.name == "self" and first.type.is_tensor
        return True, is_method
    raw = entry.reader.value(value)
    words = [w.strip() for w in str(raw).split(",")] if isinstance(raw, str) else None
    if not words or any(w not in ("function", "method") for w in words):
        raise entry.fail(value, "variants must be 'function', 'method' or 'function, method'")
    return "function" in words, "method" in words


def _inplace(entry: _Entry) -> tuple[bool, bool]:
    """(an in-place method `base_`, also an in-place function): `inplace: True` makes the
    method, as `x.add_(y)`; `inplace: function, method` the function too, as `torch.sin_(x)`."""
    value = entry.value("inplace")
    if value is None:
        return False, False
    raw = entry.reader.value(value)
    if isinstance(raw, bool):
        return raw, False
    words = [w.strip() for w in raw.split(",")] if isinstance(raw, str) else []
    if not words or any(w not in ("function", "method") for w in words) \
            or "method" not in words:
        raise entry.fail(value, "inplace must be True, False, 'method' or 'function, method'")
    return True, "function" in words


def _bool_key(entry: _Entry, name: str, default: bool) -> bool:
    value = entry.value(name)
    if value is None:
        return default
    raw = entry.reader.value(value)
    if not isinstance(raw, bool):
        raise entry.fail(value, f"{name} must be True or False")
    return raw


# -- notes on entries -------------------------------------------------------------------------

# `# differs from torch: why`, a comment indented inside an entry (below its `- name:`), says
# why a formula of the entry is not torch's (codegen/compare_torch.py reads it). It runs on
# over the indented comment lines right below it up to the first line that ends with a
# full stop: the comments after that are the entry's own.
DIFFERS_NOTE = re.compile(r"^\s+#\s*differs from torch:\s*(?P<text>.*)$")
_COMMENT_LINE = re.compile(r"^\s+#\s?(?P<text>.*)$")


def entry_notes(text: str) -> dict[str, str]:
    """The `# differs from torch:` note of each entry that has one, by the entry's op name
    (`pow.Tensor_Scalar`). Only lines between an entry's `- name:` and the next entry count,
    and only indented comments: a comment in column 1 belongs to no entry."""
    lines = text.splitlines()
    starts = _entry_lines(text)
    notes: dict[str, str] = {}
    for index, (start, name) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        found = _notes_in(lines[start + 1 : end])
        if found:
            notes[name] = "; ".join(found)
    return notes


def _entry_lines(text: str) -> list[tuple[int, str]]:
    """(the 0-based line where each entry starts, its op name), in spec order."""
    starts: list[tuple[int, str]] = []
    root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for node in getattr(root, "value", []):
        if not isinstance(node, yaml.MappingNode):
            continue
        name = next((v.value for k, v in node.value
                     if isinstance(k, yaml.ScalarNode) and k.value == "name"
                     and isinstance(v, yaml.ScalarNode)), None)
        if isinstance(name, str):
            starts.append((node.start_mark.line, name.split("(", 1)[0].strip()))
    return starts


def _notes_in(lines: list[str]) -> list[str]:
    """The notes among an entry's lines, each joined with the lines that continue it."""
    found: list[list[str]] = []  # one list of lines per note
    continuing = False
    for line in lines:
        if match := DIFFERS_NOTE.match(line):
            found.append([match["text"].strip()])
        elif continuing and (comment := _COMMENT_LINE.match(line)):
            found[-1].append(comment["text"].strip())
        else:
            continuing = False
            continue
        continuing = not found[-1][-1].endswith(".")
    return [" ".join(p for p in note if p) for note in found]
