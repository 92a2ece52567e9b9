"""LLM sources as configured: `core.llm.sources.<name>.{adapter, base_url, api_key, model,
context_window, timeout_s, accepts_images}`.

Sources are found by listing the keys under `core.llm.sources.`. They are tried in the
order of `core.llm.source_order` (a list of names; sources it leaves out follow in
alphabetical order), with `core.llm.active_source` moved to the front.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hologram.config import SEED_SOURCE, ConfigError, ConfigRegistry, LLMSettings, SourceSettings
from hologram.llm.provider import SourceConfig

PREFIX = SourceSettings.all_prefix
FIELDS = (
    "adapter",
    "base_url",
    "api_key",
    "model",
    "context_window",
    "timeout_s",
    "accepts_images",
)
OFFLINE_SOURCE = SEED_SOURCE
"""The seed source: with no base_url it is served by the offline scripted model."""


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """A source whose settings cannot be used; the message names the key to fix."""

    name: str
    message: str
    fingerprint: tuple[Any, ...]


def source_names(config: ConfigRegistry) -> list[str]:
    """Every configured source, in the order they are tried (before the active one moves up)."""
    found: list[str] = []
    for key in config.list(PREFIX):
        name = key[len(PREFIX) :].split(".", 1)[0]
        if name not in found:
            found.append(name)
    try:
        order = list(config.read(LLMSettings).source_order)
    except ConfigError:
        order = []
    listed = [n for n in order if isinstance(n, str) and n in found]
    return listed + sorted(n for n in found if n not in listed)


def read_source(config: ConfigRegistry, name: str) -> SourceConfig | SourceProblem:
    raw = {f: config.get(f"{PREFIX}{name}.{f}") for f in FIELDS}
    fingerprint = tuple(raw[f] for f in FIELDS)
    problems: list[str] = []

    def text(field: str, default: str = "") -> str:
        value = raw[field]
        if value is None:
            return default
        if not isinstance(value, str):
            problems.append(f"{PREFIX}{name}.{field} must be a string, got {value!r}")
            return default
        return value.strip()

    adapter = text("adapter", "openai") or "openai"
    base_url = text("base_url")
    if base_url and not base_url.startswith(("http://", "https://")):
        problems.append(
            f"{PREFIX}{name}.base_url must start with http:// or https://, got {base_url!r}"
        )
    if not base_url and name != OFFLINE_SOURCE:
        problems.append(f"{PREFIX}{name}.base_url is not set")
    window = raw["context_window"]
    if window is None:
        window = 0
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        problems.append(f"{PREFIX}{name}.context_window must be a whole number ≥ 0, got {window!r}")
        window = 0
    timeout = raw["timeout_s"]
    if timeout is None:
        timeout = config.read(LLMSettings).timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append(f"{PREFIX}{name}.timeout_s must be a positive number, got {timeout!r}")
        timeout = 120.0
    vision = raw["accepts_images"]
    if vision is not None and not isinstance(vision, bool):
        problems.append(
            f"{PREFIX}{name}.accepts_images must be true or false (or unset: as the adapter "
            f"declares), got {vision!r}"
        )
        vision = None
    source = SourceConfig(
        name=name,
        adapter=adapter,
        base_url=base_url,
        api_key=text("api_key"),
        model=text("model"),
        context_window=window,
        timeout_s=float(timeout),
        accepts_images=vision,
    )
    if problems:
        return SourceProblem(name, "; ".join(problems), fingerprint)
    return source
