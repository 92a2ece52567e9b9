"""Skills (spec 000, prompt layering): multi-step procedures, disclosed progressively.

The system prompt carries only the index (name and description of each skill); the body is
fetched on demand through the `skill_info` tool, which exists only while some skill does, so
the prompt never names a tool the model cannot call.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from hologram.sdk import ToolDef, ToolError

log = logging.getLogger(__name__)

SKILL_INFO = "skill_info"
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    body: str
    origin: str = ""


def parse_skill_file(path: Path) -> Skill:
    """Read a `SKILL.md`: a front matter with `name:` and `description:`, then the body.
    Without a name the directory names it; without a description the file is refused."""
    text = path.read_text(encoding="utf-8")
    fields: dict[str, str] = {}
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        body = text[match.end() :]
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip().lower()] = value.strip().strip("\"'")
    description = fields.get("description", "")
    if not description:
        raise ValueError(
            f"{path}: a skill needs a 'description:' line in its front matter "
            "(between two '---' lines): the index shows it to the model"
        )
    return Skill(fields.get("name") or path.parent.name, description, body.strip(), str(path))


class SkillIndex:
    """The skills one agent knows: from `<data>/skill/<name>/SKILL.md` and from plugins."""

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._tool: ToolDef | None = None

    def add(self, skill: Skill) -> None:
        if skill.name in self._skills:
            raise ValueError(
                f"skill {skill.name!r} already comes from {self._skills[skill.name].origin!r}"
            )
        self._skills[skill.name] = skill
        self._tool = None

    def remove(self, name: str) -> bool:
        self._tool = None
        return self._skills.pop(name, None) is not None

    def load_dir(self, root: Path) -> list[str]:
        """Add every `root/<name>/SKILL.md`. A broken file is skipped with a warning naming
        it and the fix; the others still load."""
        loaded = []
        for path in sorted(root.glob("*/SKILL.md")):
            try:
                skill = parse_skill_file(path)
                self.add(skill)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                log.warning("skill skipped: %s", exc)
                continue
            loaded.append(skill.name)
        return loaded

    def skills(self) -> list[Skill]:
        return sorted(self._skills.values(), key=lambda s: s.name)

    def __len__(self) -> int:
        return len(self._skills)

    def tool(self) -> ToolDef | None:
        """`skill_info`, offered only while there is a skill to ask about."""
        if not self._skills:
            return None
        if self._tool is None:
            self._tool = self._build_tool()
        return self._tool

    def _build_tool(self) -> ToolDef:
        def skill_info(name: str) -> str:
            """Read the full procedure of a skill listed in the skills index before
            following it."""
            skill = self._skills.get(name)
            if skill is None:
                raise ToolError(f"no skill {name!r}; skills: {', '.join(self._skills)}")
            return skill.body

        return ToolDef.from_function(
            skill_info,
            name=SKILL_INFO,
            owner="kernel",
            no_memory=True,
            choices={"name": sorted(self._skills)},
        )
