"""The project's injection corpus (tests/security/corpus): its shape, the classifier's figures
on it, and that the scan's anchors lose no signal a full scan finds. benchmarks/security.py
prints the figures in full beside their targets; here they are floors the review must not
fall below."""

from __future__ import annotations

from collections import Counter

from hologram.security import ContentReview
from hologram.security.injection import InjectionClassifier
from hologram.security.injection.learned import LearnedScorer
from hologram.security.review import fold
from tests.security.corpus import KINDS, LANGS, SPLITS, CorpusText, load, split_of

CORPUS = load()


def test_the_corpus_holds_300_injections_and_300_near_misses() -> None:
    labels = Counter(t.label for t in CORPUS)
    assert labels["injection"] >= 300 and labels["benign"] >= 300
    assert len({t.id for t in CORPUS}) == len(CORPUS)
    assert len({t.text for t in CORPUS}) == len(CORPUS)


def test_every_kind_has_both_languages_labels_and_splits() -> None:
    cells = Counter((t.kind, t.lang, t.label, t.split) for t in CORPUS)
    for kind in KINDS:
        for lang in LANGS:
            for label in ("injection", "benign"):
                for split in SPLITS:
                    assert cells[kind, lang, label, split] >= 10, (kind, lang, label, split)
    assert {t.kind for t in CORPUS} == set(KINDS)


def test_texts_added_later_take_the_split_their_hash_gives() -> None:
    later = [t for t in CORPUS if t.id.startswith(("inj2.", "near2.", "inj3.", "near3."))]
    assert all(t.split == split_of(t.text) for t in later)
    added = [t for t in later if t.id.startswith(("inj2.", "near2."))]
    assert len(added) >= 150
    # Both halves of each kind the issue named weak hold both labels in both languages.
    cells = Counter((t.kind, t.lang, t.label, t.split) for t in added)
    weak = (
        "authority_impersonation",
        "secret_exfiltration",
        "hidden_instruction",
        "policy_rewrite",
    )
    for kind in weak:
        for lang in LANGS:
            for label in ("injection", "benign"):
                assert all(cells[kind, lang, label, split] >= 3 for split in SPLITS)


def test_the_third_batch_holds_every_kind_label_and_language_in_both_splits() -> None:
    third = [t for t in CORPUS if t.id.startswith(("inj3.", "near3."))]
    cells = Counter((t.kind, t.lang, t.label, t.split) for t in third)
    for kind in KINDS:
        for lang in LANGS:
            for label in ("injection", "benign"):
                assert all(cells[kind, lang, label, split] >= 3 for split in SPLITS)


def rates(texts: list[CorpusText]) -> tuple[float, float]:
    review = ContentReview(learned=LearnedScorer.load())
    hits = {t.id: any(f.kind == "injection" for f in review.review(t.text)) for t in texts}
    injections = [t for t in texts if t.injection]
    benign = [t for t in texts if not t.injection]
    recall = sum(hits[t.id] for t in injections) / len(injections)
    false_positives = sum(hits[t.id] for t in benign) / len(benign)
    return recall, false_positives


def test_recall_and_false_positives_hold_their_measured_floor_on_both_splits() -> None:
    tuning = rates([t for t in CORPUS if t.split == "tuning"])
    heldout = rates([t for t in CORPUS if t.split == "heldout"])
    # Measured with the learned score deciding every run under CERTAIN (rules and the
    # shipped weights): 93.3 / 0.2 on tuning, which it was fitted on, 76.5 / 4.0 held out.
    assert tuning[0] >= 0.93 and tuning[1] <= 0.003, tuning
    assert heldout[0] >= 0.76 and heldout[1] <= 0.041, heldout


def test_the_anchored_scan_finds_every_signal_a_full_scan_finds() -> None:
    classifier = InjectionClassifier()
    for text in CORPUS:
        folded = fold(text.text).text
        anchored = {(s.feature.name, s.start, s.end) for s in classifier.signals(folded)}
        full = {(s.feature.name, s.start, s.end) for s in classifier.signals(folded, gated=False)}
        assert anchored == full, text.id
