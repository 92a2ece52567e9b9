"""The `security` kernel module (spec 000: layer 1, after `config`, before every module that
reads an encrypted `core.llm.*` value).

Its init loads the secret key, unlocks the config store (a wrong key stops the boot here,
with the reason, instead of every provider answering 401 later), and puts the firewall on
`state.security`. The modules that own the outward-facing mount points (llm, stagehost,
channels, plugins) find it there and put its guarded objects in place as they build them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from hologram.config import ConfigRegistry
from hologram.events import EventBus
from hologram.kernel import KernelLog, required
from hologram.sdk import Facility
from hologram.security.firewall import Firewall
from hologram.security.keyfile import load_cipher
from hologram.security.logfilter import SecretLogFilter


class SecurityState(Protocol):
    """What the security module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def log(self) -> KernelLog: ...

    security: Firewall | None


class SecurityModule:
    name = "security"
    requires = (Facility.CONFIG, Facility.EVENTS)
    provides = (Facility.SECURITY,)

    def __init__(self) -> None:
        self._detach: list[Any] = []

    async def init(self, state: SecurityState) -> None:
        config = required(state.config, Facility.CONFIG)
        events = required(state.events, Facility.EVENTS)
        key_text = config.secret_key_text
        environ = {"HOLOGRAM_SECRET_KEY": key_text} if key_text else {}
        cipher = load_cipher(state.data_dir, environ)
        await config.unlock(cipher)
        firewall = Firewall(config, events, state.data_dir)
        firewall.policy()  # settings read now, so a bad one stops the boot
        self._detach.append(events.add_filter(firewall.scrub_event))
        self._detach.append(state.log.add_filter(SecretLogFilter(firewall.gate)))
        state.security = firewall

    async def close(self) -> None:
        for detach in reversed(self._detach):
            detach()
        self._detach.clear()
