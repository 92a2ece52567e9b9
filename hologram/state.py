"""The kernel's one shared data structure (spec: KernelState).

One typed field per facility, written only by the module that provides it (boot enforces
this), plus what group 0 sets up before any module runs. It sits here, above the subsystems,
because its field types are theirs; `hologram.kernel` boots any such dataclass without
knowing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hologram.agent import Agent, Inputs
from hologram.channels import OutputChannels
from hologram.config import ConfigRegistry
from hologram.events import EventBus
from hologram.health import ScratchTurn
from hologram.kernel import DataDirLock, KernelLog, KernelTasks
from hologram.knowledge import KnowledgeBase
from hologram.llm import ProviderManager
from hologram.media import MediaStore
from hologram.memory import ColdContext, GraphMemory, Memory, TextLog
from hologram.plugins import PluginRegistry
from hologram.sdk import Clock
from hologram.security import Firewall
from hologram.stages import StageHost
from hologram.tracker import Tracker
from hologram.update import Report


@dataclass(slots=True)
class KernelState:
    data_dir: Path
    clock: Clock
    lock: DataDirLock
    log: KernelLog
    tasks: KernelTasks
    config_snapshot: dict[str, Any] = field(default_factory=dict)
    update_report: Report | None = None
    """What the data-dir check found and did at boot (versions, migrations, backup)."""
    #: Boots a virtual kernel for one turn (the health self-test): given by the facade, so
    #: that nothing below it needs to import it.
    scratch_turn: ScratchTurn | None = None

    config: ConfigRegistry | None = None
    events: EventBus | None = None
    security: Firewall | None = None
    llm: ProviderManager | None = None
    stagehost: StageHost | None = None
    channels: OutputChannels | None = None
    agent: Agent | None = None
    scheduler: Inputs | None = None
    memory: Memory | None = None
    coldcontext: ColdContext | None = None
    text_memory: TextLog | None = None
    graph: GraphMemory | None = None
    knowledge: KnowledgeBase | None = None
    media: MediaStore | None = None
    tracker: Tracker | None = None
    plugins: PluginRegistry | None = None
