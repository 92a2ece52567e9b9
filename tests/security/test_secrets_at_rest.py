"""Secrets at rest: encrypted in config.db under a key from the environment or a 0600 key
file; a wrong or unsafe key stops the boot with the reason."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from hologram import Kernel
from hologram.config import ConfigError, ConfigRegistry
from hologram.kernel import BootError
from hologram.security import SecretCipher, SecretKeyError
from hologram.security.credentials import CredentialGate

TOKEN = "ghp_TopSecretValue_12345"
KEY = "core.security.credential.github.secret"
API_KEY = "core.llm.sources.default.api_key"


def raw_rows(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT value FROM config")]


def modules() -> list:
    from hologram.events import EventsModule
    from hologram.security import SecurityModule

    return [EventsModule(), SecurityModule()]


async def test_a_secret_set_at_run_time_is_stored_encrypted(data_dir: Path) -> None:
    async with Kernel(data_dir, modules=modules(), environ={}) as kernel:
        await kernel.config.set(KEY, TOKEN)
        await kernel.config.set(API_KEY, "sk-live-abcdefgh")
        assert kernel.config.get(KEY) == TOKEN
    stored = "\n".join(raw_rows(data_dir / "config.db"))
    assert TOKEN not in stored and "sk-live-abcdefgh" not in stored
    assert stored.count('"enc:v1:') >= 3  # the two secrets and the key check
    assert TOKEN.encode() not in (data_dir / "config.db").read_bytes()
    async with Kernel(data_dir, modules=modules(), environ={}) as kernel:
        assert kernel.config.get(KEY) == TOKEN  # the same key file reads it back


async def test_secrets_stored_in_plain_text_before_are_encrypted_at_the_next_boot(
    data_dir: Path,
) -> None:
    registry = await ConfigRegistry.open(data_dir / "config.db", {})
    await registry.set(API_KEY, "sk-old-plaintext-1")
    await registry.close()
    assert any("sk-old-plaintext-1" in row for row in raw_rows(data_dir / "config.db"))
    async with Kernel(data_dir, modules=modules(), environ={}) as kernel:
        assert kernel.config.get(API_KEY) == "sk-old-plaintext-1"
    assert not any("sk-old-plaintext-1" in row for row in raw_rows(data_dir / "config.db"))


async def test_the_key_file_is_created_readable_by_its_owner_only(data_dir: Path) -> None:
    async with Kernel(data_dir, modules=modules(), environ={}):
        pass
    mode = stat.S_IMODE((data_dir / "secret.key").stat().st_mode)
    assert mode == 0o600


async def test_a_wrong_key_stops_the_boot_and_says_so(data_dir: Path) -> None:
    first = Fernet.generate_key().decode()
    async with Kernel(data_dir, modules=modules(), environ={"HOLOGRAM_SECRET_KEY": first}) as k:
        await k.config.set(KEY, TOKEN)
    other = Fernet.generate_key().decode()
    with pytest.raises(BootError) as failed:
        async with Kernel(data_dir, modules=modules(), environ={"HOLOGRAM_SECRET_KEY": other}):
            pass
    message = str(failed.value)
    assert "does not decrypt" in message and "HOLOGRAM_SECRET_KEY" in message
    assert TOKEN not in message
    # the right key still opens it: nothing was changed by the failed boot
    async with Kernel(data_dir, modules=modules(), environ={"HOLOGRAM_SECRET_KEY": first}) as k:
        assert k.config.get(KEY) == TOKEN


async def test_a_wrong_key_is_caught_even_with_no_secret_stored(data_dir: Path) -> None:
    async with Kernel(data_dir, modules=modules(), environ={}):
        pass  # only the key check is stored
    other = Fernet.generate_key().decode()
    with pytest.raises(BootError, match=r"does not decrypt core\.security\.key_check"):
        async with Kernel(data_dir, modules=modules(), environ={"HOLOGRAM_SECRET_KEY": other}):
            pass


async def test_a_key_file_others_can_read_is_refused(data_dir: Path) -> None:
    key = data_dir / "secret.key"
    key.write_bytes(Fernet.generate_key())
    os.chmod(key, 0o644)
    with pytest.raises(BootError, match="chmod 600"):
        async with Kernel(data_dir, modules=modules(), environ={}):
            pass


async def test_a_malformed_key_is_a_clear_error(data_dir: Path) -> None:
    with pytest.raises(BootError, match="not a Fernet key"):
        async with Kernel(data_dir, modules=modules(), environ={"HOLOGRAM_SECRET_KEY": "hunter2"}):
            pass


async def test_an_encrypted_value_read_before_unlocking_names_the_problem(
    data_dir: Path,
) -> None:
    async with Kernel(data_dir, modules=modules(), environ={}) as kernel:
        await kernel.config.set(KEY, TOKEN)
    registry = await ConfigRegistry.open(data_dir / "config.db", {})
    try:
        with pytest.raises(ConfigError, match="still locked"):
            registry.get(KEY)
        assert registry.list("core.security.credential")[KEY] == "(encrypted)"
    finally:
        await registry.close()


def test_the_cipher_refuses_text_that_is_not_its_ciphertext() -> None:
    cipher = SecretCipher(Fernet.generate_key(), "test")
    with pytest.raises(SecretKeyError, match="not an encrypted value"):
        cipher.decrypt("plain", "core.x.token")
    assert cipher.decrypt(cipher.encrypt("秘密 value")) == "秘密 value"


async def test_what_reads_the_config_before_the_unlock_sees_the_secrets_after_it(
    data_dir: Path,
) -> None:
    """Readers that cache by the registry's version (the credential gate, the LLM sources)
    must see a secret once it can be read: an unlock changes what reads return."""
    cipher = SecretCipher(Fernet.generate_key(), "test")
    registry = await ConfigRegistry.open(data_dir / "config.db", {})
    await registry.unlock(cipher)
    await registry.set(KEY, TOKEN)
    await registry.close()

    registry = await ConfigRegistry.open(data_dir / "config.db", {})
    gate = CredentialGate(registry)
    assert TOKEN not in gate.values()  # still sealed: the gate cannot know it yet
    before = registry.version
    await registry.unlock(cipher)
    assert registry.version > before
    assert TOKEN in gate.values()
    assert gate.mask(f"token {TOKEN} here") == "token @{github} here"
    await registry.close()
