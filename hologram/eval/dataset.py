"""A conversation dataset as the harness sees it: dated sessions of turns, and probes that
name the turns holding their answer.

The project's own format (``datasets/<name>/``: ``turns.jsonl`` and ``probes.jsonl``, see
datasets/README.md) is read here; LoCoMo's layout by `hologram.eval.locomo`, and
`hologram.eval.load` tells the two apart. Both become the same objects, so the harness never
knows where a conversation came from.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ADVERSARIAL = "adversarial"
"""Probes whose question has no answer in the conversation: reported, never in "all"."""

PROJECT_CATEGORIES = ("single_fact", "multi_hop", "temporal", "preference_update", ADVERSARIAL)


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    speaker: str
    text: str
    role: str = "user"
    """"user" (an input to the companion) or "agent" (the companion's own reply)."""
    at: float = 0.0
    """When it was said (epoch seconds): the session's date plus the turn's offset."""


@dataclass(frozen=True, slots=True)
class Session:
    index: int
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    id: str
    question: str
    evidence: tuple[str, ...]
    """Ids of the turns that hold the answer (all of them; recall is the share found)."""
    category: str
    answer: str = ""
    stale: tuple[str, ...] = ()
    """For a preference that changed: the turns of the old preference, which must rank below
    the newer evidence."""

    @property
    def scored(self) -> bool:
        return bool(self.evidence)


@dataclass(slots=True)
class Conversation:
    id: str
    language: str
    speakers: tuple[str, ...]
    sessions: list[Session]
    probes: list[Probe]
    problems: list[str] = field(default_factory=list)
    """Defects found while loading (and how each was handled)."""

    def turns(self) -> Iterator[Turn]:
        for session in self.sessions:
            yield from session.turns

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


@dataclass(slots=True)
class Dataset:
    name: str
    format: str
    conversations: list[Conversation]
    path: str = ""

    @property
    def probe_count(self) -> int:
        return sum(len(c.probes) for c in self.conversations)


# ---- the project's format ------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: each line is one JSON object")
        rows.append(row)
    return rows


def _field(row: dict[str, Any], name: str, where: str) -> Any:
    if name not in row:
        raise ValueError(f"{where}: field {name!r} missing (see datasets/README.md)")
    return row[name]


def load_project(directory: Path) -> Dataset:
    """A directory with ``turns.jsonl`` and ``probes.jsonl`` (and an optional ``meta.json``)."""
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
    sessions: dict[int, list[Turn]] = {}
    dates: dict[int, datetime] = {}
    for number, row in enumerate(_read_jsonl(directory / "turns.jsonl"), 1):
        where = f"{directory.name}/turns.jsonl line {number}"
        index = int(_field(row, "session", where))
        date = datetime.fromisoformat(str(_field(row, "date", where)))
        if dates.setdefault(index, date) != date:
            raise ValueError(f"{where}: session {index} has two dates")
        turn = Turn(
            id=str(_field(row, "id", where)),
            speaker=str(_field(row, "speaker", where)),
            text=str(_field(row, "text", where)),
            role=str(row.get("role", "user")),
            at=date.timestamp() + float(row.get("offset_s", 0.0)),
        )
        sessions.setdefault(index, []).append(turn)
    ids = {t.id for turns in sessions.values() for t in turns}
    probes = []
    for number, row in enumerate(_read_jsonl(directory / "probes.jsonl"), 1):
        where = f"{directory.name}/probes.jsonl line {number}"
        evidence = tuple(str(e) for e in _field(row, "evidence", where))
        stale = tuple(str(e) for e in row.get("stale", ()))
        unknown = [e for e in (*evidence, *stale) if e not in ids]
        if unknown:
            raise ValueError(f"{where}: evidence names no turn: {unknown}")
        probes.append(
            Probe(
                id=str(_field(row, "id", where)),
                question=str(_field(row, "question", where)),
                evidence=evidence,
                category=str(_field(row, "category", where)),
                answer=str(row.get("answer", "")),
                stale=stale,
            )
        )
    conversation = Conversation(
        id=str(meta.get("id", directory.name)),
        language=str(meta.get("language", "")),
        speakers=tuple(meta.get("speakers", ())),
        sessions=[Session(i, dates[i], tuple(sessions[i])) for i in sorted(sessions)],
        probes=probes,
    )
    return Dataset(directory.name, "hologram", [conversation], str(directory))


def write_project(conversation: Conversation, directory: Path) -> None:
    """Write `conversation` in the project's format (the dataset generators use this)."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "id": conversation.id,
        "language": conversation.language,
        "speakers": list(conversation.speakers),
        "sessions": len(conversation.sessions),
        "turns": conversation.turn_count,
        "probes": len(conversation.probes),
    }
    (directory / "meta.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    lines = []
    for session in conversation.sessions:
        start = session.date.timestamp()
        for turn in session.turns:
            row = {
                "id": turn.id,
                "session": session.index,
                "date": session.date.isoformat(),
                "offset_s": round(turn.at - start, 3),
                "speaker": turn.speaker,
                "role": turn.role,
                "text": turn.text,
            }
            lines.append(json.dumps(row, ensure_ascii=False))
    (directory / "turns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = []
    for p in conversation.probes:
        probe: dict[str, Any] = {"id": p.id, "category": p.category, "question": p.question}
        probe.update({"answer": p.answer, "evidence": list(p.evidence)})
        if p.stale:
            probe["stale"] = list(p.stale)
        rows.append(json.dumps(probe, ensure_ascii=False))
    (directory / "probes.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
