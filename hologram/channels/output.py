"""Output channels (spec 000: Output Channel System).

Each channel generates two tools for the model: `output_send__{name}` (payload, meta, type —
the type enum holds only what the channel's caps allow) and `output_send__{name}_help`.
A send the channel cannot carry is refused with an error the model can read; text longer
than the channel takes is split into parts sent in order.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Annotated, Any

from hologram.channels.split import split_message
from hologram.sdk import OutputCap, OutputHandler, Param, ToolDef, ToolError
from hologram.stages import invoke

log = logging.getLogger(__name__)

SEND_PREFIX = "output_send__"
CHANNEL_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
DEFAULT_MAX_CHARS = 4000


class OutputRefused(ToolError):
    """A send the channel cannot take: unknown channel, type it cannot carry, bad meta."""


def type_names(caps: OutputCap) -> list[str]:
    """The `type` values a channel with `caps` accepts, in flag order."""
    return [cap.name.lower() for cap in OutputCap if cap in caps and cap.name]


@dataclass(frozen=True, slots=True)
class OutputChannel:
    name: str
    caps: OutputCap
    description: str
    handler: OutputHandler
    owner: str | None = None
    max_chars: int = DEFAULT_MAX_CHARS
    meta_doc: str = ""

    @property
    def types(self) -> list[str]:
        return type_names(self.caps)

    @property
    def send_tool(self) -> str:
        return f"{SEND_PREFIX}{self.name}"


class OutputChannels:
    """The live output channels of one kernel, and the tools they generate."""

    def __init__(self) -> None:
        self._channels: dict[str, OutputChannel] = {}
        self._tools: list[ToolDef] | None = None

    def register_output_channel(
        self,
        name: str,
        caps: OutputCap,
        description: str,
        handler: OutputHandler,
        *,
        owner: str | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        meta_doc: str = "",
    ) -> OutputChannel:
        if not CHANNEL_NAME.match(name):
            raise ValueError(
                f"output channel name {name!r} is not allowed: use 1-40 lower-case letters, "
                "digits, '_' or '-', starting with a letter"
            )
        if name in self._channels:
            current = self._channels[name].owner
            raise ValueError(f"output channel {name!r} is already registered by {current!r}")
        if not OutputCap(caps):
            raise ValueError(f"output channel {name!r} must carry at least one type")
        channel = OutputChannel(
            name, OutputCap(caps), description, handler, owner, max_chars, meta_doc
        )
        self._channels[name] = channel
        self._tools = None
        return channel

    def unregister(self, name: str) -> bool:
        self._tools = None
        return self._channels.pop(name, None) is not None

    def unregister_plugin_channels(self, plugin: str) -> list[str]:
        names = [c.name for c in self._channels.values() if c.owner == plugin]
        for name in names:
            self.unregister(name)
        return names

    def get(self, name: str) -> OutputChannel | None:
        return self._channels.get(name)

    def channels(self) -> list[OutputChannel]:
        return list(self._channels.values())

    def __contains__(self, name: object) -> bool:
        return name in self._channels

    # ---- sending ---------------------------------------------------------------------------

    async def send(
        self, name: str, payload: str, meta: dict[str, Any] | str | None = None, type: str = "text"
    ) -> str:
        """Deliver `payload` on channel `name`; returns the channel's receipt."""
        channel = self._channels.get(name)
        if channel is None:
            live = ", ".join(sorted(self._channels)) or "none"
            raise OutputRefused(f"no output channel {name!r}; live channels: {live}")
        if type not in channel.types:
            raise OutputRefused(
                f"channel {name!r} cannot carry {type!r}; it carries: {', '.join(channel.types)}"
            )
        routing = _decode_meta(name, meta)
        parts = split_message(payload, channel.max_chars) if type == "text" else [payload]
        receipts = []
        for part in parts:
            receipt = await invoke(channel.handler, part, dict(routing), type)
            receipts.append("" if receipt is None else str(receipt))
        if len(parts) == 1:
            return receipts[0] or f"sent to {name}"
        return f"sent to {name} in {len(parts)} parts" + (
            f": {'; '.join(r for r in receipts if r)}" if any(receipts) else ""
        )

    # ---- the generated tools ---------------------------------------------------------------

    def tools(self) -> list[ToolDef]:
        """Two tools per live channel, rebuilt only when the channel set changes (so their
        schema objects stay the same and their validators are reused)."""
        if self._tools is None:
            self._tools = [t for c in self._channels.values() for t in self._channel_tools(c)]
        return list(self._tools)

    def _channel_tools(self, channel: OutputChannel) -> tuple[ToolDef, ToolDef]:
        async def send(
            payload: Annotated[
                str, Param("the content: text, or a path or URL for file, image, audio")
            ],
            meta: Annotated[
                dict[str, Any] | str | None,
                Param("routing metadata as a JSON object (see the _help tool)"),
            ] = None,
            type: str = "text",
        ) -> str:
            return await self.send(channel.name, payload, meta, type)

        def help() -> str:
            return self.help_text(channel)

        description = (
            f"Send a message on the {channel.name!r} channel ({channel.description}). "
            f"Types: {', '.join(channel.types)}. Text longer than {channel.max_chars} "
            f"characters is split into parts automatically. "
            f"{channel.send_tool}_help explains the meta fields."
        )
        return (
            ToolDef.from_function(
                send,
                name=channel.send_tool,
                description=description,
                owner=channel.owner,
                choices={"type": channel.types},
            ),
            ToolDef.from_function(
                help,
                name=f"{channel.send_tool}_help",
                description=f"How to address the {channel.name!r} channel: its meta fields "
                "and types.",
                owner=channel.owner,
                no_memory=True,
            ),
        )

    def help_text(self, channel: OutputChannel) -> str:
        meta = channel.meta_doc or "a JSON object; this channel reads no routing keys ({})"
        return (
            f"channel {channel.name}: {channel.description}\n"
            f"types: {', '.join(channel.types)} (default text)\n"
            f"meta: {meta}\n"
            f"text longer than {channel.max_chars} characters is sent as several parts, "
            "in order"
        )


def _decode_meta(channel: str, meta: dict[str, Any] | str | None) -> dict[str, Any]:
    if meta is None or meta == "":
        return {}
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError as exc:
            raise OutputRefused(
                f"meta for channel {channel!r} is not valid JSON ({exc.msg}); pass an object"
            ) from None
    if not isinstance(meta, dict):
        raise OutputRefused(f"meta for channel {channel!r} must be a JSON object")
    return meta
