"""The data dir's manifest, `<data>/datadir.json`: which release last wrote the data dir,
each store's schema version, and what the self-check compares against at the next start
(the SQLite files that held data, and the row counts that only ever grow).

SQLite stores carry their version inside the database too (`PRAGMA user_version`, bumped
in the same transaction as the migration step), and that copy wins; the manifest is the
only record for the stores made of plain files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hologram.kernel import write_atomic
from hologram.update.errors import UpdateError

MANIFEST = "datadir.json"
FORMAT = 1


class ManifestError(UpdateError):
    """The manifest cannot be read; the data dir is left as it is."""


@dataclass
class Manifest:
    written_by: str = ""
    """The release that last wrote the data dir ("" when no manifest existed)."""
    stores: dict[str, int] = field(default_factory=dict)
    present: list[str] = field(default_factory=list)
    """Databases and vital files (relative paths) that held data when last checked."""
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per SQLite file, the row counts of its append-only tables when last checked."""
    format: int = FORMAT

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "written_by": self.written_by,
            "stores": dict(sorted(self.stores.items())),
            "present": sorted(set(self.present)),
            "rows": {k: dict(v) for k, v in sorted(self.rows.items())},
        }


def manifest_path(data_dir: Path) -> Path:
    return data_dir / MANIFEST


def read_manifest(data_dir: Path) -> Manifest | None:
    """The manifest, or None when the data dir has none (new, or older than manifests)."""
    path = manifest_path(data_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    fix = (
        f"restore it from a backup (`python -m hologram data restore {data_dir}/backups/…`), "
        "or move it aside to have the versions detected again"
    )
    try:
        data = json.loads(raw)
        manifest = Manifest(
            written_by=str(data["written_by"]),
            stores={str(k): int(v) for k, v in data["stores"].items()},
            present=[str(p) for p in data.get("present", [])],
            rows={
                str(f): {str(t): int(n) for t, n in counts.items()}
                for f, counts in data.get("rows", {}).items()
            },
            format=int(data["format"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ManifestError(f"the data dir's manifest {path} is damaged ({exc}); {fix}") from exc
    return manifest


def write_manifest(data_dir: Path, manifest: Manifest) -> None:
    text = json.dumps(manifest.to_json(), indent=2, ensure_ascii=False) + "\n"
    write_atomic(manifest_path(data_dir), text.encode())
