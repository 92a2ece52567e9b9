"""What an output channel can carry (spec 000: output capability flags)."""

from __future__ import annotations

from enum import IntFlag


class OutputCap(IntFlag):
    TEXT = 1
    FILE = 2
    IMAGE = 4
    AUDIO = 8
    STRUCTURED = 16
