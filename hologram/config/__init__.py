"""Settings of the kernel and its plugins, kept in `<data>/config.db`."""

from hologram.config.defaults import CORE_DEFAULTS, ENV_OVERRIDES
from hologram.config.keys import ConfigError, Setting, is_secret, mask, namespace
from hologram.config.registry import ConfigRegistry, Entry

__all__ = [
    "CORE_DEFAULTS",
    "ENV_OVERRIDES",
    "ConfigError",
    "ConfigRegistry",
    "Entry",
    "Setting",
    "is_secret",
    "mask",
    "namespace",
]
