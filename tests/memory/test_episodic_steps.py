"""The steps of recall that a plain word match lacks: a question's period meets the turns
whose resolved dates lie in it, a "when" question prefers a turn that states a time, and a
second round seeded by the first round's best turns connects two sessions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hologram.memory import Segmenter
from hologram.memory.recall.episodic import EpisodicIndex, EpisodicWeights

OFF = EpisodicWeights(dates=0.0, when=0.0, expansion=0.0)
SEGMENTER = Segmenter()


def at(y: int, m: int, d: int, minute: int = 0) -> float:
    return datetime(y, m, d, 18, minute, tzinfo=UTC).timestamp()


def index(docs: list[tuple[str, float, str, str]], weights: EpisodicWeights) -> EpisodicIndex:
    return EpisodicIndex(docs, SEGMENTER.keywords, weights=weights)


def top_ids(idx: EpisodicIndex, question: str, top: int = 1, now: float | None = None) -> list[str]:
    return [doc_id for doc_id, _ in idx.search(question, top, now=now)]


EN = [
    # Session of Sunday 7 May 2023: "yesterday" is Saturday 6 May.
    ("s1-1", at(2023, 5, 7), 'Mel said, "I took the kids to the beach yesterday."', "Mel"),
    ("s1-2", at(2023, 5, 7, 1), 'Ann said, "Lovely, how was the weather?"', "Ann"),
    # Other days at the beach, said on other dates, with more of the question's words.
    ("s2-1", at(2023, 6, 20), 'Mel said, "Beach day!"', "Mel"),
    ("s3-1", at(2023, 7, 2), 'Mel said, "The kids took a boat, the kids loved the beach."', "Mel"),
    ("s3-2", at(2023, 7, 2, 1), 'Ann said, "Crowds everywhere on a beach in summer."', "Ann"),
]


def test_a_question_with_a_date_finds_the_turn_whose_relative_date_resolves_to_it() -> None:
    question = "Where did Mel take the kids on 6 May 2023?"
    assert top_ids(index(EN, OFF), question) != ["s1-1"]
    assert top_ids(index(EN, EpisodicWeights()), question) == ["s1-1"]


def test_a_relative_question_is_resolved_against_its_own_moment() -> None:
    # Asked on Saturday 13 May: "last Saturday" is 6 May again.
    asked = at(2023, 5, 13)
    question = "What did Mel do at the beach last Saturday?"
    assert top_ids(index(EN, OFF), question, now=asked) != ["s1-1"]
    assert top_ids(index(EN, EpisodicWeights()), question, now=asked) == ["s1-1"]


def test_a_question_naming_a_day_weighs_the_turns_of_other_days_down() -> None:
    # "What did I tell you happened on …" shares its words with turns of any day; the
    # turn of the day it names may share none ("I had a call with my grandmother today").
    en = [
        ("o1", at(2024, 3, 13), "Holo said, Thanks for telling me.", "Holo"),
        ("o2", at(2024, 3, 20), "Maya said, Something funny happened on the bus.", "Maya"),
        ("d1", at(2024, 6, 5), "Maya said, I had a call with my grandmother today.", "Maya"),
        ("d2", at(2024, 6, 5, 1), "Holo said, That sounds lovely.", "Holo"),
    ]
    zh = [
        ("o1", at(2024, 3, 13), "小荷说：谢谢你告诉我这件事。", "小荷"),
        ("o2", at(2024, 3, 20), "小雨说：公交车上发生了一件趣事。", "小雨"),
        ("d1", at(2024, 6, 5), "小雨说：我今天和奶奶视频了很久。", "小雨"),
        ("d2", at(2024, 6, 5, 1), "小荷说：听起来真好。", "小荷"),
    ]
    now = at(2024, 6, 6)
    for docs, question, plain in (
        (en, "What did I tell you happened on Wednesday 5 June?", "What did I tell you happened?"),
        (zh, "我6月5日告诉你发生了什么事？", "我告诉你发生了什么事？"),
    ):
        lifted = index(docs, EpisodicWeights(outside_period=1.0))
        weighed = index(docs, EpisodicWeights(outside_period=0.5))
        before, after = lifted.scores(question, now), weighed.scores(question, now)
        assert min(before[:2]) > 0, "the other days' turns share the question's words"
        assert after[:2].tolist() == pytest.approx((0.5 * before[:2]).tolist())
        assert after[2:].tolist() == pytest.approx(before[2:].tolist())
        # A question naming no period ranks as before.
        assert weighed.scores(plain, now).tolist() == lifted.scores(plain, now).tolist()


def test_a_when_question_prefers_the_turn_that_states_a_time() -> None:
    docs = [
        ("a1", at(2023, 5, 9), "I went to the pottery class yesterday.", "Mel"),
        ("b1", at(2023, 6, 9), "The pottery class is my calm place, I love pottery class.", "Mel"),
        ("c1", at(2023, 7, 9), "The weather was great.", "Mel"),
    ]
    weights = EpisodicWeights(dates=0.0, expansion=0.0)
    assert top_ids(index(docs, OFF), "When did Mel go to the pottery class?") == ["b1"]
    assert top_ids(index(docs, weights), "When did Mel go to the pottery class?") == ["a1"]


ZH = [
    ("z1-1", at(2024, 3, 12), "小雨说：“我上周六去爬山了。”", "小雨"),
    ("z1-2", at(2024, 3, 12, 1), "Holo说：“听起来很开心。”", "Holo"),
    ("z2-1", at(2024, 3, 20), "小雨说：“我周末又去爬山，山上风很大，爬山很累。”", "小雨"),
    ("z3-1", at(2024, 3, 28), "小雨说：“爬山以后腿很酸。”", "小雨"),
]


def test_a_chinese_question_with_a_date_finds_the_turn_by_its_resolved_date() -> None:
    # Said on Tuesday 12 March 2024, 上周六 is 9 March.
    question = "小雨3月9日做了什么？"
    assert top_ids(index(ZH, OFF), question) != ["z1-1"]
    assert top_ids(index(ZH, EpisodicWeights()), question) == ["z1-1"]


def test_a_turn_about_last_night_is_found_by_the_night_it_names() -> None:
    # Said on 2 May 2022 about 1 May; the other turns about films say more of the words.
    docs = [
        (
            "n1",
            at(2022, 5, 2),
            'Jo said, "I watched the trilogy last night, it was awesome!"',
            "Jo",
        ),
        ("n2", at(2022, 5, 20), 'Jo said, "Watched a movie, then another movie."', "Jo"),
        ("n3", at(2022, 6, 3), 'Jo said, "Movie night again, I watched two movies."', "Jo"),
        ("z1", at(2022, 5, 2, 5), "小林说：“我昨晚看了一部电影。”", "小林"),
        ("z2", at(2022, 5, 20, 5), "小林说：“看电影，又看了一部电影。”", "小林"),
    ]
    for question, answer in [("What movie did Jo watch on 1 May 2022?", "n1"),
                             ("小林2022年5月1日看了什么电影？", "z1")]:  # fmt: skip
        assert top_ids(index(docs, OFF), question) != [answer]
        assert top_ids(index(docs, EpisodicWeights()), question) == [answer]


def _two_sessions(first: list[str], second: list[str]) -> list[tuple[str, float, str, str]]:
    """Two sessions days apart, with filler between them, each turn by the user."""
    filler = [
        "The weather turned cold this week.",
        "I made soup for dinner tonight.",
        "My phone needs a new battery.",
        "The bus was late again this morning.",
        "我今天做了一碗面。",
        "天气越来越冷了。",
    ]
    docs = [(f"a{i}", at(2024, 3, 1, i), text, "user") for i, text in enumerate(first)]
    docs += [(f"f{i}", at(2024, 3, 3 + i), text, "user") for i, text in enumerate(filler)]
    docs += [(f"b{i}", at(2024, 3, 20, i), text, "user") for i, text in enumerate(second)]
    return docs


def test_a_two_session_question_is_answered_by_the_second_round() -> None:
    docs = _two_sessions(
        ["My sister is called Lina.", "She is three years older than me."],
        ["Lina got promoted, she designs bridges now.", "Lina says the office is huge."],
    )
    question = "What does my sister do for a living?"
    without = top_ids(index(docs, EpisodicWeights(expansion=0.0)), question, top=5)
    found = top_ids(index(docs, EpisodicWeights()), question, top=5)
    assert "a0" in without and "b0" not in without
    assert "a0" in found and "b0" in found


def test_a_two_session_question_in_chinese_is_answered_by_the_second_round() -> None:
    docs = _two_sessions(
        ["我姐姐的名字是林薇。", "她比我大三岁。"],
        ["林薇升职了，成了建筑设计师。", "林薇说办公室很大。"],
    )
    question = "我姐姐现在做什么工作？"
    without = top_ids(index(docs, EpisodicWeights(expansion=0.0)), question, top=5)
    found = top_ids(index(docs, EpisodicWeights()), question, top=5)
    assert "a0" in without and "b0" not in without
    assert "a0" in found and "b0" in found


def test_the_second_round_lifts_only_other_sessions() -> None:
    # Within the seed's own session the second round adds nothing: its turns are the
    # neighbourhood the first round already reads.
    docs = _two_sessions(["My sister is called Lina.", "Lina likes tea."], ["Nothing here."])
    question = "Tell me about my sister"
    with_it = index(docs, EpisodicWeights()).scores(question)
    without = index(docs, EpisodicWeights(expansion=0.0)).scores(question)
    assert list(with_it) == list(without)
