"""Time expressions in English and Chinese, resolved against the moment they were said.

"I went to the support group yesterday", said on 8 May 2023, is about 7 May 2023; a
question "what did she do on 7 May?" shares no word with it. So each stored turn's
relative expressions ("yesterday", "last night", "last Saturday", "two years ago", "for
three years now", "上周六", "去年", "前天", "昨晚") and absolute ones ("May 6, 2023",
"2023年5月6日") are resolved to calendar periods, and a question's own expressions are
resolved the same way, against its own moment. A duration up to the moment said ("I've
had them for three years now") is read as its start, like "three years ago".

The rules read text as the recall index keeps it: lower-cased keywords, stopwords gone
("a week ago" arrives as "week ago", "this week" as "week"), English words lightly
stemmed ("years" as "year", "three" as "thre"), Chinese cut by jieba into pieces ("两个 月
前"). They are written for the languages, not for one data set: a bare weekday or month
("on Saturday", "in June") is read as the nearest one not after the moment said, and a
word that is also common English ("may") counts as a month only beside a day or a year.

A period is (grain, first day): a day, an ISO week (Monday first), a month or a year.
`period_terms` turns it into index terms, one per grain it lies in, so a question about
"May 2023" meets a turn about 6 May 2023 at the month's term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

Grain = Literal["day", "week", "month", "year"]

_WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6,
}  # fmt: skip
_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1,
    "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_COUNTS = {
    "one": 1, "two": 2, "three": 3, "thre": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twelv": 12, "few": 3,
    "couple": 2, "coupl": 2, "several": 3, "sever": 3, "an": 1, "a": 1,
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}
_ZH_DIGITS |= {"八": 8, "九": 9, "几": 3}
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_UNIT = r"(day|week|weekend|month|year)s?"
_WEEKDAY = r"(" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")s?"
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"

# Each rule comes with strings of which any text it matches holds one: a rule runs only on
# text holding one of them. Most turns state no time, and a substring test is a fraction of
# a regular expression's scan (re has no multi-pattern search): reading a year of turns
# (200k) for their times took 10 s with every rule run on every turn.
_DIGITS = tuple("0123456789")
_CENTURIES = ("19", "20")
_LAST = ("last", "past", "previ", "next")
_MONTH_STARTS = tuple(name for name in _MONTHS if len(name) == 3)
_ZH_WEEK = ("周", "星", "礼")  # one character each: a piece boundary may split a word

Rule = tuple[str, tuple[str, ...], re.Pattern[str]]
"""A rule's kind, the strings a text it matches holds one of, and its pattern."""

_EN_RULES: list[Rule] = [
    # 2023-06-02, 2023/06/02, and as keywords keep it: "2023 06 02". Digits bound it, not
    # \b: Chinese characters are word characters ("在2023-06-02举行").
    ("iso", _CENTURIES, re.compile(r"(?<!\d)((?:19|20)\d\d)(?:[-/.]|\s+)(\d{1,2})"
                                   r"(?:[-/.]|\s+)(\d{1,2})(?!\d)")),
    ("day_month_year", _DIGITS, re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b,?(?:\s+{_YEAR}\b)?")),
    ("month_day_year", _DIGITS, re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:day|week|month|year))"
                                  rf",?(?:\s+{_YEAR}\b)?")),
    ("month_year", _CENTURIES, re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")),
    ("ago", ("ago",), re.compile(rf"\b(?:(\w+)\s+)?{_UNIT}\s+ago\b")),
    ("day_before", ("befor",), re.compile(r"\bday\s+befor(?:e)?\s+yesterday\b")),
    ("day_after", ("after",), re.compile(r"\bday\s+after\s+tomorrow\b")),
    ("yesterday", ("yesterday", "today", "tonight", "tomorrow"),
     re.compile(r"\b(yesterday|today|tonight|tomorrow)\b")),
    ("last_night", ("night",), re.compile(r"\b(?:(last)\s+night|night\s+befor(?:e)?\s+(last))\b")),
    # A duration up to the moment said: "I've had them for 3 years now" began in 2020.
    ("duration", ("now",), re.compile(rf"\b(?:(\w+)\s+)?{_UNIT}\s+now\b")),
    ("last_weekday", _LAST, re.compile(rf"\b(last|past|previou?s?|next)\s+{_WEEKDAY}\b")),
    ("last_unit", _LAST, re.compile(rf"\b(last|past|previou?s?|next)\s+{_UNIT}\b")),
    ("last_month_name", ("last", "next"), re.compile(rf"\b(last|next)\s+{_MONTH}\b")),
    # "may" and "march" are common English words: months only beside a day or year.
    ("bare_month", _MONTH_STARTS, re.compile(r"\b(january|february|april|june|july|august|september"
                              r"|october|november|december)\b")),
    ("bare_weekday", ("day",), re.compile(rf"\b({'|'.join(_WEEKDAYS)})\b")),
    ("year", _CENTURIES, re.compile(rf"\b{_YEAR}\b(?!\s*年)")),
]  # fmt: skip

_ZN = r"(\d+|[一二两三四五六七八九十几]+)"
_ZREL = r"(上上|上|这|本|下)(?:个)?"
_ZH_RULES: list[Rule] = [
    ("zh_ymd", ("年",), re.compile(rf"{_ZN}年{_ZN}月{_ZN}[日号]")),
    ("zh_md", ("月",), re.compile(rf"(?<![年\d]){_ZN}月{_ZN}[日号]")),
    ("zh_ym", ("年",), re.compile(rf"{_ZN}年{_ZN}月(?![\d一二三四五六七八九十]*[日号])")),
    ("zh_ago", ("前",), re.compile(rf"{_ZN}(?:个)?(天|日|周|星期|礼拜|月|年)(?:以)?前")),
    ("zh_rel_weekday", _ZH_WEEK, re.compile(rf"{_ZREL}(?:周|星期|礼拜)([一二三四五六日天])")),
    ("zh_rel_week", _ZH_WEEK, re.compile(rf"{_ZREL}(?:周|星期|礼拜)(?![一二三四五六日天])")),
    ("zh_rel_month", ("月",), re.compile(rf"(?<![早晚马路身]){_ZREL}月")),
    ("zh_rel_year", ("年",), re.compile(r"(大前年|前年|去年|今年|明年|后年)")),
    ("zh_rel_day", ("天", "日"), re.compile(r"(大前天|前天|昨天|昨日|今天|今日|明天|后天)")),
    ("zh_rel_night", ("晚", "夜", "早"), re.compile(r"(前晚|昨晚|昨夜|今晚|今早|明晚)")),
    ("zh_year", ("年",), re.compile(r"((?:19|20)\d\d)年(?!\d*月)")),
]  # fmt: skip


@dataclass(frozen=True, slots=True, order=True)
class Period:
    grain: Grain
    start: date
    """The period's first day (a week's Monday, a month's 1st, a year's 1 January)."""


def day_of(at: float) -> date:
    """The calendar day of the epoch time `at` (UTC, as the harness and kernel store it)."""
    return datetime.fromtimestamp(at, UTC).date()


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0))
    return sum(_ZH_DIGITS.get(ch, 0) * 10**i for i, ch in enumerate(reversed(text)))


def _month_start(year: int, month: int) -> date:
    year += (month - 1) // 12
    return date(year, (month - 1) % 12 + 1, 1)


def _shift(today: date, grain: str, n: int) -> Period | None:
    """The period `n` units of `grain` from `today` (negative: before)."""
    if grain in ("day", "天", "日"):
        return Period("day", today + timedelta(days=n))
    if grain in ("week", "weekend", "周", "星期", "礼拜"):
        monday = today - timedelta(days=today.weekday())
        return Period("week", monday + timedelta(weeks=n))
    if grain in ("month", "月"):
        return Period("month", _month_start(today.year, today.month + n))
    if grain in ("year", "年"):
        year = today.year + n
        return Period("year", date(year, 1, 1)) if 1 <= year <= 9999 else None
    return None


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        return Period("day", date(year, month, day))
    except ValueError:
        return None


def _english(kind: str, m: re.Match[str], today: date) -> Period | None:
    g = m.groups()
    if kind == "iso":
        return _day(int(g[0]), int(g[1]), int(g[2]))
    if kind == "day_month_year":
        return _day(int(g[2]) if g[2] else today.year, _MONTHS[g[1]], int(g[0]))
    if kind == "month_day_year":
        return _day(int(g[2]) if g[2] else today.year, _MONTHS[g[0]], int(g[1]))
    if kind == "month_year":
        return Period("month", date(int(g[1]), _MONTHS[g[0]], 1))
    if kind in ("ago", "duration"):
        count = _COUNTS.get(g[0] or "", int(g[0]) if g[0] and g[0].isdigit() else 1)
        return _shift(today, g[1], -count)
    if kind in ("day_before", "day_after"):
        return _shift(today, "day", -2 if kind == "day_before" else 2)
    if kind == "last_night":
        return _shift(today, "day", -1 if g[0] else -2)
    if kind == "yesterday":
        return _shift(today, "day", {"yesterday": -1, "tomorrow": 1}.get(g[0], 0))
    if kind == "last_weekday":
        wanted = _WEEKDAYS[g[1]]
        if g[0] == "next":
            return _shift(today, "day", (wanted - today.weekday() - 1) % 7 + 1)
        return _shift(today, "day", -((today.weekday() - wanted - 1) % 7 + 1))
    if kind == "last_unit":
        return _shift(today, g[1], 1 if g[0] == "next" else -1)
    if kind == "last_month_name":
        month = _MONTHS[g[1]]
        if g[0] == "next":
            return Period("month", date(today.year + (month <= today.month), month, 1))
        return Period("month", date(today.year - (month >= today.month), month, 1))
    if kind == "bare_month":
        month = _MONTHS[g[0]]
        return Period("month", date(today.year - (month > today.month), month, 1))
    if kind == "bare_weekday":
        return _shift(today, "day", -((today.weekday() - _WEEKDAYS[g[0]]) % 7))
    if kind == "year":
        return Period("year", date(int(g[0]), 1, 1))
    return None


def _chinese(kind: str, m: re.Match[str], today: date) -> Period | None:
    g = m.groups()
    offset = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1}
    if kind == "zh_ymd":
        return _day(_zh_number(g[0]), _zh_number(g[1]), _zh_number(g[2]))
    if kind == "zh_md":
        return _day(today.year, _zh_number(g[0]), _zh_number(g[1]))
    if kind == "zh_ym":
        month = _zh_number(g[1])
        return Period("month", date(_zh_number(g[0]), month, 1)) if 1 <= month <= 12 else None
    if kind == "zh_ago":
        return _shift(today, g[1], -_zh_number(g[0]))
    if kind == "zh_rel_weekday":
        week = _shift(today, "week", offset[g[0]])
        assert week is not None
        return Period("day", week.start + timedelta(days=_ZH_WEEKDAY[g[1]]))
    if kind == "zh_rel_week":
        return _shift(today, "week", offset[g[0]])
    if kind == "zh_rel_month":
        return _shift(today, "month", offset[g[0]])
    if kind == "zh_rel_year":
        years = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
        return _shift(today, "year", years[g[0]])
    if kind == "zh_rel_day":
        days = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "明天": 1, "后天": 2}
        return _shift(today, "day", days.get(g[0], 0))
    if kind == "zh_rel_night":
        return _shift(today, "day", {"前晚": -2, "昨晚": -1, "昨夜": -1, "明晚": 1}.get(g[0], 0))
    if kind == "zh_year":
        return Period("year", date(int(g[0]), 1, 1))
    return None


_ZH_SPACES = re.compile(r"(?<=[^a-z])\s+(?=[^a-z])")


def _any_need(rules: list[Rule]) -> re.Pattern[str]:
    """A pattern that finds any string a rule of `rules` needs: one scan tells that none can
    match (most turns), where testing each rule's strings costs a call each."""
    needs = sorted({need for _, rule_needs, _ in rules for need in rule_needs}, key=len)
    return re.compile("|".join(map(re.escape, reversed(needs))))


_EN_NEEDS, _ZH_NEEDS = _any_need(_EN_RULES), _any_need(_ZH_RULES)


def _holds(text: str, needs: tuple[str, ...]) -> bool:
    # A loop, not any() over a generator: half the cost, and it runs for every rule.
    for need in needs:  # noqa: SIM110
        if need in text:
            return True
    return False


def periods(text: str, said: date) -> list[Period]:
    """The periods the time expressions of `text` name, resolved against `said` (the day
    it was said), in the order found; each stretch of text counts for one expression, the
    most specific rule first ("last Saturday" is not also "Saturday")."""
    found: list[tuple[int, Period]] = []
    lowered = text.lower()
    for rules, any_need, read in (
        (_EN_RULES, _EN_NEEDS, _english),
        (_ZH_RULES, _ZH_NEEDS, _chinese),
    ):
        if any_need.search(lowered) is None:
            continue
        applying = [(kind, pattern) for kind, needs, pattern in rules if _holds(lowered, needs)]
        # jieba's pieces arrive spaced ("两个 月 前"): Chinese rules read them joined.
        source = lowered if read is _english else _ZH_SPACES.sub("", lowered)
        taken = [False] * (len(source) + 1)
        for kind, pattern in applying:
            for m in pattern.finditer(source):
                if any(taken[m.start() : m.end()]):
                    continue
                try:
                    period = read(kind, m, said)
                except (ValueError, OverflowError):
                    period = None
                if period is not None:
                    taken[m.start() : m.end()] = [True] * (m.end() - m.start())
                    found.append((m.start(), period))
    return [p for _, p in sorted(found, key=lambda item: item[0])]


def period_terms(period: Period) -> list[str]:
    """Index terms for `period`: its own, then each coarser period's it lies in (a day's
    week, month and year), so coarser questions meet finer statements."""
    start = period.start
    monday = start - timedelta(days=start.weekday())
    month, year = f"@m{start:%Y-%m}", f"@y{start:%Y}"
    if period.grain == "day":
        return [f"@d{start.isoformat()}", f"@w{monday.isoformat()}", month, year]
    if period.grain == "week":
        return [f"@w{monday.isoformat()}", month, year]
    if period.grain == "month":
        return [month, year]
    return [year]


def period_bounds(period: Period) -> tuple[float, float]:
    """The epoch seconds (UTC) where `period` begins and where the next one begins."""
    start = period.start
    if period.grain == "day":
        end = start + timedelta(days=1)
    elif period.grain == "week":
        end = start + timedelta(weeks=1)
    elif period.grain == "month":
        end = _month_start(start.year, start.month + 1)
    else:
        end = date(start.year + 1, 1, 1)
    begin = datetime(start.year, start.month, start.day, tzinfo=UTC).timestamp()
    return begin, datetime(end.year, end.month, end.day, tzinfo=UTC).timestamp()


def time_terms(text: str, said: date) -> list[str]:
    """The index terms of every time expression of `text`, said on `said`, deduplicated."""
    return list(dict.fromkeys(t for p in periods(text, said) for t in period_terms(p)))


_WHEN_QUESTION = re.compile(
    r"^\s*(when|what (year|month|day|date|time)|which (year|month|day)|how long ago)\b"
    r"|什么时候|哪天|哪一天|哪年|哪一年|几月|几号|何时|多久以前"
)


def asks_when(question: str) -> bool:
    """Whether `question` asks for a time (its answer is a turn that says one)."""
    return _WHEN_QUESTION.search(question.lower()) is not None
