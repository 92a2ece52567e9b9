"""The project's own companion conversations: the shape the issue asks for, evidence that
names real turns, and a generator that reproduces the committed files."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from hologram.eval import load_dataset
from hologram.eval.dataset import PROJECT_CATEGORIES

DATASETS = Path(__file__).resolve().parents[2] / "datasets"


@pytest.mark.parametrize("name", ["companion_en", "companion_zh"])
def test_a_companion_conversation_has_the_size_and_categories_asked_for(name: str) -> None:
    dataset = load_dataset(DATASETS / name)
    assert dataset.format == "hologram"
    [conversation] = dataset.conversations
    assert conversation.turn_count >= 300
    assert len(conversation.sessions) >= 14
    assert len(conversation.probes) >= 150
    assert set(Counter(p.category for p in conversation.probes)) == set(PROJECT_CATEGORIES)
    dates = [s.date for s in conversation.sessions]
    assert dates == sorted(dates) and len(set(d.date() for d in dates)) == len(dates)
    ids = {t.id for t in conversation.turns()}
    for probe in conversation.probes:
        assert probe.evidence and set(probe.evidence) <= ids
        if probe.category == "preference_update":
            assert probe.stale, "a changed preference names the turn it replaced"
            new, old = probe.evidence[0], probe.stale[0]
            at = {t.id: t.at for t in conversation.turns()}
            assert at[new] > at[old], "the newer fact is the evidence"


def test_the_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate", DATASETS / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    from hologram.eval import write_project

    for lang, bank, seed in (("en", generate.EN, 11), ("zh", generate.ZH, 12)):
        write_project(generate.build(bank, lang, seed), tmp_path / lang)
        for file in ("turns.jsonl", "probes.jsonl", "meta.json"):
            committed = (DATASETS / f"companion_{lang}" / file).read_text(encoding="utf-8")
            assert (tmp_path / lang / file).read_text(encoding="utf-8") == committed
