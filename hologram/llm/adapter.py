"""Lua adapters: finding them, loading one, and calling its transforms (spec 001: the Lua
adapter contract).

An adapter is a Lua script that returns a table:

    name, version          strings
    endpoint               path appended to the source's base_url ("{model}" is replaced)
    headers                table of static headers (the host adds the API key)
    transform_request(raw_json)    unified request JSON -> the API's request body
    transform_tools(tools_json)    optional: the request's `tools` (a JSON list) -> the body
                                   fields they become ({tools = ...}, a table or JSON text of an
                                   object). Called once per distinct tool set; its answer is
                                   kept, `transform_request` then gets the request without
                                   `tools`, and the host adds the fields to the body it
                                   returns (a field that body sets itself stays as it is)
    transform_response(raw_body, http)   the API's response body -> unified response;
                                   `http` is {status, headers} (header names lower-case)
    transform_stream_chunk(line)   optional: one SSE data payload or NDJSON line -> chunk
    transform_error(raw_body, http)  optional: the body of an HTTP error status ->
                                   {kind, message, retry_after}; `http` also carries the
                                   `retry_after` the host read from the headers
    stream_endpoint        optional, default endpoint
    stream_format          optional, "sse" (default) or "ndjson"
    accepts_images         optional boolean, default false: whether the model reads images
                           (a source may say otherwise: core.llm.sources.<name>.accepts_images);
                           one that does not gets a text note naming each image instead
    auth_header, auth_prefix  optional, default "Authorization", "Bearer "

Transforms may return JSON text or a table (the host encodes it). Shipped adapters live in
the package; a file of the same name in `<data>/adapters/` overrides one, a new name adds one.
"""

from __future__ import annotations

import json
import logging
import marshal
import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import lupa.lua54 as lupa

from hologram.llm.errors import AdapterError, AdapterOutputError
from hologram.llm.lua_sandbox import HttpHandler, LuaSandbox, LuaSandboxError

log = logging.getLogger(__name__)

ADAPTER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
STREAM_FORMATS = ("sse", "ndjson")
KEPT_TOOL_SETS = 4
"""Tool sets whose body fields an adapter keeps: the turn's, and a few others (a child
agent's, an internal turn's) that alternate with it."""


def shipped_adapters_dir() -> Path:
    """The adapters that ship inside the package (`adapters/` in the checkout)."""
    return Path(str(resources.files("hologram") / "_shipped" / "adapters"))


class AdapterLibrary:
    """Where adapters are looked up: the user's directory first, then the shipped one."""

    def __init__(self, user_dir: Path | None = None, shipped_dir: Path | None = None) -> None:
        self.user_dir = user_dir
        self.shipped_dir = shipped_dir or shipped_adapters_dir()

    def _dirs(self) -> list[Path]:
        return [d for d in (self.user_dir, self.shipped_dir) if d is not None]

    def names(self) -> list[str]:
        found = {p.stem for d in self._dirs() if d.is_dir() for p in d.glob("*.lua")}
        return sorted(found)

    def find(self, name: str) -> Path:
        if not isinstance(name, str) or not ADAPTER_NAME.match(name):
            raise AdapterError(
                str(name), "an adapter name is lower-case letters, digits, '-' or '_'"
            )
        for directory in self._dirs():
            path = directory / f"{name}.lua"
            if path.is_file():
                return path
        where = " and ".join(str(d) for d in self._dirs())
        raise AdapterError(
            name, f"no such adapter; available: {', '.join(self.names()) or 'none'} (in {where})"
        )

    def load(
        self, name: str, *, keep_tool_sets: int = KEPT_TOOL_SETS, **sandbox_options: Any
    ) -> LuaAdapter:
        return LuaAdapter.load(self.find(name), keep_tool_sets=keep_tool_sets, **sandbox_options)


@dataclass(frozen=True, slots=True)
class _Contract:
    name: str
    version: str
    endpoint: str
    stream_endpoint: str
    headers: dict[str, str]
    stream_format: str
    auth_header: str
    auth_prefix: str
    has_stream: bool
    has_error: bool
    has_tools: bool
    accepts_images: bool


def _flag(table: Any, key: str, problems: list[str]) -> bool:
    """An optional boolean of the contract, false when left out."""
    value = table[key]
    if value is None:
        return False
    if not isinstance(value, bool):
        problems.append(f"{key} must be a boolean, got {value!r}")
        return False
    return value


def _check_contract(table: Any, sandbox: LuaSandbox, origin: str) -> _Contract:
    if lupa.lua_type(table) != "table":
        raise AdapterError(origin, f"the script must return a table, it returned {table!r}")
    problems: list[str] = []

    def text(key: str, required: bool, default: str = "") -> str:
        value = table[key]
        if value is None:
            if required:
                problems.append(f"missing {key} (a string)")
            return default
        if not isinstance(value, str):
            problems.append(f"{key} must be a string, not {lupa.lua_type(value) or type(value)}")
            return default
        return value

    def function(key: str, required: bool) -> bool:
        value = table[key]
        if value is None:
            if required:
                problems.append(f"missing {key} (a function)")
            return False
        if lupa.lua_type(value) != "function":
            problems.append(f"{key} must be a function")
            return False
        return True

    name = text("name", True)
    version = text("version", True)
    endpoint = text("endpoint", True)
    stream_endpoint = text("stream_endpoint", False, endpoint)
    for key, value in (("endpoint", endpoint), ("stream_endpoint", stream_endpoint)):
        if value and not value.startswith("/"):
            problems.append(f"{key} must start with '/', got {value!r}")
    headers: dict[str, str] = {}
    raw_headers = table["headers"]
    if raw_headers is None:
        problems.append("missing headers (a table; {} for none)")
    else:
        try:
            decoded = sandbox.to_python(raw_headers, "headers")
        except ValueError as exc:
            decoded = None
            problems.append(f"headers: {exc}")
        if decoded == []:
            decoded = {}
        if not isinstance(decoded, dict) or not all(isinstance(v, str) for v in decoded.values()):
            problems.append("headers must be a table of string values")
        else:
            headers = decoded
    stream_format = text("stream_format", False, "sse")
    if stream_format not in STREAM_FORMATS:
        problems.append(f"stream_format must be one of {STREAM_FORMATS}, got {stream_format!r}")
    auth_header = text("auth_header", False, "Authorization")
    auth_prefix = text("auth_prefix", False, "Bearer " if auth_header == "Authorization" else "")
    accepts_images = _flag(table, "accepts_images", problems)
    function("transform_request", True)
    function("transform_response", True)
    has_stream = function("transform_stream_chunk", False)
    has_error = function("transform_error", False)
    has_tools = function("transform_tools", False)
    if problems:
        raise AdapterError(
            name or origin, f"{origin} does not follow the adapter contract: " + "; ".join(problems)
        )
    return _Contract(
        name,
        version,
        endpoint,
        stream_endpoint,
        headers,
        stream_format,
        auth_header,
        auth_prefix,
        has_stream,
        has_error,
        has_tools,
        accepts_images,
    )


class LuaAdapter:
    """One loaded adapter in its own sandbox."""

    def __init__(
        self,
        sandbox: LuaSandbox,
        table: Any,
        contract: _Contract,
        path: Path,
        keep_tool_sets: int = KEPT_TOOL_SETS,
    ) -> None:
        """`keep_tool_sets`: how many tool sets' body fields (`transform_tools`) are kept;
        0: none, and each request's tools go to `transform_request` with the rest."""
        self.sandbox = sandbox
        self.path = path
        self._table = table
        self._contract = contract
        self._request_fn = table["transform_request"]
        self._response_fn = table["transform_response"]
        self._chunk_fn = table["transform_stream_chunk"] if contract.has_stream else None
        self._error_fn = table["transform_error"] if contract.has_error else None
        self._tools_fn = table["transform_tools"] if contract.has_tools else None
        self.name = contract.name
        self.version = contract.version
        self.endpoint = contract.endpoint
        self.stream_endpoint = contract.stream_endpoint
        self.headers = dict(contract.headers)
        self.stream_format = contract.stream_format
        self.auth_header = contract.auth_header
        self.auth_prefix = contract.auth_prefix
        #: Whether the model behind this format reads images (the adapter's declaration).
        self.accepts_images = contract.accepts_images
        self._keep_tool_sets = keep_tool_sets
        # marshal's bytes of a tool set -> its body fields; marshal, not JSON text, as the
        # key: equal bytes are equal data, and it is ten times cheaper to make than the text.
        self._tool_fields: OrderedDict[bytes, _ToolFields] = OrderedDict()
        #: Tool sets given to `transform_tools` (a set seen again is not given again).
        self.tool_sets_transformed = 0

    @classmethod
    def load(
        cls, path: Path, *, keep_tool_sets: int = KEPT_TOOL_SETS, **sandbox_options: Any
    ) -> LuaAdapter:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AdapterError(path.stem, f"cannot read {path}: {exc}") from exc
        sandbox = LuaSandbox(path.stem, **sandbox_options)
        try:
            table = sandbox.load(source, path.name)
        except LuaSandboxError as exc:
            raise AdapterError(path.stem, f"{exc} ({path})") from exc
        contract = _check_contract(table, sandbox, str(path))
        if contract.name != path.stem:
            log.warning(
                "adapter file %s declares name %r; it is used as %r", path, contract.name, path.stem
            )
        return cls(sandbox, table, contract, path, keep_tool_sets)

    @classmethod
    def from_source(
        cls, source: str, filename: str = "inline.lua", *, keep_tool_sets: int = KEPT_TOOL_SETS
    ) -> LuaAdapter:
        """Load an adapter from text (tests, notebooks)."""
        sandbox = LuaSandbox(Path(filename).stem)
        try:
            table = sandbox.load(source, filename)
        except LuaSandboxError as exc:
            raise AdapterError(Path(filename).stem, str(exc)) from exc
        contract = _check_contract(table, sandbox, filename)
        return cls(sandbox, table, contract, Path(filename), keep_tool_sets)

    @property
    def streams(self) -> bool:
        return self._chunk_fn is not None

    def url(self, base_url: str, model: str, stream: bool) -> str:
        path = self.stream_endpoint if stream else self.endpoint
        return base_url.rstrip("/") + path.replace("{model}", model)

    # ---- transforms --------------------------------------------------------------------------

    async def transform_request(
        self, unified: dict[str, Any], http: HttpHandler | None = None
    ) -> str:
        stand_ins = ImageStandIns()
        taken = stand_ins.take(unified)
        tools = taken.get("tools")
        fields = None
        if tools and self._tools_fn is not None and self._keep_tool_sets:
            # A turn's request is mostly its tools (40-odd schemas, ~20 KB of ~23 KB), the
            # same from one request to the next: sent through the script each time, they
            # were most of its cost (decoded into Lua, rebuilt, converted back, encoded).
            fields = await self._fields_of(tools, http)
            taken = {key: value for key, value in taken.items() if key != "tools"}
        raw = json.dumps(taken, ensure_ascii=False)
        result = await self._call(self._request_fn, "transform_request", raw, http)
        if fields is None:
            if isinstance(result, str):
                return stand_ins.restore(result)
            try:
                body = json.dumps(self.sandbox.to_python(result), ensure_ascii=False)
            except ValueError as exc:
                raise AdapterOutputError(
                    self.name, "transform_request", "(result)", "a JSON-encodable table", str(exc)
                ) from None
            return stand_ins.restore(body)
        data = self._plain(result, "transform_request")
        if not isinstance(data, dict):
            raise AdapterOutputError(
                self.name, "transform_request", "(result)", "a JSON object", repr(data)[:80]
            )
        body = json.dumps(data, ensure_ascii=False)
        added = [member for key, member in fields.members if key not in data]
        if added:
            body = ("{" if body == "{}" else body[:-1] + ", ") + ", ".join(added) + "}"
        return stand_ins.restore(body)

    async def _fields_of(self, tools: Any, http: HttpHandler | None) -> _ToolFields:
        """The body fields of a tool set, from `transform_tools` or kept from before."""
        try:
            key: bytes | None = marshal.dumps(tools)
        except ValueError:  # not plain data: transformed each time (json.dumps decides)
            key = None
        known = None if key is None else self._tool_fields.get(key)
        if key is not None and known is not None:
            self._tool_fields.move_to_end(key)
            return known
        raw = json.dumps(tools, ensure_ascii=False)
        data = self._plain(
            await self._call(self._tools_fn, "transform_tools", raw, http), "transform_tools"
        )
        if not isinstance(data, dict):
            raise AdapterOutputError(
                self.name, "transform_tools", "(result)", "a table of body fields", repr(data)[:80]
            )
        self.tool_sets_transformed += 1
        found = _ToolFields(tuple((name, _member(name, value)) for name, value in data.items()))
        if key is not None:
            self._tool_fields[key] = found
            while len(self._tool_fields) > self._keep_tool_sets:
                self._tool_fields.popitem(last=False)
        return found

    async def transform_response(
        self, body: str, http: HttpHandler | None = None, meta: dict[str, Any] | None = None
    ) -> Any:
        result = await self._call(
            self._response_fn, "transform_response", body, http, self.sandbox.to_lua(meta or {})
        )
        return self._plain(result, "transform_response")

    @property
    def reads_errors(self) -> bool:
        return self._error_fn is not None

    async def transform_error(
        self, body: str, meta: dict[str, Any], http: HttpHandler | None = None
    ) -> Any:
        """What the adapter reads from an error body (None when it has no transform_error):
        {kind, message, retry_after}, any of them left out."""
        if self._error_fn is None:
            return None
        result = await self._call(
            self._error_fn, "transform_error", body, http, self.sandbox.to_lua(meta)
        )
        return self._plain(result, "transform_error") if result is not None else None

    async def transform_stream_chunk(self, line: str, http: HttpHandler | None = None) -> Any:
        if self._chunk_fn is None:
            raise AdapterError(self.name, "has no transform_stream_chunk, so it cannot stream")
        result = await self._call(self._chunk_fn, "transform_stream_chunk", line, http)
        return self._plain(result, "transform_stream_chunk")

    async def _call(
        self, fn: Any, where: str, arg: str, http: HttpHandler | None, *more: Any
    ) -> Any:
        try:
            return await self.sandbox.call(fn, arg, *more, http=http)
        except LuaSandboxError as exc:
            raise AdapterError(self.name, f"{where} failed: {exc}") from exc

    def _plain(self, result: Any, where: str) -> Any:
        if isinstance(result, str):
            try:
                return json.loads(result)
            except json.JSONDecodeError:
                raise AdapterOutputError(
                    self.name, where, "(result)", "a table or JSON text", result
                ) from None
        try:
            return self.sandbox.to_python(result)
        except ValueError as exc:
            raise AdapterOutputError(
                self.name, where, "(result)", "a JSON-like table", str(exc)
            ) from None


@dataclass(frozen=True, slots=True)
class _ToolFields:
    members: tuple[tuple[str, str], ...]
    """(field name, its JSON member text: `"name": value`), in the order the script gave."""


def _member(name: str, value: Any) -> str:
    return f"{json.dumps(name, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"


class ImageStandIns:
    """Inline image data crosses the sandbox as a short stand-in, swapped back into the
    body the adapter wrote. A megabyte of base64 encoded to JSON, decoded into Lua, copied
    into a data: URL and encoded again costs 15-20 ms and several copies under the
    sandbox's memory cap; the stand-in costs one substitution. Adapters copy or
    concatenate `data`, never parse it, so they cannot tell the difference."""

    def __init__(self) -> None:
        # A fresh nonce per request: no text of the conversation can spell a stand-in.
        self._nonce = secrets.token_hex(8)
        self._data: list[str] = []

    def take(self, unified: dict[str, Any]) -> dict[str, Any]:
        """`unified` with every inline image's data replaced (the caller's dict untouched)."""
        messages = unified.get("messages")
        if not isinstance(messages, list):
            return unified
        out = [self._message(m) for m in messages]
        return {**unified, "messages": out} if self._data else unified

    def _message(self, message: Any) -> Any:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return message
        blocks = [self._block(b) for b in content]
        return {**message, "content": blocks}

    def _block(self, block: Any) -> Any:
        if not (isinstance(block, dict) and block.get("type") == "image"):
            return block
        data = block.get("data")
        if not isinstance(data, str) or not data:
            return block
        self._data.append(_json_safe(data))
        return {**block, "data": f"hologram-image-{self._nonce}-{len(self._data) - 1}"}

    def restore(self, body: str) -> str:
        if not self._data:
            return body
        # Split the small body at the stand-ins and join once: one copy of the images,
        # however many there are.
        pieces = _STAND_IN.split(body)
        for at in range(1, len(pieces), 3):
            nonce, index = pieces[at], int(pieces[at + 1])
            if nonce == self._nonce and index < len(self._data):
                pieces[at], pieces[at + 1] = self._data[index], ""
            else:  # spelled by the conversation, not ours
                pieces[at], pieces[at + 1] = f"hologram-image-{nonce}-", str(index)
        return "".join(pieces)


_STAND_IN = re.compile("hologram-image-([0-9a-f]{16})-([0-9]+)")


def _json_safe(data: str) -> str:
    """`data` as it may stand inside a JSON string: base64 as it is (the common case, and
    checked without a pass in Python), anything else escaped."""
    if data.isascii() and '"' not in data and "\\" not in data and "\n" not in data:
        return data
    return json.dumps(data, ensure_ascii=False)[1:-1]
