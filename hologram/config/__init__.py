"""Settings of the kernel and its plugins, kept in `<data>/config.db`."""

from hologram.config.defaults import CORE_DEFAULTS, ENV_OVERRIDES, SEED_SOURCE
from hologram.config.keys import ConfigError, Setting, is_secret, mask, namespace
from hologram.config.registry import SECRET_KEY_ENV, Cipher, ConfigRegistry, Entry
from hologram.config.sections import (
    CORE_SECTIONS,
    AgentSettings,
    EmbedderSettings,
    EventSettings,
    GraphSettings,
    HealthSettings,
    LLMSettings,
    MediaSettings,
    MemorySettings,
    PluginSettings,
    SchedulerSettings,
    SecuritySettings,
    SourceSettings,
    StageSettings,
    UpdateSettings,
)
from hologram.config.typed import Live, declared, key_of, setting

__all__ = [
    "CORE_DEFAULTS",
    "CORE_SECTIONS",
    "ENV_OVERRIDES",
    "SECRET_KEY_ENV",
    "SEED_SOURCE",
    "AgentSettings",
    "Cipher",
    "ConfigError",
    "ConfigRegistry",
    "EmbedderSettings",
    "Entry",
    "EventSettings",
    "GraphSettings",
    "HealthSettings",
    "LLMSettings",
    "Live",
    "MediaSettings",
    "MemorySettings",
    "PluginSettings",
    "SchedulerSettings",
    "SecuritySettings",
    "Setting",
    "SourceSettings",
    "StageSettings",
    "UpdateSettings",
    "declared",
    "is_secret",
    "key_of",
    "mask",
    "namespace",
    "setting",
]
