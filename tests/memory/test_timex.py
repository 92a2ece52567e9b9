"""Time expressions resolved against the day they were said, in English and Chinese, read
both from the sentence and from the stemmed keywords the recall index keeps of it."""

from __future__ import annotations

import re
from datetime import date

import pytest

from hologram.memory import Segmenter
from hologram.memory.recall import timex
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.timex import Period, asks_when, period_bounds, period_terms, periods

TUESDAY = date(2023, 5, 9)  # a Tuesday


def day(y: int, m: int, d: int) -> Period:
    return Period("day", date(y, m, d))


EXAMPLES = [
        ("I finally went hiking last Saturday.", day(2023, 5, 6)),
        ("I went to a support group yesterday and it was great", day(2023, 5, 8)),
        ("The day before yesterday my cat was sick.", day(2023, 5, 7)),
        ("We moved here two years ago", Period("year", date(2021, 1, 1))),
        ("I started a new job a few weeks ago", Period("week", date(2023, 4, 17))),
        ("I ran a marathon 3 days ago!", day(2023, 5, 6)),
        ("Last week was a busy one", Period("week", date(2023, 5, 1))),
        ("Next month I'm flying home", Period("month", date(2023, 6, 1))),
        ("We got married on 12 March 2019.", day(2019, 3, 12)),
        ("Her birthday is on July 4th", day(2023, 7, 4)),
        ("I adopted him in August 2021", Period("month", date(2021, 8, 1))),
        ("We went to Spain last summer, in June", Period("month", date(2022, 6, 1))),
        ("On Sunday I called my mother", day(2023, 5, 7)),
        ("我上周六去了公园", day(2023, 5, 6)),
        ("去年我们搬家了", Period("year", date(2022, 1, 1))),
        ("前天下了一场大雨", day(2023, 5, 7)),
        ("昨天我见到了林薇", day(2023, 5, 8)),
        ("三年前我在北京工作", Period("year", date(2020, 1, 1))),
        ("两个月前她开始学画画", Period("month", date(2023, 3, 1))),
        ("我们2021年10月3日结婚", day(2021, 10, 3)),
        ("五月二十号是他的生日", day(2023, 5, 20)),
        ("上个星期我很忙", Period("week", date(2023, 5, 1))),
        ("下个月我要去厦门", Period("month", date(2023, 6, 1))),
        ("I watched the whole trilogy last night!", day(2023, 5, 8)),
        ("The night before last we ate out", day(2023, 5, 7)),
        ("I've had my turtles for three years now", Period("year", date(2020, 1, 1))),
        ("I've been painting for six months now", Period("month", date(2022, 11, 1))),
        ("我昨晚看了一部电影", day(2023, 5, 8)),
        ("前晚下了大雨", day(2023, 5, 7)),
        ("We fly the day after tomorrow", day(2023, 5, 11)),
        ("We met last December", Period("month", date(2022, 12, 1))),
        ("The shop opened in May, 2020", Period("month", date(2020, 5, 1))),
        ("I graduated in 2015", Period("year", date(2015, 1, 1))),
        ("十月一日我们去旅行", day(2023, 10, 1)),
        ("2020年3月我换了工作", Period("month", date(2020, 3, 1))),
        ("上个月我生病了", Period("month", date(2023, 4, 1))),
        ("2019年我在上海", Period("year", date(2019, 1, 1))),
        ("今天天气很好", day(2023, 5, 9)),
        ("明晚一起吃饭吧", day(2023, 5, 10)),
        ("The party is on 2023-06-02", day(2023, 6, 2)),
        ("Rent is due 2023/06/02 at noon", day(2023, 6, 2)),
        ("会议在2023-06-02举行", day(2023, 6, 2)),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "expected"), EXAMPLES)
def test_an_expression_resolves_against_the_day_it_was_said(
    sentence: str, expected: Period
) -> None:
    assert periods(sentence, TUESDAY) == [expected]
    # The index reads keywords, stopwords gone and words stemmed: the same period.
    keywords = " ".join(stems(Segmenter().keywords(sentence)))
    assert periods(keywords, TUESDAY) == [expected]


@pytest.mark.parametrize("sentence", [sentence for sentence, _ in EXAMPLES])
def test_a_rule_is_skipped_only_on_text_it_cannot_match(sentence: str) -> None:
    """Each rule runs only on text holding one of the strings it needs: a rule that matches
    an example must find one of them there, or the skip would lose that expression."""
    for text in (sentence, " ".join(stems(Segmenter().keywords(sentence)))):
        lowered = text.lower()
        joined = re.sub(r"(?<=[^a-z])\s+(?=[^a-z])", "", lowered)
        for rules, source in ((timex._EN_RULES, lowered), (timex._ZH_RULES, joined)):
            for kind, needs, pattern in rules:
                if pattern.search(source):
                    assert any(need in lowered for need in needs), (kind, text)


def test_last_saturday_said_on_a_saturday_is_a_week_before() -> None:
    assert periods("last saturday", date(2023, 5, 6)) == [day(2023, 4, 29)]
    # 上周六 is the Saturday of the previous calendar week, even said on a Sunday.
    assert periods("上周六", date(2023, 5, 7)) == [day(2023, 4, 29)]
    assert periods("这周六", date(2023, 5, 7)) == [day(2023, 5, 6)]


@pytest.mark.parametrize(
    "sentence",
    [
        "You may be right about that",
        "I sat down on the sofa",
        "We march on",
        "I love it",
        "I will stay for two weeks",
        "The night was long",
    ],
)
def test_common_words_are_not_dates(sentence: str) -> None:
    assert periods(sentence, TUESDAY) == []


def test_a_day_is_indexed_under_its_week_month_and_year() -> None:
    assert period_terms(day(2023, 5, 6)) == ["@d2023-05-06", "@w2023-05-01", "@m2023-05", "@y2023"]
    assert period_terms(Period("month", date(2023, 5, 1))) == ["@m2023-05", "@y2023"]
    begin, end = period_bounds(Period("month", date(2023, 12, 1)))
    assert end - begin == 31 * 86400


@pytest.mark.parametrize(
    ("question", "asks"),
    [("When did Caroline go to the support group?", True), ("What year did he move?", True),
     ("她什么时候搬去厦门？", True), ("What did Caroline research?", False),
     ("林薇做什么工作？", False)],
)  # fmt: skip
def test_a_question_that_asks_for_a_time(question: str, asks: bool) -> None:
    assert asks_when(question) is asks
