"""`recoverydiag`: the kernel's answer when no model can give one (spec 000: the failback
chain, `core.agent.failback_plugins`). Built in because it answers for the agent, which the
public SDK withholds.

When every LLM source fails, the turn does not end in an error the user never sees: this
plugin writes the reply itself, without a model — which source failed how, which plugin
crashed or failed and its last error, and what to do. The reply goes out on the input's
channel like any other (the page, `python -m hologram chat`), and the fallback is announced
(a log line and a `system` event, `answered_without_model`). `recovery_diagnose` gives the
same diagnosis as a tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.sdk import ToolDef

if TYPE_CHECKING:
    from hologram.agent import Agent
    from hologram.llm import ProviderManager
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelSDK


class RecoveryDiag:
    name = "recoverydiag"

    def __init__(self, host: PluginHost) -> None:
        self._host = host
        self._llm: ProviderManager | None = host.parts.llm
        self._agent: Agent | None = host.parts.agent

    async def start(self, sdk: KernelSDK) -> None:
        if self._agent is not None:
            self._agent.mount_without_model(self.answer)

        def recovery_diagnose() -> str:
            """Diagnose the kernel without a model: each LLM source's state and each plugin
            that crashed or failed, with its last error."""
            return self.diagnosis()

        sdk.register_tool(ToolDef.from_function(recovery_diagnose, owner=self.name))

    async def stop(self) -> None:
        if self._agent is not None:
            self._agent.unmount_without_model(self.answer)

    async def answer(self, text: str, failure: Exception) -> str:
        return (
            "[recoverydiag] No model could answer, so this reply is the kernel's own "
            f"diagnosis.\n{self.diagnosis()}\nLast failure: {failure}\n"
            "Fix or switch the model source (python -m hologram config set, or the page's "
            "settings), then ask again."
        )

    def diagnosis(self) -> str:
        lines = ["Model sources:"]
        sources = [] if self._llm is None else self._llm.status()
        lines += [f"- {s['source']}: {s['state']} (failures {s['failures']})" for s in sources]
        if not sources:
            lines.append("- none configured")
        broken = [r for r in self._host.status() if r["state"] in ("crashed", "failed")]
        lines.append("Plugins:")
        lines += [
            f"- {r['name']}: {r['state']}, restarts {r['restarts']}, last error: {r['error']}"
            for r in broken
        ]
        if not broken:
            lines.append("- every plugin that should run does")
        return "\n".join(lines)
