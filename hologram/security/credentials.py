"""The credential gate (spec: outbound plaintext becomes `@{alias}`, inbound results are
scrubbed, real values are filled in only right before execution).

The gate knows every configured secret: any key whose name ends in api_key, token, secret
or password (provider keys, plugin tokens), and the user's declared credentials
`core.security.credential.<alias>.secret`. It re-reads them whenever the registry has been
written since it last looked, so a key set at run time is protected from the next call on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hologram.config import ConfigRegistry, SecuritySettings, is_core_key, is_secret

CREDENTIAL_PREFIX = SecuritySettings.credential_prefix
ALIAS = re.compile(r"@\{([A-Za-z0-9_.-]{1,80})\}")
MIN_SECRET = 4
"""Shorter values are not treated as secrets: masking every "abc" in every text would mangle
ordinary words, and a three-character secret protects nothing anyway."""


def alias_of(key: str) -> str:
    """`core.security.credential.github.secret` → `github`; any other key → the key without
    its `core.` prefix (`llm.sources.default.api_key`, `plugin.qq.token`)."""
    if key.startswith(CREDENTIAL_PREFIX):
        return key[len(CREDENTIAL_PREFIX) :].rsplit(".", 1)[0]
    return key.split(".", 1)[1] if is_core_key(key) else key


class CredentialGate:
    """Swaps secret values for their aliases on the way out and back on the way in."""

    def __init__(self, config: ConfigRegistry | None = None) -> None:
        self._config = config
        self._seen = -1
        self._configured: dict[str, str] = {}
        self._declared: dict[str, str] = {}
        self._by_alias: dict[str, str] = {}
        self._alias_of_value: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self.longest = 0
        #: The shortest secret's length: a shorter text cannot hold one.
        self.shortest = 0
        self._prefixes: frozenset[str] = frozenset()
        self._first_characters: frozenset[str] = frozenset()

    # ---- what is secret -----------------------------------------------------------------

    def sync(self) -> None:
        """Re-read the secrets if the registry changed since the last look."""
        config = self._config
        if config is None or config.version == self._seen:
            return
        self._seen = config.version
        self._configured = {
            alias_of(e.key): e.value
            for e in config.entries()
            if is_secret(e.key) and isinstance(e.value, str)
        }
        self._rebuild()

    def declare(self, alias: str, value: str) -> None:
        """Protect `value` under `alias` for this run only (a plugin's own token, a test)."""
        if not ALIAS.fullmatch(f"@{{{alias}}}"):
            raise ValueError(f"alias {alias!r}: use 1-80 letters, digits, '_', '.' or '-'")
        if not isinstance(value, str) or len(value) < MIN_SECRET:
            raise ValueError(f"secret {alias!r} must be a string of {MIN_SECRET}+ characters")
        self._declared[alias] = value
        self.sync()
        self._rebuild()

    def _rebuild(self) -> None:
        merged = {**self._configured, **self._declared}
        self._by_alias = {a: v for a, v in merged.items() if len(v) >= MIN_SECRET}
        self._alias_of_value = {v: a for a, v in self._by_alias.items()}
        values = sorted(self._alias_of_value, key=len, reverse=True)
        # Longest first, so a secret that contains another is replaced whole.
        self._pattern = re.compile("|".join(map(re.escape, values))) if values else None
        self.longest = len(values[0]) if values else 0
        self.shortest = len(values[-1]) if values else 0
        # What a stream's end may be the start of: only such an end waits for the next piece.
        self._prefixes = frozenset(v[:i] for v in values for i in range(1, len(v)))
        self._first_characters = frozenset(v[0] for v in values)

    def aliases(self) -> list[str]:
        self.sync()
        return sorted(self._by_alias)

    def values(self) -> list[str]:
        """The protected values themselves: for tests that look for leaks, never for output."""
        self.sync()
        return list(self._by_alias.values())

    # ---- out and in -----------------------------------------------------------------------

    def mask(self, text: str) -> str:
        """`text` with every secret value replaced by `@{alias}`."""
        pattern = self._pattern
        # Without a search: an event's keys and short values (every streamed delta names
        # its input and round) cannot hold a secret, so a reply's first words skip it.
        if pattern is None or not text or len(text) < self.shortest:
            return text
        lookup = self._alias_of_value
        return pattern.sub(lambda m: "@{" + lookup[m.group(0)] + "}", text)

    def contains_secret(self, text: str) -> bool:
        return self._pattern is not None and self._pattern.search(text) is not None

    def unmask(self, text: str) -> str:
        """`text` with every known `@{alias}` replaced by its value; unknown aliases stay."""
        if "@{" not in text:
            return text
        table = self._by_alias
        return ALIAS.sub(lambda m: table.get(m.group(1), m.group(0)), text)

    def mask_deep(self, value: Any) -> Any:
        return _deep(value, self.mask)

    def unmask_deep(self, value: Any) -> Any:
        return _deep(value, self.unmask)

    def scrubber(self) -> StreamScrubber:
        return StreamScrubber(self)


_SCALARS = (int, float, bool, type(None))


def _deep(value: Any, change: Callable[[str], str]) -> Any:
    """A copy of a JSON-like value with `change` applied to every string, keys included.
    Every event's payload passes here: strings and numbers inside a container are handled
    in place, without a call each (a prune's payload lists a score and an id per event)."""
    kind = type(value)
    if kind is dict:
        return {
            (change(k) if type(k) is str else _deep(k, change)): (
                change(v) if type(v) is str else v if type(v) in _SCALARS else _deep(v, change)
            )
            for k, v in value.items()
        }
    if kind is list or kind is tuple:
        return [
            change(v) if type(v) is str else v if type(v) in _SCALARS else _deep(v, change)
            for v in value
        ]
    # Subclasses (a StrEnum, a named tuple) land here.
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {_deep(k, change): _deep(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_deep(v, change) for v in value]
    return value


class StreamScrubber:
    """Masks a stream of text pieces where a secret may be cut across two pieces.

    It holds back only the end of what it has seen that is the start of some secret: the
    next piece may complete it. Everything before that is masked and passed on at once, so
    a reply's first words are not kept waiting for a secret's length of text. `feed`
    returns what is safe to pass on, `flush` the rest at the end of the stream.
    """

    def __init__(self, gate: CredentialGate) -> None:
        gate.sync()
        self._gate = gate
        self._held = ""

    def feed(self, piece: str) -> str:
        if not piece:
            # Nothing new (a chunk without reasoning, or without text): what is held stays
            # held, since only more text can decide it.
            return ""
        text = self._held + piece
        pattern = self._gate._pattern
        if pattern is None:
            self._held = ""
            return text
        hold = self._hold_from(text, 0)
        for match in pattern.finditer(text):
            if match.start() >= hold:
                # It may be a shorter secret that is the start of a longer one the next
                # piece completes: not final yet.
                break
            if match.end() > hold:
                # A whole secret reaches into the held end: it is final and goes out masked
                # whole; what may start a secret lies after it, if anywhere.
                hold = self._hold_from(text, match.end())
        self._held = text[hold:]
        return self._gate.mask(text[:hold])

    def _hold_from(self, text: str, begin: int) -> int:
        """The first place from `begin` whose rest of `text` is the start of a secret."""
        gate = self._gate
        for place in range(max(begin, len(text) - gate.longest + 1), len(text)):
            if text[place] in gate._first_characters and text[place:] in gate._prefixes:
                return place
        return len(text)

    def flush(self) -> str:
        rest, self._held = self._held, ""
        return self._gate.mask(rest)
