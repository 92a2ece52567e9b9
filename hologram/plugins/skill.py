"""SKILL.md plugins (the Agent Skills format): a folder whose SKILL.md joins the skills index.

The front matter needs `name` and `description`; the index in the system prompt shows those,
and `skill_info` returns the body. Before a skill is added, its text is scanned for what a
skill should never ask of the agent (sending credentials somewhere, piping a download into a
shell); a match is flagged — logged and published — so a person looks before trusting it.
"""

from __future__ import annotations

import re
from pathlib import Path

from hologram.agent import Skill, parse_skill_file
from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.manifest import Kind, Manifest

SKILL_FILE = "SKILL.md"

_PIPE_TO_SHELL = re.compile(
    r"\b(curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]*\|\s*(sudo\s+)?"
    r"(sh|bash|zsh|dash|python3?|perl|iex|invoke-expression)\b",
    re.IGNORECASE,
)
_SECRET = re.compile(
    r"(\.ssh/|id_rsa|id_ed25519|\.aws/credentials|\.netrc|\.env\b|api[_-]?keys?\b|"
    r"secret[_-]?keys?|access[_-]?tokens?|passwords?|credentials|private[_-]?keys?|cookies)",
    re.IGNORECASE,
)
_SEND = re.compile(
    r"(\bcurl\b[^\n]*\s(-d|--data\S*|-F|--form|-T|--upload-file)\b|https?://|\bupload\b|"
    r"\bsend\b|\bpost\b|\bexfiltrat\w*|\bwebhook\b|\bemail\b)",
    re.IGNORECASE,
)


def scan_skill(text: str) -> list[str]:
    """What looks dangerous in a skill's text, one finding per line that shows it."""
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        if _PIPE_TO_SHELL.search(line):
            findings.append(f"line {number}: pipes a download into a shell: {line.strip()[:120]}")
        elif _SECRET.search(line) and _SEND.search(line):
            findings.append(f"line {number}: sends credentials somewhere: {line.strip()[:120]}")
    return findings


def skill_manifest(folder: Path) -> Manifest:
    """The manifest of a bare skill folder (SKILL.md and no plugin.json)."""
    skill = parse_skill_file(folder / SKILL_FILE)
    return Manifest(
        name=skill.name,
        version="0",
        entry=SKILL_FILE,
        kind=Kind.SKILL,
        description=skill.description,
    )


class SkillPlugin:
    def __init__(self, manifest: Manifest, folder: Path) -> None:
        self.manifest = manifest
        self.folder = folder
        path = folder / SKILL_FILE
        self.skill: Skill = parse_skill_file(path)
        self.findings = scan_skill(path.read_text(encoding="utf-8"))

    @property
    def name(self) -> str:
        return self.manifest.name

    async def start(self, sdk: KernelSDK) -> None:
        sdk.register_skill(self.skill)

    async def stop(self) -> None:
        return None
