"""One experiment configuration: which memory tier answers the probes, how it ranks, and the
kernel settings the fresh kernel boots with. Read from TOML::

    name = "cold-episodic"
    tier = "cold"            # context | cold | graph | fused
    ranker = "episodic"      # kernel | episodic | bm25
    depth = 20               # hits retrieved per probe
    text = "{speaker}: {text}"

    [settings]               # written into the kernel's config before it boots
    "core.memory.context.top_k" = 40

    [weights]                # recall's steps (hologram.memory.recall.episodic.EpisodicWeights)
    expansion = 0.0          # e.g. the second round switched off: one row of the ablation
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from hologram.config import is_core_key
from hologram.memory import EpisodicWeights

DEFAULT_TEXT = "{speaker}: {text}"


class Tier(StrEnum):
    CONTEXT = "context"
    """The context window alone: what survived pruning, ranked as pruning ranks."""
    COLD = "cold"
    """The cold context alone: what pruning archived, found by its query."""
    GRAPH = "graph"
    """The graph (Memory II), through its indexer."""
    FUSED = "fused"
    """Every tier the kernel has, one ranking (the kernel's recall index over window, cold
    context and graph text blocks, with the kernel ranker)."""


class Ranker(StrEnum):
    KERNEL = "kernel"
    """Recall as the kernel runs it: episodic words and vectors, fused (`Memory.search`)."""
    EPISODIC = "episodic"
    """`hologram.memory.recall.episodic`: stemmed BM25 over each turn read with the turn before it,
    its session's score and its neighbours'."""
    BM25 = "bm25"
    """The baseline that is not ours: plain BM25 from the `bm25s` library over every turn
    of the conversation as it was stored, words from the kernel's segmenter (jieba for
    Chinese). No kernel is booted: it ranks what was said, not what memory kept."""


@dataclass(frozen=True, slots=True)
class EvalConfig:
    name: str = "default"
    tier: Tier = Tier.FUSED
    ranker: Ranker = Ranker.KERNEL
    depth: int = 20
    text: str = DEFAULT_TEXT
    """How a turn is put into memory: ``{speaker}``, ``{text}``, ``{date}``, ``{day}``."""
    settings: dict[str, Any] = field(default_factory=dict)
    memory_budget: int = 1200
    """Tokens the memory section may take in the prompt (what `prompt_tokens` measures)."""
    weights: dict[str, float | int | bool] = field(default_factory=dict)
    """Recall's steps and weights changed from their defaults (`EpisodicWeights` fields,
    e.g. ``{"dates": 0.0}``): the kernel's own recall index and the episodic ranker rank
    the probes with them, so one step switched off is one row of the ablation. The replay
    runs with the defaults (the weights change no stored turn), which lets configurations
    that differ only here ask one replayed memory."""

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError("depth must be at least 1")
        if "{text}" not in self.text:
            raise ValueError(f"text template {self.text!r} must contain {{text}}")
        try:
            self.text.format(speaker="", text="", date="", day="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"text template {self.text!r}: {exc!r}; it may use {{speaker}}, {{text}}, "
                "{date} and {day}"
            ) from None
        for key in self.settings:
            if not is_core_key(key):
                raise ValueError(f"setting {key!r}: only core.* kernel settings can be set")
        if self.weights:
            known = {f.name: f for f in fields(EpisodicWeights)}
            unknown = sorted(set(self.weights) - set(known))
            if unknown:
                raise ValueError(f"unknown recall weights {unknown}; known: {sorted(known)}")
            if self.ranker is Ranker.BM25:
                raise ValueError("weights apply to the kernel and episodic rankers, not bm25")
            for name, value in self.weights.items():
                default = known[name].default
                if isinstance(default, bool) != isinstance(value, bool) or not isinstance(
                    value, int | float
                ):
                    raise ValueError(
                        f"recall weight {name} = {value!r}: expected a value like {default!r}"
                    )

    def recall_weights(self) -> EpisodicWeights:
        """The weights recall ranks with in this configuration."""
        # `__post_init__` checked each name against the fields and each value against the
        # field's kind; mypy cannot relate a dict's keys to the fields they fill.
        return EpisodicWeights(**self.weights)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, default_name: str = "default") -> EvalConfig:
        known = {"name", "tier", "ranker", "depth", "text", "settings", "memory_budget", "weights"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown configuration keys {unknown}; known: {sorted(known)}")
        try:
            tier = Tier(data.get("tier", Tier.FUSED))
            ranker = Ranker(data.get("ranker", Ranker.KERNEL))
        except ValueError as exc:
            raise ValueError(
                f"{exc}; tier is one of {[t.value for t in Tier]}, "
                f"ranker one of {[r.value for r in Ranker]}"
            ) from None
        return cls(
            name=str(data.get("name", default_name)),
            tier=tier,
            ranker=ranker,
            depth=int(data.get("depth", 20)),
            text=str(data.get("text", DEFAULT_TEXT)),
            settings=dict(data.get("settings", {})),
            memory_budget=int(data.get("memory_budget", 1200)),
            weights=dict(data.get("weights", {})),
        )

    @classmethod
    def load(cls, path: str | Path) -> EvalConfig:
        path = Path(path)
        with path.open("rb") as handle:
            try:
                data = tomllib.load(handle)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path}: not TOML ({exc})") from None
        return cls.from_dict(data, default_name=path.stem)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tier"], data["ranker"] = str(self.tier), str(self.ranker)
        return data

    @property
    def key(self) -> str:
        """A short hash of everything but the name: results are reused only for the same
        configuration, whatever it is called."""
        body = {k: v for k, v in self.to_dict().items() if k != "name"}
        if not body["weights"]:
            del body["weights"]  # the default weights: the same key as before weights existed
        return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]

    @property
    def replay_key(self) -> str:
        """The key of what the replay stores: configurations with the same one differ only
        in how probes are ranked, and can ask one replayed memory."""
        body = {k: v for k, v in self.to_dict().items() if k not in ("name", "weights")}
        return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]
