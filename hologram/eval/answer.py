"""Answer accuracy: each probe answered by a model from what the kernel recalled, and the
answer scored by a model judge ("J", the LoCoMo accuracy mem0, Zep and others publish) and by
token F1 against the gold answer.

Only with a model configured (it costs money, and a key): the answerer and the judge are
sources of the kernel's own provider layer (`hologram.llm`: its sources, Lua adapters,
fallback, usage ledger and price table), so any provider the kernel can use answers here.
An answer configuration (TOML, ``python -m hologram eval --answer answer.toml``)::

    answerer = "main"        # the source that answers (default: the seed source "default")
    judge = "judge"          # the source that judges (default: the answerer)
    context = 10             # recalled turns given to the answerer

    [settings]               # core.llm.* keys, as the kernel's own config holds them
    "core.llm.sources.main.base_url" = "https://api.openai.com/v1"
    "core.llm.sources.main.model" = "gpt-4o-mini"
    "core.llm.sources.main.api_key" = { env = "OPENAI_API_KEY" }   # read at run time
    "core.llm.prices" = { "gpt-4o-mini" = { input = 0.15, output = 0.6 } }

Without a file, the seed source takes ``HOLOGRAM_LLM_BASE_URL``, ``HOLOGRAM_LLM_MODEL`` and
``HOLOGRAM_LLM_API_KEY`` from the environment, as the kernel does. With no model at all the
mode refuses before anything runs: the offline scripted model is not a model to score.

Probes are answered one after another by default (``concurrency``), so a run against a
scripted model gets its replies in the order they were queued.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import re
import tempfile
import tomllib
import unicodedata
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hologram.config import CORE_DEFAULTS, ConfigRegistry, LLMSettings, is_secret, key_of
from hologram.eval.dataset import ADVERSARIAL, Conversation, Probe, Turn
from hologram.eval.replay import turn_text
from hologram.eval.tiers import EvalError
from hologram.events import EventBus
from hologram.kernel import KernelTasks, SystemClock
from hologram.llm import (
    OFFLINE_SOURCE,
    AllProvidersFailed,
    ChatMessage,
    CompletionRequest,
    CompletionResponse,
    ContextTooLong,
    ProviderManager,
    SourceProblem,
    read_source,
    source_names,
)

log = logging.getLogger(__name__)

PROMPT_VERSION = 1
"""Part of every saved answer's key: a changed prompt answers again."""

ANSWER_SYSTEM = (
    "You answer a question about a long conversation, using only the memories of it given "
    "below: turns of the conversation, each with the date it was said. Answer with a short "
    "phrase (a few words), as specific as the memories allow. Resolve a relative time "
    '("yesterday", "last week", "two years ago") against the date of the memory that says '
    "it, and give the date itself. Answer in the language of the question. If the memories "
    'do not say, answer "unknown".'
)

JUDGE_SYSTEM = (
    "You grade an answer to a question about a conversation against the gold answer. Label "
    "it CORRECT when it refers to the same thing as the gold answer, even if it is longer, "
    "worded differently, or gives more detail; a date, month or year in another format, or "
    "a relative date that comes to the same day, is CORRECT. Label it WRONG when it names "
    "something else, contradicts the gold answer, or says it does not know. Reply with one "
    "word: CORRECT or WRONG."
)

ANSWER_CHANNEL, JUDGE_CHANNEL = "eval-answer", "eval-judge"


def answer_prompt(question: str, memories: Sequence[str]) -> str:
    listed = "\n".join(f"- {m}" for m in memories) or "(nothing was recalled)"
    return f"Memories:\n{listed}\n\nQuestion: {question}\nAnswer:"


def judge_prompt(question: str, gold: str, answer: str) -> str:
    return f"Question: {question}\nGold answer: {gold}\nAnswer to grade: {answer}\nLabel:"


def memory_line(turn: Turn, template: str) -> str:
    """A recalled turn as the answerer reads it: its date, then the text memory stored."""
    return f"({turn_text('{day}', turn)}) {turn_text(template, turn)}"


_VERDICT = re.compile(r"\b(CORRECT|INCORRECT|WRONG)\b")


def verdict(text: str) -> bool | None:
    """The judge's label: its last CORRECT or WRONG (INCORRECT counts as WRONG; a judge
    that reasons first concludes last); None when it gave neither."""
    found = _VERDICT.findall(text.upper())
    return None if not found else found[-1] == "CORRECT"


# ---- token F1 -------------------------------------------------------------------------------

ARTICLES = frozenset({"a", "an", "the"})


def _cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3400 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
        or 0x3040 <= code <= 0x30FF
    )


def answer_tokens(text: str) -> list[str]:
    """Normalised tokens, as SQuAD's F1 counts them: lower case, punctuation dropped (in any
    script), English articles dropped; each Chinese (or Japanese) character is a token of
    its own, so a zh answer is compared character by character."""
    text = unicodedata.normalize("NFKC", text).lower()
    kept: list[str] = []
    for ch in text:
        if unicodedata.category(ch).startswith("P"):
            continue
        kept.append(f" {ch} " if _cjk(ch) else ch)
    return [t for t in "".join(kept).split() if t not in ARTICLES]


def token_f1(prediction: str, gold: str) -> float:
    predicted, wanted = answer_tokens(prediction), answer_tokens(gold)
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


# ---- the configuration ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerConfig:
    answerer: str = OFFLINE_SOURCE
    judge: str = ""
    """The judge's source; empty: the answerer's."""
    context: int = 10
    """Recalled turns (the first of the probe's ranking) given to the answerer."""
    max_tokens: int = 96
    judge_max_tokens: int = 16
    concurrency: int = 1
    """Probes answered at once (each answer then its verdict)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """``core.llm.*`` keys; a value ``{"env": "NAME"}`` is read from the environment."""

    def __post_init__(self) -> None:
        if not self.answerer:
            raise ValueError("answerer must name an LLM source")
        for name in ("context", "max_tokens", "judge_max_tokens", "concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for key, value in self.settings.items():
            if not key.startswith(LLMSettings.prefix + "."):
                raise ValueError(
                    f"answer setting {key!r}: only {LLMSettings.prefix}.* keys can be set"
                )
            if _from_env(value) and (not isinstance(value["env"], str) or not value["env"]):
                raise ValueError(f"answer setting {key!r}: env names a variable")

    @property
    def judge_source(self) -> str:
        return self.judge or self.answerer

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerConfig:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown answer configuration keys {unknown}; known: {sorted(known)}")
        values = dict(data)
        if "settings" in values:
            values["settings"] = dict(values["settings"])
        return cls(**values)

    @classmethod
    def load(cls, path: str | Path) -> AnswerConfig:
        path = Path(path)
        with path.open("rb") as handle:
            try:
                data = tomllib.load(handle)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path}: not TOML ({exc})") from None
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """What results.json records: secrets given in the file are masked (a reference to
        the environment is kept as written)."""
        settings = {
            k: v if not is_secret(k) or _from_env(v) else "****" for k, v in self.settings.items()
        }
        return {
            "answerer": self.answerer,
            "judge": self.judge_source,
            "context": self.context,
            "max_tokens": self.max_tokens,
            "judge_max_tokens": self.judge_max_tokens,
            "concurrency": self.concurrency,
            "settings": settings,
            "prompt_version": PROMPT_VERSION,
        }

    @property
    def key(self) -> str:
        """What decides the answers (not how many run at once, nor a key's value)."""
        body = self.to_dict()
        del body["concurrency"]
        body["settings"] = {
            k: v for k, v in body["settings"].items() if not is_secret(k) and "prices" not in k
        }
        return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]


def _from_env(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"env"}


def resolved(settings: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in settings.items():
        if _from_env(value):
            name = value["env"]
            if not environ.get(name):
                raise EvalError(f"answer setting {key} is read from ${name}, which is not set")
            values[key] = environ[name]
        else:
            values[key] = value
    return values


# ---- the models -----------------------------------------------------------------------------

NO_MODEL = (
    "answer accuracy needs a model, and none is configured ({why}): set "
    "HOLOGRAM_LLM_BASE_URL and HOLOGRAM_LLM_MODEL (and HOLOGRAM_LLM_API_KEY) for the seed "
    "source, or give --answer a TOML whose [settings] define core.llm.sources.<name>.* and "
    "name them as answerer and judge (see hologram/eval/answer.py)"
)


@dataclass(slots=True)
class Models:
    answerer: ProviderManager
    judge: ProviderManager
    """A manager of its own with the judge's source first (falling back as any call does)."""


def _configured(registry: ConfigRegistry, name: str, role: str) -> None:
    """Refuse a source that is not a model: missing, broken, or the offline stand-in."""
    if name not in source_names(registry):
        raise EvalError(NO_MODEL.format(why=f"the {role} source {name!r} is not defined"))
    read = read_source(registry, name)
    if isinstance(read, SourceProblem):
        raise EvalError(f"the {role} source {name!r} cannot be used: {read.message}")
    if not read.base_url:
        raise EvalError(NO_MODEL.format(why=f"the {role} source {name!r} has no base_url"))


@asynccontextmanager
async def open_models(
    config: AnswerConfig, environ: Mapping[str, str] | None = None
) -> AsyncIterator[Models]:
    """Two provider managers over the answer settings, one with the answerer's source
    first, one with the judge's; refuses (EvalError) when either is not a model."""
    environ = os.environ if environ is None else environ
    values = resolved(config.settings, environ)
    with tempfile.TemporaryDirectory(prefix="eval-models-") as tmp:
        # No kernel here: the models' bus runs its subscribers in a group of its own.
        tasks = KernelTasks()
        events = EventBus(tasks=tasks.scope("events"))
        registries: list[ConfigRegistry] = []
        managers: list[ProviderManager] = []
        try:
            for role, source in (("answerer", config.answerer), ("judge", config.judge_source)):
                registry = await ConfigRegistry.open(Path(tmp) / f"{role}.db", environ=environ)
                registries.append(registry)
                registry.register(CORE_DEFAULTS)
                for key, value in values.items():
                    await registry.set(key, value)
                _configured(registry, source, role)
                await registry.set(key_of(LLMSettings, "active_source"), source)
                manager = ProviderManager(registry, events, SystemClock())
                managers.append(manager)
                await manager.refresh()
            yield Models(managers[0], managers[1])
        finally:
            for manager in managers:
                await manager.close()
            for registry in registries:
                await registry.close()
            await events.close()
            await tasks.close()


# ---- answering ------------------------------------------------------------------------------


def answerable(probe: Probe) -> bool:
    """Probes with a gold answer, adversarial ones left out (as the peers' J leaves them)."""
    return probe.category != ADVERSARIAL and bool(probe.answer.strip())


async def _ask(
    manager: ProviderManager, request: CompletionRequest, role: str
) -> CompletionResponse:
    try:
        return await manager.chat(request)
    except (AllProvidersFailed, ContextTooLong) as exc:
        raise EvalError(f"the {role} did not answer: {exc}") from exc


def _usage(response: CompletionResponse) -> tuple[int, int, float]:
    usage = response.token_usage
    cost = math.nan if response.cost is None else response.cost
    return usage.prompt_tokens, usage.completion_tokens, cost


async def answer_probe(
    models: Models,
    config: AnswerConfig,
    probe: Probe,
    retrieved: Sequence[str],
    turns: Mapping[str, Turn],
    template: str,
) -> dict[str, Any]:
    """One probe answered from its first `config.context` recalled turns, then judged."""
    context = [t for t in retrieved if t in turns][: config.context]
    memories = [memory_line(turns[t], template) for t in context]
    asked = CompletionRequest(
        messages=[
            ChatMessage.system(ANSWER_SYSTEM),
            ChatMessage.user(answer_prompt(probe.question, memories)),
        ],
        temperature=0.0,
        max_tokens=config.max_tokens,
        channel=ANSWER_CHANNEL,
    )
    answered = await _ask(models.answerer, asked, "answerer")
    answer = answered.content.strip()
    judging = CompletionRequest(
        messages=[
            ChatMessage.system(JUDGE_SYSTEM),
            ChatMessage.user(judge_prompt(probe.question, probe.answer, answer)),
        ],
        temperature=0.0,
        max_tokens=config.judge_max_tokens,
        channel=JUDGE_CHANNEL,
    )
    judged = await _ask(models.judge, judging, "judge")
    label = verdict(judged.content)
    if label is None:
        log.warning(
            "the judge's reply to probe %s names neither CORRECT nor WRONG (%r): counted WRONG",
            probe.id,
            judged.content[:80],
        )
    answer_in, answer_out, answer_cost = _usage(answered)
    judge_in, judge_out, judge_cost = _usage(judged)
    return {
        "probe": probe.id,
        "category": probe.category,
        "question": probe.question,
        "gold": probe.answer,
        "answer": answer,
        "verdict": judged.content.strip(),
        "j": 1.0 if label else 0.0,
        "judge_unparsed": label is None,
        "f1": token_f1(answer, probe.answer),
        "context": context,
        "answer_source": answered.source,
        "answer_model": answered.model,
        "judge_source": judged.source,
        "judge_model": judged.model,
        "answer_tokens_in": answer_in,
        "answer_tokens_out": answer_out,
        "judge_tokens_in": judge_in,
        "judge_tokens_out": judge_out,
        "cost": answer_cost + judge_cost,
    }


async def answer_conversation(
    models: Models,
    config: AnswerConfig,
    conversation: Conversation,
    rows: Sequence[Mapping[str, Any]],
    template: str,
) -> list[dict[str, Any]]:
    """Every answerable probe of a unit (its saved rows hold each probe's ranking), in the
    probes' order whatever finishes first."""
    turns = {t.id: t for t in conversation.turns()}
    ranked = {row["probe"]: row["retrieved"] for row in rows}
    gate = asyncio.Semaphore(config.concurrency)

    async def one(probe: Probe) -> dict[str, Any]:
        async with gate:
            return await answer_probe(
                models, config, probe, ranked.get(probe.id, []), turns, template
            )

    return list(await asyncio.gather(*(one(p) for p in conversation.probes if answerable(p))))


# ---- the tables -----------------------------------------------------------------------------

USAGE_COLUMNS = (
    "answered",
    "j",
    "f1",
    "answer_tokens_in",
    "answer_tokens_out",
    "judge_tokens_in",
    "judge_tokens_out",
    "tokens_in",
    "tokens_out",
    "cost",
    "unpriced",
)


def usage_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and configuration: probes answered, J and F1 (in %), the tokens the
    answerer and the judge took in and gave out, and the cost by the price table (NaN, and
    `unpriced` > 0, when a model has no price: the cost needs prices, core.llm.prices)."""
    rows = []
    for (dataset, config), group in answers.groupby(["dataset", "config"], sort=False):
        tokens = {c: int(group[c].sum()) for c in USAGE_COLUMNS[3:7]}
        unpriced = int(group["cost"].isna().sum())
        rows.append(
            {
                "dataset": dataset,
                "config": config,
                "answered": len(group),
                "j": 100 * float(group["j"].mean()),
                "f1": 100 * float(group["f1"].mean()),
                **tokens,
                "tokens_in": tokens["answer_tokens_in"] + tokens["judge_tokens_in"],
                "tokens_out": tokens["answer_tokens_out"] + tokens["judge_tokens_out"],
                "cost": float(group["cost"].sum()) if not unpriced else math.nan,
                "unpriced": unpriced,
            }
        )
    frame = pd.DataFrame(rows, columns=["dataset", "config", *USAGE_COLUMNS])
    return frame.set_index(["dataset", "config"]).round({"j": 1, "f1": 1, "cost": 6})


def cost_line(usage: pd.DataFrame) -> str:
    """The run's total, as the CLI prints it."""
    tokens_in, tokens_out = int(usage["tokens_in"].sum()), int(usage["tokens_out"].sum())
    if usage["unpriced"].sum():
        cost = "cost needs prices (core.llm.prices in the answer settings)"
    else:
        cost = f"cost {usage['cost'].sum():.4f}"
    answered = int(usage["answered"].sum())
    return f"answering: {answered} probes, {tokens_in} tokens in, {tokens_out} out, {cost}"
