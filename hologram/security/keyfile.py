"""The key that encrypts secrets at rest, and the cipher built on it.

The key comes from `HOLOGRAM_SECRET_KEY` when set, else from `<data>/secret.key`, which is
created on first boot readable by its owner only. A key file others can read is refused
rather than used: a key beside the database it protects, open to every local user, protects
nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

KEY_ENV = "HOLOGRAM_SECRET_KEY"
KEY_FILE = "secret.key"
PREFIX = "enc:v1:"
"""Marks a stored value as ciphertext; `v1` is Fernet (AES-128-CBC with HMAC-SHA256)."""


class SecretKeyError(Exception):
    """The secret key is missing, malformed, too open, or not the one the store was written
    with. The message says which, and what to do."""


class SecretCipher:
    """Encrypts and decrypts config values with one Fernet key."""

    def __init__(self, key: bytes, origin: str) -> None:
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError):
            raise SecretKeyError(
                f"the secret key from {origin} is not a Fernet key (44 characters of url-safe "
                "base64); generate one with `python -c 'from cryptography.fernet import "
                "Fernet; print(Fernet.generate_key().decode())'`"
            ) from None
        self.origin = origin

    @staticmethod
    def is_encrypted(value: object) -> bool:
        return isinstance(value, str) and value.startswith(PREFIX)

    def encrypt(self, text: str) -> str:
        return PREFIX + self._fernet.encrypt(text.encode("utf-8")).decode("ascii")

    def decrypt(self, stored: str, key: str = "a value") -> str:
        if not self.is_encrypted(stored):
            raise SecretKeyError(f"{key} is not an encrypted value")
        try:
            return self._fernet.decrypt(stored[len(PREFIX) :].encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError, ValueError):
            raise SecretKeyError(
                f"the secret key from {self.origin} does not decrypt {key}: the config store "
                f"was encrypted with another key. Set {KEY_ENV} (or restore "
                f"<data>/{KEY_FILE}) to the key it was written with; without that key the "
                "stored secrets are lost and must be entered again in a fresh config.db"
            ) from None


def load_cipher(data_dir: Path, environ: Mapping[str, str] | None = None) -> SecretCipher:
    """The cipher for this data dir: from the environment, else the key file (made if absent)."""
    env = os.environ if environ is None else environ
    text = env.get(KEY_ENV, "").strip()
    if text:
        return SecretCipher(text.encode("ascii", "replace"), f"${KEY_ENV}")
    path = data_dir / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return SecretCipher(_read_key_file(path), str(path))
    with os.fdopen(fd, "wb") as handle:
        handle.write(Fernet.generate_key())
        handle.flush()
        os.fsync(handle.fileno())
    return SecretCipher(path.read_bytes().strip(), str(path))


def _read_key_file(path: Path) -> bytes:
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        raise SecretKeyError(f"{path} is not a regular file; it must hold the secret key")
    if mode & 0o077:
        raise SecretKeyError(
            f"{path} is readable by others (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}` and start again"
        )
    return path.read_bytes().strip()
