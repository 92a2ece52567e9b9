"""Capability narrowing (spec 000: Restricted External Plugin API).

An external plugin sees the public SDK only, and of it only what its manifest declares. The
withheld surfaces (tracker, status, supervisor, adapter, selftest, the tool table, event
publishing) are refused with an error that names the capability, never silently dropped:
the spec's worst bug class is a plugin whose data link is broken without a word.
"""

from __future__ import annotations

from collections.abc import Set

from hologram.sdk import WITHHELD, Capability, CapabilityError


def check(plugin: str, granted: Set[Capability], capability: Capability) -> None:
    """Raise `CapabilityError` unless `plugin` may use `capability`."""
    if capability in WITHHELD:
        raise CapabilityError(
            capability,
            f"capability {capability.value!r} is withheld from external plugins "
            f"(plugin {plugin!r}): only built-in plugins have it",
        )
    if capability not in granted:
        raise CapabilityError(
            capability,
            f"plugin {plugin!r} did not declare capability {capability.value!r}: add it to "
            "'capabilities' in its plugin.json",
        )


READ_ONLY: frozenset[Capability] = frozenset({Capability.SOCIAL})
"""Surfaces an external plugin may read and never write (spec: SocialAPI is read-only)."""


def check_write(plugin: str, capability: Capability, what: str) -> None:
    """Raise `CapabilityError` if `what` writes to a surface that is read-only for
    external plugins."""
    if capability in READ_ONLY:
        raise CapabilityError(
            capability,
            f"capability {capability.value!r} is read-only for external plugins (plugin "
            f"{plugin!r} called {what}): writing it needs a built-in plugin",
        )
