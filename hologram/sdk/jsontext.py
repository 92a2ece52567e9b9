"""JSON and text as they enter the kernel from outside: read under limits, refused with a
message that says where.

Python's own `json.loads` takes more than the kernel can hold: nesting deep enough to
exhaust the interpreter's recursion (a `RecursionError`, not a decode error), integers past
4,300 digits (a `ValueError` from `int`), `NaN` and `Infinity` (which no JSON encoder may
write back), and `\\ud800` escapes that decode to lone surrogates, strings that cannot be
encoded as UTF-8 and so fail later, far from where they came in (in SQLite, in a response).
`loads` refuses each of them with `JsonRefused`, naming the field when there is one
(`text`, `params.args[2]`).

Standard library only: the plugin side of the JSON-RPC frames reads with it too.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64
"""Arrays and objects nested at most this deep."""
MAX_NUMBER_CHARS = 100
"""A number is at most this many characters (a 64-bit integer has 19 digits, a float's
shortest form at most 24)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


class JsonRefused(ValueError):
    """JSON text the kernel does not take. `reason` reads after the name of what holds the
    fault: `where`, the field's path ('' for the text as a whole)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{where or 'the JSON text'} {message}")
        self.where = where
        self.reason = message


def lone_surrogate(text: str) -> int | None:
    """The index of the first code point in U+D800–U+DFFF, or None: such a string has no
    UTF-8 form (a Python string holds a valid pair as one code point, never two)."""
    if text.isascii():
        return None
    match = _LONE_SURROGATE.search(text)
    return None if match is None else match.start()


def replace_lone_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, the replacement character."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def surrogate_message(text: str, index: int) -> str:
    return (
        f"holds a lone surrogate (\\u{ord(text[index]):04x} at character {index}), which is "
        "not Unicode text; send valid UTF-8"
    )


def check_text(text: str, where: str) -> None:
    """Refuse a string holding a lone surrogate, naming `where` it is."""
    index = lone_surrogate(text)
    if index is not None:
        raise JsonRefused(surrogate_message(text, index), where)


def _number(kind: type[int] | type[float], max_chars: int) -> Any:
    def read(token: str) -> int | float:
        if len(token) > max_chars:
            raise JsonRefused(
                f"holds a number of {len(token)} characters; numbers have at most {max_chars}"
            )
        value = kind(token)
        if isinstance(value, float) and not math.isfinite(value):
            raise JsonRefused(f"holds the number {token}, which is too large")
        return value

    return read


def _too_deep(max_depth: int) -> str:
    return f"nests arrays and objects deeper than {max_depth} levels"


def _constant(token: str) -> Any:
    raise JsonRefused(f"holds {token}, which is not JSON (numbers are finite)")


def loads(
    text: str | bytes, *, max_depth: int = MAX_DEPTH, max_number: int = MAX_NUMBER_CHARS
) -> Any:
    """`text` as JSON, with every limit applied (`parse`, then `check`)."""
    value = parse(text, max_depth=max_depth, max_number=max_number)
    check(value, text, max_depth=max_depth)
    return value


def parse(
    text: str | bytes, *, max_depth: int = MAX_DEPTH, max_number: int = MAX_NUMBER_CHARS
) -> Any:
    """`text` as JSON, with the limits on numbers applied, and nesting that would exhaust
    the interpreter refused; `check` finds the rest. Malformed text raises
    `json.JSONDecodeError` and bytes that are not UTF-8 `UnicodeDecodeError`, as from
    `json.loads`."""
    try:
        return json.loads(
            text,
            parse_int=_number(int, max_number),
            parse_float=_number(float, max_number),
            parse_constant=_constant,
        )
    except RecursionError:
        raise JsonRefused(_too_deep(max_depth)) from None


def _may_break_limits(text: str | bytes, max_depth: int) -> bool:
    """False when `check` cannot find anything: nesting past the limit needs more brackets,
    and a lone surrogate needs a `\\u` escape of one (or, in a string, the code point)."""
    if isinstance(text, str):
        brackets = text.count("[") + text.count("{")
        surrogate = lone_surrogate(text) is not None or _ESCAPE.search(text) is not None
    else:
        brackets = text.count(b"[") + text.count(b"{")
        surrogate = _ESCAPE_BYTES.search(text) is not None
    return brackets > max_depth or surrogate


def check(value: Any, text: str | bytes | None = None, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse a decoded JSON value nested deeper than `max_depth`, or holding a lone
    surrogate in a string or a key. Given the `text` it was decoded from, a value that
    cannot break either rule is not walked."""
    if text is not None and not _may_break_limits(text, max_depth):
        return
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            check_text(item, where)
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                raise JsonRefused(_too_deep(max_depth), where)
            if isinstance(item, dict):
                for key, child in item.items():
                    # The path is shown in messages: it must be printable text itself.
                    path = replace_lone_surrogates(f"{where}.{key}" if where else key)
                    check_text(key, path)
                    stack.append((child, path, depth + 1))
            else:
                stack.extend((child, f"{where}[{n}]", depth + 1) for n, child in enumerate(item))
