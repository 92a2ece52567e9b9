"""What the page's API and browser tests share: a Lua plugin packaged as a `.hmap`, and a
service with a second model source (a scripted model of its own) beside the default one."""

from __future__ import annotations

import json
from pathlib import Path

from hologram.plugins import build_package
from tests.serve.harness import ScriptedModel, Service

GREET_LUA = """
sdk.register_tool("greet_hello", "Say hello.", nil, function(args) return "hello" end)
"""
BROKEN_LUA = 'error("greet cannot start: boom")\n'


def lua_package(folder: Path, name: str = "greet", source: str = GREET_LUA) -> bytes:
    """A `.hmap` of a Lua plugin `name` whose main.lua is `source`."""
    folder = folder / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, "version": "1.0", "entry": "main.lua", "capabilities": ["tools"]}
    (folder / "plugin.json").write_text(json.dumps(manifest))
    (folder / "main.lua").write_text(source)
    return build_package(folder)


def add_source(service: Service, name: str, model: ScriptedModel) -> None:
    """Configure model source `name` on the running service, answered by `model`."""
    with service.client() as http:
        for key, value in (("base_url", model.base_url), ("model", f"{name}-model")):
            answer = http.put(
                "/settings", json={"key": f"core.llm.sources.{name}.{key}", "value": value}
            )
            assert answer.status_code == 200, answer.text
