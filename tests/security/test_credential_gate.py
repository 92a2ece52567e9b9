"""The credential gate: secrets go out as `@{alias}`, come back as values only for a tool,
and are caught even when a stream cuts them in pieces."""

from __future__ import annotations

import itertools
from enum import StrEnum

import pytest

from hologram.security import CredentialGate, alias_of

GITHUB = "ghp_R3alT0kenValue9f8e7d"
OPENAI = "sk-proj-abcdef0123456789"
SHORT_INSIDE = "sk-proj-abcd"  # a secret that is a prefix of another


@pytest.fixture
def gate() -> CredentialGate:
    g = CredentialGate()
    g.declare("github", GITHUB)
    g.declare("llm.sources.default.api_key", OPENAI)
    g.declare("short", SHORT_INSIDE)
    return g


def test_aliases_are_derived_from_the_config_keys() -> None:
    assert alias_of("core.security.credential.github.secret") == "github"
    assert alias_of("core.llm.sources.default.api_key") == "llm.sources.default.api_key"
    assert alias_of("plugin.qq.token") == "plugin.qq.token"


def test_secrets_go_out_as_aliases_and_the_longest_match_wins(gate: CredentialGate) -> None:
    text = f"token={GITHUB}; key {OPENAI}; prefix {SHORT_INSIDE}!"
    masked = gate.mask(text)
    assert masked == ("token=@{github}; key @{llm.sources.default.api_key}; prefix @{short}!")
    assert GITHUB not in masked and SHORT_INSIDE not in masked


def test_aliases_come_back_as_values_and_unknown_aliases_stay(gate: CredentialGate) -> None:
    assert gate.unmask("Bearer @{github} @{nobody}") == f"Bearer {GITHUB} @{{nobody}}"
    args = {"headers": {"auth": "@{github}"}, "list": ["@{short}", 3]}
    assert gate.unmask_deep(args) == {"headers": {"auth": GITHUB}, "list": [SHORT_INSIDE, 3]}
    assert gate.mask_deep(gate.unmask_deep(args)) == args


def test_short_values_are_not_secrets_and_bad_aliases_are_refused() -> None:
    g = CredentialGate()
    with pytest.raises(ValueError, match="4\\+ characters"):
        g.declare("x", "abc")
    with pytest.raises(ValueError, match="alias"):
        g.declare("has space", "abcdefgh")


STREAM_TEXTS = [
    f"before {GITHUB} after",
    f"{GITHUB}{GITHUB}",
    f"x{OPENAI}y{SHORT_INSIDE}z",
    "no secret at all, just text that is long enough to be split",
    f"{SHORT_INSIDE}ef0123456789 and then {OPENAI[:-1]}",
    f"中文{GITHUB}结尾",
]


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_a_secret_split_across_stream_chunks_is_still_masked(
    gate: CredentialGate, text: str
) -> None:
    expected = gate.mask(text)
    # every way of cutting the text in two or three pieces
    for a, b in itertools.combinations(range(len(text) + 1), 2):
        pieces = [text[:a], text[a:b], text[b:]]
        scrubber = gate.scrubber()
        out = "".join(scrubber.feed(p) for p in pieces) + scrubber.flush()
        assert out == expected, pieces
        assert GITHUB not in out and OPENAI not in out


def test_a_stream_holds_back_only_what_may_start_a_secret(gate: CredentialGate) -> None:
    """A reply's first words go out at once: waiting for a secret's length of text (the
    longest key here is 24 characters, a real one up to ~160) delayed the first token."""
    scrubber = gate.scrubber()
    assert scrubber.feed("It ") == "It "
    assert scrubber.feed("will rain") == "will rain"
    # An end that a secret starts with waits for the next piece, which decides it.
    assert scrubber.feed(", key gh") == ", key "
    assert scrubber.feed("p_R3") == ""
    assert scrubber.feed("x and more") == "ghp_R3x and more"
    assert scrubber.feed(" then sk-proj-abcd") == " then "
    assert scrubber.flush() == "@{short}"


def test_one_character_chunks(gate: CredentialGate) -> None:
    text = f"a {GITHUB} b {OPENAI} c"
    scrubber = gate.scrubber()
    emitted = [scrubber.feed(ch) for ch in text]
    assert "".join(emitted) + scrubber.flush() == gate.mask(text)
    # no prefix of the output ever held more than a piece of a secret in clear
    running = ""
    for piece in emitted:
        running += piece
        assert GITHUB not in running and OPENAI not in running


def test_a_text_as_long_as_the_shortest_secret_is_still_searched(gate: CredentialGate) -> None:
    """Texts shorter than every secret skip the search (an event's keys, a delta's round):
    the one at the boundary must not."""
    assert gate.shortest == len(SHORT_INSIDE)
    assert gate.mask(SHORT_INSIDE) == "@{short}"
    assert gate.mask(SHORT_INSIDE[:-1]) == SHORT_INSIDE[:-1]
    assert gate.mask_deep({"round": 1, "text": SHORT_INSIDE}) == {"round": 1, "text": "@{short}"}


def test_an_empty_piece_keeps_what_is_held_for_the_next_piece_to_decide(
    gate: CredentialGate,
) -> None:
    scrubber = gate.scrubber()
    assert scrubber.feed("key ghp_R3") == "key "
    assert scrubber.feed("") == ""  # a chunk with no text in between
    assert scrubber.feed(GITHUB[len("ghp_R3") :] + " done") == "@{github} done"
    assert scrubber.feed("") == "" and scrubber.flush() == ""


def test_every_string_of_a_payload_is_masked_wherever_it_sits(gate: CredentialGate) -> None:
    class Kind(StrEnum):
        LEAKY = f"kind-{GITHUB}"

    payload = {
        "ids": ["a1", f"id-{GITHUB}"],
        GITHUB: (1, 2.5, None, True, [{"deep": f"x {OPENAI} y"}]),
        "kind": Kind.LEAKY,
        "scores": [0.1, None],
        7: "seven",
    }
    assert gate.mask_deep(payload) == {
        "ids": ["a1", "id-@{github}"],
        "@{github}": [1, 2.5, None, True, [{"deep": "x @{llm.sources.default.api_key} y"}]],
        "kind": "kind-@{github}",
        "scores": [0.1, None],
        7: "seven",
    }
