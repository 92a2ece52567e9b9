"""Tools the model can call: their definition, one call, and its result."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hologram.sdk.media import MediaData, MediaRef
from hologram.sdk.schema import FunctionSchema, function_schema

ToolHandler = Callable[[dict[str, Any]], "Awaitable[str | ToolOutput] | str | ToolOutput"]
"""Takes the validated arguments; returns the text the model sees, or a `ToolOutput` when the
result carries media."""

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""The names every provider's function-calling API accepts."""


@dataclass(slots=True)
class ToolDef:
    """A tool as registered in the tool table.

    `no_memory` keeps the tool's output out of vectorisation, keyword extraction and
    distillation (the original text is kept); `cleaner` filters the output before it reaches
    those computations. Neither changes what the model sees.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    handler: ToolHandler | None = None
    no_memory: bool = False
    cleaner: Callable[[str], str] | None = None
    owner: str | None = None
    timeout: float | None = None
    optional: frozenset[str] = frozenset()
    """Parameters whose null means "not given": the runner drops a null sent for one of
    them before validating (models often send null for an argument they leave out)."""
    touches_files: bool = False
    """The tool may create, change, rename or delete files (a write, a shell command, a
    terminal): the kernel's tracker records what each call changed in the sandbox roots,
    so the call can be undone (`changes_undo`)."""

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        no_memory: bool = False,
        cleaner: Callable[[str], str] | None = None,
        owner: str | None = None,
        timeout: float | None = None,
        refusals: tuple[type[Exception], ...] = (),
        choices: Mapping[str, Sequence[Any]] | None = None,
        touches_files: bool = False,
    ) -> ToolDef:
        """A tool from a typed function: its name (unless given), its description (the
        docstring before any `Args:` section) and its parameters schema (the signature,
        with `Annotated[..., Param(...)]` bounds and the docstring's `Args:` texts).

        The function is called with keyword arguments already validated against that
        schema and converted to their annotated types (enums, dataclasses, tuples), so it
        never sees a bad argument. A failure it finds itself (an entity that does not
        exist) it raises as `ToolError`, which the model reads and may correct; so are the
        exception types in `refusals` (a store's own "no such entry" errors). `choices`
        gives parameters values known only when the tool is built (the live channel types,
        the skills there are) as the enum of their schema.
        """
        derived = function_schema(fn)
        parameters = derived.parameters
        for param, values in (choices or {}).items():
            if param not in parameters["properties"]:
                raise ValueError(f"choices for {param!r}, which {fn.__name__} does not take")
            parameters["properties"][param]["enum"] = list(values)
        text = description if description is not None else derived.description
        if not text:
            raise ValueError(
                f"tool {name or fn.__name__!r} has no description: give the function a "
                "docstring (what the tool does, when to use it) or pass description="
            )
        return cls(
            name=name or fn.__name__,
            description=text,
            parameters=parameters,
            handler=_calling(fn, derived, (ToolError, *refusals)),
            no_memory=no_memory,
            cleaner=cleaner,
            owner=owner,
            timeout=timeout,
            optional=derived.optional,
            touches_files=touches_files,
        )

    def __post_init__(self) -> None:
        if not TOOL_NAME.match(self.name):
            raise ValueError(
                f"tool name {self.name!r} is not allowed: use 1-64 letters, digits, '_' or '-'"
            )
        if not isinstance(self.parameters, dict) or self.parameters.get("type") != "object":
            raise ValueError(
                f"tool {self.name!r}: parameters must be a JSON schema of type 'object'"
            )


def _calling(
    fn: Callable[..., Any], derived: FunctionSchema, refusals: tuple[type[Exception], ...]
) -> ToolHandler:
    """The handler that turns validated JSON arguments into a call of `fn`. It stays a plain
    function for a plain `fn`, so the runner still moves a blocking one off the loop."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def call_async(args: dict[str, Any]) -> Any:
            try:
                return await fn(**derived.arguments(args))
            except refusals as exc:
                raise _readable(exc) from None

        return call_async

    @functools.wraps(fn)
    def call(args: dict[str, Any]) -> Any:
        try:
            return fn(**derived.arguments(args))
        except refusals as exc:
            raise _readable(exc) from None

    return call


def _readable(exc: Exception) -> ToolError:
    return exc if isinstance(exc, ToolError) else ToolError(str(exc))


class ToolError(Exception):
    """Raised by a tool handler for a failure the model should read and may correct
    (a refused type, a missing file). Its message goes to the model as it is, without the
    traceback logging an unexpected exception gets."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool handler returns when its result carries media (spec: SetToolBlocks):
    `text` for the model to read, and `media` to be shown to it with that text. Each item
    is raw bytes or `MediaData` (the kernel stores them, type sniffed, within the media
    limits) or a `MediaRef` of media already stored."""

    text: str = ""
    media: tuple[bytes | MediaData | MediaRef, ...] = ()


@dataclass(slots=True)
class ToolCall:
    """One call the model asked for. `arguments` is the decoded JSON object.

    `arguments_error` is set when the model's arguments were not a JSON object; the call is
    then answered with that error instead of being executed."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None


@dataclass(slots=True)
class ToolResult:
    """What a tool call produced, as it goes back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    denied: bool = False
    memory_text: str | None = None
    """What memory may index of `content`: None for a `no_memory` tool, the `cleaner`'s
    output where the tool has one. The model always sees `content` unchanged."""
    media: tuple[MediaRef, ...] = ()
    """Media the tool returned with its result (spec: SetToolBlocks), already in the media
    store; the model sees it with this result."""
