"""Injection review, a signal: which passages of a text read as instructions to the assistant.

The rules are data: one TOML file per kind of attack in `rules/` (override, persona, limits,
leak, turns, authority, exfiltration, policy, principal, context, and relations for the forms
written by structure), whose named fragments patterns share; `RuleBook` composes them into
`Feature`s on first use. `InjectionClassifier` finds the features around their anchors and
adds the weights up per passage; `LearnedScorer` (the shipped `learned.npz`, with its
manifest `learned.json`) gives runs short of certain a second look. Content review
(`hologram.security.review`) turns passages into findings; the tool runner's containment
takes them as a signal, not as the gate.

Training and the corpus figures live apart, in `hologram.security.injection.training`, which
nothing in the kernel imports (`python -m hologram.security.injection.training`).
"""

from hologram.security.injection.classifier import (
    CERTAIN,
    SECOND_CHANCE,
    THRESHOLD,
    InjectionClassifier,
    Invisible,
    Passage,
    sentence_ends,
    sentences_around,
)
from hologram.security.injection.feature import Feature
from hologram.security.injection.learned import (
    NO_CONTEXT,
    WEIGHTS,
    Context,
    LearnedScorer,
    Manifest,
    WeightsDamaged,
    Window,
)
from hologram.security.injection.rules import RuleBook, RulesDamaged
from hologram.security.injection.scan import Signal

__all__ = [
    "CERTAIN",
    "NO_CONTEXT",
    "SECOND_CHANCE",
    "THRESHOLD",
    "WEIGHTS",
    "Context",
    "Feature",
    "InjectionClassifier",
    "Invisible",
    "LearnedScorer",
    "Manifest",
    "Passage",
    "RuleBook",
    "RulesDamaged",
    "Signal",
    "WeightsDamaged",
    "Window",
    "sentence_ends",
    "sentences_around",
]
