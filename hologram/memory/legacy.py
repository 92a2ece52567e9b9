"""The layouts memory had before the turn store, read once to move their turns into it.

Up to this release the context window was a JSON-lines snapshot with a write-ahead log
(`memory/context/context.{snapshot,wal}.jsonl`) and the cold context one JSON file per
document (`memory/coldcontext/docs/<id>.json`). The update module runs these steps with a
backup taken first; each is idempotent (a turn already moved is rewritten where it is), and
returns how many files it took out of its directory, so the update can check that every
file was either moved or left in place. A file with a line that cannot be read is not
deleted: it is renamed `<name>.corrupt` beside where it was, and the lines around the bad one
are moved.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from hologram.memory.cold.store import ColdDoc, turn_of_doc
from hologram.memory.turns import Place, Turn, TurnStore
from hologram.memory.window.event import ContextEvent, turn_of_event

log = logging.getLogger(__name__)

TURNS_DB = "turns.db"
"""Beside the old directories, in `memory/`."""


def _json_lines(path: Path) -> tuple[list[Any], bool]:
    """The readable lines of a JSON-lines file, and whether every line was readable."""
    values, clean = [], True
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                values.append(json.loads(raw))
            except (json.JSONDecodeError, UnicodeDecodeError):
                clean = False
    return values, clean


def _let_go(path: Path, clean: bool) -> int:
    """Remove a file whose contents were moved, or keep one that was damaged aside."""
    if clean:
        path.unlink()
        return 1
    aside = path.with_name(path.name + ".corrupt")
    os.replace(path, aside)
    log.warning(
        "%s had unreadable lines: the readable ones moved, the file kept as %s", path, aside
    )
    return 0


def window_into_turns(directory: Path) -> int:
    """`memory/context`: the snapshot, then the log's appends and removes over it."""
    snapshot, log_path = directory / "context.snapshot.jsonl", directory / "context.wal.jsonl"
    events: dict[str, ContextEvent] = {}
    outcome: list[tuple[Path, bool]] = []
    if snapshot.exists():
        lines, clean = _json_lines(snapshot)
        if lines and isinstance(lines[0], dict) and "format" in lines[0] and "id" not in lines[0]:
            lines = lines[1:]
        for record in lines:
            try:
                event = ContextEvent.from_json(record)
            except ValueError:
                clean = False
                continue
            events[event.id] = event
        outcome.append((snapshot, clean))
    if log_path.exists():
        ops, clean = _json_lines(log_path)
        for op in ops:
            try:
                if op["op"] == "append":
                    event = ContextEvent.from_json(op["event"])
                    events.setdefault(event.id, event)
                elif op["op"] == "remove":
                    for gone in op["ids"]:
                        events.pop(gone, None)
                else:
                    clean = False
            except (ValueError, KeyError, TypeError):
                clean = False
        outcome.append((log_path, clean))
    turns = []
    for event in events.values():
        turn = turn_of_event(event, Place.CONTEXT)
        turn.stored_at = turn.entered_at = event.timestamp
        turns.append(turn)
    _put(directory.parent / TURNS_DB, turns, "moved from the context window's journal")
    return sum(_let_go(path, clean) for path, clean in outcome)


def cold_into_turns(directory: Path) -> int:
    """`memory/coldcontext/docs`: one document a file."""
    docs_dir = directory / "docs"
    turns: list[Turn] = []
    outcome: list[tuple[Path, bool]] = []
    for path in sorted(docs_dir.glob("*.json")) if docs_dir.is_dir() else []:
        try:
            doc = ColdDoc.from_json(json.loads(path.read_bytes()))
        except (ValueError, UnicodeDecodeError):
            outcome.append((path, False))
            continue
        turn = turn_of_doc(doc)
        if not doc.tokens:
            turn.words = None  # cut when the cold context loads it
        turns.append(turn)
        outcome.append((path, True))
    _put(directory.parent / TURNS_DB, turns, "moved from the cold context's files")
    return sum(_let_go(path, clean) for path, clean in outcome)


def _put(path: Path, turns: list[Turn], why: str) -> None:
    store = TurnStore(path)
    try:
        store.put(turns, why, time.time())
        stored = store.get_many([t.id for t in turns])
        if len(stored) != len(turns):
            raise RuntimeError(f"{len(turns)} turns to move, {len(stored)} in {path.name}")
    finally:
        store.close()
