"""The security firewall: credential gate, tool policy and path sandbox, content review,
per-principal grants, plugin-named profiles, secrets at rest."""

from hologram.security.credentials import ALIAS, CredentialGate, StreamScrubber, alias_of
from hologram.security.firewall import Firewall, SecurityRefused
from hologram.security.keyfile import KEY_ENV, SecretCipher, SecretKeyError, load_cipher
from hologram.security.module import SecurityModule
from hologram.security.paths import PathRefused, PathSandbox
from hologram.security.policy import (
    INTERNAL,
    UNKNOWN,
    PolicySettings,
    Principal,
    Profile,
    ToolPolicy,
    parse_profiles,
)
from hologram.security.proxy import GuardedOutputChannels, GuardedRunner, ModelGuard, acting_for
from hologram.security.review import ContentReview, Finding

__all__ = [
    "ALIAS",
    "INTERNAL",
    "KEY_ENV",
    "UNKNOWN",
    "ContentReview",
    "CredentialGate",
    "Finding",
    "Firewall",
    "GuardedOutputChannels",
    "GuardedRunner",
    "ModelGuard",
    "PathRefused",
    "PathSandbox",
    "PolicySettings",
    "Principal",
    "Profile",
    "SecretCipher",
    "SecretKeyError",
    "SecurityModule",
    "SecurityRefused",
    "StreamScrubber",
    "ToolPolicy",
    "acting_for",
    "alias_of",
    "load_cipher",
    "parse_profiles",
]
