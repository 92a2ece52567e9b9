"""How urgent an input is (spec 000: the input scheduler's task classes and levels)."""

from __future__ import annotations

from enum import IntEnum


class Priority(IntEnum):
    """`QUEUED` is ordinary pending work; L1-L4 are interrupt levels.

    An input that declares no level is L1: preemption rights are a privilege a source asks for
    explicitly. L4 belongs to the kernel; a plugin asking for L4 gets L3.
    """

    QUEUED = 0
    L1 = 1
    L2 = 2
    L3 = 3
    L4 = 4

    @property
    def is_interrupt(self) -> bool:
        return self is not Priority.QUEUED
