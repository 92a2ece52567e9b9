"""The injection classifier behind content review.

One module per kind of attack holds its English and Chinese features (override, persona,
limits, leak, turns, authority, exfiltration, policy, principal, and the context signals in
context); catalog lists them with their reach; scan finds them around their anchors; markup
finds hidden text; classifier adds the weights up per passage.

Most features are phrases of their kind; each module's GENERAL tuple holds the forms written
by structure instead (a role compounded into a tag name, a persona given by apposition, an
obey-verb aimed away from the user, an order written into the assistant's memory), which
tests/security/test_injection_families.py checks one by one.

The `kinds` module holds more such forms for the kinds the first held-out figures showed weak
(authority, exfiltration, hidden markup, policy rewrites, and roles, turns and prompt leaks as
the later corpus texts showed them), checked by tests/security/test_injection_kinds.py.
"""

from hologram.security.injection.catalog import FEATURES
from hologram.security.injection.classifier import (
    THRESHOLD,
    InjectionClassifier,
    Invisible,
    Passage,
)
from hologram.security.injection.feature import Feature

__all__ = [
    "FEATURES",
    "THRESHOLD",
    "Feature",
    "InjectionClassifier",
    "Invisible",
    "Passage",
]
