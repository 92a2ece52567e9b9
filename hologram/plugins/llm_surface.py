"""The LLM surface of the plugin SDK (spec 000, "Restricted External Plugin API"): an
external plugin with the `llm` capability lists the model sources, reads the current one
and switches (ListSources / CurrentSource / SetSource); only a built-in also asks the model
directly (Chat), because a call spends the owner's tokens outside any turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hologram.llm import ChatMessage, CompletionRequest

if TYPE_CHECKING:
    from hologram.llm import ProviderManager


@dataclass(frozen=True, slots=True)
class LLMAPI:
    manager: ProviderManager | None

    def _manager(self) -> ProviderManager:
        if self.manager is None:
            raise LookupError("this kernel has no model sources (facility 'llm')")
        return self.manager

    async def list_sources(self) -> list[dict[str, Any]]:
        """Every source in the order a call tries them, with its state (the settings read
        again first, so a source just configured is listed)."""
        manager = self._manager()
        await manager.refresh()
        return manager.status()

    async def current_source(self) -> str:
        """The source tried first."""
        manager = self._manager()
        await manager.refresh()
        return next(iter(manager.ordered_sources()), "")

    async def set_source(self, name: str) -> str:
        """Make `name` the source tried first; a name that is not a source is a ValueError
        listing the sources."""
        if not isinstance(name, str) or not name:
            raise ValueError("'name' must be a source's name, as list_sources gives it")
        await self._manager().set_active(name)
        return name

    async def chat(self, prompt: str, system: str = "") -> str:
        """Ask the model once, outside any turn (built-in plugins only)."""
        messages = [*([ChatMessage.system(system)] if system else []), ChatMessage.user(prompt)]
        response = await self._manager().chat(CompletionRequest(messages=messages))
        return response.content
