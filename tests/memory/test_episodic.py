"""Episodic recall: a turn read with the turn before it, its session and its neighbours."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from hologram.memory import Segmenter
from hologram.memory.recall import episodic
from hologram.memory.recall.episodic import (
    EpisodicIndex,
    EpisodicWeights,
    _top_stable,
    member_of,
    stem,
)

HOUR = 3600.0


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [("painting", "paint"), ("painted", "paint"), ("paints", "paint"), ("hiking", "hik"),
     ("hikes", "hik"), ("running", "run"), ("stories", "story"), ("cat", "cat"), ("蜜蜂", "蜜蜂")],
)  # fmt: skip
def test_stem_folds_common_english_endings_and_leaves_chinese_alone(
    word: str, stemmed: str
) -> None:
    assert stem(word) == stemmed


def _index(weights: EpisodicWeights | None = None) -> EpisodicIndex:
    docs = [
        ("a1", 0.0, "Where did you go camping last weekend?"),
        ("a2", 30.0, "Up by the lake with my mum and the dog."),
        ("a3", 60.0, "Sounds peaceful."),
        ("b1", 5 * HOUR, "I repainted the kitchen a pale yellow."),
        ("b2", 5 * HOUR + 30, "Yellow is cheerful."),
        ("c1", 9 * HOUR, "My brother bought a yellow raincoat."),
    ]
    return EpisodicIndex(docs, Segmenter().keywords, weights=weights)


def test_an_answer_is_found_through_the_question_before_it() -> None:
    # "camping" appears only in a1; the answer a2 is found because it is read with a1.
    plain = _index(EpisodicWeights(previous_turn=False, session=0.0, neighbour=0.0))
    assert "a2" not in [i for i, _ in plain.search("Who went camping with me?", 5)]
    found = [i for i, _ in _index().search("Who went camping with me?", 5)]
    assert found[:2] == ["a1", "a2"] or found[:2] == ["a2", "a1"]


def test_sessions_are_split_by_time_gaps() -> None:
    index = _index()
    scores = index.scores("kitchen yellow")
    ids = index.ids
    # b2 shares "yellow" and sits in the kitchen turn's session; c1 does not.
    assert scores[ids.index("b2")] > scores[ids.index("c1")]


def test_stemmed_words_match_across_forms() -> None:
    hits = [i for i, _ in _index().search("who repaints kitchens", 3)]
    assert hits[0] == "b1"


def test_an_empty_index_and_a_query_of_no_known_word_find_nothing() -> None:
    assert EpisodicIndex([], Segmenter().keywords).search("anything", 5) == []
    assert _index().search("zebra", 5) == []


def test_arrival_order_and_removals_do_not_change_the_scores() -> None:
    # Pruning archives old turns late and archival moves them on: an index fed out of
    # order, with some documents removed again, must score exactly as one built in order.
    rng = random.Random(7)
    words = ["kite", "lake", "mum", "camping", "yellow", "kitchen", "paint", "dog", "rain"]
    docs = [
        (f"d{i}", i * 600.0 + (7200.0 if i > 20 else 0.0), rng.sample(words, 3)) for i in range(40)
    ]
    gone = {f"d{i}" for i in (3, 17, 22, 39)}
    in_order = EpisodicIndex()
    for doc_id, at, its_words in docs:
        if doc_id not in gone:
            in_order.add(doc_id, at, its_words)
    shuffled = EpisodicIndex()
    arrival = docs[:]
    rng.shuffle(arrival)
    for step, (doc_id, at, its_words) in enumerate(arrival):
        shuffled.add(doc_id, at, its_words)
        if step % 9 == 0:
            shuffled.search_terms(["kite"], 5)  # lay out part-way, as queries between turns do
    for doc_id in gone:
        shuffled.remove(doc_id)
    assert shuffled.ids == in_order.ids
    for query in (["kite", "lake"], ["yellow"], ["dog", "rain", "mum"]):
        assert shuffled.scores_of(query) == pytest.approx(in_order.scores_of(query))


def _two_speakers(weights: EpisodicWeights | None = None) -> EpisodicIndex:
    # The same words, said by two people in sessions of their own: only who said them
    # (and, in a tie, the older first) tells them apart.
    docs = [
        ("bob", 0.0, "We walked by the lake at dawn", "Bob"),
        ("ann", 10 * HOUR, "We walked by the lake at dusk", "Ann"),
        ("cat", 20 * HOUR, "The cat sat by the lake", "agent"),
    ]
    return EpisodicIndex(docs, Segmenter().keywords, weights=weights)


def test_a_query_naming_one_speaker_ranks_that_speakers_turns_first() -> None:
    index = _two_speakers()

    def first(question: str) -> str:
        return index.search(question, 3)[0][0]

    assert first("what did Ann say about the lake walk") == "ann"
    assert first("what did Bob say about the lake walk") == "bob"
    # A speaker named by its source's words, whatever the source is.
    assert first("what did the agent say about the lake") == "cat"


def test_speakers_do_not_matter_when_none_or_several_are_named_or_the_weight_is_one() -> None:
    index = _two_speakers()
    assert [i for i, _ in index.search("the lake walk", 2)] == ["bob", "ann"]
    assert [i for i, _ in index.search("Ann and Bob by the lake walk", 2)] == ["bob", "ann"]
    plain = _two_speakers(EpisodicWeights(other_speaker=1.0))
    assert [i for i, _ in plain.search("what did Ann say about the lake walk", 2)] == [
        "bob",
        "ann",
    ]


def test_the_named_speakers_turns_keep_their_score_and_the_others_are_scaled() -> None:
    index = _two_speakers()
    named = dict(index.search("Ann lake walk", 3))
    unnamed = dict(index.search("lake walk", 3))
    # "Ann" is a word of no document, so it adds nothing to any turn's own score.
    assert named["ann"] == pytest.approx(unnamed["ann"])
    assert named["bob"] == pytest.approx(0.7 * unnamed["bob"])


def _sessions_of_words(seed: int) -> tuple[EpisodicIndex, dict[str, int], dict[str, list[str]]]:
    """Forty sessions of three to eight turns, a few turns removed again; each kept turn's
    session number and words."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(30)]
    docs, session_of, words_of = [], {}, {}
    at = 0.0
    for session in range(40):
        for turn in range(rng.randint(3, 8)):
            doc_id = f"s{session}t{turn}"
            words = rng.sample(vocabulary, 2)
            docs.append((doc_id, at, words))
            session_of[doc_id], words_of[doc_id] = session, words
            at += 60.0
        at += 5 * HOUR
    index = EpisodicIndex(weights=EpisodicWeights(expansion=0.0, dates=0.0))
    for doc_id, doc_at, words in docs:
        index.add(doc_id, doc_at, words)
    for doc_id in rng.sample(sorted(session_of), 12):
        index.remove(doc_id)
        del session_of[doc_id], words_of[doc_id]
    return index, session_of, words_of


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_turn_of_a_session_holding_a_word_is_lifted_and_no_other_turn_scores(
    seed: int,
) -> None:
    # Scores are computed only for the turns a query can reach (its words' turns, their
    # sessions, their neighbours); a session left out of that reach would lose its lift.
    index, session_of, words_of = _sessions_of_words(seed)
    for word in ("w3", "w17", "w29"):
        scores = dict(zip(index.ids, index.scores_of([word]).tolist(), strict=True))
        holding = {session_of[d] for d, words in words_of.items() if word in words}
        assert holding
        for doc_id, score in scores.items():
            assert (score > 0) == (session_of[doc_id] in holding), doc_id


@pytest.mark.parametrize("seed", [5, 6])
def test_a_lift_over_every_row_scores_as_the_lift_over_the_sessions_reached_to_the_bit(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # When the sessions a query reaches hold most rows, the session and neighbour lifts
    # pass over every row instead; removed rows (which keep a stale session number) and
    # sessions not reached must come out exactly as the gathered lift leaves them.
    index, _, _ = _sessions_of_words(seed)
    index.weights = EpisodicWeights(dates=0.0)  # with the second round as well
    queries = (["w3"], ["w8", "w21"], ["w1", "w2", "w4", "w9"], ["w11", "nothing"])
    size = len(index._id_at)  # removed rows included: a row is never reused

    def scored() -> list[np.ndarray]:
        # The ranking, and the lifted scores of every row before the removed ones are
        # zeroed (what the second round picks its seed turns from).
        known = [[w for w in q if w != "nothing"] for q in queries]
        return [index.scores_of(q) for q in queries] + [index._lifted(q, size)[0] for q in known]

    monkeypatch.setattr(episodic, "GATHER_COST", 0)  # never every row
    gathered = scored()
    monkeypatch.setattr(episodic, "GATHER_COST", 10**9)  # every row whenever one is reached
    passed = scored()
    for one, other in zip(gathered, passed, strict=True):
        assert one.any()
        assert np.array_equal(one, other)


def test_without_a_session_lift_a_word_reaches_only_its_turns_and_their_neighbours() -> None:
    index, session_of, words_of = _sessions_of_words(4)
    index.weights = EpisodicWeights(
        previous_turn=0.0, session=0.0, expansion=0.0, dates=0.0, neighbour=0.5
    )
    ids = index.ids
    scores = dict(zip(ids, index.scores_of(["w5"]).tolist(), strict=True))
    hits = {d for d, words in words_of.items() if "w5" in words}
    near = set(hits)
    for before, after in itertools.pairwise(ids):
        if session_of[before] == session_of[after] and (before in hits or after in hits):
            near |= {before, after}
    assert {d for d, score in scores.items() if score > 0} == near
    for doc_id in near - hits:
        assert scores[doc_id] <= 0.5 * max(scores[d] for d in hits)


def test_the_top_of_a_ranking_breaks_ties_to_the_older_turn_as_a_full_sort_does() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        scores = rng.integers(0, 4, size=int(rng.integers(1, 40))).astype(np.float64)
        for k in (1, 3, 7, 12, 60):
            expected = np.argsort(-scores, kind="stable")[:k]
            given = scores.copy()
            assert _top_stable(scores, k).tolist() == expected.tolist()
            assert np.array_equal(scores, given)  # taken out one by one, and put back


def test_membership_by_table_answers_as_numpys_isin() -> None:
    """member_of stands in for np.isin on every query (places, tags, sessions)."""
    rng = np.random.default_rng(7)
    for dtype, low, high in ((np.int8, -1, 3), (np.int64, 0, 5000)):
        for _ in range(200):
            values = rng.integers(low, high, rng.integers(0, 300)).astype(dtype)
            wanted = np.unique(rng.integers(low, high, rng.integers(0, 12))).astype(dtype)
            assert (member_of(values, wanted) == np.isin(values, wanted)).all()


@pytest.mark.parametrize("seed", range(6))
def test_turns_appended_in_place_are_laid_out_as_the_general_path_lays_them_out(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few turns added after all the others (a conversation going on) are linked one by
    one and the time order grown in place; mixed with turns added out of order, removals
    and session gaps, the layout and every ranking match the general path's."""
    rng = random.Random(seed)
    fast, general = EpisodicIndex(), EpisodicIndex()
    words = ["tea", "rain", "cat", "train", "ticket", "birthday", "work", "跑步"]
    at, added = 1_600_000_000.0, []
    for step in range(400):
        roll = rng.random()
        if roll < 0.08 and added:  # a removal
            victim = added.pop(rng.randrange(len(added)))
            fast.remove(victim)
            general.remove(victim)
        else:
            if roll < 0.16:  # an old turn archived late: out of order
                when = at - rng.uniform(0, 50_000)
            else:
                at += rng.choice([5.0, 60.0, 600.0, 4000.0])  # some past the session gap
                when = at
            said = rng.sample(words, rng.randint(1, 3))
            doc = f"d{step}"
            for index in (fast, general):
                index.add(doc, when, said, speaker=rng.choice(["mei", "agent"]))
            added.append(doc)
        if rng.random() < 0.4:  # a search in between lays the index out
            query = rng.sample(words, 2)
            ranked = fast.search_terms(query, 10)
            monkeypatch.setattr(episodic, "FEW_ADDED", 0)
            assert ranked == general.search_terms(query, 10)
            monkeypatch.setattr(episodic, "FEW_ADDED", 8)
    monkeypatch.setattr(episodic, "FEW_ADDED", 0)
    general._layout()
    monkeypatch.setattr(episodic, "FEW_ADDED", 8)
    fast._layout()
    assert fast._order.tolist() == general._order.tolist()
    alive = general._order
    for links in ("_prev", "_next", "_session"):
        assert getattr(fast, links)[alive].tolist() == getattr(general, links)[alive].tolist()
    # What every query reads of the layout: grown in place for the fast index, worked out
    # whole for the other.
    general._shape_cache = None
    grown, whole = fast._shape(len(fast._id_at)), general._shape(len(general._id_at))
    for name in ("size", "avgdl", "sessions", "session_avgdl"):
        assert getattr(grown, name) == getattr(whole, name), name
    for name in ("length", "session_length", "session_starts"):
        assert getattr(grown, name).tolist() == getattr(whole, name).tolist(), name
