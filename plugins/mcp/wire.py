"""What crosses between an MCP server and the model: tool names, input schemas, results.

**Names.** A server's tool becomes `mcp__<server>__<tool>`. Function-calling APIs take
`[A-Za-z0-9_-]{1,64}`; other characters become `_`, and a name that would be longer is cut
and given a short hash of the original, so two long names stay two tools.

**Schemas.** MCP servers written in Python hand out pydantic's schemas: titles everywhere,
`$defs` with `$ref`, `anyOf: [X, {type: null}]` for an optional value. Several providers'
function-calling APIs refuse those, so a schema is cleaned: references inlined (a recursive
one cannot be, and is refused), titles and other annotations dropped, a nullable value
made plain (the parameter is marked optional, so the kernel drops a null the model sends).
A schema that is still not an object schema, is too big, or that the kernel finds invalid
when it is registered, is refused with the reason, which the plugin logs and reports: the
tool is not offered rather than offered broken.

**Results.** Text is the model's; structured content without text is given as JSON; an
image or audio block is described in a line of text, since this kernel has no media store
yet (the media issue wires real media blocks); a resource is its text or a line naming it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

PREFIX = "mcp"
SEPARATOR = "__"
MAX_NAME = 64
MAX_SCHEMA_BYTES = 32 * 1024
MAX_DESCRIPTION = 1024
SERVER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,23}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_DROPPED = frozenset({"title", "$schema", "$id", "$comment", "examples", "$defs", "definitions"})
_REF_DEPTH = 12


class Refused(ValueError):
    """A tool that cannot be offered as its server describes it; the message says why."""


def tool_name(server: str, tool: str) -> str:
    """The kernel's name for `tool` of `server` (`server` is checked by the settings)."""
    head = f"{PREFIX}{SEPARATOR}{server}{SEPARATOR}"
    safe = _UNSAFE.sub("_", tool)
    if len(head) + len(safe) <= MAX_NAME and safe == tool:
        return head + safe
    digest = hashlib.sha256(tool.encode()).hexdigest()[:6]
    room = MAX_NAME - len(head) - len(digest) - 1
    if room < 1:
        raise Refused(f"server name {server!r} leaves no room for tool names")
    return f"{head}{safe[:room]}_{digest}"


@dataclass(frozen=True, slots=True)
class Parameters:
    schema: dict[str, Any]
    optional: tuple[str, ...]
    """Parameters whose null means "not given" (they were nullable in the server's schema)."""


def clean_schema(schema: Any) -> Parameters:
    """The schema a model's wire takes, or `Refused` saying why there is none."""
    if not isinstance(schema, dict):
        raise Refused("its input schema is not a JSON object")
    size = len(json.dumps(schema))
    if size > MAX_SCHEMA_BYTES:
        raise Refused(f"its input schema is {size} bytes, over the {MAX_SCHEMA_BYTES} taken")
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    cleaned = _clean(schema, definitions, depth=0)
    if cleaned.get("type", "object") != "object":
        raise Refused(f"its input schema is of type {cleaned.get('type')!r}; tools take an object")
    for combinator in ("anyOf", "oneOf", "allOf", "not"):
        if combinator in cleaned:
            raise Refused(f"its input schema is a top-level {combinator!r}, which tools cannot be")
    cleaned["type"] = "object"
    cleaned.setdefault("properties", {})
    optional = []
    for name, prop in list(cleaned["properties"].items()):
        plain, nullable = _without_null(prop)
        if nullable:
            cleaned["properties"][name] = plain
            optional.append(name)
    # Whether it is valid JSON schema the kernel checks when the tool is registered (a
    # refusal there is recorded like these); importing jsonschema here would cost seconds.
    return Parameters(cleaned, tuple(optional))


def _clean(value: Any, definitions: dict[str, Any], depth: int) -> Any:
    if isinstance(value, list):
        return [_clean(v, definitions, depth) for v in value]
    if not isinstance(value, dict):
        return value
    if "$ref" in value:
        if depth >= _REF_DEPTH:
            raise Refused("its input schema refers to itself (a recursive $ref cannot be inlined)")
        ref = value["$ref"]
        name = ref.rsplit("/", 1)[-1]
        if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
            raise Refused(f"its input schema refers to {ref!r}, outside itself")
        if name not in definitions:
            raise Refused(f"its input schema refers to {ref!r}, which it does not define")
        target = {**definitions[name], **{k: v for k, v in value.items() if k != "$ref"}}
        return _clean(target, definitions, depth + 1)
    nullable = _nullable_branch(value)
    if nullable is not None:
        return _clean(nullable, definitions, depth)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in _DROPPED or (key == "default" and item is None):
            continue
        if key == "properties" and isinstance(item, dict):
            out[key] = {name: _clean(v, definitions, depth) for name, v in item.items()}
        else:
            out[key] = _clean(item, definitions, depth)
    return out


def _nullable_branch(schema: dict[str, Any]) -> dict[str, Any] | None:
    """`anyOf: [X, {type: null}]` (pydantic's `X | None`) as X with "null" among its types,
    which every wire takes; None for any other schema."""
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if not isinstance(branches, list) or {"type": "null"} not in branches:
            continue
        others = [b for b in branches if b != {"type": "null"}]
        if len(others) != 1 or not isinstance(others[0], dict):
            continue
        (other,) = others
        rest = {k: v for k, v in schema.items() if k != combinator}
        kind = other.get("type")
        if isinstance(kind, str):
            return {**other, **rest, "type": [kind, "null"]}
        return {**other, **rest}
    return None


def _without_null(schema: Any) -> tuple[Any, bool]:
    """A top-level parameter of type `[X, "null"]` → (type X, True): the kernel then drops a
    null the model sends for it (the parameter is optional), and the wire sees a plain type."""
    if not isinstance(schema, dict):
        return schema, False
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds and len(kinds) == 2:
        (kind,) = [k for k in kinds if k != "null"]
        return _no_null_default({**schema, "type": kind}), True
    return schema, False


def _no_null_default(schema: dict[str, Any]) -> dict[str, Any]:
    # `default: null` beside a type that is no longer nullable contradicts it.
    return {k: v for k, v in schema.items() if not (k == "default" and v is None)}


def description(text: str | None, server: str, fallback: str) -> str:
    body = (text or fallback).strip() or fallback
    if len(body) > MAX_DESCRIPTION:
        body = body[: MAX_DESCRIPTION - 1] + "…"
    return f"{body} (MCP server {server!r})"


# ---- results -----------------------------------------------------------------------------------


def media_note(kind: str, mime: str | None, data: str | None) -> str:
    size = len(data or "") * 3 // 4  # base64
    return (
        f"[{kind} {mime or 'of unknown type'}, about {size} bytes: not shown, because this "
        "kernel has no media store yet]"
    )


def block_text(block: Any) -> str:
    """One content block of an MCP result as text (SDK types, read by their `type`)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return media_note(kind, getattr(block, "mime_type", None), getattr(block, "data", None))
    if kind == "resource_link":
        name = getattr(block, "name", "") or ""
        return f"[resource {block.uri} {name}]".replace(" ]", "]")
    if kind == "resource":
        return resource_text(block.resource)
    return f"[a {kind or 'content'} block this kernel cannot show]"


def resource_text(contents: Any) -> str:
    text = getattr(contents, "text", None)
    if text is not None:
        return str(text)
    return media_note(
        "resource", getattr(contents, "mime_type", None), getattr(contents, "blob", "")
    )


def result_text(result: Any) -> str:
    """What the model reads of a `CallToolResult` (its error flag is the caller's to act on)."""
    parts = [block_text(b) for b in result.content or []]
    structured = getattr(result, "structured_content", None)
    if not any(p.strip() for p in parts) and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)
