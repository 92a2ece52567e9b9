"""The tracker (spec: TrackerAPI): every file change a tool call makes in the sandbox roots,
recorded with its before and after bytes in the content-addressed store, and undoable."""

from hologram.tracker.log import Call, Change, ChangeLog, Kind
from hologram.tracker.module import TrackerModule
from hologram.tracker.tracker import Tracker
from hologram.tracker.undo import UndoError, UnknownCall, undo_call

__all__ = [
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
