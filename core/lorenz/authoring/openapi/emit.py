"""Python source for the generated module, laid out as ``ruff format`` lays it out (120 columns), so
the generated project formats and lints clean with nothing excluded: an expression on one line when
it fits, else its brackets opened one item a line with a trailing comma (which the formatter then
keeps), and a string too long for its line cut into an implicit concatenation. Strings take the
quotes the formatter prefers, with non-ASCII characters escaped (ruff's RUF001 flags look-alikes).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

__all__ = ["WIDTH", "Call", "Expr", "Raw", "call", "docstring", "lit", "quoted", "signature", "statement"]

WIDTH = 120
_INDENT = "    "


@frozen
class Raw:
    """Source as it is written: a name, ``args.x``, an annotation."""

    text: str


@frozen
class Str:
    text: str


@frozen
class Call:
    func: str
    args: tuple[tuple[str | None, Expr], ...]  # (keyword or None, value)


@frozen
class Coll:
    open: str
    close: str
    items: tuple[Expr | tuple[Expr, Expr], ...]  # a dict's items are (key, value)


Expr = Raw | Str | Call | Coll


def call(func: str, *args: Expr, **kwargs: Expr) -> Call:
    return Call(func, tuple((None, arg) for arg in args) + tuple(kwargs.items()))


def lit(value: Any) -> Expr:
    """The expression for a JSON-like value (``dict``, ``list``, ``tuple``, scalars) or an expression."""
    if isinstance(value, Raw | Str | Call | Coll):
        return value
    if isinstance(value, str):
        return Str(value)
    if isinstance(value, Mapping):
        return Coll("{", "}", tuple((lit(key), lit(item)) for key, item in value.items()))
    if isinstance(value, list):
        return Coll("[", "]", tuple(lit(item) for item in value))
    if isinstance(value, tuple):
        return Coll("(", ")", tuple(lit(item) for item in value))
    return Raw(repr(value))


def _escape(text: str, quote: str) -> str:
    if text.isascii() and text.isprintable() and "\\" not in text and quote not in text:
        return text
    out = []
    for char in text:
        if char == "\\" or char == quote:
            out.append("\\" + char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.append(ascii(char)[1:-1])  # \xNN, \uNNNN or \UNNNNNNNN
    return "".join(out)


def quoted(text: str) -> str:
    """``text`` as a string literal, in the quotes the formatter keeps: double unless that needs more escapes."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    return quote + _escape(text, quote) + quote


def flat(expr: Expr) -> str:
    """``expr`` on one line."""
    if isinstance(expr, Raw):
        return expr.text
    if isinstance(expr, Str):
        return quoted(expr.text)
    if isinstance(expr, Call):
        return f"{expr.func}({', '.join((f'{key}=' if key else '') + flat(value) for key, value in expr.args)})"
    items = [f"{flat(item[0])}: {flat(item[1])}" if isinstance(item, tuple) else flat(item) for item in expr.items]
    single = expr.open == "(" and len(items) == 1
    return expr.open + ", ".join(items) + ("," if single else "") + expr.close


def _pieces(text: str, room: int) -> list[str]:
    """``text`` cut (after a space where it can) into string literals of at most ``room`` characters."""
    pieces: list[str] = []
    current = ""
    for word in re.findall(r"\S*\s*", text):
        if not word:
            continue
        if len(quoted(current + word)) <= room:
            current += word
            continue
        if current:
            pieces.append(current)
            current = ""
        for char in word:  # a word longer than the line: cut anywhere
            if current and len(quoted(current + char)) > room:
                pieces.append(current)
                current = ""
            current += char
    return [quoted(piece) for piece in [*pieces, current] if piece]


def lines(expr: Expr, indent: str, prefix: str = "", suffix: str = "") -> list[str]:
    """``expr`` laid out after ``prefix`` at ``indent``, followed by ``suffix``."""
    one = f"{indent}{prefix}{flat(expr)}{suffix}"
    if len(one) <= WIDTH or isinstance(expr, Raw):
        return [one]
    inner = indent + _INDENT
    if isinstance(expr, Str):
        if not prefix:  # an argument of its own: the parts one a line, as they are
            parts = _pieces(expr.text, WIDTH - len(indent) - len(suffix))
            return [indent + part for part in parts[:-1]] + [indent + parts[-1] + suffix]
        parts = _pieces(expr.text, WIDTH - len(inner))
        return [f"{indent}{prefix}(", *(inner + part for part in parts), f"{indent}){suffix}"]
    if isinstance(expr, Call):
        out = [f"{indent}{prefix}{expr.func}("]
        for key, value in expr.args:
            out += lines(value, inner, f"{key}=" if key else "", ",")
        return [*out, f"{indent}){suffix}"]
    out = [f"{indent}{prefix}{expr.open}"]
    for item in expr.items:
        if isinstance(item, tuple):
            out += lines(item[1], inner, f"{flat(item[0])}: ", ",")
        else:
            out += lines(item, inner, "", ",")
    return [*out, f"{indent}{expr.close}{suffix}"]


def statement(prefix: str, expr: Expr, indent: str = "") -> str:
    """One statement, ``prefix`` (``x: int = ``, ``return ``, ``@``) then ``expr``, with its newline."""
    return "\n".join(lines(expr, indent, prefix)) + "\n"


def docstring(text: str, indent: str = _INDENT) -> str:
    """A docstring of ``text`` (one paragraph): on one line when it fits, else wrapped."""
    text = " ".join(text.replace("\\", "\\\\").replace('"""', "'''").split())
    if text.endswith('"'):
        text += " "  # as the formatter writes it: a quote cannot touch the closing quotes
    one = f'{indent}"""{text}"""'
    if len(one) <= WIDTH:
        return one + "\n"
    wrapped = textwrap.wrap('"""' + text, WIDTH - len(indent), break_long_words=False, break_on_hyphens=False)
    return "".join(f"{indent}{line}\n" for line in wrapped) + f'{indent}"""\n'


def signature(name: str, params: Sequence[str], returns: str) -> str:
    """``async def name(params) -> returns:``, its parameters one a line when it does not fit."""
    one = f"async def {name}({', '.join(params)}) -> {returns}:"
    if len(one) <= WIDTH:
        return one + "\n"
    return f"async def {name}(\n" + "".join(f"{_INDENT}{param},\n" for param in params) + f") -> {returns}:\n"
