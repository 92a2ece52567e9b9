"""`llmsource`: the agent sees its model sources and switches between them (spec 000, the
tool-definition paragraph of "Message Processing Flow": built-in tools for LLM source
switching). Built in because it drives the provider manager, which the public SDK
withholds.

`llm_sources` lists every source in the order a call tries them, with its state (ready,
backing off, blocked and why) and the one in use; `llm_switch` makes one the source tried
first (stored as `active_source`, published as `provider_switched`). Both go
through the plugin LLM surface (`hologram.plugins.llm_surface`), as the service's /llm
endpoints (the page's source control) and external plugins do. Switching is hard-private:
only the owner's inputs reach it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

from hologram.plugins.llm_surface import LLMAPI
from hologram.sdk import Param, ToolDef, ToolError

if TYPE_CHECKING:
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelSDK


class LLMSources:
    name = "llmsource"

    def __init__(self, host: PluginHost) -> None:
        self._llm = LLMAPI(host.parts.llm)

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
        try:
            sources = await self._llm.list_sources()
        except LookupError as exc:
            raise ToolError(str(exc)) from None
        current = sources[0]["source"] if sources else None
        return json.dumps({"current": current, "sources": sources}, ensure_ascii=False)

    async def switch(self, source: str) -> str:
        try:
            await self._llm.set_source(source)
            order = [s["source"] for s in await self._llm.list_sources()]
        except (LookupError, ValueError) as exc:
            raise ToolError(str(exc)) from None
        return f"model source is now {source}; order: {', '.join(order)}"
