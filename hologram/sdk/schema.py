"""JSON schemas derived from Python types, and values converted back into those types.

One mechanism for every place the kernel states a shape: a tool's parameters (derived from
its function's signature), and the bodies and results of the service's API (derived from
the dataclasses the endpoints return). Bounds and descriptions ride along in `Annotated`:

    async def recall(
        query: str,
        depth: Annotated[int, Param("hops from the seeds", ge=0, le=4)] = 2,
    ) -> str: ...

Schemas are inline by default (no `$ref`), the shape every LLM's function-calling API
takes; `Schemas` collects named classes into a components section instead (OpenAPI).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

JSON = dict[str, Any]

NOT_BLANK = r"\S"
"""The pattern of a string that must hold more than whitespace: `Param(pattern=NOT_BLANK)`."""


@dataclass(frozen=True, slots=True)
class Param:
    """What a type alone cannot say about a value: its description and its bounds."""

    description: str | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    examples: tuple[Any, ...] = ()

    def apply(self, schema: JSON) -> JSON:
        is_array = schema.get("type") == "array"
        words = {
            "description": self.description,
            "minimum": self.ge,
            "maximum": self.le,
            "exclusiveMinimum": self.gt,
            "exclusiveMaximum": self.lt,
            "minItems" if is_array else "minLength": self.min_length,
            "maxItems" if is_array else "maxLength": self.max_length,
            "pattern": self.pattern,
            "examples": list(self.examples) or None,
        }
        return {**schema, **{k: v for k, v in words.items() if v is not None}}


class SchemaError(TypeError):
    """A type that has no JSON schema (a parameter typed as a socket, say)."""


_NONE = type(None)
_SIMPLE: dict[Any, JSON] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    _NONE: {"type": "null"},
}
_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def split_optional(tp: Any) -> tuple[Any, bool]:
    """`X | None` → (X, True); any other type → (itself, False)."""
    if _is_union(get_origin(tp)):
        members = [a for a in get_args(tp) if a is not _NONE]
        if len(members) < len(get_args(tp)):
            inner = members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007
            return inner, True
    return tp, False


class Schemas:
    """Derives schemas. With `ref_prefix` (e.g. `#/components/schemas/`) named classes
    (dataclasses, TypedDicts, enums) go into `definitions` once and are referenced."""

    def __init__(self, ref_prefix: str | None = None) -> None:
        self.ref_prefix = ref_prefix
        self.definitions: dict[str, JSON] = {}

    def of(self, tp: Any) -> JSON:
        origin, args = get_origin(tp), get_args(tp)
        if origin is Annotated:
            schema = self.of(args[0])
            for meta in args[1:]:
                if isinstance(meta, Param):
                    schema = meta.apply(schema)
            return schema
        if tp in _SIMPLE:
            return dict(_SIMPLE[tp])
        if tp is Any or tp is object:
            return {}
        if _is_union(origin):
            if all(a in _SIMPLE for a in args):
                return {"type": [_SIMPLE[a]["type"] for a in args]}
            inner, optional = split_optional(tp)
            if optional:
                schema = self.of(inner)
                if set(schema) == {"type"} and isinstance(schema["type"], str):
                    return {"type": [schema["type"], "null"]}
                return {"anyOf": [schema, {"type": "null"}]}
            return {"anyOf": [self.of(a) for a in args]}
        if origin is Literal:
            return _enum_schema(list(args))
        if origin in (list, Sequence, set, frozenset, tuple) or tp in (list, tuple):
            return self._array(tp, origin, args)
        if origin in (dict, Mapping) or tp is dict:
            value = args[1] if len(args) == 2 else Any
            return {"type": "object", "additionalProperties": self.of(value) or True}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._named(tp, lambda: _enum_schema([m.value for m in tp], tp.__doc__))
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return self._named(tp, lambda: self._dataclass(tp))
        if _is_typeddict(tp):
            return self._named(tp, lambda: self._typeddict(tp))
        raise SchemaError(f"no JSON schema for the type {tp!r}")

    def _array(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> JSON:
        if origin is tuple and args and args[-1] is not Ellipsis:
            items = [self.of(a) for a in args]
            n = len(items)
            return {"type": "array", "prefixItems": items, "minItems": n, "maxItems": n}
        schema: JSON = {"type": "array", "items": self.of(args[0]) if args else {}}
        if origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema

    def _named(self, tp: type, build: Callable[[], JSON]) -> JSON:
        if self.ref_prefix is None:
            return build()
        name = tp.__name__
        if name not in self.definitions:
            self.definitions[name] = {}  # a placeholder first: a class may refer to itself
            self.definitions[name] = build()
        return {"$ref": f"{self.ref_prefix}{name}"}

    def _dataclass(self, tp: type) -> JSON:
        hints = typing.get_type_hints(tp, include_extras=True)
        properties: JSON = {}
        required: list[str] = []
        for f in dataclasses.fields(tp):
            schema = self.of(hints[f.name])
            if f.metadata.get("description"):
                schema = {**schema, "description": f.metadata["description"]}
            properties[f.name] = schema
            no_default = f.default is dataclasses.MISSING
            if no_default and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
        return _object(properties, required, _doc(tp))

    def _typeddict(self, tp: type) -> JSON:
        hints = typing.get_type_hints(tp, include_extras=True)
        properties = {name: self.of(hint) for name, hint in hints.items()}
        # The caller checked `_is_typeddict(tp)`, which narrows nothing: mypy sees a plain
        # `type`, not the TypedDict metaclass that sets `__required_keys__`.
        required = [n for n in hints if n in tp.__required_keys__]  # type: ignore[attr-defined]
        return _object(properties, required, _doc(tp))


def _object(properties: JSON, required: list[str], description: str | None) -> JSON:
    schema: JSON = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if description:
        schema["description"] = description
    return schema


def _doc(tp: type) -> str | None:
    # The class's own docstring only: `inspect.getdoc` would give a TypedDict dict's.
    own = vars(tp).get("__doc__")
    doc = inspect.cleandoc(own) if isinstance(own, str) else None
    # A dataclass without a docstring gets a generated signature as its __doc__.
    if not doc or doc.startswith(f"{tp.__name__}("):
        return None
    return doc


def _enum_schema(values: list[Any], description: str | None = None) -> JSON:
    schema: JSON = {"enum": values}
    kinds = {_JSON_TYPE.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), **schema}
    if description and not description.startswith("An enumeration"):
        schema["description"] = description
    return schema


def schema_of(tp: Any) -> JSON:
    """The inline JSON schema of `tp`."""
    return Schemas().of(tp)


# ---- converting validated JSON back into the annotated types ---------------------------------


def convert(value: Any, tp: Any) -> Any:
    """`value` (JSON, already valid against `schema_of(tp)`) as a value of `tp`: enums from
    their values, dataclasses from objects, tuples and sets from arrays, floats from ints."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return convert(value, args[0])
    if value is None:
        return None
    if _is_union(origin):
        inner, _ = split_optional(tp)
        return value if _is_union(get_origin(inner)) else convert(value, inner)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp, include_extras=True)
        return tp(**{k: convert(v, hints[k]) for k, v in value.items() if k in hints})
    if _is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return {k: convert(v, hints[k]) if k in hints else v for k, v in value.items()}
    if origin in (list, Sequence, set, frozenset, tuple) and args:
        if origin is tuple and args[-1] is not Ellipsis:
            return tuple(convert(v, a) for v, a in zip(value, args, strict=True))
        items = [convert(v, args[0]) for v in value]
        return items if origin in (list, Sequence) else origin(items)
    if origin in (dict, Mapping) and len(args) == 2:
        return {k: convert(v, args[1]) for k, v in value.items()}
    return value


_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Types `to_json` hands back as they are. Checked by exact type first: most values of an
event or a reply are these, and every event the service streams goes through here."""


def to_json(value: Any) -> Any:
    """A dataclass, enum or container of them as plain JSON values."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    # Every event the service streams passes here: plain values inside a container are
    # taken in place, without a call each (a prune's event lists a score and an id per
    # event of the window).
    if kind is dict:
        return {
            k if type(k) is str else str(k): v if type(v) in _PLAIN else to_json(v)
            for k, v in value.items()
        }
    if kind is list or kind is tuple:
        return [v if type(v) in _PLAIN else to_json(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(v) for v in value]
    return value


# ---- functions: the parameters schema of a signature, descriptions from the docstring ---------

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """A Google-style docstring as (the description before its sections, argument → text).
    An argument's text may go on over lines indented deeper than its name."""
    description: list[str] = []
    arguments: dict[str, str] = {}
    section: str | None = None
    base: int | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        header = _SECTION.match(stripped) if indent == 0 else None
        if header:
            section, base, current = header.group(1), None, None
        elif section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters") and stripped:
            base = indent if base is None else base
            match = _ARG_LINE.match(stripped)
            if match and indent == base:
                current = match.group(1).lstrip("*")
                arguments[current] = match.group(2).strip()
            elif current is not None:
                arguments[current] = f"{arguments[current]} {stripped}".strip()
    return "\n".join(description).strip(), arguments


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """What a function's signature says to a caller that speaks JSON."""

    description: str
    parameters: JSON
    hints: dict[str, Any]
    optional: frozenset[str]
    """Parameters whose type admits None (a null argument means 'not given')."""

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Validated JSON arguments as keyword arguments of the function."""
        return {k: convert(v, self.hints[k]) for k, v in given.items() if k in self.hints}


def function_schema(fn: Callable[..., Any]) -> FunctionSchema:
    """Derive the parameters schema of `fn` from its signature and docstring.

    Every parameter must be annotated and passable by keyword; one with a default is not
    required, and the default goes into the schema when it is a JSON value."""
    name = getattr(fn, "__qualname__", repr(fn))
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise SchemaError(f"{name}: an annotation cannot be resolved ({exc})") from None
    description, documented = parse_docstring(inspect.getdoc(fn))
    schemas = Schemas()
    properties: JSON = {}
    required: list[str] = []
    optional: set[str] = set()
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise SchemaError(
                f"{name}: parameter {param.name!r} cannot be passed by name; a tool's "
                "parameters must be plain named parameters"
            )
        if param.name not in hints:
            raise SchemaError(f"{name}: parameter {param.name!r} has no type annotation")
        hint = hints[param.name]
        try:
            schema = schemas.of(hint)
        except SchemaError as exc:
            raise SchemaError(f"{name}: parameter {param.name!r}: {exc}") from None
        bare = get_args(hint)[0] if get_origin(hint) is Annotated else hint
        inner, admits_none = split_optional(bare)
        if admits_none and param.default is not param.empty:
            # The model is told the type it should send; a null it sends anyway is read as
            # "not given" (the runner drops it) rather than refused. A required parameter
            # that admits None keeps null as a value of its own.
            optional.add(param.name)
            schema = _without_null(schema, schemas.of(inner))
        if param.name in documented and "description" not in schema:
            schema = {"description": documented[param.name], **schema}
        if param.default is param.empty:
            required.append(param.name)
        elif _is_json(param.default) and param.default is not None:
            schema["default"] = to_json(param.default)
        properties[param.name] = schema
    # An argument the function does not take is refused rather than dropped: a misspelt
    # optional name would otherwise be ignored without the model ever learning of it.
    parameters = {**_object(properties, required, None), "additionalProperties": False}
    return FunctionSchema(
        description=description,
        parameters=parameters,
        hints={k: v for k, v in hints.items() if k != "return"},
        optional=frozenset(optional),
    )


def _without_null(schema: JSON, inner: JSON) -> JSON:
    extra = {k: v for k, v in schema.items() if k not in ("type", "anyOf")}
    return {**inner, **extra}


def _is_json(value: Any) -> bool:
    if isinstance(value, enum.Enum):
        return True
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    return False
