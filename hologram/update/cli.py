"""`python -m hologram data …`: versions, backup, restore, migrate.

Declaring the command loads none of the stores' modules: each action imports the update
code it runs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from hologram._version import __version__
from hologram.kernel import Commands, add_actions, data_option, json_option

if TYPE_CHECKING:
    from hologram.update.migrate import Report


def add_commands(commands: Commands) -> None:
    data = commands.add(
        "data",
        run_data,
        description="Inspect and upgrade the data dir: each store's schema version beside "
        "what this release expects, backups, and migrations (which a kernel also runs, with a "
        "backup, when it starts on an older data dir).",
    )
    actions = add_actions(data, "data_command")
    versions = actions.add_parser("versions", help="each store's version and this release's")
    json_option(versions)
    backup = actions.add_parser("backup", help="copy the data dir into DIR (a new directory)")
    backup.add_argument("dir", type=Path, metavar="DIR")
    restore = actions.add_parser(
        "restore", help="make the data dir exactly the backup DIR (the current state is backed up)"
    )
    restore.add_argument("dir", type=Path, metavar="DIR")
    migrate = actions.add_parser("migrate", help="back up and migrate every older store now")
    migrate.add_argument("--dry-run", action="store_true", help="say what would be done")
    json_option(migrate)
    for parser in (data, versions, backup, restore, migrate):
        data_option(parser)


@contextmanager
def _lock(data_dir: Path, required: bool) -> Iterator[bool]:
    """Hold the data dir's lock while the command runs; yields whether it is held. A
    running kernel holds it: then only what is safe beside it runs (`required` False)."""
    from hologram.kernel import DataDirLock, DataDirLockedError

    lock = DataDirLock(data_dir)
    try:
        lock.acquire()
    except DataDirLockedError:
        if required:
            raise
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def run_data(args: argparse.Namespace) -> int:
    from hologram.kernel import resolve_data_dir
    from hologram.update.backup import take_backup
    from hologram.update.errors import UpdateError
    from hologram.update.migrate import survey

    data_dir = resolve_data_dir(args.data)
    try:
        if args.data_command == "versions":
            with _lock(data_dir, required=False):
                report = survey(data_dir)[0]
            _print(report, args.json)
            return 0
        if args.data_command == "backup":
            with _lock(data_dir, required=False) as exclusive:
                made = take_backup(
                    data_dir, args.dir.resolve(), exact=exclusive, made_by=__version__
                )
            print(f"backed up {len(made.files)} files of {data_dir} to {made.path} ({made.method})")
            return 0
        if args.data_command == "restore":
            return _restore(data_dir, args.dir.resolve())
        return _migrate(data_dir, args.dry_run, args.json)
    except UpdateError as exc:
        print(f"hologram: {exc}", file=sys.stderr)
        return 2


def _restore(data_dir: Path, source: Path) -> int:
    from hologram.update.backup import new_backup_path, read_backup, restore_backup, take_backup

    backup = read_backup(source)
    with _lock(data_dir, required=True):
        target = new_backup_path(data_dir, "before-restore", __version__)
        kept = take_backup(data_dir, target, exact=True, made_by=__version__)
        restore_backup(backup, data_dir)
    print(f"restored {data_dir} from {backup.path}; the state it replaced is kept in {kept.path}")
    return 0


def _migrate(data_dir: Path, dry_run: bool, as_json: bool) -> int:
    from hologram.update.backup import backups_dir
    from hologram.update.migrate import prepare, refuse_newer, survey

    with _lock(data_dir, required=True):
        if dry_run:
            report, _found, manifest = survey(data_dir)
            refuse_newer(report, manifest)
        else:
            report = prepare(data_dir)
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
        return 0
    older = [s for s in report.stores if s.status == "older"]
    if dry_run:
        for store in older:
            print(f"would migrate {store.name} ({store.path}) {store.found} → {store.expected}")
        if older:
            print(f"a backup would be taken first into {backups_dir(data_dir)}/")
        else:
            print("nothing to migrate: every store is at this release's version")
        return 0
    for name, old, new in report.migrated:
        print(f"migrated {name} {old} → {new}")
    if report.backup is not None:
        print(f"the data dir as it was is kept in {report.backup}")
    if not report.migrated:
        print("nothing to migrate: every store is at this release's version")
    return 0


def _print(report: Report, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
        return
    by = report.written_by or "(unversioned: written before data-dir versions)"
    print(f"data dir {report.data_dir}")
    print(f"written by {by}; this release {report.release}")
    print(f"{'store':<16}{'path':<22}{'found':>7}{'expected':>10}  status")
    for s in report.stores:
        found = "-" if s.found is None else str(s.found)
        print(f"{s.name:<16}{s.path:<22}{found:>7}{s.expected:>10}  {s.status}")
