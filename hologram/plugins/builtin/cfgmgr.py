"""`cfgmgr`: the agent reads and changes its own settings (spec 000: "Configuration
System"; 001: ConfigRegistry). Built in because it writes the kernel's configuration, which
the public SDK withholds (an external plugin sees only its own `plugin.<name>.*` keys).

What it may touch is a policy, `core.security.cfgmgr.allow`: key prefixes. The allow list
itself is never within reach, so the agent cannot widen its own rights. An unknown key is
refused naming the closest that exist (`ConfigRegistry.check_known`), a secret is only ever
set, never shown, and every change is a `config_changed` event (the events module publishes
one for each write). The tools are hard-private: only the owner's inputs reach them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

from hologram.config import ConfigError, SecuritySettings, is_secret, key_of
from hologram.sdk import Param, ToolDef, ToolError

if TYPE_CHECKING:
    from hologram.config import ConfigRegistry
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelSDK

ALLOW_KEY = key_of(SecuritySettings, "cfgmgr_allow")
MAX_LISTED = 200


class ConfigManager:
    name = "cfgmgr"

    def __init__(self, host: PluginHost) -> None:
        self._config: ConfigRegistry = host.parts.config

    async def start(self, sdk: KernelSDK) -> None:
        def cfgmgr_get(
            prefix: Annotated[str, Param("a key or the start of keys, e.g. an agent section")],
        ) -> str:
            """Read settings under a prefix: value, default and what each does. Secrets show
            only whether they are set."""
            return json.dumps(self.read(prefix), ensure_ascii=False)

        async def cfgmgr_set(
            key: Annotated[str, Param("the full key", min_length=3)],
            value: Annotated[str, Param("the new value as text (JSON for lists)")],
        ) -> str:
            """Change one setting; it takes effect where the kernel follows it (most at once).
            Unknown keys are refused with the closest existing ones."""
            return await self.write(key, value)

        for tool in (cfgmgr_get, cfgmgr_set):
            sdk.register_tool(ToolDef.from_function(tool, owner=self.name, no_memory=True))

    async def stop(self) -> None:
        return None

    def allowed(self, key: str) -> bool:
        if key == ALLOW_KEY:
            return False
        prefixes = self._config.read(SecuritySettings).cfgmgr_allow
        return any(key.startswith(prefix) for prefix in prefixes)

    def refusal(self, key: str) -> str:
        if key == ALLOW_KEY:
            return f"{key} says what cfgmgr may change; only the owner changes it, by hand"
        prefixes = ", ".join(self._config.read(SecuritySettings).cfgmgr_allow) or "none"
        return f"{key} is outside what cfgmgr may touch ({ALLOW_KEY}: {prefixes})"

    def read(self, prefix: str) -> list[dict[str, object]]:
        if not self.allowed(prefix) and not any(
            self.allowed(e.key) for e in self._config.entries(prefix)
        ):
            raise ToolError(self.refusal(prefix))
        shown: list[dict[str, object]] = []
        for entry in self._config.entries(prefix):
            if not self.allowed(entry.key):
                continue
            if is_secret(entry.key):
                value: object = "(secret: set)" if entry.value else "(secret: not set)"
                default: object = None
            else:
                value, default = entry.value, entry.default
            shown.append({"key": entry.key, "value": value, "default": default, "doc": entry.doc})
            if len(shown) >= MAX_LISTED:
                break
        return shown

    async def write(self, key: str, text: str) -> str:
        key = key.strip()
        if not self.allowed(key):
            raise ToolError(self.refusal(key))
        try:
            self._config.check_known(key)
            value = self._config.set_text(key, text)
            await self._config.set(key, value)
        except ConfigError as exc:
            raise ToolError(str(exc)) from exc
        shown = "(secret)" if is_secret(key) else json.dumps(value, ensure_ascii=False)
        return f"{key} is now {shown}"
