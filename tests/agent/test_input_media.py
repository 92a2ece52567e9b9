"""Media coming in with an input (issue 18): `Kernel.say`/`inject` store it before the
input is journaled, the journal keeps it with the input, and the turn shows it to the
model, also when a restart runs an unfinished input again. Through a real kernel, its SQLite
journal and the scripted model over HTTP."""

from __future__ import annotations

import asyncio
import io
import sqlite3
from pathlib import Path

import pytest
from PIL import Image

from hologram import Kernel
from hologram.agent import InputState
from hologram.llm import ScriptedModelServer
from hologram.media import MediaError, MediaTooLarge, MediaTypeError, UnknownMedia, Upload
from hologram.sdk import MediaRef

from ..llm.sdk_types import check_request


def png(color: str = "red", size: tuple[int, int] = (8, 6)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def journal_rows(root: Path) -> int:
    db = sqlite3.connect(root / "inputs.db")
    try:
        return int(db.execute("SELECT count(*) FROM inputs").fetchone()[0])
    finally:
        db.close()


def media_files(root: Path) -> list[Path]:
    return [p for p in (root / "media").rglob("*") if p.is_file() and p.suffix != ".json"]


async def test_said_bytes_reach_the_model_request_as_an_image(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    photo = png()
    model.queue_text("A red square.")

    reply = await kernel.say("what is this?", media=[photo])

    assert reply == "A red square."
    check_request("openai", model.last_request.json)
    images = model.last_request.images
    assert [(i.role, i.media_type, i.content) for i in images] == [("user", "image/png", photo)]


async def test_the_same_image_twice_is_one_file_and_the_journal_keeps_the_refs(
    kernel: Kernel, model: ScriptedModelServer, data_dir: Path, tmp_path: Path
) -> None:
    photo = png("blue")
    path = tmp_path / "blue.png"
    path.write_bytes(photo)
    model.queue_text("one")
    model.queue_text("two")

    await kernel.say("first", media=[Upload(photo, "image/png", "a.png")])
    await kernel.say("second", media=[path])

    assert len(media_files(data_dir)) == 1
    assert [i.content for i in model.last_request.images if i.role == "user"][-1:] == [photo]
    db = sqlite3.connect(data_dir / "inputs.db")
    try:
        kept = [row[0] for row in db.execute("SELECT media FROM inputs ORDER BY id")]
    finally:
        db.close()
    assert '"name": "a.png"' in kept[0] and '"name": "blue.png"' in kept[1]


async def test_a_stored_ref_is_taken_as_it_is_stored(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    assert kernel.state.media is not None
    photo = png("green")
    ref = kernel.state.media.put(photo)
    model.queue_text("green")
    stale = MediaRef(ref.digest, "image/gif", 1)  # the store's description wins

    await kernel.say("and this?", media=[stale])

    assert [(i.media_type, i.content) for i in model.last_request.images] == [("image/png", photo)]


@pytest.mark.parametrize(
    ("item", "error"),
    [
        (b"not an image at all \x00\x01", MediaTypeError),
        (Upload(png(), "image/jpeg"), MediaTypeError),
        (b"", MediaError),
        (MediaRef("0" * 64, "image/png", 3), UnknownMedia),
        ("/nonexistent/picture.png", MediaError),
        (12, MediaError),
    ],
)
async def test_refused_media_raises_at_the_call_and_nothing_is_journaled(
    kernel: Kernel, data_dir: Path, item: object, error: type[MediaError]
) -> None:
    before = journal_rows(data_dir)
    with pytest.raises(error):
        await kernel.inject("look", media=[png("white"), item])  # type: ignore[list-item]
    assert journal_rows(data_dir) == before
    assert media_files(data_dir) == []  # the good neighbour was not stored either


async def test_too_many_items_are_refused_with_413(kernel: Kernel, data_dir: Path) -> None:
    limit = kernel.state.media.limits.max_items  # type: ignore[union-attr]
    with pytest.raises(MediaTooLarge) as caught:
        await kernel.inject("many", media=[png()] * (limit + 1))
    assert caught.value.status == 413
    assert journal_rows(data_dir) == 0


async def test_a_restart_runs_an_unfinished_input_with_its_media(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    photo = png("purple")
    async with Kernel(data_dir, environ={}) as kernel:
        refs = await kernel.store_media([photo])
        journal = kernel.inputs.journal
        record = await journal.record("what was this?", "notebook", 3, "user", media=tuple(refs))
        await journal.mark(record.id, InputState.RUNNING)  # cut off mid-turn

    environ = {
        "HOLOGRAM_LLM_BASE_URL": model.base_url,
        "HOLOGRAM_LLM_MODEL": "scripted-model",
        "HOLOGRAM_LLM_API_KEY": "sk-test",
    }
    model.queue_text("Purple.")
    async with Kernel(data_dir, environ=environ) as kernel:
        row = None
        for _ in range(400):
            row = await kernel.inputs.journal.get(record.id)
            if row is not None and row["state"] == InputState.DONE:
                break
            await asyncio.sleep(0.05)
        assert row is not None and row["state"] == InputState.DONE

    assert [i.content for i in model.last_request.images] == [photo]
