"""`skillmgr`: the agent writes its own skills (spec 000: prompt layering; skills are
`<data>/skill/<name>/SKILL.md`). Built in because it changes the agent's skill index, which
the public SDK withholds.

A write goes to the file first, then to the index, so the next turn's prompt lists the
skill and `skill_info` returns its body, without a restart. Every write is scanned for what a
skill should never ask (the SKILL.md danger scan): a dangerous skill is not written by the
agent; the finding is published and the owner, who alone can judge it, places the file by
hand. Skills that came from a plugin are that plugin's, and are not edited here. The tools
are hard-private: only the owner's inputs reach them.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from hologram.agent import Skill, parse_skill_file
from hologram.plugins.skill import SKILL_FILE, scan_skill
from hologram.sdk import Event, EventType, Param, PluginSkillFlagged, ToolDef, ToolError

if TYPE_CHECKING:
    from hologram.agent import SkillIndex
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelSDK

NAME = r"^[a-z0-9][a-z0-9_-]{0,39}$"
SkillName = Annotated[str, Param("the skill's name: lower case, digits, - and _", pattern=NAME)]


class SkillManager:
    name = "skillmgr"

    def __init__(self, host: PluginHost) -> None:
        self._root = host.data_dir / "skill"
        self._index: SkillIndex | None = host.parts.skills
        self._sdk: KernelSDK | None = None

    async def start(self, sdk: KernelSDK) -> None:
        self._sdk = sdk

        def skillmgr_list() -> str:
            """List the skills: name, description, and whether skillmgr may edit it."""
            return json.dumps(self.listing(), ensure_ascii=False)

        async def skillmgr_write(
            name: SkillName,
            description: Annotated[str, Param("one line: when to use it", min_length=3)],
            body: Annotated[str, Param("the procedure, in markdown", min_length=1)],
            replace: Annotated[bool, Param("change an existing skill of that name")] = False,
        ) -> str:
            """Create a skill (or change one with replace): it is offered from the next turn."""
            return await self.write(name, description, body, replace)

        async def skillmgr_delete(name: SkillName) -> str:
            """Delete a skill skillmgr may edit."""
            return await self.delete(name)

        for tool in (skillmgr_list, skillmgr_write, skillmgr_delete):
            sdk.register_tool(ToolDef.from_function(tool, owner=self.name, no_memory=True))

    async def stop(self) -> None:
        self._sdk = None

    def index(self) -> SkillIndex:
        if self._index is None:
            raise ToolError("this kernel has no agent, so no skills to manage")
        return self._index

    def _own(self, skill: Skill) -> bool:
        return Path(skill.origin).parent.parent == self._root

    def listing(self) -> list[dict[str, Any]]:
        return [
            {"name": s.name, "description": s.description, "editable": self._own(s)}
            for s in self.index().skills()
        ]

    async def write(self, name: str, description: str, body: str, replace: bool) -> str:
        index = self.index()
        current = next((s for s in index.skills() if s.name == name), None)
        if current is not None and not self._own(current):
            raise ToolError(f"skill {name!r} comes from {current.origin}; it is not edited here")
        if current is not None and not replace:
            raise ToolError(f"skill {name!r} exists; pass replace=true to change it")
        text = _skill_text(name, description, body)
        findings = scan_skill(text)
        if findings:
            self._flag(name, findings)
            raise ToolError(
                f"skill {name!r} was not written: the danger scan found "
                f"{'; '.join(findings)}. A skill like this needs the owner, who can write "
                f"{self._root / name / SKILL_FILE} by hand"
            )
        path = self._root / name / SKILL_FILE
        skill = await asyncio.to_thread(_write_skill, path, text)
        index.remove(name)
        index.add(skill)
        return f"skill {name!r} {'changed' if current else 'created'}; offered from the next turn"

    async def delete(self, name: str) -> str:
        index = self.index()
        current = next((s for s in index.skills() if s.name == name), None)
        if current is None:
            raise ToolError(f"no skill {name!r}; skills: {[s.name for s in index.skills()]}")
        if not self._own(current):
            raise ToolError(f"skill {name!r} comes from {current.origin}; it is not deleted here")
        await asyncio.to_thread(shutil.rmtree, self._root / name)
        index.remove(name)
        return f"skill {name!r} deleted"

    def _flag(self, name: str, findings: list[str]) -> None:
        if self._sdk is None:
            return
        for finding in findings:
            self._sdk.publish(
                Event(
                    EventType.PLUGIN_SKILL_FLAGGED,
                    PluginSkillFlagged(
                        plugin=self.name, skill=name, finding=finding, written=False
                    ),
                    source=self.name,
                )
            )


def _skill_text(name: str, description: str, body: str) -> str:
    one_line = re.sub(r"\s+", " ", description).strip()
    return f"---\nname: {name}\ndescription: {one_line}\n---\n\n{body.strip()}\n"


def _write_skill(path: Path, text: str) -> Skill:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return parse_skill_file(path)
