"""The rule book: the features of every kind, read from the data files in `rules/`.

Each kind of attack has one TOML file (override, persona, limits, leak, turns, authority,
exfiltration, policy, principal, context, and relations for the structural forms), and
`catalog.toml` lists them in order and sets each phrase feature's reach. A file holds:

* `[fragments]`: named pieces of pattern or word list that features share. A fragment is a
  string, a list of strings (joined as they stand), or a table with `any` (the options of one
  non-capturing alternation) and optionally `before` (what stands in front of it).
* `[[english]]`, `[[chinese]]` and `[[general]]` tables, one per feature, in the order the
  catalog lists them (general ones, the forms written by structure, say their `lang`).
  A feature has `name`, `weight`, `pattern` (string or list of strings, joined), the anchors
  (`words` for English, `strings` for Chinese, space-separated; `marks`, a list of literal
  strings) and optionally `rule`, `counters` and `reach` (characters before, after).

`{{NAME}}` in a pattern, a fragment or an anchor list stands for the fragment of that name,
from any file (a name is defined once); regular expressions never hold two braces in a row.
The book reads its files once, when a classifier first asks for its features.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import Feature

RULES = Path(__file__).with_name("rules")
SECTIONS = ("english", "chinese", "general")
_LANG: dict[str, Literal["en", "zh"]] = {"english": "en", "chinese": "zh"}
_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
_FLAGS = re.MULTILINE
#: What a rule file may hold: its fragments and its features by section.
_TABLES = frozenset({"fragments", *SECTIONS})


class RulesDamaged(ValueError):
    """A rule file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One feature and where its data stands: the file (kind) and the section."""

    kind: str
    section: str
    feature: Feature


class RuleBook:
    """The features the data files in `directory` describe, composed on first use."""

    def __init__(self, directory: Path = RULES) -> None:
        self.directory = directory

    @property
    def features(self) -> tuple[Feature, ...]:
        return tuple(entry.feature for entry in self.entries)

    def group(self, kind: str, section: str | None = None) -> tuple[Feature, ...]:
        """The features of one file (`kind`, e.g. "relations"), or of one of its sections."""
        found = tuple(
            e.feature
            for e in self.entries
            if e.kind == kind and (section is None or e.section == section)
        )
        if not found:
            raise KeyError(f"no rules of kind {kind!r} section {section!r} in {self.directory}")
        return found

    @cached_property
    def entries(self) -> tuple[Entry, ...]:
        catalog = self._read("catalog")
        files = catalog.get("files")
        if not isinstance(files, list) or not files:
            raise RulesDamaged("catalog.toml lists no rule files ('files'); reinstall hologram")
        files = [str(name) for name in files]
        documents = {name: self._read(name) for name in ["vocabulary", *files]}
        for name, document in documents.items():
            unknown = sorted(set(document) - _TABLES)
            if unknown:
                raise RulesDamaged(
                    f"{name}.toml has tables no rule reads: {', '.join(unknown)} (expected "
                    f"{', '.join(sorted(_TABLES))})"
                )
        fragments = _Fragments(documents)
        reach: Mapping[str, Mapping[str, list[int]]] = catalog.get("reach", {})
        entries: list[Entry] = []
        for kind in files:
            for section in SECTIONS:
                for number, table in enumerate(documents[kind].get(section, [])):
                    where = f"{kind}.toml [[{section}]] #{number + 1}"
                    try:
                        feature = _feature(table, section, fragments, reach)
                    except (KeyError, TypeError, ValueError, re.error) as error:
                        raise RulesDamaged(f"{where}: {error}") from None
                    entries.append(Entry(kind, section, feature))
        return tuple(entries)

    def _read(self, name: str) -> dict[str, Any]:
        path = self.directory / f"{name}.toml"
        try:
            with open(path, "rb") as data:
                return tomllib.load(data)
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise RulesDamaged(f"{path}: {error}; reinstall hologram") from None


class _Fragments:
    """The named fragments of every file, expanded once each."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        self._raw: dict[str, tuple[str, object]] = {}
        for kind, document in documents.items():
            for name, value in document.get("fragments", {}).items():
                if name in self._raw:
                    raise RulesDamaged(
                        f"fragment {name!r} is defined in {self._raw[name][0]}.toml and in "
                        f"{kind}.toml; rename one"
                    )
                self._raw[name] = (kind, value)
        self._done: dict[str, str] = {}

    def expand(self, text: str, within: tuple[str, ...] = ()) -> str:
        return _PLACEHOLDER.sub(lambda m: self._fragment(m.group(1), within), text)

    def _fragment(self, name: str, within: tuple[str, ...]) -> str:
        if name in self._done:
            return self._done[name]
        if name in within:
            raise RulesDamaged(f"fragment {name!r} refers to itself: {' -> '.join(within)}")
        if name not in self._raw:
            raise RulesDamaged(f"no fragment named {name!r}; known: {', '.join(sorted(self._raw))}")
        _, value = self._raw[name]
        if isinstance(value, Mapping):
            options = [self.expand(o, (*within, name)) for o in value["any"]]
            text = self.expand(value.get("before", ""), (*within, name))
            text += "(?:" + "|".join(options) + ")"
        else:
            text = self.expand(_joined(value), (*within, name))
        self._done[name] = text
        return text


def _joined(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise TypeError(f"expected a string or a list of strings, got {value!r}")


def _feature(
    table: Mapping[str, Any],
    section: str,
    fragments: _Fragments,
    reach: Mapping[str, Mapping[str, list[int]]],
) -> Feature:
    name = str(table["name"])
    lang = _LANG.get(section) or table["lang"]
    if lang not in ("en", "zh"):
        raise ValueError(f"lang {lang!r} is neither 'en' nor 'zh'")
    anchors = fragments.expand(_joined(table["words" if lang == "en" else "strings"]))
    span = table["reach"] if "reach" in table else reach[lang][name]
    back, ahead = (int(n) for n in span)
    rule = table.get("rule")
    counters = table.get("counters")
    return Feature(
        name,
        None if rule is None else ReviewRule(rule),
        float(table["weight"]),
        re.compile(fragments.expand(_joined(table["pattern"])), _FLAGS),
        frozenset(anchors.split()),
        tuple(str(m) for m in table.get("marks", ())),
        None if counters is None else str(counters),
        lang,
        (back, ahead),
    )
