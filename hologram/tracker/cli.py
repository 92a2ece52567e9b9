"""`python -m hologram changes list|show|undo`: the change log of a data dir.

`list` and `show` read the log beside a running kernel (SQLite WAL readers do not block it).
`undo` changes files, so it runs only while no kernel holds the data dir: a running kernel's
shadow of the sandbox must see every write, so there the undo goes through the kernel
(`POST /api/v1/changes/{id}/undo`, the `changes_undo` tool, `%hologram changes`); the next
kernel builds its shadow from disk, so an offline undo is seen."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hologram.kernel import Commands, add_actions, data_option, json_option

if TYPE_CHECKING:
    from hologram.tracker.log import Call, ChangeLog


def add_commands(commands: Commands) -> None:
    changes = commands.add(
        "changes",
        run_changes,
        description="List the tool calls that changed files in the sandbox, show one with "
        "its diffs, or undo one (only while no kernel runs on the data dir).",
    )
    actions = add_actions(changes, "changes_command")
    listing = actions.add_parser("list", help="the latest calls that changed files")
    listing.add_argument("--limit", type=int, default=50)
    json_option(listing)
    show = actions.add_parser("show", help="one call's changes with their diffs")
    show.add_argument("call_id", metavar="CALL_ID")
    json_option(show)
    undo = actions.add_parser("undo", help="undo one call's changes")
    undo.add_argument("call_id", metavar="CALL_ID")
    for parser in (changes, listing, show, undo):
        data_option(parser)


def run_changes(args: argparse.Namespace) -> int:
    from hologram.kernel import resolve_data_dir
    from hologram.tracker.log import ChangeLog

    data_dir = resolve_data_dir(args.data)
    if not (data_dir / "tracker.db").exists():
        print(f"hologram: no tool call has changed files in {data_dir} yet", file=sys.stderr)
        return 0 if args.changes_command == "list" else 2
    changelog = ChangeLog(data_dir / "tracker.db")
    try:
        if args.changes_command == "list":
            calls = changelog.calls(args.limit)
            if args.json:
                print(json.dumps([c.as_dict() for c in calls], indent=2))
            for call in [] if args.json else calls:
                print(summary(call))
            return 0
        if args.changes_command == "show":
            found = changelog.call(args.call_id)
            if found is None:
                print(f"hologram: no recorded tool call has id {args.call_id!r}", file=sys.stderr)
                return 2
            print(json.dumps(found.as_dict(), indent=2) if args.json else details(found))
            return 0
        return _undo(data_dir, changelog, args.call_id)
    finally:
        changelog.close()


def _undo(data_dir: Path, changelog: ChangeLog, call_id: str) -> int:
    from hologram.kernel import DataDirLock, DataDirLockedError
    from hologram.media import BlobStore
    from hologram.tracker.undo import UndoError, UnknownCall, undo_call

    lock = DataDirLock(data_dir)
    try:
        lock.acquire()
    except DataDirLockedError:
        print(
            f"hologram: a kernel is running on {data_dir}; undo through it "
            f"(POST /api/v1/changes/{call_id}/undo, or %hologram changes)",
            file=sys.stderr,
        )
        return 2
    try:
        changes = undo_call(changelog, BlobStore(data_dir / "media"), call_id)
    except (UnknownCall, UndoError) as exc:
        print(f"hologram: {exc}", file=sys.stderr)
        return 2
    finally:
        lock.release()
    for change in changes:
        print(f"undid {change.kind} {change.path}")
    return 0


def summary(call: Call) -> str:
    when = datetime.datetime.fromtimestamp(call.at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
    undone = " (undone)" if call.undone_at is not None else ""
    return f"{call.call_id}  {when}  {call.tool}  {len(call.changes)} change(s){undone}"


def details(call: Call) -> str:
    lines = [summary(call), f"found by: {call.mechanism}"]
    for change in call.changes:
        moved = f" (from {change.old_path})" if change.old_path else ""
        lines.append(f"  {change.kind} {change.path}{moved}")
        if change.diff:
            lines.append(change.diff.rstrip("\n"))
    return "\n".join(lines)
