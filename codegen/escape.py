"""The one way spec text enters generated source, other than through a checked formula AST.

Spec text (formulas as written, schemas with their string defaults, the spec's file name)
is untrusted: copied raw into a docstring, a `\"\"\"` closes it and what follows runs on
import; copied into a comment, a newline starts a line of code. `escape(text, Into.X)`
gives text that is inert in place X and reads the same to a person wherever it can:

    Into.LITERAL    a double-quoted Python string literal, quotes included
    Into.DOCSTRING  a line inside a triple-quoted docstring: backslashes doubled, runs of
                    quotes broken, one line
    Into.COMMENT    a line inside a `#` comment: one line

In every place, characters that are not printable (control characters, NUL, lone
surrogates, line and paragraph separators) are written as Python escapes (`\\x00`,
`\\ud800`), and any whitespace run becomes one space, so one escaped value is one line.
"""

from __future__ import annotations

import enum
import re


class Into(enum.Enum):
    LITERAL = "literal"
    DOCSTRING = "docstring"
    COMMENT = "comment"


_QUOTES = re.compile(r'"(?=")')  # every quote that another one follows


def _visible(char: str) -> str:
    """A printable character as itself, any other as its Python escape."""
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _visible_text(text: str) -> str:
    """`text` with every character that is not printable as its Python escape."""
    if text.isprintable():  # nearly always: no character to look at one by one
        return text
    return "".join(_visible(c) for c in text)


def escape(text: str, into: Into) -> str:
    """`text`, made safe to paste into generated Python source at a place of kind `into`."""
    if into is Into.LITERAL:
        text = text.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + _visible_text(text) + '"'
    # Whitespace runs (newlines, tabs, \x0b, \x0c, \u2028 ...) become one space first, so
    # that no character Python reads as a line break survives.
    text = " ".join(text.split())
    if into is Into.DOCSTRING:
        text = text.replace("\\", "\\\\")
        # `""` followed by `"` would end the docstring: escape each quote another follows,
        # and a last one, which the closing quotes of a one-line docstring would follow.
        text = _QUOTES.sub('\\\\"', text)
        if text.endswith('"'):
            text = text[:-1] + '\\"'
    return _visible_text(text)
