"""`healthcheck`: the agent checks its own health (spec 000: "Which Plugins Stay Built-in").
Built in because it reads the plugin host's ledger and the model sources, which the public
SDK withholds.

`health_check` gives the report `python -m hologram doctor` prints and `GET /api/v1/health`
answers, made by the same code (`hologram.health`): with `selftest` (the default, as the
readiness answer) a virtual kernel on a temporary data dir runs one turn first, then each
model source's reachability, each plugin's state and the data dir's disk are checked. A
failing check names its cause. The tool is hard-private: only the owner's inputs reach it
(the report names hosts, plugins and errors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from hologram.health import Subject, check_subject
from hologram.sdk import Param, ToolDef

if TYPE_CHECKING:
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelSDK


class HealthCheck:
    name = "healthcheck"

    def __init__(self, host: PluginHost) -> None:
        parts = host.parts
        self._subject = Subject(
            parts.config, host.data_dir, parts.llm, host, scratch_turn=parts.scratch_turn
        )

    async def start(self, sdk: KernelSDK) -> None:
        async def health_check(
            selftest: Annotated[
                bool, Param("also run one turn on a virtual kernel first (a few seconds)")
            ] = True,
        ) -> str:
            """Check the kernel's health: a self-test turn, each model source's
            reachability, each plugin's state, the disk. Each failure names its cause."""
            report = await check_subject(self._subject, with_selftest=selftest)
            return report.render()

        sdk.register_tool(ToolDef.from_function(health_check, owner=self.name, no_memory=True))

    async def stop(self) -> None:
        return None
