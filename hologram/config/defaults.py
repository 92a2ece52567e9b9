"""The core settings and their defaults, as the spec names them (declared once, by section,
in `sections.py`), and the environment variables that override a few of them."""

from __future__ import annotations

from hologram.config.keys import Setting
from hologram.config.sections import CORE_SECTIONS, SourceSettings
from hologram.config.typed import declared, key_of

SEED_SOURCE = "default"
"""The LLM source every kernel has; with no base_url the offline scripted model serves it."""

CORE_DEFAULTS: tuple[Setting, ...] = (
    *(setting for section in CORE_SECTIONS for setting in declared(section)),
    *declared(SourceSettings, name=SEED_SOURCE),
)
"""Every core key with its default and doc: group 0 registers them before any module runs."""

ENV_OVERRIDES: dict[str, str] = {
    f"HOLOGRAM_LLM_{field.upper()}": key_of(SourceSettings, field, name=SEED_SOURCE)
    for field in ("api_key", "base_url", "model", "adapter")
}
"""Environment variables that override a key for one run without writing it to disk, so a
key can come from the environment and never touch the config database."""
