"""The tracker over HTTP: the tool calls that changed files, and the undo of one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response

from hologram.sdk import Param
from hologram.serve.bodies import ApiError
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params
from hologram.tracker import Call, Change, Tracker, UndoError, UnknownCall


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file a call changed."""

    id: int
    path: Annotated[str, Param("where the file is after the call (a delete: where it was)")]
    kind: Annotated[str, Param("create, modify, delete or rename")]
    old_path: Annotated[str | None, Param("a rename: where the file was")]
    before_digest: Annotated[str | None, Param("sha256 of the bytes before; null: none")]
    after_digest: Annotated[str | None, Param("sha256 of the bytes after; null: none")]
    before_mode: int | None
    after_mode: int | None
    diff: Annotated[str, Param("a unified diff, for text files; else empty")]


@dataclass(frozen=True, slots=True)
class ToolCallChanges:
    """One tool call and the files it changed."""

    call_id: str
    tool: str
    at: Annotated[float, Param("when the call started, in seconds since the epoch")]
    mechanism: Annotated[str, Param("how the changes were found: watcher or declared-paths")]
    undone_at: float | None
    changes: list[FileChange]


@dataclass(frozen=True, slots=True)
class ChangeList:
    """The latest tool calls that changed files, newest first."""

    calls: list[ToolCallChanges]


@dataclass(frozen=True, slots=True)
class ChangesQuery:
    limit: Annotated[int, Param("how many calls, newest first", ge=1, le=500)] = 50


@dataclass(frozen=True, slots=True)
class CallPath:
    id: Annotated[str, Param("the tool call's id")]


def tracker(request: Request) -> Tracker:
    found = context(request).kernel.state.tracker
    if found is None:
        raise ApiError(404, "this kernel has no tracker")
    return found


def _change(c: Change) -> FileChange:
    return FileChange(
        *(c.id, c.path, str(c.kind), c.old_path, c.before_digest, c.after_digest),
        *(c.before_mode, c.after_mode, c.diff),
    )


def row(call: Call) -> ToolCallChanges:
    changes = [_change(c) for c in call.changes]
    return ToolCallChanges(
        call.call_id, call.tool, call.at, call.mechanism, call.undone_at, changes
    )


@endpoint("GET", "/changes", tag="changes", result=ChangeList, query=ChangesQuery, errors=(404,))
async def list_changes(request: Request) -> Response:
    """The latest tool calls that changed files in the sandbox, each with its changes."""
    limit = read_params(ChangesQuery, request.query_params, "query parameter").limit
    return reply(ChangeList([row(c) for c in tracker(request).log.calls(limit)]))


@endpoint(
    "POST",
    "/changes/{id}/undo",
    tag="changes",
    result=ToolCallChanges,
    path_params=CallPath,
    errors=(404, 409),
)
async def undo_changes(request: Request) -> Response:
    """Undo one call's file changes; refused (409, nothing changed) when a file was changed
    again since, naming that change."""
    call_id = read_params(CallPath, request.path_params, "path parameter").id
    found = tracker(request)
    try:
        await found.undo(call_id)
    except UnknownCall as exc:
        raise ApiError(404, str(exc)) from None
    except UndoError as exc:
        raise ApiError(409, str(exc)) from None
    undone = found.log.call(call_id)
    assert undone is not None
    return reply(row(undone))
