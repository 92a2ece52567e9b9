"""The start-up self-check and upgrade (spec 000: `update`, before any store opens).

In order: a migration a crash interrupted is rolled back first; every store is found and
checked for damage; a store newer than this release refuses the start, naming the store
and the release that wrote it; older stores get a backup of the whole data dir, then each
store is migrated in order and verified (integrity check, every table's row count); any
failure restores the backup byte for byte and refuses the start with the reason.

A marker file, written once the backup is complete and removed once the manifest records
the new versions, is what makes a kill at any moment end in the old state or the new one:
a start that finds the marker restores the backup it names before anything else.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hologram._version import __version__
from hologram.kernel import apply_step, fsync_dir, user_version, write_atomic
from hologram.update._files import MARKER
from hologram.update.backup import (
    Backup,
    new_backup_path,
    read_backup,
    restore_backup,
    take_backup,
)
from hologram.update.errors import UpdateError
from hologram.update.inspect import Found, find, read_only, table_rows
from hologram.update.manifest import FORMAT, Manifest, read_manifest, write_manifest
from hologram.update.stores import STORES, FileStep, Kind, Store

log = logging.getLogger(__name__)


class DataDirTooNew(UpdateError):
    pass


class MigrationFailed(UpdateError):
    pass


@dataclass(frozen=True)
class StoreVersion:
    name: str
    path: str
    kind: str
    found: int | None
    expected: int

    @property
    def status(self) -> str:
        if self.found is None:
            return "absent"
        if self.found == self.expected:
            return "current"
        return "older" if self.found < self.expected else "newer"


@dataclass
class Report:
    """What the self-check found and did."""

    data_dir: Path
    release: str
    written_by: str
    stores: list[StoreVersion]
    migrated: list[tuple[str, int, int]] = field(default_factory=list)
    backup: Path | None = None
    recovered: Path | None = None
    """The backup restored because a migration was interrupted by a crash."""

    def to_json(self) -> dict[str, Any]:
        return {
            "data_dir": str(self.data_dir),
            "release": self.release,
            "written_by": self.written_by,
            "stores": [{**s.__dict__, "status": s.status} for s in self.stores],
            "migrated": [{"store": n, "from": a, "to": b} for n, a, b in self.migrated],
            "backup": str(self.backup) if self.backup else None,
            "recovered": str(self.recovered) if self.recovered else None,
        }


def _versions(found: Sequence[Found]) -> list[StoreVersion]:
    return [
        StoreVersion(f.store.name, f.store.path, f.store.kind.value, f.version, f.store.version)
        for f in found
    ]


def survey(
    data_dir: Path, stores: Sequence[Store] = STORES, release: str = __version__
) -> tuple[Report, list[Found], Manifest | None]:
    """Find every store and check it for damage; changes nothing."""
    manifest = read_manifest(data_dir)
    found = [find(data_dir, store, manifest) for store in stores]
    written_by = manifest.written_by if manifest is not None else ""
    return Report(data_dir, release, written_by, _versions(found)), found, manifest


def refuse_newer(report: Report, manifest: Manifest | None) -> None:
    by = f"release {report.written_by}" if report.written_by else "an unknown release"
    if manifest is not None and manifest.format > FORMAT:
        raise DataDirTooNew(
            f"the data dir {report.data_dir} was written by {by} (manifest format "
            f"{manifest.format}; this release {report.release} reads up to {FORMAT}): "
            "upgrade Hologram, or use another data dir"
        )
    for store in report.stores:
        if store.status == "newer":
            raise DataDirTooNew(
                f"the data dir {report.data_dir} was written by {by}: store {store.name!r} "
                f"({store.path}) is at schema version {store.found}, this release "
                f"{report.release} knows up to {store.expected}. Nothing was changed: upgrade "
                "Hologram, or restore a backup made by this release"
            )


def prepare(
    data_dir: Path,
    stores: Sequence[Store] = STORES,
    release: str = __version__,
    now: Callable[[], float] = time.time,
) -> Report:
    """The whole self-check and upgrade; returns what it did, or raises `UpdateError`.
    The caller holds the data dir's lock."""
    data_dir.mkdir(parents=True, exist_ok=True)
    recovered = recover_interrupted(data_dir)
    report, found, manifest = survey(data_dir, stores, release)
    report.recovered = recovered
    refuse_newer(report, manifest)
    older = [f for f in found if f.version is not None and f.version < f.store.version]
    if older:
        made_from = report.written_by or "unversioned"
        backup = take_backup(
            data_dir,
            new_backup_path(data_dir, made_from, release, now()),
            exact=True,
            made_from=made_from,
            made_by=release,
        )
        report.backup = backup.path
        _migrate_all(data_dir, older, backup, report)
    write_manifest(data_dir, current_manifest(data_dir, stores, release))
    (data_dir / MARKER).unlink(missing_ok=True)
    fsync_dir(data_dir)
    return report


def _migrate_all(data_dir: Path, older: list[Found], backup: Backup, report: Report) -> None:
    marker = {"backup": str(backup.path.relative_to(data_dir)), "started": time.time()}
    write_atomic(data_dir / MARKER, json.dumps(marker).encode())
    for item in older:
        assert item.version is not None
        try:
            migrate_store(data_dir, item)
        except Exception as exc:
            restore_backup(backup, data_dir)
            (data_dir / MARKER).unlink(missing_ok=True)
            fsync_dir(data_dir)
            log.error(
                "migrating %s failed; the data dir was restored from %s",
                item.store.name,
                backup.path,
            )
            raise MigrationFailed(
                f"migrating store {item.store.name!r} ({item.store.path}) from version "
                f"{item.version} to {item.store.version} failed: {exc}. The data dir was "
                f"restored from the backup {backup.path}, byte for byte; this release "
                f"{report.release} cannot start on it until the cause is fixed"
            ) from exc
        report.migrated.append((item.store.name, item.version, item.store.version))
        log.info("store %s migrated %d → %d", item.store.name, item.version, item.store.version)


def migrate_store(data_dir: Path, item: Found) -> None:
    """Every step from the store's version to the current one, then the check that nothing
    was lost."""
    store, start = item.store, item.version or 0
    path = data_dir / store.path
    if store.kind is Kind.FILES:
        moved = 0
        for step in store.steps[start:]:
            # `kind` says which `steps` holds (callables for files, SQL for SQLite); the one
            # dataclass cannot tie the two for mypy.
            step_function: FileStep = step  # type: ignore[assignment]
            moved += step_function(path)
        after = sum(1 for p in path.rglob("*") if p.is_file())
        if after + moved != item.files:
            raise UpdateError(f"{item.files} files before, {after} after and {moved} moved")
        return
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for number in range(start + 1, store.version + 1):
            # SQL steps, by the store's `kind` (which mypy cannot tie to `steps`, as above).
            apply_step(db, store.steps[number - 1], number)  # type: ignore[arg-type]
        _verify(db, item)
    finally:
        db.close()


def _verify(db: sqlite3.Connection, item: Found) -> None:
    check = db.execute("PRAGMA integrity_check").fetchall()
    if check != [("ok",)]:
        raise UpdateError(f"integrity check: {'; '.join(str(r[0]) for r in check[:3])}")
    if user_version(db) != item.store.version:
        raise UpdateError(f"the database is at version {user_version(db)} after its steps")
    after = table_rows(db)
    for table, count in item.rows.items():
        if after.get(table) != count:
            raise UpdateError(f"table {table} held {count} rows before, {after.get(table)} after")


def recover_interrupted(data_dir: Path) -> Path | None:
    """If a migration was cut off by a crash, put the data dir back as it was before it."""
    marker = data_dir / MARKER
    if not marker.exists():
        return None
    try:
        named = json.loads(marker.read_text(encoding="utf-8"))["backup"]
        backup = read_backup(data_dir / named)
    except (ValueError, KeyError, TypeError, UpdateError) as exc:
        raise UpdateError(
            f"{marker} says a migration was interrupted, but its backup cannot be read "
            f"({exc}); restore a backup by hand with `python -m hologram data restore`"
        ) from exc
    restore_backup(backup, data_dir)
    marker.unlink()
    fsync_dir(data_dir)
    log.warning("an interrupted migration was rolled back from %s", backup.path)
    return backup.path


def current_manifest(data_dir: Path, stores: Sequence[Store], release: str) -> Manifest:
    """The manifest as the data dir is now: every store at this release's version (those
    not made yet will be made at it), the databases and vital files that hold data, the
    databases' growing row counts."""
    manifest = Manifest(written_by=release, stores={s.name: s.version for s in stores})
    for store in stores:
        manifest.present += [
            name
            for name in store.vital
            if (data_dir / name).is_file() and (data_dir / name).stat().st_size > 0
        ]
        path = data_dir / store.path
        if store.kind is not Kind.SQLITE or not path.exists() or path.stat().st_size == 0:
            continue
        manifest.present.append(store.path)
        if store.growing:
            with read_only(path) as db:
                rows = table_rows(db)
            manifest.rows[store.path] = {t: rows[t] for t in store.growing if t in rows}
    return manifest
