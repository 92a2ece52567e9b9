"""`python -m hologram export|import`: a companion's conversations and memory as JSONL.

One JSON object a line, its `kind` first. The first line names the format and its version;
then, in the order an import writes them: `media` (the bytes, base64, of every image the
records refer to), `input` (the input journal: text, channel, state, reply, times),
`context` (the context window's events), `cold` (the cold context's documents), `block`
(the graph memory's text blocks), `entity` (an entity's type and traits) and `fact` (a
relation with the time it became true and, when closed, the time it stopped being true).

Vectors are left out: they belong to the embedder that made them, and the importing
kernel computes its own. Both commands boot a kernel on their data dir (as `tools` does),
so every store is read and written through its own API and indexed as it would be in use.

An import reads and checks the whole file before it writes anything: a bad line is named
(`line N: …`) and nothing is stored. It refuses a data dir that already holds conversations
or memory, so a file imported twice is not doubled and nothing of the other is mixed in.
Not carried: the knowledge base (plain files under `knowledge/`, copied as they are), the
settings and their secrets (`config.db`), the graph's media blocks and entity aliases.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from hologram._version import __version__
from hologram.agent import InputState, RecordRow
from hologram.facade import Kernel
from hologram.media import MediaError, Upload, digest_of
from hologram.memory import ColdDoc, ContextEvent, GraphError, Triple
from hologram.sdk import MediaRef

FORMAT = "hologram-export"
VERSION = 1
KINDS = ("media", "input", "context", "cold", "block", "entity", "fact")
_VECTOR_KEYS = ("fp", "vec")
_ALL = 1 << 62
"""A row limit that is no limit (the graph's listings take one)."""


class TransferError(Exception):
    """A file that cannot be imported, or a data dir that must not take it."""


class PinnedClock:
    """The kernel's clock, which an import holds at a fact's own time while it commits the
    fact: the graph stamps a fact with the clock's now, and a fact imported keeps the time
    it became true (and stopped being true) on the companion it came from."""

    def __init__(self) -> None:
        self._pinned: float | None = None

    def now(self) -> float:
        return time.time() if self._pinned is None else self._pinned

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def idle_until(self, event: asyncio.Event) -> None:
        await event.wait()

    @contextlib.contextmanager
    def at(self, when: float) -> Iterator[None]:
        self._pinned = when
        try:
            yield
        finally:
            self._pinned = None


# ---- export -------------------------------------------------------------------------------


def _without_vector(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _VECTOR_KEYS}


async def export_records(kernel: Kernel) -> list[dict[str, Any]]:
    """Every record of the kernel's conversations and memory, in import order."""
    state = kernel.state
    assert state.memory is not None and state.coldcontext is not None
    assert state.graph is not None and state.media is not None
    journal = kernel.inputs.journal
    await state.coldcontext.wait_ready()
    store = state.graph.store
    await store.blocks.wait_ready()
    events = state.memory.context.events
    docs = state.coldcontext.documents()
    digests = sorted(
        {m.digest for event in events for m in event.media}
        | {m.digest for doc in docs for m in doc.media}
    )
    records: list[dict[str, Any]] = []
    for digest in digests:
        ref = state.media.ref(digest)
        data = await state.media.aget(digest)
        records.append(
            {
                "kind": "media",
                "digest": digest,
                "name": ref.name,
                "data": base64.b64encode(data).decode("ascii"),
            }
        )
    records += [{"kind": "input", **row} for row in await journal.all()]
    records += [{"kind": "context", **_without_vector(e.to_json())} for e in events]
    for doc in docs:
        obj = _without_vector(doc.to_json())
        obj.pop("tokens", None)  # derived from the text by the importer's segmenter
        records.append({"kind": "cold", **obj})
    records += [
        {"kind": "block", "text": b.text, "source": b.source, "created_at": b.created_at}
        for b in await store.blocks.list("text")
        if b.text
    ]
    entities = await store.list_entities(_ALL)
    records += [
        {"kind": "entity", "name": e.name, "type": e.type, "traits": e.traits}
        for e in entities
        if e.type or e.traits
    ]
    facts = await store.facts(history=True, limit=_ALL)
    records += [
        {
            "kind": "fact",
            "source": f.source,
            "relation": f.relation,
            "target": f.target,
            "confidence": f.confidence,
            "sentence_text": f.sentence_text,
            "valid_at": f.valid_at,
            "invalid_at": f.invalid_at,
            "closed_reason": f.closed_reason,
        }
        for f in sorted(facts, key=lambda f: (f.valid_at, f.id))
    ]
    return records


def header(records: list[dict[str, Any]], data_dir: Path) -> dict[str, Any]:
    counts = {kind: sum(r["kind"] == kind for r in records) for kind in KINDS}
    return {
        "kind": FORMAT,
        "version": VERSION,
        "hologram": __version__,
        "exported_at": time.time(),
        "data_dir": str(data_dir),
        "counts": counts,
    }


def write_jsonl(out: IO[str], records: list[dict[str, Any]]) -> None:
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


# ---- reading a file -------------------------------------------------------------------------


@dataclasses.dataclass
class Parsed:
    """A file read and checked whole, each record in the type its store takes."""

    media: list[tuple[str, str, bytes]] = dataclasses.field(default_factory=list)
    inputs: list[RecordRow] = dataclasses.field(default_factory=list)
    ids: set[int] = dataclasses.field(default_factory=set)
    context: list[ContextEvent] = dataclasses.field(default_factory=list)
    cold: list[ColdDoc] = dataclasses.field(default_factory=list)
    blocks: list[tuple[str, str, float]] = dataclasses.field(default_factory=list)
    entities: list[tuple[str, str, dict[str, Any]]] = dataclasses.field(default_factory=list)
    facts: list[tuple[Triple, float, float | None, str]] = dataclasses.field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "media": len(self.media),
            "input": len(self.inputs),
            "context": len(self.context),
            "cold": len(self.cold),
            "block": len(self.blocks),
            "entity": len(self.entities),
            "fact": len(self.facts),
        }


def _string(obj: dict[str, Any], key: str, *, empty: bool = True) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ValueError(f"{key!r} must be a {'' if empty else 'non-empty '}string")
    return value


def _time(obj: dict[str, Any], key: str, *, optional: bool = False) -> float | None:
    value = obj.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{key!r} must be a time in seconds since the epoch")
    return float(value)


def _input(obj: dict[str, Any]) -> RecordRow:
    named = obj.get("state")
    try:
        # Only a string can name a state: anything else is refused like an unknown name.
        state = InputState(named if isinstance(named, str) else "")
    except ValueError:
        states = ", ".join(s.value for s in InputState)
        raise ValueError(f"'state' must be one of {states}") from None
    level = obj.get("level")
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 4:
        raise ValueError("'level' must be an integer from 0 to 4")
    reply = obj.get("reply")
    if reply is not None and not isinstance(reply, str):
        raise ValueError("'reply' must be a string or null")
    created = _time(obj, "created")
    assert created is not None
    ident = obj.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int) or ident < 1:
        raise ValueError("'id' must be a positive integer (the input's journal id)")
    return RecordRow(
        id=ident,
        text=_string(obj, "text"),
        channel=_string(obj, "channel", empty=False),
        level=level,
        source=_string(obj, "source"),
        state=state,
        reply=reply,
        created=created,
        finished=_time(obj, "finished", optional=True),
    )


def _fact(obj: dict[str, Any]) -> tuple[Triple, float, float | None, str]:
    triple = Triple.from_json(
        {k: obj.get(k) for k in ("source", "relation", "target")}
        | {"confidence": obj.get("confidence", 1.0), "sentence_text": obj.get("sentence_text", "")}
    )
    valid = _time(obj, "valid_at")
    invalid = _time(obj, "invalid_at", optional=True)
    assert valid is not None
    if invalid is not None and invalid < valid:
        raise ValueError("'invalid_at' comes before 'valid_at'")
    reason = obj.get("closed_reason") or "closed"
    if not isinstance(reason, str):
        raise ValueError("'closed_reason' must be a string")
    # Closed and confirmed as they were on the companion it came from, never by the store's
    # own rule for single-valued relations.
    return dataclasses.replace(triple, exclusive=False), valid, invalid, reason


def _media(obj: dict[str, Any]) -> tuple[str, str, bytes]:
    digest = _string(obj, "digest", empty=False)
    MediaRef(digest, "", 0)  # checks the digest's form
    try:
        data = base64.b64decode(_string(obj, "data"), validate=True)
    except ValueError:
        raise ValueError("'data' must be the bytes in base64") from None
    if digest_of(data) != digest:
        raise ValueError(f"the bytes of media {digest} have the digest {digest_of(data)}")
    return digest, _string(obj, "name") if "name" in obj else "", data


def _add(parsed: Parsed, kind: str, obj: dict[str, Any]) -> None:
    if kind == "media":
        parsed.media.append(_media(obj))
    elif kind == "input":
        row = _input(obj)
        if row["id"] in parsed.ids:
            raise ValueError(f"input {row['id']} is in the file twice")
        parsed.ids.add(row["id"])
        parsed.inputs.append(row)
    elif kind == "context":
        parsed.context.append(ContextEvent.from_json(obj))
    elif kind == "cold":
        parsed.cold.append(ColdDoc.from_json(obj))
    elif kind == "block":
        when = _time(obj, "created_at")
        assert when is not None
        parsed.blocks.append((_string(obj, "text", empty=False), _string(obj, "source"), when))
    elif kind == "entity":
        traits = obj.get("traits", {})
        if not isinstance(traits, dict):
            raise ValueError("'traits' must be an object")
        parsed.entities.append((_string(obj, "name", empty=False), _string(obj, "type"), traits))
    elif kind == "fact":
        parsed.facts.append(_fact(obj))
    else:
        raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")


def parse(lines: Iterator[str]) -> Parsed:
    """Every record of an export, checked; `TransferError` names the first bad line."""
    parsed = Parsed()
    seen_header = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("a record is a JSON object")
            kind = obj.pop("kind", None)
            if not seen_header:
                if kind != FORMAT:
                    raise ValueError(f"the first record must be the {FORMAT!r} header")
                if obj.get("version") != VERSION:
                    raise ValueError(
                        f"format version {obj.get('version')!r}; this release reads {VERSION}"
                    )
                seen_header = True
                continue
            _add(parsed, str(kind), obj)
        except (ValueError, TypeError, KeyError, AttributeError, GraphError) as exc:
            raise TransferError(f"line {number}: {exc}") from None
    if not seen_header:
        raise TransferError(f"an empty file: no {FORMAT!r} header")
    return parsed


# ---- import --------------------------------------------------------------------------------


async def held(kernel: Kernel) -> dict[str, int]:
    """What the kernel's data dir holds already, by store (zero counts left out)."""
    state = kernel.state
    assert state.memory is not None and state.coldcontext is not None
    assert state.graph is not None
    await state.coldcontext.wait_ready()
    stats = await state.graph.store.stats()
    found = {
        "inputs": sum((await kernel.inputs.journal.counts()).values()),
        "context events": len(state.memory.context.events),
        "cold documents": len(state.coldcontext),
        "graph entities": stats["entities"],
        "graph facts": stats["current_facts"] + stats["closed_facts"],
        "graph blocks": sum(stats["blocks"].values()),
    }
    return {k: v for k, v in found.items() if v}


async def import_records(kernel: Kernel, clock: PinnedClock, parsed: Parsed) -> None:
    """Write `parsed` through each store's own API, media first (what the others name)."""
    state = kernel.state
    assert state.memory is not None and state.coldcontext is not None
    assert state.graph is not None and state.media is not None
    media = state.media
    uploads = [Upload(data, "", name) for _, name, data in parsed.media]
    try:
        # Every item against this data dir's limits first, so a refused one stores nothing.
        for upload in uploads:
            media.check([upload])
    except MediaError as exc:
        raise TransferError(f"media refused by this data dir: {exc}") from None
    for upload in uploads:
        await media.aput_all([upload])
    journal = kernel.inputs.journal
    for row in parsed.inputs:
        await journal.restore(row)
    context = state.memory.context
    for event in parsed.context:
        await context.append(
            event.source,
            event.input,
            event.response,
            channel=event.channel,
            tool_outputs=event.tool_outputs,
            timestamp=event.timestamp,
            event_id=event.id,
            media=event.media,
        )
    # Each with its id, read count and the time it came into the cold context, so its ageing
    # towards the graph goes on where it was.
    await state.coldcontext.restore(parsed.cold)
    store = state.graph.store
    for text, source, when in parsed.blocks:
        await store.blocks.add_text(text, source=source, at=when)
    await _import_facts(store, clock, parsed.facts)
    for name, kind, traits in parsed.entities:
        await store.set_traits(name, traits, kind)


async def _import_facts(
    store: Any, clock: PinnedClock, facts: list[tuple[Triple, float, float | None, str]]
) -> None:
    """Each fact committed at the time it became true and closed at the time it stopped,
    in the order those happened, so a fact that was true twice is two facts again."""
    steps: list[tuple[float, int, int]] = []
    for index, (_, valid, invalid, _) in enumerate(facts):
        steps.append((valid, 0, index))
        if invalid is not None:
            steps.append((invalid, 1, index))
    made: dict[int, int] = {}
    for when, closing, index in sorted(steps):
        triple, _, _, reason = facts[index]
        with clock.at(when):
            if closing:
                if index in made:
                    await store.close_fact(made[index], reason)
                continue
            report = await store.commit([triple], origin="import")
        if report.added:
            made[index] = report.added[0]


# ---- the commands --------------------------------------------------------------------------


def run_export(args: argparse.Namespace) -> int:
    return asyncio.run(_export(args.data, args.out))


async def _export(data: str | None, out: str | None) -> int:
    async with Kernel(data) as kernel:
        records = await export_records(kernel)
        first = header(records, kernel.data_dir)
    if out in (None, "-"):
        write_jsonl(sys.stdout, [first, *records])
    else:
        target = Path(out)
        partial = target.with_name(target.name + ".partial")
        with partial.open("w", encoding="utf-8") as written:
            write_jsonl(written, [first, *records])
        partial.replace(target)
    summary = ", ".join(f"{n} {k}" for k, n in first["counts"].items() if n) or "nothing"
    print(f"hologram export: {summary}", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            parsed = parse(iter(sys.stdin))
        else:
            with open(args.file, encoding="utf-8") as given:
                parsed = parse(iter(given))
    except OSError as exc:
        print(f"hologram import: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    except (TransferError, UnicodeDecodeError) as exc:
        print(f"hologram import: {args.file}: {exc}; nothing was imported", file=sys.stderr)
        return 2
    return asyncio.run(_import(args.data, parsed))


async def _import(data: str | None, parsed: Parsed) -> int:
    clock = PinnedClock()
    async with Kernel(data, clock=clock) as kernel:
        found = await held(kernel)
        if found:
            what = ", ".join(f"{n} {k}" for k, n in found.items())
            print(
                f"hologram import: {kernel.data_dir} already holds {what}; import into an "
                "empty data dir (--data DIR); nothing was imported",
                file=sys.stderr,
            )
            return 2
        try:
            await import_records(kernel, clock, parsed)
        except TransferError as exc:
            print(f"hologram import: {exc}; nothing was imported", file=sys.stderr)
            return 2
    summary = ", ".join(f"{n} {k}" for k, n in parsed.counts().items() if n) or "nothing"
    print(f"hologram import: {summary} into {kernel.data_dir}", file=sys.stderr)
    return 0
