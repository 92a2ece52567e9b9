"""The tool table (spec: StageHost's ToolDef registry and its `toolPlugins` mapping)."""

from __future__ import annotations

import dataclasses
import logging

import jsonschema_rs

from hologram.sdk import ToolDef

log = logging.getLogger(__name__)


class DuplicateToolError(ValueError):
    """A tool name that is already taken."""


def infer_owner(name: str) -> str:
    """The plugin a tool belongs to when nobody says: its name up to the first '_'
    (`weather_today` belongs to `weather`), as the spec's RegisterTool infers it."""
    return name.split("_", 1)[0] or name


class ToolTable:
    """Tools registered by plugins and SDK users, each with the plugin that owns it."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDef] = {}

    def register(self, tool: ToolDef, owner: str | None = None) -> ToolDef:
        """Add `tool`. Its owner is `owner`, else `tool.owner`, else inferred from its name.
        A taken name or a parameters schema that is not valid JSON schema is refused."""
        current = self._tools.get(tool.name)
        if current is not None:
            raise DuplicateToolError(
                f"tool {tool.name!r} is already registered by {current.owner!r}; "
                f"pick another name, or unregister_plugin_tools({current.owner!r}) first"
            )
        if tool.handler is None:
            raise ValueError(f"tool {tool.name!r} has no handler: nothing could run it")
        try:
            jsonschema_rs.meta.validate(tool.parameters)
        except jsonschema_rs.ValidationError as exc:
            raise ValueError(
                f"tool {tool.name!r}: parameters are not a valid JSON schema: {exc.message}"
            ) from None
        owned = dataclasses.replace(tool, owner=owner or tool.owner or infer_owner(tool.name))
        self._tools[tool.name] = owned
        log.debug("tool %s registered by %s", owned.name, owned.owner)
        return owned

    def unregister(self, name: str) -> bool:
        return self._tools.pop(name, None) is not None

    def unregister_plugin_tools(self, plugin: str) -> list[str]:
        """Remove every tool `plugin` owns (hot reload); returns their names."""
        names = [name for name, tool in self._tools.items() if tool.owner == plugin]
        for name in names:
            del self._tools[name]
        return names

    def owner_of(self, name: str) -> str | None:
        tool = self._tools.get(name)
        return None if tool is None else tool.owner

    def get(self, name: str) -> ToolDef | None:
        return self._tools.get(name)

    def tools(self) -> list[ToolDef]:
        return list(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)
