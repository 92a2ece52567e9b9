"""Settings of the kernel and its plugins, kept in `<data>/config.db`."""

from hologram.config.defaults import CORE_DEFAULTS, ENV_OVERRIDES
from hologram.config.keys import ConfigError, Setting, is_secret, mask, namespace
from hologram.config.registry import SECRET_KEY_ENV, Cipher, ConfigRegistry, Entry

__all__ = [
    "CORE_DEFAULTS",
    "ENV_OVERRIDES",
    "SECRET_KEY_ENV",
    "Cipher",
    "ConfigError",
    "ConfigRegistry",
    "Entry",
    "Setting",
    "is_secret",
    "mask",
    "namespace",
]
