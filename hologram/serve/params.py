"""Query, path and header parameters, read into the dataclass an endpoint declares for them.

A parameter's type and bounds are its field's annotation (`Annotated[int, Param(ge=1,
le=100)]`), its default the field's default; the OpenAPI document states the same field.
Integers are at most 19 ASCII digits within their bounds (`str.isdigit` takes '²', which
`int` then refuses; `int` takes '١٢', and refuses 5,000 digits with a ValueError), booleans
true/false/1/0; a text that must not be blank is declared with `not_blank`, and a pattern a
field states is the pattern it is held to.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, get_args, get_origin

from hologram.sdk import Param, split_optional
from hologram.serve.bodies import ApiError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")

SQLITE_MAX_INT = 2**63 - 1
"""The largest id SQLite stores; a larger one cannot name anything."""
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")
_TRUE, _FALSE = ("true", "1"), ("false", "0")


def not_blank(description: str) -> Param:
    """A text that must hold something besides whitespace (surrounding blanks are dropped)."""
    return Param(description, min_length=1, pattern=r"\S")


def parse_int(raw: str, what: str, low: int, high: int) -> int:
    if _INTEGER.fullmatch(raw.strip()) is None:
        raise ApiError(400, f"{what} must be an integer, got {raw[:40]!r}")
    value = int(raw)
    if not low <= value <= high:
        raise ApiError(400, f"{what} must be within {low}..{high}")
    return value


def wire_name(field: dataclasses.Field[Any]) -> str:
    name: str = field.metadata.get("name", field.name)
    return name


def unwrap(hint: Any) -> tuple[Any, Param]:
    """(the type, its Param) of a field's annotation; an empty Param when it has none."""
    if get_origin(hint) is Annotated:
        base, *meta = get_args(hint)
        return base, next((m for m in meta if isinstance(m, Param)), Param())
    return hint, Param()


def read_params(cls: type[T], given: Mapping[str, str], where: str) -> T:
    """The parameters in `given` (query, path or headers) as a `cls`; `where` names the
    kind in messages ('query parameter')."""
    hints = typing.get_type_hints(cls, include_extras=True)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        name = wire_name(field)
        kind, param = unwrap(hints[field.name])
        kind, _ = split_optional(kind)
        raw = given.get(name)
        if raw is None:
            if field.default is dataclasses.MISSING:
                raise ApiError(400, f"{where} '{name}' is required: {param.description}")
            continue
        required = field.default is dataclasses.MISSING
        values[field.name] = _convert(raw, kind, param, f"{where} '{name}'", required)
    return cls(**values)


def _convert(raw: str, kind: Any, param: Param, what: str, required: bool) -> Any:
    if kind is bool:
        lowered = raw.lower()
        if lowered not in (*_TRUE, *_FALSE):
            raise ApiError(400, f"{what} must be true or false, got {lowered[:40]!r}")
        return lowered in _TRUE
    if kind is int:
        low = -SQLITE_MAX_INT if param.ge is None else int(param.ge)
        high = SQLITE_MAX_INT if param.le is None else int(param.le)
        return parse_int(raw, what, low, high)
    if param.min_length:
        # A text to look for: surrounding blanks are not part of it.
        raw = raw.strip()
        if len(raw) < param.min_length:
            blank = "is required" if required else "must not be blank"
            raise ApiError(400, f"{what} {blank}: {param.description}")
    if param.pattern and re.search(param.pattern, raw) is None:
        raise ApiError(400, f"{what} must match {param.pattern!r}: {param.description}")
    return raw
