"""Every file of a real data dir, truncated and garbled in turn: the next start either
refuses with the file named, or boots with nothing lost (issue 15, item 3)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.update import UpdateError, prepare
from tests.update.helpers import hashes

SAID = ["remember that my cat is called Miso", "我的猫叫味噌", "what is my cat called?"]


@pytest.fixture(scope="module")
def lived_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir after a kernel ran a few turns and shut down cleanly."""
    import asyncio

    root = tmp_path_factory.mktemp("lived") / "data"

    async def live() -> None:
        async with Kernel(root, environ={}) as kernel:
            await kernel.config.set("core.agent.max_tool_rounds", 6)
            for text in SAID:
                await kernel.say(text)

    asyncio.run(live())
    return root


def _files(root: Path) -> list[str]:
    return sorted(h for h in hashes(root) if not h.startswith("memory/text/"))


def _inputs(root: Path) -> list[tuple[int, str]]:
    db = sqlite3.connect(f"file:{root / 'inputs.db'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT id, text FROM inputs WHERE channel = 'notebook'").fetchall()
    finally:
        db.close()


def _truncate_empty(path: Path) -> None:
    path.write_bytes(b"")


def _truncate_half(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garble_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    page = 4096 if len(data) >= 3 * 4096 else max(1, len(data) // 3)
    start = (len(data) // 2 // page) * page
    data[start : start + page] = os.urandom(len(data[start : start + page]))
    path.write_bytes(bytes(data))


FAULTS = {"empty": _truncate_empty, "half": _truncate_half, "garbled": _garble_middle}


def test_the_lived_in_data_dir_holds_the_files_the_suite_covers(lived_in: Path) -> None:
    files = _files(lived_in)
    assert {"config.db", "inputs.db", "graph.db", "datadir.json", "secret.key"} <= set(files)
    assert "memory/turns.db" in files


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_every_file_damaged_is_refused_by_name_or_loses_nothing(
    lived_in: Path, tmp_path: Path, fault: str
) -> None:
    outcomes = {}
    for number, name in enumerate(_files(lived_in)):
        root = tmp_path / f"{number}"
        shutil.copytree(lived_in, root)
        target = root / name
        if target.stat().st_size == 0:
            continue  # nothing to damage
        FAULTS[fault](target)
        outcomes[name] = await _outcome(lived_in, root, name)
    failures = {n: o for n, o in outcomes.items() if not o.startswith(("refused", "intact"))}
    assert not failures, failures
    assert outcomes["inputs.db"].startswith("refused") and outcomes["config.db"].startswith(
        "refused"
    )


async def _outcome(original: Path, root: Path, name: str) -> str:
    try:
        prepare(root)
    except UpdateError as exc:
        return "refused" if Path(name).name in str(exc) else f"refused without naming it: {exc}"
    try:
        async with Kernel(root, environ={}) as kernel:
            setting = kernel.config.get("core.agent.max_tool_rounds")
    except Exception as exc:
        if Path(name).name in str(exc):
            return "refused at boot"
        return f"boot failed without naming it: {exc}"
    if setting != 6 or _inputs(root) != _inputs(original):
        return "booted, but lost data"
    target = root / name
    if name.endswith("-shm"):
        return "intact: the shared-memory index holds no data, SQLite rebuilds it"
    if not any(target.parent.glob(target.name + ".corrupt*")):
        return "booted, but the damaged file was not kept aside for repair"
    return "intact: what could be read was, and the file as found is kept aside"
