"""JSON read where it enters: nesting, number size, non-finite numbers and lone surrogates
are refused with a JsonRefused that names the field."""

from __future__ import annotations

import json

import pytest

from hologram.sdk.jsontext import (
    MAX_DEPTH,
    JsonRefused,
    loads,
    lone_surrogate,
    replace_lone_surrogates,
)


def test_plain_json_reads_as_json_loads_does() -> None:
    text = '{"text": "héllo 😀 \\ud83d\\ude00", "n": [1, -2.5e3, true, null]}'
    assert loads(text) == json.loads(text)
    assert loads(text.encode()) == json.loads(text)


def test_nesting_past_the_limit_is_refused_however_deep() -> None:
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for depth in (MAX_DEPTH + 1, 100_000):
        with pytest.raises(JsonRefused, match=f"deeper than {MAX_DEPTH} levels"):
            loads("[" * depth + "]" * depth)
    with pytest.raises(JsonRefused, match="deeper than"):
        loads('{"a": ' * 100_000 + "1" + "}" * 100_000)


def test_numbers_past_the_size_limit_and_non_finite_numbers_are_refused() -> None:
    with pytest.raises(JsonRefused, match="a number of 5000 characters"):
        loads('{"value": ' + "9" * 5000 + "}")
    with pytest.raises(JsonRefused, match="too large"):
        loads("[1e999]")
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(JsonRefused, match="not JSON"):
            loads(f"[{constant}]")
    assert loads(str(2**63 - 1)) == 2**63 - 1


def test_a_lone_surrogate_is_refused_naming_its_field() -> None:
    with pytest.raises(
        JsonRefused, match=r"^text holds a lone surrogate \(\\ud800 at character 6\)"
    ):
        loads('{"text": "probe \\ud800 x"}')
    with pytest.raises(JsonRefused) as refused:
        loads('{"params": {"args": ["ok", "\\udfff"]}}')
    assert refused.value.where == "params.args[1]"
    with pytest.raises(JsonRefused) as refused:
        loads('{"\\ud800": 1}')
    assert refused.value.where == "\ufffd", "the path itself is printable text"
    # A valid pair written as two escapes is one code point, not a surrogate.
    assert loads('"\\ud83d\\ude00"') == "😀"


def test_surrogates_are_found_and_replaced_by_the_replacement_character() -> None:
    assert lone_surrogate("plain") is None
    assert lone_surrogate("é\ud800") == 1
    assert replace_lone_surrogates("a\ud800b\udc00") == "a\ufffdb\ufffd"
