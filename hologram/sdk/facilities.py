"""Facility names: the contract between kernel modules, and between the kernel and plugins.

A module declares the facilities it needs *ready* and the ones it produces; a plugin names the
ones it needs in ``requires_facilities``. Both spell them with these constants, so a typo is an
error where it is written instead of a plugin that silently never starts.
"""

from __future__ import annotations

from enum import StrEnum


class Facility(StrEnum):
    """Every facility the kernel can provide (spec: ``sdk.Facility*``)."""

    CONFIG = "config"
    EVENTS = "events"
    KERNEL_IO = "kernel-io"
    SECURITY = "security"
    LUA = "lua"
    LLM = "llm"
    MEMORY = "memory"
    GRAPH = "graph"
    COLD_CONTEXT = "coldcontext"
    TEXT_MEMORY = "text-memory"
    KNOWLEDGE = "knowledge"
    MULTIMODAL = "multimodal"
    MEDIA = "media"
    TRACKER = "tracker"
    STAGE_HOST = "stagehost"
    CHANNELS = "channels"
    SCHEDULER = "scheduler"
    AGENT = "agent"
    PLUGINS = "plugins"
    DEVICE = "device"


def parse_facility(name: str) -> Facility:
    """Turn a facility name from a manifest into a `Facility`, or say which names exist."""
    try:
        return Facility(name)
    except ValueError:
        known = ", ".join(sorted(f.value for f in Facility))
        raise ValueError(f"unknown facility {name!r}; facilities are: {known}") from None
