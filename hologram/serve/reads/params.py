"""Parameter types the read endpoints share."""

from __future__ import annotations

from typing import Annotated

from hologram.sdk import Param
from hologram.serve.params import not_blank

SearchText = Annotated[str, not_blank("the text to look for")]
History = Annotated[bool, Param("closed facts too (kept as history)")]
Limit = Annotated[int, Param("at most this many", ge=1, le=10_000)]
Top = Annotated[int, Param("at most this many", ge=1, le=100)]
