"""The `media` kernel module: the media store at `<data>/media`, its limits live from
`core.media.*`."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from hologram.config import ConfigRegistry, Live, MediaSettings
from hologram.kernel import required
from hologram.media.store import MediaLimits, MediaStore
from hologram.sdk import Facility


class MediaState(Protocol):
    """What the media module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def data_dir(self) -> Path: ...

    media: MediaStore | None


class MediaModule:
    name = "media"
    requires = (Facility.CONFIG,)
    provides = (Facility.MEDIA,)

    def __init__(self) -> None:
        self._settings: Live[MediaSettings] | None = None

    async def init(self, state: MediaState) -> None:
        settings = self._settings = Live(required(state.config, Facility.CONFIG), MediaSettings)
        state.media = MediaStore(
            state.data_dir / "media",
            lambda: MediaLimits(settings.current.max_bytes, settings.current.max_items),
        )

    async def close(self) -> None:
        if self._settings is not None:
            self._settings.close()
