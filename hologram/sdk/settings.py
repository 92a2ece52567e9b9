"""The settings surface plugins see (spec 001: ``Settings().Get/Set/List``)."""

from __future__ import annotations

from typing import Any, Protocol


class Settings(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...

    async def set(self, key: str, value: Any) -> None: ...

    def list(self, prefix: str = "") -> dict[str, Any]: ...

    def resolved(self, key: str, default: Any = None) -> Any:
        """The value with its `@{alias}` secrets filled in (this plugin's own settings only)."""
        ...
