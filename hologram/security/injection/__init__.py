"""The injection classifier behind content review: features (english, chinese), hidden
markup, and how their weights add up per passage (classifier)."""

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
