"""The update module: every shipped schema migrates with no row lost, a failed migration
leaves the data dir byte for byte as it was, a newer data dir is refused untouched."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent.journal import InputJournal, InputState
from hologram.config import ConfigRegistry
from hologram.kernel import BootError
from hologram.memory import GRAPH_MIGRATIONS as GRAPH_STEPS
from hologram.memory.turns import Place, TurnStore
from hologram.update import (
    STORES,
    BackupError,
    DataDirTooNew,
    MigrationFailed,
    list_backups,
    prepare,
    read_manifest,
    restore_backup,
    survey,
    take_backup,
)
from hologram.update.backup import new_backup_path
from hologram.update.manifest import write_manifest
from tests.update import shipped
from tests.update.helpers import hashes


def _rows(path: Path) -> dict[str, int]:
    db = sqlite3.connect(path)
    try:
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
                " AND sql NOT LIKE 'CREATE VIRTUAL%'"
            )
        ]
        return {n: db.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        db.close()


def _replace(name: str, **changes: object) -> tuple:
    """The real store list with one store changed (a step that fails, a step that kills)."""
    return tuple(dataclasses.replace(s, **changes) if s.name == name else s for s in STORES)


@pytest.mark.parametrize("graph_version", shipped.GRAPH_VERSIONS)
async def test_every_shipped_schema_migrates_with_no_row_lost(
    tmp_path: Path, graph_version: int
) -> None:
    root = shipped.build(tmp_path / "data", graph_version)
    before = hashes(root)
    counts = {name: _rows(root / name) for name in ("config.db", "inputs.db", "graph.db")}

    report = prepare(root)

    migrated = {name: (old, new) for name, old, new in report.migrated}
    assert migrated["config"] == (0, 1) and migrated["input-journal"] == (0, 3)
    assert migrated.get("graph") == (graph_version, len(GRAPH_STEPS))
    assert migrated["context-window"] == (0, 2) and migrated["cold-context"] == (0, 2)
    assert migrated["knowledge"] == (0, 1)
    for name, tables in counts.items():
        after = _rows(root / name)
        assert {t: after[t] for t in tables} == tables, name
    # The backup holds the data dir exactly as it was.
    (backup,) = list_backups(root)
    assert backup.path == report.backup and backup.made_from == "unversioned"
    assert hashes(backup.path / "files") == before
    # The current release opens every store and reads what the old one wrote.
    journal = await InputJournal.open(root / "inputs.db")
    try:
        row = await journal.get(8)  # ids count from 1
        assert row is not None and row["text"] == "turn 7 第7句" and row["reply"] == "reply 7"
        assert (await journal.counts()) == {InputState.DONE: 50}
    finally:
        await journal.close()
    config = await ConfigRegistry.open(root / "config.db", environ={})
    try:
        assert config.get(shipped.SETTING[0]) == shipped.SETTING[1]
    finally:
        await config.close()
    manifest = read_manifest(root)
    assert manifest is not None and manifest.written_by == report.release
    assert manifest.stores == {s.name: s.version for s in STORES}
    assert {s.status for s in survey(root)[0].stores} <= {"current", "absent"}
    async with Kernel(root, environ={}) as kernel:
        assert kernel.state.graph is not None and kernel.state.memory is not None
        stats = await kernel.state.graph.store.stats()
        assert stats["entities"] == 50 and stats["current_facts"] == 50
        window = kernel.state.memory.context.events
        # The log replayed over the snapshot: e0 removed, the late reply appended.
        assert [e.id for e in window] == [f"e{n}" for n in range(1, 10)] + ["e-late"]
        assert [(e.input, e.response, e.timestamp) for e in window][:2] == [
            ("turn 1", "reply 1", 1.0),
            ("turn 2", "reply 2", 2.0),
        ]
        cold = kernel.state.coldcontext
        assert cold is not None
        await cold.wait_ready()
        assert [
            (d.id, d.input, d.created_at, d.stored_at, d.access_count) for d in cold.documents()
        ] == [(f"c{n}", f"cold turn {n} 冷{n}", float(n), 10.0 + n, n) for n in range(3)]
        # The graph's text blocks are turns of the graph's place now, under their old ids.
        blocks = kernel.state.graph.store.blocks
        await blocks.wait_ready()
        assert [(b.id, b.text, b.source) for b in await blocks.list("text")] == sorted(
            (f"b{n}", f"turn {n}", "user") for n in range(50)
        )
        assert cold.turns.counts()[Place.GRAPH] == 50
    graph_db = sqlite3.connect(root / "graph.db")
    assert graph_db.execute("SELECT count(*) FROM memory_blocks").fetchone() == (0,)
    graph_db.close()
    # The old files are gone; the turns are in the turn store alone.
    assert not list((root / "memory" / "context").iterdir())
    assert not list((root / "memory" / "coldcontext" / "docs").iterdir())


@pytest.mark.parametrize("journal_version", shipped.JOURNAL_VERSIONS)
async def test_every_shipped_journal_schema_migrates_with_its_inputs(
    tmp_path: Path, journal_version: int
) -> None:
    """A data dir a release with manifests left: every store current but the journal."""
    root = shipped.build(tmp_path / "data")
    prepare(root)
    shipped.journal_at(root / "inputs.db", journal_version)
    manifest = read_manifest(root)
    assert manifest is not None
    manifest.stores["input-journal"] = journal_version
    manifest.rows.pop("inputs.db", None)
    write_manifest(root, manifest)
    before = sqlite3.connect(root / "inputs.db")
    try:
        kept = before.execute("SELECT * FROM inputs ORDER BY id").fetchall()
    finally:
        before.close()

    report = prepare(root)

    current = next(s.version for s in STORES if s.name == "input-journal")
    assert [m for m in report.migrated if m[0] == "input-journal"] == [
        ("input-journal", journal_version, current)
    ]
    after = sqlite3.connect(root / "inputs.db")
    try:
        rows = after.execute("SELECT * FROM inputs ORDER BY id").fetchall()
        media = {r[0] for r in after.execute("SELECT media FROM inputs")}
        attempts = dict(after.execute("SELECT id, attempts FROM inputs"))
    finally:
        after.close()
    assert [r[: len(kept[0])] for r in rows] == kept  # every row, every old column unchanged
    assert media == {"[]"}
    assert attempts[10] == (3 if journal_version >= 2 else 0)
    journal = await InputJournal.open(root / "inputs.db")
    try:
        assert (await journal.counts()) == {InputState.DONE: 39, InputState.QUEUED: 1}
        row = await journal.get(40)
        assert row is not None and row["text"] == "input 39 第39句"
    finally:
        await journal.close()


async def test_a_kernel_boots_on_the_oldest_data_dir_and_finds_its_memory(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=1)
    async with Kernel(root, environ={}) as kernel:
        report = kernel.state.update_report
        assert report is not None and ("graph", 1, len(GRAPH_STEPS)) in report.migrated
        assert kernel.config.get(shipped.SETTING[0]) == shipped.SETTING[1]
        assert kernel.state.graph is not None
        stats = await kernel.state.graph.store.stats()
        assert stats["entities"] == 50 and stats["current_facts"] == 50
    assert all(s.status in ("current", "absent") for s in survey(root)[0].stores)


def test_a_migration_made_to_fail_halfway_leaves_every_byte_as_it_was(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=2)
    before = hashes(root)
    # The graph migrates after config and the journal: they are migrated when it fails.
    failing = _replace(
        "graph", steps=(*shipped.GRAPH_STEPS, "INSERT INTO no_such_table VALUES (1)")
    )

    with pytest.raises(MigrationFailed, match=r"store 'graph' .*from version 2 to 6.*restored"):
        prepare(root, failing)

    assert hashes(root) == before
    assert not (root / "update-in-progress.json").exists()


def test_a_step_that_loses_rows_fails_verification_and_is_rolled_back(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    before = hashes(root)
    journal = next(s for s in STORES if s.name == "input-journal")
    losing = _replace("input-journal", steps=(*journal.steps, "DELETE FROM inputs WHERE id < 5"))

    with pytest.raises(MigrationFailed, match="table inputs held 50 rows before, 46 after"):
        prepare(root, losing)

    assert hashes(root) == before


def _newer(tmp_path: Path) -> Path:
    root = shipped.build(tmp_path / "data")
    prepare(root)
    manifest = read_manifest(root)
    assert manifest is not None
    write_manifest(root, dataclasses.replace(manifest, written_by="9.4.0"))
    db = sqlite3.connect(root / "graph.db")
    db.execute("PRAGMA user_version = 9")
    db.close()
    return root


def test_a_data_dir_written_by_a_newer_release_is_refused_and_left_unchanged(
    tmp_path: Path,
) -> None:
    root = _newer(tmp_path)
    before = hashes(root, {"hologram.lock"})

    with pytest.raises(DataDirTooNew, match=r"release 9\.4\.0: store 'graph' \(graph\.db\)"):
        prepare(root)

    assert hashes(root, {"hologram.lock"}) == before


async def test_a_kernel_refuses_to_start_on_a_newer_data_dir(tmp_path: Path) -> None:
    root = _newer(tmp_path)
    before = hashes(root)
    with pytest.raises(BootError, match=r"store 'graph'.*upgrade Hologram"):
        await Kernel(root, environ={}).start()
    assert hashes(root) == before


def test_a_newer_file_store_is_refused_by_its_manifest_version(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    prepare(root)
    manifest = read_manifest(root)
    assert manifest is not None
    manifest.stores["context-window"] = 3
    manifest.written_by = "2.0.0"
    write_manifest(root, manifest)
    with pytest.raises(DataDirTooNew, match="store 'context-window'"):
        prepare(root)


def test_a_current_data_dir_takes_no_backup(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    prepare(root)
    again = prepare(root)
    assert again.migrated == [] and again.backup is None
    assert len(list_backups(root)) == 1


def test_the_manifest_records_the_rows_the_journal_acknowledged(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", turns=12)
    prepare(root)
    manifest = json.loads((root / "datadir.json").read_text())
    assert manifest["rows"]["inputs.db"] == {"inputs": 12}
    assert set(manifest["present"]) == {
        "config.db",
        "inputs.db",
        "graph.db",
        "memory/turns.db",
    }


async def test_old_backups_are_pruned_to_the_setting_at_start(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    prepare(root)
    for made_by in ("0.2.0", "0.3.0", "0.4.0"):
        take_backup(root, new_backup_path(root, "x", made_by), exact=True, made_by=made_by)
    assert len(list_backups(root)) == 4
    async with Kernel(root, environ={}) as kernel:
        await kernel.config.set("core.update.keep_backups", 2)
    async with Kernel(root, environ={}):
        pass
    assert [b.made_by for b in list_backups(root)] == ["0.3.0", "0.4.0"]


def test_a_damaged_backup_is_refused_before_anything_is_restored(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data")
    backup = take_backup(root, tmp_path / "saved", exact=True)
    (backup.path / "files" / "inputs.db").write_bytes(b"tampered")
    (root / "stray.txt").write_text("still here")
    with pytest.raises(BackupError, match=r"inputs\.db does not match its digest"):
        restore_backup(backup, root)
    assert (root / "stray.txt").exists()


def test_an_old_window_file_with_a_bad_line_moves_the_rest_and_is_kept_aside(
    tmp_path: Path,
) -> None:
    root = shipped.build(tmp_path / "data")
    context = root / "memory" / "context"
    snapshot = context / "context.snapshot.jsonl"
    lines = snapshot.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:30]  # the third event (e2), cut short
    snapshot.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bad_doc = root / "memory" / "coldcontext" / "docs" / "c1.json"
    bad_doc.write_text('{"id": "c1", "created_at": ', encoding="utf-8")

    prepare(root)

    store = TurnStore(root / "memory" / "turns.db")
    try:
        window, _ = store.load(Place.CONTEXT)
        cold, _ = store.load(Place.COLD_CONTEXT)
    finally:
        store.close()
    assert [t.id for t in window] == [f"e{n}" for n in (1, 3, 4, 5, 6, 7, 8, 9)] + ["e-late"]
    assert [t.id for t in cold] == ["c0", "c2"]
    # The damaged files stay, renamed, for a person to look at; the clean log is gone.
    assert sorted(p.name for p in context.iterdir()) == ["context.snapshot.jsonl.corrupt"]
    assert bad_doc.with_name("c1.json.corrupt").exists() and not bad_doc.exists()
