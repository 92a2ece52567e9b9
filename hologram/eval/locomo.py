"""LoCoMo's JSON layout (Maharana et al., ACL 2024) read into a `Dataset`.

A sample has ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N`` lists of
``{speaker, dia_id, text[, blip_caption]}`` and ``session_N_date_time``) and ``qa`` (items
with ``question``, ``answer`` or ``adversarial_answer``, ``evidence`` and ``category``).

The annotation has defects, handled here rather than trusted, each recorded in the
conversation's ``problems``: evidence strings holding several ids (``'D8:6; D9:17'``),
misspelt ids (``'D:11:26'``, ``'D30:05'``), a bare ``'D'``, ids of no turn, items left with
no evidence (kept but not scored) and duplicate items (kept once).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from hologram.eval.dataset import ADVERSARIAL, Conversation, Dataset, Probe, Session, Turn

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: ADVERSARIAL}
"""LoCoMo's category numbers, named from the counts in the paper's Table 5."""

TURN_GAP_S = 30.0
"""Seconds between two turns of a session: LoCoMo dates sessions, not turns."""

_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"session_(\d+)$")


def is_locomo(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(s, dict) and "conversation" in s and "qa" in s for s in document)
    )


def parse_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` (read as UTC: LoCoMo gives no zone)."""
    cleaned = " ".join(text.replace(",", ", ").split()).replace(" ,", ",")
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"session date {text!r} is not like '1:56 pm on 8 May, 2023'")


def evidence_ids(raw: Any) -> list[str]:
    """Every turn id written in an evidence entry, normalised to ``D<session>:<turn>``."""
    items = raw if isinstance(raw, list) else [raw]
    found = []
    for item in items:
        for session, turn in _ID.findall(str(item)):
            found.append(f"D{int(session)}:{int(turn)}")
    return found


def turn_text(turn: dict[str, Any]) -> str:
    """What was said; a shared photo's caption travels with it, as a multimodal memory would
    keep the picture's description."""
    text = str(turn.get("text", ""))
    caption = turn.get("blip_caption")
    return f"{text} [shared a photo: {caption}]" if caption else text


def _conversation(sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id", "conversation"))
    problems: list[str] = []
    sessions = []
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
    for number in numbers:
        raw_turns = conv.get(f"session_{number}") or []
        if not raw_turns:
            continue
        date = parse_date(str(conv[f"session_{number}_date_time"]))
        turns = []
        for offset, raw in enumerate(raw_turns):
            turns.append(
                Turn(
                    id=evidence_ids(raw["dia_id"])[0] if evidence_ids(raw["dia_id"]) else "",
                    speaker=str(raw.get("speaker", "")),
                    text=turn_text(raw),
                    at=date.timestamp() + offset * TURN_GAP_S,
                )
            )
        sessions.append(Session(number, date, tuple(turns)))
    known = {t.id for s in sessions for t in s.turns}
    probes, seen = [], set()
    for index, item in enumerate(sample["qa"]):
        raw_evidence = item.get("evidence") or []
        ids = list(dict.fromkeys(evidence_ids(raw_evidence)))
        raw_count = len(raw_evidence) if isinstance(raw_evidence, list) else 1
        if len(ids) != raw_count:
            problems.append(f"qa {index}: evidence {raw_evidence!r} read as {ids}")
        missing = [e for e in ids if e not in known]
        if missing:
            problems.append(f"qa {index}: evidence {missing} names no turn; dropped")
            ids = [e for e in ids if e in known]
        answer = item.get("answer", item.get("adversarial_answer", ""))
        key = (item.get("question"), str(answer), tuple(ids), item.get("category"))
        if key in seen:
            problems.append(f"qa {index}: duplicate of an earlier item; kept once")
            continue
        seen.add(key)
        if not ids:
            problems.append(f"qa {index}: no usable evidence; kept, not scored")
        category = CATEGORIES.get(int(item.get("category", 0)), f"category_{item.get('category')}")
        probes.append(
            Probe(
                id=f"{sample_id}/q{index:03d}",
                question=str(item.get("question", "")),
                evidence=tuple(ids),
                category=category,
                answer=str(answer),
            )
        )
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    return Conversation(sample_id, "en", speakers, sessions, probes, problems)


def load_locomo(document: Any, *, name: str = "locomo", path: str = "") -> Dataset:
    if not is_locomo(document):
        raise ValueError("not LoCoMo's layout: a list of samples with 'conversation' and 'qa'")
    return Dataset(name, "locomo", [_conversation(s) for s in document], path)
