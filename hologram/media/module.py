"""The `media` kernel module: the media store at `<data>/media`, its limits live from
`core.media.*`."""

from __future__ import annotations

from typing import Any

from hologram.config import Live, MediaSettings
from hologram.media.store import MediaLimits, MediaStore
from hologram.sdk import Facility


class MediaModule:
    name = "media"
    requires = (Facility.CONFIG,)
    provides = (Facility.MEDIA,)

    def __init__(self) -> None:
        self._settings: Live[MediaSettings] | None = None

    async def init(self, state: Any) -> None:
        settings = self._settings = Live(state.config, MediaSettings)
        state.media = MediaStore(
            state.data_dir / "media",
            lambda: MediaLimits(settings.current.max_bytes, settings.current.max_items),
        )

    async def close(self) -> None:
        if self._settings is not None:
            self._settings.close()
