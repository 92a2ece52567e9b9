"""Output channels: where replies go, and the `output_send__{name}` tools they generate."""

from hologram.channels.collect import CollectingChannel, Delivery
from hologram.channels.module import ChannelsModule
from hologram.channels.output import (
    SEND_PREFIX,
    OutputChannel,
    OutputChannels,
    OutputRefused,
    type_names,
)
from hologram.channels.split import split_message

__all__ = [
    "SEND_PREFIX",
    "ChannelsModule",
    "CollectingChannel",
    "Delivery",
    "OutputChannel",
    "OutputChannels",
    "OutputRefused",
    "split_message",
    "type_names",
]
