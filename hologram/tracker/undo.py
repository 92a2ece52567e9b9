"""Undoing one call's changes: only when every file is still as the call left it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hologram.media import BlobStore, MediaError, digest_of
from hologram.tracker.log import Change, ChangeLog, Kind


class UndoError(ValueError):
    """The undo was refused; nothing was changed. The message says why."""


class UnknownCall(UndoError):
    """No recorded call has that id."""


def _now_state(path: str) -> tuple[str, int] | None:
    try:
        data = Path(path).read_bytes()
        mode = os.stat(path).st_mode & 0o7777
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return digest_of(data), mode


def _check(log: ChangeLog, blobs: BlobStore, change: Change) -> None:
    expected = None if change.kind is Kind.DELETE else (change.after_digest, change.after_mode)
    actual = _now_state(change.path)
    if actual != expected or (change.old_path and _now_state(change.old_path) is not None):
        later = log.later(change)
        if later is not None:
            raise UndoError(
                f"refused: {change.path} was changed again by call {later.call_id} "
                f"(change {later.id}, {later.kind}); undo that call first"
            )
        raise UndoError(
            f"refused: {change.path} was changed since call {change.call_id} outside any "
            "tracked tool call; nothing was overwritten"
        )
    keeps = change.kind in (Kind.MODIFY, Kind.DELETE)
    if keeps and (change.before_digest is None or not blobs.has(change.before_digest)):
        raise UndoError(f"refused: the earlier bytes of {change.path} were not kept")


def undo_call(log: ChangeLog, blobs: BlobStore, call_id: str) -> list[Change]:
    """Restore what call `call_id` changed (bytes, modes, deleted files, renames), newest
    change first; returns the changes undone. Refused whole, before anything is touched,
    when a file was changed again since or the call was undone already."""
    call = log.call(call_id)
    if call is None:
        raise UnknownCall(f"no recorded tool call has id {call_id!r}")
    if call.undone_at is not None:
        raise UndoError(f"refused: call {call_id} was undone already")
    for change in call.changes:
        _check(log, blobs, change)
    try:
        earlier = {
            c.before_digest: blobs.get(c.before_digest)
            for c in call.changes
            if c.kind in (Kind.MODIFY, Kind.DELETE) and c.before_digest
        }
    except MediaError as exc:
        raise UndoError(f"refused: the earlier bytes cannot be read ({exc})") from None
    for change in reversed(call.changes):
        _apply(earlier, change)
    log.mark_undone(call_id, time.time())
    return list(call.changes)


def _apply(earlier: dict[str, bytes], change: Change) -> None:
    path = Path(change.path)
    if change.kind is Kind.CREATE:
        path.unlink()
        return
    if change.kind is Kind.RENAME:
        assert change.old_path is not None
        Path(change.old_path).parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, change.old_path)
        if change.before_mode is not None:
            os.chmod(change.old_path, change.before_mode)
        return
    assert change.before_digest is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.undo")
    temporary.write_bytes(earlier[change.before_digest])
    if change.before_mode is not None:
        os.chmod(temporary, change.before_mode)
    os.replace(temporary, path)
