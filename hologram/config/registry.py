"""The configuration registry (spec: ConfigRegistry) on SQLite.

Reads come from memory and never wait. Writes go through to the database before `set`
returns, so a value the registry acknowledged survives a crash. Core keys live in the
`config` table; each plugin's keys in a table `config_<plugin>` of their own, so removing a
plugin's settings never touches anyone else's.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import aiosqlite

from hologram.config.defaults import ENV_OVERRIDES
from hologram.config.keys import (
    ConfigError,
    Setting,
    check_value,
    coerce_text,
    is_secret,
    namespace,
)
from hologram.config.known import unknown_reason
from hologram.config.typed import Live, S, read
from hologram.kernel import SchemaTooNew, connect_sqlite, migrate_sqlite

log = logging.getLogger(__name__)

Source = Literal["env", "stored", "default"]

_SCHEMA = "(key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at REAL NOT NULL)"

CONFIG_MIGRATIONS: tuple[str, ...] = (
    # 1: core.* settings (plugin.<name>.* ones get a table each, made when first declared).
    # IF NOT EXISTS: the databases shipped before versions existed have it already.
    f"CREATE TABLE IF NOT EXISTS config {_SCHEMA}",
)
"""The config database's schema steps (see `hologram.kernel.schema`)."""


def _prepare(path: Path) -> None:
    """WAL mode and the schema, on a connection of its own (the steps need autocommit)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        migrate_sqlite(db, CONFIG_MIGRATIONS, f"the config database {path}")
    finally:
        db.close()


SECRET_KEY_ENV = "HOLOGRAM_SECRET_KEY"
"""The environment variable that holds the key of the secrets at rest (read by `security`)."""

KEY_CHECK = "core.security.key_check"
"""A known text stored encrypted, so a wrong key is caught even when no secret is stored."""
_KEY_CHECK_TEXT = "hologram secret key check"


class Cipher(Protocol):
    """What encrypts secrets at rest; the security module supplies it."""

    def is_encrypted(self, value: object) -> bool: ...

    def encrypt(self, text: str) -> str: ...

    def decrypt(self, stored: str, key: str = ...) -> str: ...


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    value: Any
    source: Source
    default: Any
    doc: str


def _table(plugin: str | None) -> str:
    # The plugin name is checked by `namespace` to be [a-z][a-z0-9_]*, safe as an identifier.
    return "config" if plugin is None else f"config_{plugin}"


class ConfigRegistry:
    """Typed key-value settings: `core.*` for the kernel, `plugin.<name>.*` for plugins."""

    def __init__(self, db: aiosqlite.Connection, path: Path, stored: dict[str, Any]) -> None:
        self.path = path
        self._db = db
        self._stored = stored
        self._defaults: dict[str, Setting] = {}
        self._env: dict[str, str] = {}
        self._tables: set[str] = set()
        self.problems: list[str] = []
        self._cipher: Cipher | None = None
        self.secret_key_text = ""
        """`HOLOGRAM_SECRET_KEY` as this registry's environment had it."""
        self.version = 0
        """Counts writes, so a reader that derives something from the values (the
        credential gate) knows when to look again without comparing them all."""
        self._watchers: list[Callable[[str], None]] = []
        self._plugins: dict[str, set[str]] = {}
        """The keys each known plugin declares (see `declare_plugin`)."""

    @classmethod
    async def open(cls, path: Path, environ: Mapping[str, str] | None = None) -> ConfigRegistry:
        """Open (or create) the database at `path`. A file that is not a readable config
        database is refused as it is; nothing in it is changed."""
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await asyncio.to_thread(_prepare, path)
        except (sqlite3.DatabaseError, SchemaTooNew) as exc:
            raise ConfigError(
                f"the config database {path} cannot be read ({exc}); it was left untouched: "
                "move it aside to start with fresh settings, or restore it from a backup"
            ) from exc
        db = await connect_sqlite(path)
        try:
            await db.execute("PRAGMA synchronous=FULL")
            registry = cls(db, path, {})
            await registry._load()
        except sqlite3.DatabaseError as exc:
            await db.close()
            raise ConfigError(
                f"the config database {path} cannot be read ({exc}); it was left untouched: "
                "move it aside to start with fresh settings, or restore it from a backup"
            ) from exc
        registry._read_environment(os.environ if environ is None else environ)
        return registry

    async def _load(self) -> None:
        async with self._db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'config%'"
        ) as cursor:
            tables = [row[0] async for row in cursor]
        self._tables = set(tables)
        for table in tables:
            async with self._db.execute(f"SELECT key, value FROM {table}") as cursor:
                async for key, raw in cursor:
                    try:
                        self._stored[key] = json.loads(raw)
                    except (TypeError, json.JSONDecodeError):
                        problem = f"{key}: stored value is not JSON ({raw!r:.60}); using default"
                        self.problems.append(problem)
                        log.warning("config %s: %s", self.path, problem)

    def _read_environment(self, environ: Mapping[str, str]) -> None:
        for variable, key in ENV_OVERRIDES.items():
            if environ.get(variable):
                self._env[key] = environ[variable]
        self.secret_key_text = environ.get(SECRET_KEY_ENV, "")

    # ---- secrets at rest ------------------------------------------------------------------

    @property
    def unlocked(self) -> bool:
        return self._cipher is not None

    async def unlock(self, cipher: Cipher) -> int:
        """Decrypt the stored secrets with `cipher` and encrypt from now on; secrets stored in
        plain text (before there was a key) are encrypted in place. A wrong key raises the
        cipher's error, naming the key it could not decrypt, and nothing is changed.
        Returns how many plain-text secrets were encrypted."""
        check = self._stored.get(KEY_CHECK)
        if isinstance(check, str) and cipher.is_encrypted(check):
            cipher.decrypt(check, KEY_CHECK)
        plain: dict[str, Any] = {}
        for key, value in self._stored.items():
            if cipher.is_encrypted(value):
                plain[key] = cipher.decrypt(value, key)
        self._stored.update(plain)
        self._cipher = cipher
        for key in plain:
            # Readable now: whoever caches what it read by `version` must read again.
            self._changed(key)
        if check is None:
            await self._write(KEY_CHECK, _KEY_CHECK_TEXT)
        migrated = [k for k, v in self._stored.items() if self._seals(k, v) and k not in plain]
        for key in migrated:
            await self._write(key, self._stored[key])
        if migrated:
            log.info("encrypted %d secret(s) stored in plain text: %s", len(migrated), migrated)
        return len(migrated)

    def _seals(self, key: str, value: Any) -> bool:
        sealable = is_secret(key) and isinstance(value, str) and bool(value)
        return self._cipher is not None and sealable

    def _locked(self, key: str, value: Any) -> bool:
        return (
            self._cipher is None
            and (is_secret(key) or key == KEY_CHECK)
            and isinstance(value, str)
            and value.startswith("enc:")
        )

    # ---- defaults -------------------------------------------------------------------------

    def register_default(self, key: str, value: Any, doc: str = "") -> None:
        """Declare a key and its default. It is not written anywhere: only a `set` value is."""
        namespace(key)
        check_value(key, value, None)
        self._defaults[key] = Setting(key, value, doc)

    def register(self, settings: Iterable[Setting]) -> None:
        for setting in settings:
            self.register_default(setting.key, setting.default, setting.doc)

    def declare_plugin(self, plugin: str, settings: Iterable[Setting]) -> None:
        """Plugin `plugin` exists and reads these keys (its manifest's `settings`)."""
        settings = list(settings)
        self.register(settings)
        self._plugins[plugin] = {s.key for s in settings}

    def check_known(self, key: str) -> None:
        """Refuse a key nobody reads, naming the closest that exist: a person's typo
        (`core.llm.bakoff_s`) must not be stored as if it meant something. Every door a
        person sets settings through calls this; code that owns a key need not."""
        namespace(key)
        reason = unknown_reason(key, self._defaults, self._plugins)
        if reason is not None:
            raise ConfigError(reason)

    # ---- typed sections -------------------------------------------------------------------

    def read(self, section: type[S], **parts: str) -> S:
        """The current values of a settings section (see `hologram.config.typed`)."""
        return read(self, section, **parts)

    def live(self, section: type[S], **parts: str) -> Live[S]:
        """A settings section kept current as its keys change."""
        return Live(self, section, **parts)

    # ---- reads ----------------------------------------------------------------------------

    def _default_of(self, key: str) -> Any:
        setting = self._defaults.get(key)
        return None if setting is None else setting.default

    def source(self, key: str) -> Source | None:
        if key in self._env:
            return "env"
        if key in self._stored:
            return "stored"
        if key in self._defaults:
            return "default"
        return None

    def get(self, key: str, default: Any = None) -> Any:
        """The value of `key`: environment override, else stored, else registered default,
        else `default`."""
        namespace(key)
        if key in self._env:
            return coerce_text(key, self._env[key], self._default_of(key))
        if key in self._stored:
            value = self._stored[key]
            if self._locked(key, value):
                raise ConfigError(
                    f"{key} is stored encrypted and the store is still locked: it is read once "
                    "the security module has loaded the secret key (a module that reads it "
                    "must require the 'security' facility)"
                )
            return value
        if key in self._defaults:
            return self._defaults[key].default
        return default

    def _typed(self, key: str, kind: type | tuple[type, ...], name: str) -> Any:
        value = self.get(key)
        if value is None:
            raise ConfigError(f"{key} is not set and has no default")
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise ConfigError(f"{key} is {value!r}, not {name}")
        if not isinstance(value, kind):
            raise ConfigError(f"{key} is {value!r}, not {name}")
        return value

    def get_int(self, key: str) -> int:
        return int(self._typed(key, int, "an int"))

    def get_float(self, key: str) -> float:
        return float(self._typed(key, (int, float), "a number"))

    def get_bool(self, key: str) -> bool:
        return bool(self._typed(key, bool, "a bool"))

    def get_str(self, key: str) -> str:
        return str(self._typed(key, str, "a string"))

    def list(self, prefix: str = "") -> dict[str, Any]:
        """Every known key under `prefix` with its current value, sorted by key."""
        return {e.key: e.value for e in self.entries(prefix)}

    def entries(self, prefix: str = "") -> builtins.list[Entry]:
        keys = sorted(
            k for k in {*self._defaults, *self._stored, *self._env} if k.startswith(prefix)
        )
        return [
            Entry(
                key=k,
                value="(encrypted)" if self._locked(k, self._stored.get(k)) else self.get(k),
                source=self.source(k) or "default",
                default=self._default_of(k),
                doc=self._defaults[k].doc if k in self._defaults else "",
            )
            for k in keys
        ]

    def snapshot(self) -> dict[str, Any]:
        return self.list()

    # ---- writes ---------------------------------------------------------------------------

    async def set(self, key: str, value: Any) -> None:
        """Store `value` for `key`, durably, before returning."""
        namespace(key)
        value = check_value(key, value, self._default_of(key))
        await self._write(key, value)
        if key in self._env:
            log.warning("%s is stored, but the environment overrides it for this run", key)

    async def _write(self, key: str, value: Any) -> None:
        table = _table(namespace(key))
        if table not in self._tables:
            await self._db.execute(f"CREATE TABLE IF NOT EXISTS {table} {_SCHEMA}")
            self._tables.add(table)
        stored = value
        if (self._seals(key, value) or key == KEY_CHECK) and self._cipher is not None:
            stored = self._cipher.encrypt(value)
        await self._db.execute(
            f"INSERT INTO {table}(key, value, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value, updated_at=excluded.updated_at",
            (key, json.dumps(stored, ensure_ascii=False), time.time()),
        )
        await self._db.commit()
        self._stored[key] = value
        self._changed(key)

    def watch(self, changed: Callable[[str], None]) -> Callable[[], None]:
        """Call `changed(key)` after each stored change (set or delete) of a key. Returns the
        function that stops watching."""
        self._watchers.append(changed)
        return lambda: self._watchers.remove(changed)

    def _changed(self, key: str) -> None:
        self.version += 1
        for changed in list(self._watchers):
            try:
                changed(key)
            except Exception:
                log.exception("a config watcher failed on %s", key)

    def set_text(self, key: str, text: str) -> Any:
        """Parse text typed by a person (command line, form) into the key's type."""
        namespace(key)
        return coerce_text(key, text, self._default_of(key))

    async def delete(self, key: str) -> bool:
        """Forget the stored value of `key` (its default, if any, applies again)."""
        table = _table(namespace(key))
        if key not in self._stored:
            return False
        await self._db.execute(f"DELETE FROM {table} WHERE key = ?", (key,))
        await self._db.commit()
        del self._stored[key]
        self._changed(key)
        return True

    async def flush(self) -> None:
        """Fold the write-ahead log into the database file, so the file alone holds every
        value (every `set` is already durable; this makes the file self-contained)."""
        await self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def close(self) -> None:
        await self.flush()
        await self._db.close()
