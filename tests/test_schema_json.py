"""`to_json`: the one conversion of the API's replies and the event stream's frames."""

from __future__ import annotations

import enum
from collections import OrderedDict
from dataclasses import dataclass
from typing import NamedTuple

from hologram.sdk.schema import to_json


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Kind(enum.StrEnum):
    TEXT = "text"


class Point(NamedTuple):
    x: int
    y: int


@dataclass(frozen=True)
class Inner:
    kind: Kind
    tags: frozenset[str]


@dataclass(frozen=True)
class Outer:
    inner: Inner
    points: tuple[Point, ...]
    table: dict[object, object]


def test_every_value_comes_out_as_plain_json_of_its_exact_type() -> None:
    value = Outer(
        Inner(Kind.TEXT, frozenset({"a"})),
        (Point(1, 2),),
        {
            1: Colour.RED,
            Level.HIGH: [Level.HIGH, (True, None, 1.5)],
            "nested": OrderedDict(b={2}),
            (1, 2): "a tuple key",
        },
    )
    converted = to_json(value)
    assert converted == {
        "inner": {"kind": "text", "tags": ["a"]},
        "points": [[1, 2]],
        "table": {
            "1": "red",
            "3": [3, [True, None, 1.5]],
            "nested": {"b": [2]},
            "(1, 2)": "a tuple key",
        },
    }
    # Exact types, not subclasses that print alike: a JSON encoder or a client comparing
    # with `type(...) is` sees plain values.
    assert type(converted["inner"]["kind"]) is str
    assert type(converted["table"]["3"][0]) is int
    assert all(type(k) is str for k in converted["table"])


def test_a_value_it_does_not_know_is_left_for_the_encoder() -> None:
    class Opaque:
        pass

    thing = Opaque()
    assert to_json({"x": thing})["x"] is thing
