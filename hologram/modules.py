"""The one list of kernel modules (spec: kernelmod/all). Adding a module is one line here,
then `python -m hologram depgraph --write`."""

from __future__ import annotations

from hologram.agent import AgentModule, InputsModule
from hologram.channels import ChannelsModule
from hologram.events import EventsModule
from hologram.kernel import Module
from hologram.knowledge import KnowledgeModule
from hologram.llm import LLMModule
from hologram.media import MediaModule
from hologram.memory import ColdContextModule, GraphModule, MemoryModule, TextMemoryModule
from hologram.plugins import PluginsModule
from hologram.security import SecurityModule
from hologram.stages import StageHostModule
from hologram.state import KernelState
from hologram.tracker import TrackerModule


def kernel_modules() -> list[Module[KernelState]]:
    """Fresh instances of every kernel module, in no particular order: the graph orders them.

    Typed over the state they boot on: each module's init declares the fields it reads (a
    Protocol of its package), so a module that reads a field KernelState lacks, or reads it
    with another type, fails the type checker here."""
    return [
        EventsModule(),
        SecurityModule(),
        ColdContextModule(),
        MemoryModule(),
        TextMemoryModule(),
        LLMModule(),
        StageHostModule(),
        ChannelsModule(),
        AgentModule(),
        InputsModule(),
        PluginsModule(),
        GraphModule(),
        KnowledgeModule(),
        MediaModule(),
        TrackerModule(),
    ]
