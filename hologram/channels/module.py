"""The `channels` kernel module: the output channels, starting with the notebook's.

Only channels a user reads are registered here: every channel is offered to the model as an
`output_send__{name}` tool, so a channel kept for tests would be offered in production too.
Tests register the collecting channels they need themselves."""

from __future__ import annotations

from typing import Protocol

from hologram.channels.collect import CollectingChannel
from hologram.channels.output import OutputChannels
from hologram.sdk import Facility, OutputCap

NOTEBOOK_CAPS = OutputCap.TEXT | OutputCap.IMAGE | OutputCap.FILE | OutputCap.STRUCTURED


class GuardedTable(Protocol):
    """The part of the firewall the channels module reads: a table that masks secrets."""

    def output_channels(self) -> OutputChannels: ...


class ChannelsState(Protocol):
    """What the channels module reads of the kernel's state, and the field it fills."""

    @property
    def security(self) -> GuardedTable | None: ...

    channels: OutputChannels | None


class ChannelsModule:
    name = "channels"
    requires = (Facility.CONFIG,)
    # Channels hand text to plugins: with the firewall mounted, its table masks secrets.
    optional = (Facility.SECURITY,)
    provides = (Facility.CHANNELS,)

    async def init(self, state: ChannelsState) -> None:
        channels = OutputChannels() if state.security is None else state.security.output_channels()
        channels.register_output_channel(
            "notebook",
            NOTEBOOK_CAPS,
            "the Jupyter notebook the user is working in; shown below the cell",
            CollectingChannel("notebook"),
            owner="kernel",
        )
        state.channels = channels
