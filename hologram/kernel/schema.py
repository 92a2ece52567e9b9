"""Numbered schema migrations for a SQLite store, applied in order.

`PRAGMA user_version` records how far a database has come. Each migration runs inside one
transaction together with its version bump, so a crash leaves the database at the old
version or the new one, never between. A database newer than the code is refused rather
than guessed at. The stores (config, the input journal, the graph) each keep their list
beside their code; the update module runs the same lists, with a backup first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


class SchemaTooNew(Exception):
    """The database was written by a newer Hologram."""

    def __init__(self, what: str, found: int, known: int) -> None:
        self.what, self.found, self.known = what, found, known
        super().__init__(
            f"{what} is at schema version {found}, this Hologram knows up to {known}: "
            "upgrade Hologram, or open a copy made for this version"
        )


def user_version(db: sqlite3.Connection) -> int:
    (version,) = db.execute("PRAGMA user_version").fetchone()
    return int(version)


def migrate_sqlite(db: sqlite3.Connection, migrations: Sequence[str], what: str) -> list[int]:
    """Bring `db` to `len(migrations)`; returns the versions applied. `db` must be in
    autocommit mode (`isolation_level=None`) or have no transaction open."""
    version = user_version(db)
    if version > len(migrations):
        raise SchemaTooNew(what, version, len(migrations))
    applied = []
    for number in range(version + 1, len(migrations) + 1):
        apply_step(db, migrations[number - 1], number)
        applied.append(number)
    return applied


def apply_step(db: sqlite3.Connection, script: str, number: int) -> None:
    """One migration and its version bump as one transaction (executescript would commit
    on its own, so the statements run one by one)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in statements(script):
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {int(number)}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def statements(script: str) -> list[str]:
    """Split a migration into statements (a trigger body's inner `;` stays inside it)."""
    out, current = [], ""
    for line in script.strip().splitlines():
        current += line + "\n"
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out
