"""Every store of a data dir, its place on disk, and its ordered list of schema steps.

A store's version is the number of steps it has taken: a data dir written before versions
were recorded is at version 0 for the stores that did not record one (its files are as that
release left them), and step 1 of such a store is the one that starts recording. SQLite
stores keep their steps beside their code, because they run them at open as well; the update
module runs the same lists first, with a backup, before any store opens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from hologram.agent import JOURNAL_MIGRATIONS
from hologram.config import CONFIG_MIGRATIONS
from hologram.memory import (
    GRAPH_MIGRATIONS,
    TURN_STORE_MIGRATIONS,
    TURN_STORE_TABLES,
    cold_into_turns,
    window_into_turns,
)
from hologram.tracker import CHANGE_LOG_MIGRATIONS, CHANGE_LOG_TABLES

FileStep = Callable[[Path], int]
"""A step of a store made of files: given the store's directory, rewrites what it must and
returns how many files it took out of it into another store (the update checks that every
other file is still there). It may run twice (a crash before its version was recorded), so
it must be idempotent."""


class Kind(StrEnum):
    SQLITE = "sqlite"
    FILES = "files"


@dataclass(frozen=True)
class Store:
    name: str
    path: str
    """Relative to the data dir: the database file, or the store's directory."""
    kind: Kind
    steps: Sequence[str] | Sequence[FileStep]
    tables: tuple[str, ...] = ()
    """Tables every version of the database has had (checked at open)."""
    growing: tuple[str, ...] = ()
    """Tables whose row count never goes down: a count below the last one seen is loss."""
    vital: tuple[str, ...] = ()
    """Files (relative to the data dir) that, once they hold data, are never emptied nor
    removed by the store itself: finding one missing or empty is damage."""

    @property
    def version(self) -> int:
        return len(self.steps)


def record_versions(directory: Path) -> int:
    """Step 1 of a store made of files: its files stay as they are; from now on the
    manifest records the store's version."""
    return 0


STORES: tuple[Store, ...] = (
    Store(
        "config",
        "config.db",
        Kind.SQLITE,
        CONFIG_MIGRATIONS,
        tables=("config",),
        vital=("secret.key",),  # without it the stored credentials cannot be read
    ),
    Store(
        "input-journal",
        "inputs.db",
        Kind.SQLITE,
        JOURNAL_MIGRATIONS,
        tables=("inputs",),
        growing=("inputs",),
    ),
    # The window and the cold context were files until their turns moved into the turn store
    # (step 2 of each); the entries stay so that a data dir of that layout is moved.
    Store("context-window", "memory/context", Kind.FILES, (record_versions, window_into_turns)),
    Store("cold-context", "memory/coldcontext", Kind.FILES, (record_versions, cold_into_turns)),
    Store(
        "turns",
        "memory/turns.db",
        Kind.SQLITE,
        TURN_STORE_MIGRATIONS,
        tables=TURN_STORE_TABLES,
        growing=("moves",),  # a turn's history is never rewritten: fewer moves is loss
    ),
    Store("text-log", "memory/text", Kind.FILES, (record_versions,)),
    Store(
        "graph",
        "graph.db",
        Kind.SQLITE,
        GRAPH_MIGRATIONS,
        tables=("entities", "aliases", "relations", "memory_blocks", "relation_blocks"),
    ),
    Store("knowledge", "knowledge", Kind.FILES, (record_versions,)),
    Store("media", "media", Kind.FILES, (record_versions,)),
    Store("plugin-data", "plugin-data", Kind.FILES, (record_versions,)),
    Store(
        "tracker",
        "tracker.db",
        Kind.SQLITE,
        CHANGE_LOG_MIGRATIONS,
        tables=CHANGE_LOG_TABLES,
        growing=CHANGE_LOG_TABLES,
    ),
)
"""In the order they migrate."""
