"""`llmsource`: the agent sees its model sources and switches between them (spec 000, the
tool-definition paragraph of "Message Processing Flow": built-in tools for LLM source
switching). Built in because it drives the provider manager, which the public SDK
withholds.

`llm_sources` lists every source in the order a call tries them, with its state (ready,
backing off, blocked and why) and the one in use; `llm_switch` makes one the source tried
first (stored as `active_source`, published as `provider_switched`). Switching is
hard-private: only the owner's inputs reach it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

from hologram.sdk import Param, ToolDef, ToolError

if TYPE_CHECKING:
    from hologram.llm import ProviderManager
    from hologram.plugins.kernel_sdk import KernelSDK
    from hologram.plugins.registry import PluginRegistry


class LLMSources:
    name = "llmsource"

    def __init__(self, registry: PluginRegistry) -> None:
        self._llm: ProviderManager | None = registry.parts.llm

    def manager(self) -> ProviderManager:
        if self._llm is None:
            raise ToolError("this kernel has no model sources")
        return self._llm

    async def start(self, sdk: KernelSDK) -> None:
        async def llm_sources() -> str:
            """List the model sources in the order a call tries them, each with its state;
            `current` is the one tried first."""
            return await self.listing()

        async def llm_switch(
            source: Annotated[str, Param("a source's name, as llm_sources lists it")],
        ) -> str:
            """Make a model source the one tried first, from the next model call on."""
            return await self.switch(source)

        for tool in (llm_sources, llm_switch):
            sdk.register_tool(ToolDef.from_function(tool, owner=self.name, no_memory=True))

    async def stop(self) -> None:
        return None

    async def listing(self) -> str:
        llm = self.manager()
        await llm.refresh()
        current = next(iter(llm.ordered_sources()), None)
        return json.dumps({"current": current, "sources": llm.status()}, ensure_ascii=False)

    async def switch(self, source: str) -> str:
        llm = self.manager()
        try:
            await llm.set_active(source)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return f"model source is now {source}; order: {', '.join(llm.ordered_sources())}"
