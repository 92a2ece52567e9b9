"""The update module (spec 000: `update`, ahead of every store): data-dir versions, the
start-up self-check, backup, migrate, roll back, and the `data` command.

Names load with the submodule that defines them, on first use: the `data` command's
`--help` loads none of the stores' modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel import lazy_face

_LAZY = {
    "hologram.update.backup": (
        "Backup",
        "BackupError",
        "list_backups",
        "prune_backups",
        "read_backup",
        "restore_backup",
        "take_backup",
    ),
    "hologram.update.errors": ("UpdateError",),
    "hologram.update.inspect": ("DataDirDamaged",),
    "hologram.update.manifest": (
        "MANIFEST",
        "Manifest",
        "ManifestError",
        "read_manifest",
        "write_manifest",
    ),
    "hologram.update.migrate": (
        "DataDirTooNew",
        "MigrationFailed",
        "Report",
        "StoreVersion",
        "current_manifest",
        "prepare",
        "survey",
        "refuse_newer",
    ),
    "hologram.update.stores": ("STORES", "Kind", "Store"),
}

__all__ = [
    "MANIFEST",
    "STORES",
    "Backup",
    "BackupError",
    "DataDirDamaged",
    "DataDirTooNew",
    "Kind",
    "Manifest",
    "ManifestError",
    "MigrationFailed",
    "Report",
    "Store",
    "StoreVersion",
    "UpdateError",
    "current_manifest",
    "list_backups",
    "prepare",
    "prune_backups",
    "read_backup",
    "read_manifest",
    "refuse_newer",
    "restore_backup",
    "survey",
    "take_backup",
    "write_manifest",
]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.update.backup import (
        Backup,
        BackupError,
        list_backups,
        prune_backups,
        read_backup,
        restore_backup,
        take_backup,
    )
    from hologram.update.errors import UpdateError
    from hologram.update.inspect import DataDirDamaged
    from hologram.update.manifest import (
        MANIFEST,
        Manifest,
        ManifestError,
        read_manifest,
        write_manifest,
    )
    from hologram.update.migrate import (
        DataDirTooNew,
        MigrationFailed,
        Report,
        StoreVersion,
        current_manifest,
        prepare,
        refuse_newer,
        survey,
    )
    from hologram.update.stores import STORES, Kind, Store
