"""Running one tool call (spec: ExecuteTool): check, run, and always answer the model.

Whatever goes wrong becomes a tool result the model can read and act on, never an exception
that ends the turn: arguments that do not match the schema (with what was wrong and the
schema, so the next round can correct them), a tool that is not offered this turn, a handler
that times out or raises (a short error for the model, the full traceback in the log).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from jsonschema_rs import Draft202012Validator, ValidationError, ValidationErrorKind

from hologram.media import MediaStore, Upload
from hologram.sdk import (
    NOT_BLANK,
    MediaData,
    MediaRef,
    ToolCall,
    ToolDef,
    ToolError,
    ToolOutput,
    ToolResult,
)

log = logging.getLogger(__name__)

_MAX_ERRORS = 5
_MAX_ERROR_CHARS = 500


async def invoke(handler: Callable[..., Any], *args: Any) -> Any:
    """Call a plugin-supplied handler. A coroutine function runs on the loop; a plain one in
    a worker thread, so a blocking handler cannot stall every other task of the kernel."""
    if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004  (async callable objects)
    ):
        return await handler(*args)
    result = await asyncio.to_thread(handler, *args)
    if inspect.isawaitable(result):
        result = await result
    return result


def as_text(value: Any) -> str:
    """What the model reads of a handler's return value."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def memory_text(tool: ToolDef, content: str) -> str | None:
    """What memory may index of a tool's output (spec: textForVector before CleanText)."""
    if tool.no_memory:
        return None
    if tool.cleaner is None:
        return content
    try:
        return tool.cleaner(content)
    except Exception:
        # Indexing the raw text instead would put exactly what the cleaner exists to remove
        # into memory; leaving it out is the safe side, and it is announced.
        log.warning(
            "cleaner of tool %s failed; output kept out of memory", tool.name, exc_info=True
        )
        return None


class FileTracker(Protocol):
    """What records the file changes of a call (hologram.tracker). Neither method raises:
    a tracker failure is its own to announce, never the tool call's."""

    async def begin(self, call: ToolCall, tool: ToolDef, arguments: dict[str, Any]) -> int: ...

    async def end(self, token: int) -> Any: ...


class ToolRunner:
    """Executes tool calls against whatever tool set a turn offers."""

    def __init__(self, default_timeout: Callable[[], float]) -> None:
        self._default_timeout = default_timeout
        self.media: MediaStore | None = None
        """The media store a handler's `ToolOutput` media goes to (see `use_media`; without
        it a tool returning media gets an error result)."""
        self.file_tracker: FileTracker | None = None
        # name → (the parameters dict it was built from, its validator); rebuilt when a tool
        # of that name comes with a different schema object.
        self._validators: dict[str, tuple[dict[str, Any], Draft202012Validator]] = {}

    def use_media(self, store: MediaStore | None) -> None:
        # A method, not an attribute set from outside: a wrapping runner (the firewall's)
        # forwards calls to this one, not attribute writes.
        self.media = store

    def validator(self, tool: ToolDef) -> Draft202012Validator:
        cached = self._validators.get(tool.name)
        if cached is not None and cached[0] is tool.parameters:
            return cached[1]
        validator = Draft202012Validator(tool.parameters)
        self._validators[tool.name] = (tool.parameters, validator)
        return validator

    def check_arguments(self, tool: ToolDef, arguments: dict[str, Any]) -> str | None:
        """None when `arguments` fit the tool's schema; else what the model must fix."""
        errors = sorted(
            self.validator(tool).iter_errors(arguments),
            key=lambda e: list(map(str, e.instance_path)),
        )
        if not errors:
            return None
        # One line per place and problem: each missing property is its own error.
        lines = list(dict.fromkeys(f"- {_where(e.instance_path)}: {_message(e)}" for e in errors))
        lines = _merge_needs(lines)[:_MAX_ERRORS]
        schema = json.dumps(tool.parameters, ensure_ascii=False)
        return (
            f"invalid arguments for {tool.name}:\n"
            + "\n".join(lines)
            + f"\nThe parameters schema is {schema}. Call {tool.name} again with corrected "
            "arguments."
        )

    async def execute(self, call: ToolCall, tools: Mapping[str, ToolDef]) -> ToolResult:
        tool = tools.get(call.name)
        if tool is None:
            offered = ", ".join(sorted(tools)) or "none"
            return _error(call, f"tool {call.name!r} is not available; tools offered: {offered}")
        if call.arguments_error is not None:
            return _error(
                call,
                f"arguments for {call.name} are not a JSON object: "
                f"{call.arguments_error}. Call it again with a JSON object.",
            )
        arguments = {
            k: v for k, v in call.arguments.items() if v is not None or k not in tool.optional
        }
        problem = self.check_arguments(tool, arguments)
        if problem is not None:
            return _error(call, problem)
        if tool.handler is None:
            return _error(call, f"tool {call.name} has no handler")
        tracker = self.file_tracker if tool.touches_files else None
        if tracker is None:
            return await self._run(call, tool, arguments)
        token = await tracker.begin(call, tool, arguments)
        try:
            return await self._run(call, tool, arguments)
        finally:
            await tracker.end(token)

    async def _run(self, call: ToolCall, tool: ToolDef, arguments: dict[str, Any]) -> ToolResult:
        assert tool.handler is not None
        timeout = tool.timeout if tool.timeout is not None else self._default_timeout()
        try:
            async with asyncio.timeout(timeout):
                output = await invoke(tool.handler, arguments)
        except TimeoutError:
            log.warning("tool %s timed out after %s s", call.name, timeout)
            return _error(call, f"tool {call.name} timed out after {timeout:g} s")
        except ToolError as exc:
            return _error(call, str(exc))
        except Exception as exc:
            log.error("tool %s failed (call %s)", call.name, call.id, exc_info=exc)
            brief = str(exc)[:_MAX_ERROR_CHARS]
            return _error(call, f"tool {call.name} failed: {type(exc).__name__}: {brief}")
        if isinstance(output, ToolOutput):
            return await self.with_media(call, tool, output)
        content = as_text(output)
        return ToolResult(call.id, call.name, content, memory_text=memory_text(tool, content))

    async def with_media(self, call: ToolCall, tool: ToolDef, output: ToolOutput) -> ToolResult:
        """A result with media: bytes stored (all checked before any is kept), references
        checked against the store. Refused media makes the whole call an error result the
        model can read, never a crash of the turn."""
        try:
            refs = await asyncio.to_thread(self.store_media, output.media)
        except Exception as exc:
            log.warning("tool %s returned media the store refused: %s", call.name, exc)
            return _error(call, f"tool {call.name} returned media that was refused: {exc}")
        # The labels name each media by its digest, so the model (and memory, which keeps
        # the text) can ask to see it again later with seemedia.
        content = "\n".join([output.text, *(r.label() for r in refs)]).strip()
        return ToolResult(
            call.id, call.name, content, memory_text=memory_text(tool, content), media=refs
        )

    def store_media(self, items: Sequence[bytes | MediaData | MediaRef]) -> tuple[MediaRef, ...]:
        """References for `items`, every one checked before any bytes are stored, so a
        refused item leaves none of its neighbours half-stored."""
        if not items:
            return ()
        if self.media is None:
            raise ToolError("this kernel has no media store")
        for item in items:
            if not isinstance(item, bytes | bytearray | MediaData | MediaRef):
                raise ToolError(
                    f"a media item is bytes, MediaData or a MediaRef, not {type(item).__name__}"
                )
        known = {i.digest: self.media.ref(i.digest) for i in items if isinstance(i, MediaRef)}
        raw = [_upload(i) for i in items if not isinstance(i, MediaRef)]
        stored = iter(self.media.put_all(raw) if raw else [])
        return tuple(known[i.digest] if isinstance(i, MediaRef) else next(stored) for i in items)


def _upload(item: bytes | bytearray | MediaData) -> Upload:
    if isinstance(item, MediaData):
        return Upload(bytes(item.data), item.mime, item.name)
    return Upload(bytes(item))


def _where(path: Iterable[str | int]) -> str:
    """A place in the arguments as a model would write it: `triples[0].target`."""
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return text or "(the arguments object)"


def _message(error: ValidationError) -> str:
    """The validator's own words, but where a plainer sentence says the same to a model."""
    kind = error.kind
    if isinstance(kind, ValidationErrorKind.Pattern) and kind.pattern == NOT_BLANK:
        return f"{json.dumps(error.instance, ensure_ascii=False)} is blank: give a value"
    if isinstance(kind, ValidationErrorKind.Required):
        return f"needs {kind.property!r}"
    return error.message


def _merge_needs(lines: list[str]) -> list[str]:
    """`- x: needs 'a'` and `- x: needs 'b'` as `- x: needs 'a', 'b'`."""
    merged: dict[str, str] = {}
    for line in lines:
        where, _, said = line.partition(": needs ")
        if said and where in merged:
            merged[where] += ", " + said
        else:
            merged[where if said else line] = line
    return list(merged.values())


def _error(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call.id, call.name, message, is_error=True)
