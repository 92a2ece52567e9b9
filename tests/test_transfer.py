"""`python -m hologram export|import`, as subprocesses on real data dirs: a companion's
conversations and memory leave one data dir as JSONL and arrive in another whole (its
times, its closed facts, its images), the new one answers from them, and a bad file or a
data dir in use is refused with nothing stored."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from PIL import Image

from hologram import Kernel
from hologram.media import Upload
from hologram.memory import ContextEvent, Triple


def hologram(*args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HOLOGRAM_")}
    return subprocess.run(
        [sys.executable, "-m", "hologram", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 30, 30)).save(buffer, "PNG")
    return buffer.getvalue()


async def a_companion(data_dir: Path) -> bytes:
    """A data dir with something in every store an export carries; the image's bytes."""
    async with Kernel(data_dir, environ={}) as kernel:
        await kernel.say("I love climbing")
        await kernel.say("The weather is grey today")
        state = kernel.state
        assert state.media is not None and state.memory is not None
        assert state.coldcontext is not None and state.graph is not None
        photo = png()
        [ref] = await state.media.aput_all([Upload(photo)])
        await state.memory.context.append("notebook", "a photo of the crag", media=[ref])
        await state.coldcontext.archive(
            [ContextEvent(timestamp=1_700_000_000.0, source="qq", input="Anna climbs on Sundays")]
        )
        store = state.graph.store
        await store.blocks.add_text("We walked by the lake at dawn", source="qq", at=1.7e9)
        await store.commit([Triple("Anna", "lives_in", "Paris", source_type="person")])
        await store.commit([Triple("Anna", "likes", "tea")])
        tea = (await store.facts(entity="tea"))[0]
        await store.close_fact(tea.id, "contradicted")
        await store.commit([Triple("Anna", "likes", "tea")])  # true again: a second fact
        await store.set_traits("Anna", {"climbs": "bouldering"})
    return photo


async def test_an_export_imported_elsewhere_is_the_same_companion(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    photo = await a_companion(first)
    exported = hologram("export", "--data", str(first), "--out", str(tmp_path / "a.jsonl"))
    assert exported.returncode == 0, exported.stderr
    header, *moved = records(tmp_path / "a.jsonl")
    assert (header["kind"], header["version"]) == ("hologram-export", 1)
    counts = header["counts"]
    assert counts["input"] == 2 and counts["context"] == 5 and counts["media"] == 1
    assert (counts["cold"], counts["block"]) == (1, 1) and counts["fact"] == 3
    assert not any("vec" in r for r in moved)  # vectors are the importer's to make

    imported = hologram("import", str(tmp_path / "a.jsonl"), "--data", str(second))
    assert imported.returncode == 0, imported.stderr
    again = hologram("export", "--data", str(second), "--out", str(tmp_path / "b.jsonl"))
    assert again.returncode == 0, again.stderr
    # Every record as it was: journal ids, times, replies, the facts' validity and closing,
    # a cold document's id and read count.
    assert records(tmp_path / "b.jsonl")[1:] == moved
    likes = [r for r in moved if r["kind"] == "fact" and r["relation"] == "likes"]
    assert [r["invalid_at"] is None for r in likes] == [False, True]

    async with Kernel(second, environ={}) as kernel:
        reply = await kernel.say("What do I love?")
        assert kernel.state.media is not None
        digest = next(r["digest"] for r in moved if r["kind"] == "media")
        assert await kernel.state.media.aget(digest) == photo
    assert "“I love climbing”" in reply  # recalled from the imported window

    twice = hologram("import", str(tmp_path / "a.jsonl"), "--data", str(second))
    assert twice.returncode == 2 and "already holds" in twice.stderr
    assert "nothing was imported" in twice.stderr


def test_a_bad_line_is_named_and_nothing_is_stored(tmp_path: Path) -> None:
    good = {"kind": "input", "id": 1, "text": "hi", "channel": "notebook", "level": 0}
    good |= {"source": "", "state": "done", "reply": "hello", "created": 1.7e9, "finished": 1.7e9}
    lines = [
        {"kind": "hologram-export", "version": 1},
        good,
        {"kind": "fact", "source": "Anna", "relation": "", "target": "x", "valid_at": 1.0},
    ]
    given = tmp_path / "bad.jsonl"
    given.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    target = tmp_path / "target"
    refused = hologram("import", str(given), "--data", str(target))
    assert refused.returncode == 2
    assert "line 3:" in refused.stderr and "relation" in refused.stderr
    assert "nothing was imported" in refused.stderr
    assert not target.exists()  # checked whole before any kernel opened the data dir

    given.write_text('{"kind": "input"}\n', encoding="utf-8")
    headless = hologram("import", str(given), "--data", str(target))
    assert headless.returncode == 2 and "line 1: the first record must be" in headless.stderr
