"""The LoCoMo loader, on a small sample in LoCoMo's layout written for this test (no LoCoMo
text): every annotation defect the shared copy's README lists is in it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hologram.eval import load_dataset, load_locomo
from hologram.eval.locomo import evidence_ids, parse_date

SAMPLE = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a hedgehog."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "What is its name?"},
                {
                    "speaker": "Ada",
                    "dia_id": "D1:3",
                    "text": "Spike.",
                    "blip_caption": "a hedgehog on a rug",
                },
            ],
            "session_2_date_time": "10:04 am on 21 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I start my new job on Monday."},
                {"speaker": "Ada", "dia_id": "D2:2", "text": "Good luck!"},
            ],
        },
        "qa": [
            {
                "question": "What pet did Ada adopt?",
                "answer": "a hedgehog",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {"question": "Pet and job?", "answer": "x", "evidence": ["D1:1; D2:1"], "category": 1},
            {
                "question": "Misspelt ids",
                "answer": "x",
                "evidence": ["D:1:3", "D2:01"],
                "category": 2,
            },
            {"question": "Bare D", "answer": "x", "evidence": ["D1:2", "D"], "category": 4},
            {"question": "No such turn", "answer": "x", "evidence": ["D9:9"], "category": 3},
            {"question": "Empty", "answer": "x", "evidence": [], "category": 3},
            {
                "question": "What pet did Ada adopt?",
                "answer": "a hedgehog",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Ben's cat?",
                "adversarial_answer": "none",
                "evidence": ["D2:1"],
                "category": 5,
            },
        ],
    }
]


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(SAMPLE), encoding="utf-8")
    return path


def test_format_is_recognised_from_the_file(sample_file: Path) -> None:
    dataset = load_dataset(sample_file)
    assert dataset.format == "locomo"
    assert dataset.name == "tiny_locomo"
    [conversation] = dataset.conversations
    assert conversation.speakers == ("Ada", "Ben")
    assert [len(s.turns) for s in conversation.sessions] == [3, 2]


def test_session_dates_become_turn_times_in_order() -> None:
    [conversation] = load_locomo(SAMPLE).conversations
    first, second = conversation.sessions
    assert first.date == parse_date("1:56 pm on 8 May, 2023")
    assert (first.date.month, first.date.day, first.date.hour) == (5, 8, 13)
    times = [t.at for t in conversation.turns()]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert second.turns[0].at == second.date.timestamp()


def test_a_shared_photo_keeps_its_caption() -> None:
    [conversation] = load_locomo(SAMPLE).conversations
    spike = conversation.sessions[0].turns[2]
    assert spike.text == "Spike. [shared a photo: a hedgehog on a rug]"


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        (["D8:6; D9:17"], ["D8:6", "D9:17"]),
        (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"]),
        (["D:11:26"], ["D11:26"]),
        (["D30:05"], ["D30:5"]),
        (["D"], []),
        ("D2:3", ["D2:3"]),
    ],
)
def test_evidence_strings_are_repaired(raw: object, ids: list[str]) -> None:
    assert evidence_ids(raw) == ids


def test_defective_items_are_repaired_kept_unscored_or_dropped_and_reported() -> None:
    [conversation] = load_locomo(SAMPLE).conversations
    probes = {p.question: p for p in conversation.probes}
    assert probes["Pet and job?"].evidence == ("D1:1", "D2:1")
    assert probes["Misspelt ids"].evidence == ("D1:3", "D2:1")
    assert probes["Bare D"].evidence == ("D1:2",)
    assert probes["No such turn"].evidence == () and not probes["No such turn"].scored
    assert probes["Empty"].evidence == () and not probes["Empty"].scored
    assert len(conversation.probes) == 7, "the duplicate item is kept once"
    assert probes["Ben's cat?"].category == "adversarial"
    assert probes["Ben's cat?"].answer == "none"
    assert probes["What pet did Ada adopt?"].category == "single_hop"
    problems = "\n".join(conversation.problems)
    for expected in ("names no turn", "duplicate", "no usable evidence", "read as"):
        assert expected in problems


def test_an_unknown_file_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"turns\.jsonl"):
        load_dataset(path)


SHARED = Path(
    os.environ.get(
        "HOLOGRAM_LOCOMO",
        Path(__file__).resolve().parents[3] / "shared/data/locomo/locomo_dev5.json",
    )
)


@pytest.mark.skipif(
    not SHARED.exists(),
    reason=f"the shared LoCoMo copy is not at {SHARED} (set HOLOGRAM_LOCOMO to a locomo10.json "
    "to run this test; the project's own datasets carry the rest)",
)
def test_the_shared_development_split_loads_with_its_defects_handled() -> None:
    dataset = load_dataset(SHARED)
    assert dataset.format == "locomo"
    assert sum(len(c.probes) for c in dataset.conversations) >= 990
    for conversation in dataset.conversations:
        ids = {t.id for t in conversation.turns()}
        for probe in conversation.probes:
            assert set(probe.evidence) <= ids
