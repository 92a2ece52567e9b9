"""The update module (spec 000: `update`, ahead of every store): data-dir versions, the
start-up self-check, backup, migrate, roll back, and the `data` command."""

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
from hologram.update.manifest import MANIFEST, Manifest, ManifestError, read_manifest
from hologram.update.migrate import (
    DataDirTooNew,
    MigrationFailed,
    Report,
    StoreVersion,
    current_manifest,
    prepare,
    survey,
)
from hologram.update.stores import STORES, Kind, Store

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
    "restore_backup",
    "survey",
    "take_backup",
]
