"""The tracker (spec: TrackerAPI): every file change a tool call makes in the sandbox roots,
recorded with its before and after bytes in the content-addressed store, and undoable.

Names load with the submodule that defines them, on first use: the `changes` command's
`--help` loads no store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel import lazy_face

_LAZY = {
    "hologram.tracker.log": (
        "Call",
        "Change",
        "ChangeLog",
        "Kind",
        "CHANGE_LOG_MIGRATIONS",
        "CHANGE_LOG_TABLES",
    ),
    "hologram.tracker.module": ("TrackerModule",),
    "hologram.tracker.tracker": ("Tracker",),
    "hologram.tracker.undo": ("UndoError", "UnknownCall", "undo_call"),
}

__all__ = [
    "CHANGE_LOG_MIGRATIONS",
    "CHANGE_LOG_TABLES",
    "Call",
    "Change",
    "ChangeLog",
    "Kind",
    "Tracker",
    "TrackerModule",
    "UndoError",
    "UnknownCall",
    "undo_call",
]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.tracker.log import (
        CHANGE_LOG_MIGRATIONS,
        CHANGE_LOG_TABLES,
        Call,
        Change,
        ChangeLog,
        Kind,
    )
    from hologram.tracker.module import TrackerModule
    from hologram.tracker.tracker import Tracker
    from hologram.tracker.undo import UndoError, UnknownCall, undo_call
