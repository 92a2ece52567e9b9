"""A small conversation in the project's format, written for these tests: three sessions
over five days, so the kernel's heartbeats and the cold context's ageing have time to act."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hologram.eval import Conversation, Probe, Session, Turn, write_project

LINES = [
    # session 1
    ["My sister Ines keeps bees on her roof.", "How lovely, bees!", "I'm allergic to kiwi fruit.",
     "Noted.", "I drink black coffee every morning.", "Strong start to the day.",
     "The weather was grey.", "Grey days happen."],
    # session 2, two days later
    ["Ines is moving to Lisbon in the summer.", "A big move for her.", "I lost my umbrella on the tram.",
     "That's annoying.", "Work was slow today.", "Quiet days are fine.", "I ate soup.", "Nice."],
    # session 3, five days after the first
    ["I switched from coffee to peppermint tea.", "A gentler morning then.",
     "Today I went to a pottery class.", "Sounds fun!", "My cat Miso knocked over a vase.",
     "Oh no, poor vase.", "Time for bed.", "Good night."],
]  # fmt: skip
START = datetime(2024, 5, 6, 19, 0, tzinfo=UTC)


def tiny_conversation() -> Conversation:
    sessions = []
    for index, (lines, day) in enumerate(zip(LINES, (0, 2, 5), strict=True), 1):
        date = START + timedelta(days=day)
        turns = tuple(
            Turn(
                id=f"s{index}-t{n + 1}",
                speaker="Kim" if n % 2 == 0 else "Holo",
                text=text,
                role="user" if n % 2 == 0 else "agent",
                at=date.timestamp() + 30 * n,
            )
            for n, text in enumerate(lines)
        )
        sessions.append(Session(index, date, turns))
    probes = [
        Probe("p1", "What does my sister keep on her roof?", ("s1-t1",), "single_fact", "bees"),
        Probe("p2", "Which fruit am I allergic to?", ("s1-t3",), "single_fact", "kiwi"),
        Probe("p3", "Where is my sister moving?", ("s1-t1", "s2-t1"), "multi_hop", "Lisbon"),
        Probe(
            "p4",
            "What do I drink in the morning now?",
            ("s3-t1",),
            "preference_update",
            "peppermint tea",
            stale=("s1-t5",),
        ),
        Probe("p5", "When did I go to a pottery class?", ("s3-t3",), "temporal", "11 May"),
        Probe("p6", "What is my dog called?", ("s3-t5",), "adversarial"),
    ]
    return Conversation("tiny", "en", ("Kim", "Holo"), sessions, probes)


@pytest.fixture
def tiny_dataset(tmp_path: Path) -> Path:
    directory = tmp_path / "tiny"
    write_project(tiny_conversation(), directory)
    return directory


SMALL_WINDOW = {"core.memory.context.top_k": 6, "core.memory.context.protected_recent": 2}
"""A window of six events: turns fall out of it into the cold context within a session."""
