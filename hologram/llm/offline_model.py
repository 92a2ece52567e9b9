"""The offline scripted model: a small deterministic responder for a machine with no LLM.

It reads an OpenAI-format request and answers in the user's language (Chinese when the
message has CJK characters, else English), always saying that it is the offline scripted
model. A few patterns become tool calls, and only when the request offers a tool of that
name: the memory tools do not exist until the memory subsystem registers them, and a model
must never call a tool it was not given. Extending it is adding an `OfflineRule` to
`OFFLINE_RULES` (or passing your own list to `OfflineResponder`).

Anything else is answered from what the kernel put into the prompt for the turn: the lines
under the memory and timeline headings (`PromptSection`) that share the most words with the
message are quoted, so a newcomer with no model sees memory at work ("What do I love?"
after "I love climbing" quotes the climbing turn). With nothing related, it says what it
heard and how to configure a real model (`NO_LLM_HINT`, the one spelling of that setting).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hologram.config import ENV_OVERRIDES, SEED_SOURCE, SourceSettings, key_of
from hologram.sdk import PromptSection

MARK = {"en": "(offline scripted model) ", "zh": "（离线脚本模型）"}

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def language(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


@dataclass(frozen=True, slots=True)
class OfflineRule:
    """A pattern that turns a user message into a call of `tool`.

    `patterns` capture the subject as the group `text`. `arguments` lists the argument
    names to put the subject in, in order of preference (else the tool schema's first
    required string). `done` answers after the tool result (`{text}`, `{result}`);
    `missing` answers when the request offers no such tool (`{tool}`)."""

    name: str
    tool: str
    patterns: tuple[re.Pattern[str], ...]
    done: dict[str, str]
    missing: dict[str, str]
    arguments: tuple[str, ...] = ("text",)

    def match(self, text: str) -> str | None:
        for pattern in self.patterns:
            found = pattern.search(text)
            if found:
                return found.group("text").strip()
        return None


OFFLINE_RULES: list[OfflineRule] = [
    OfflineRule(
        name="recall",
        tool="memory_recall",
        patterns=(
            re.compile(r"what do you remember about\s+(?P<text>.+?)[\s?.!]*$", re.I | re.S),
            re.compile(r"do you remember\s+(?P<text>.+?)[\s?.!]*$", re.I | re.S),
            re.compile(r"你还记得(?P<text>.+?)吗?[\s？?。！!]*$", re.S),
            re.compile(r"关于(?P<text>.+?)你记得什么[\s？?。！!]*$", re.S),
        ),
        arguments=("query", "keywords", "text"),
        done={
            "en": "Here is what my memory returned about {text}: {result}",
            "zh": "关于{text}，我的记忆里有：{result}",
        },
        missing={
            "en": "I would look that up, but this kernel offers no {tool} tool yet.",
            "zh": "我想查一下记忆，但当前内核还没有 {tool} 工具。",
        },
    ),
    OfflineRule(
        name="remember",
        tool="memory_commit",
        patterns=(
            re.compile(
                r"^\s*(?:please\s+)?remember(?:\s+that)?[\s:,]+(?P<text>.+?)\s*$", re.I | re.S
            ),
            re.compile(r"^\s*(?:请)?记住[\s：:，,]*(?P<text>.+?)\s*$", re.S),
        ),
        arguments=("sentence_text", "text", "content", "fact", "note"),
        done={
            "en": "Noted. I saved that: {text}",
            "zh": "好的，我记住了：{text}",
        },
        missing={
            "en": "I would save that, but this kernel offers no {tool} tool yet.",
            "zh": "我想记下这件事，但当前内核还没有 {tool} 工具。",
        },
    ),
]


def _seed_key(field: str) -> str:
    return key_of(SourceSettings, field, name=SEED_SOURCE)


def _env_of(key: str) -> str:
    return next(env for env, overridden in ENV_OVERRIDES.items() if overridden == key)


_URL, _KEY = _seed_key("base_url"), _seed_key("api_key")
NO_LLM_HINT = {
    "en": f"set {_URL} and {_KEY} (or the environment variables {_env_of(_URL)} and "
    f"{_env_of(_KEY)}); the README's “Use a real model” lists the formats",
    "zh": f"设置 {_URL} 和 {_KEY}（或环境变量 {_env_of(_URL)} 和 {_env_of(_KEY)}）；"
    "各种格式见 README 的 “Use a real model”",
}
"""How to leave the offline model: the one spelling the reply, the service's start line and
its /status use."""

DEFAULT_REPLY = {
    "en": "I am the offline scripted model: no LLM source is configured, so I only follow a "
    "few fixed rules, and nothing I recalled relates to what you said: “{text}”. To talk to "
    "a real model, " + NO_LLM_HINT["en"] + ".",
    "zh": "我是离线脚本模型：尚未配置任何 LLM 来源，所以只能按几条固定规则回答，"
    "而我回想起的内容都与你说的无关：“{text}”。要连接真正的模型，请" + NO_LLM_HINT["zh"] + "。",
}
RECALLED_REPLY = {
    "en": "No LLM is configured, so I can only quote what the kernel recalled for this turn: "
    "{quotes}. To talk to a real model, " + NO_LLM_HINT["en"] + ".",
    "zh": "尚未配置 LLM，所以我只能引用内核为这一轮回想起的内容：{quotes}。要连接真正的模型，请"
    + NO_LLM_HINT["zh"]
    + "。",
}
MAX_QUOTES = 3


@dataclass(slots=True)
class OfflineAnswer:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def fill_arguments(schema: dict[str, Any], text: str, preferred: tuple[str, ...]) -> dict[str, Any]:
    """Put `text` in the argument the tool most plausibly wants it in."""
    properties = schema.get("properties") or {}
    for name in preferred:
        if name in properties:
            return {name: text}
    strings = [
        n for n, p in properties.items() if isinstance(p, dict) and p.get("type") == "string"
    ]
    required = [n for n in schema.get("required") or [] if n in strings]
    chosen = (required or strings or [preferred[0]])[0]
    return {chosen: text}


class OfflineResponder:
    """Answers one OpenAI-format chat request."""

    def __init__(self, rules: list[OfflineRule] | None = None) -> None:
        self.rules = list(OFFLINE_RULES if rules is None else rules)
        self._calls = 0

    def answer(self, request: dict[str, Any]) -> OfflineAnswer:
        messages = request.get("messages") or []
        last_user = next(
            (_text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"),
            "",
        )
        lang = language(last_user)
        if messages and messages[-1].get("role") == "tool":
            return OfflineAnswer(MARK[lang] + self._after_tool(messages, last_user, lang))
        offered = {
            (t.get("function") or {}).get("name"): (t.get("function") or {}).get("parameters") or {}
            for t in request.get("tools") or []
        }
        for rule in self.rules:
            subject = rule.match(last_user)
            if subject is None:
                continue
            if rule.tool not in offered:
                return OfflineAnswer(MARK[lang] + rule.missing[lang].format(tool=rule.tool))
            self._calls += 1
            call = {
                "id": f"call_offline_{self._calls}",
                "name": rule.tool,
                "arguments": fill_arguments(offered[rule.tool], subject, rule.arguments),
            }
            return OfflineAnswer(tool_calls=[call])
        quotes = recalled_lines(messages, last_user)
        if quotes:
            shown = "; ".join(q.quote(lang) for q in quotes)
            return OfflineAnswer(MARK[lang] + RECALLED_REPLY[lang].format(quotes=shown))
        return OfflineAnswer(MARK[lang] + DEFAULT_REPLY[lang].format(text=last_user.strip()))

    def _after_tool(self, messages: list[dict[str, Any]], last_user: str, lang: str) -> str:
        result = _text_of(messages[-1].get("content")).strip()
        call_id = messages[-1].get("tool_call_id")
        tool = ""
        for message in reversed(messages):
            for call in message.get("tool_calls") or []:
                if call.get("id") == call_id:
                    tool = (call.get("function") or {}).get("name", "")
        for rule in self.rules:
            if rule.tool == tool:
                subject = rule.match(last_user) or last_user
                return rule.done[lang].format(text=subject, result=result)
        return {"en": f"The tool answered: {result}", "zh": f"工具返回：{result}"}[lang]


# ---- answering from what the kernel recalled ---------------------------------------------------

_STOPWORD_TEXT = (
    "i me my mine you your we our he she it its they them the a an and or but to of in on at "
    "for with from about as is are am was were be been do does did what which who whom where "
    "when why how that this these those there here have has had can could would will shall "
    "should may might must not no yes so if then than too very just tell know remember please "
    "any some all"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_MEMORY_LINE = re.compile(r"^- (?:\((?P<when>[^)]*?)(?: UTC)?, (?P<where>[^)]*)\) )?(?P<text>.+)$")
_TIMELINE_LINE = re.compile(r"^\[(?P<when>[^\]]+)\] (?P<where>[^:]+): (?P<text>.+)$")
_ARROW = " → "
_AGENT = "agent"
"""The timeline's name for the agent's own turns (what was said to it is what is quoted)."""


def terms(text: str) -> frozenset[str]:
    """Content words (a plural's 's' dropped) and, for Chinese, character pairs."""
    lowered = text.lower()
    words = {w.removesuffix("s") if len(w) > 3 else w for w in _WORD.findall(lowered)}
    pairs = {run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}
    return frozenset((words - _STOPWORDS) | pairs)


@dataclass(frozen=True, slots=True)
class Recalled:
    """A line of the prompt's memory or timeline section, and how it matched."""

    text: str
    where: str
    when: str
    shared: int
    rank: tuple[int, int]

    def quote(self, lang: str) -> str:
        origin = ", ".join(p for p in (self.where, self.when) if p)
        if lang == "zh":
            return f"“{self.text}”（{origin}）" if origin else f"“{self.text}”"
        return f"“{self.text}” ({origin})" if origin else f"“{self.text}”"


def _sections(messages: list[dict[str, Any]]) -> dict[PromptSection, list[str]]:
    found: dict[PromptSection, list[str]] = {}
    current: list[str] | None = None
    for message in messages:
        if message.get("role") != "system":
            continue
        for line in _text_of(message.get("content")).splitlines():
            if line.startswith("## "):
                heading = next((s for s in PromptSection if s == line.strip()), None)
                current = None if heading is None else found.setdefault(heading, [])
            elif current is not None and line.strip():
                current.append(line.strip())
    return found


def _own_words_removed(text: str) -> str:
    """A stored turn reads 'what was said → the reply'; a reply of this model is no memory."""
    said, arrow, reply = text.partition(_ARROW)
    if arrow and any(mark.strip() in reply for mark in MARK.values()):
        return said.strip()
    return text.strip()


def recalled_lines(messages: list[dict[str, Any]], asked: str) -> list[Recalled]:
    """The lines of the prompt's memory and timeline sections that share the most words
    with `asked` (the memory section first on a tie, then the newest), best first."""
    wanted = terms(asked)
    if not wanted:
        return []
    candidates: list[Recalled] = []
    for order, heading in enumerate((PromptSection.MEMORY, PromptSection.TIMELINE)):
        lines = _sections(messages).get(heading, [])
        pattern = _MEMORY_LINE if heading is PromptSection.MEMORY else _TIMELINE_LINE
        for position, line in enumerate(lines):
            found = pattern.match(line)
            if found is None or found.group("where") == _AGENT:
                continue
            text = _own_words_removed(found.group("text"))
            if text == asked.strip() or any(m.strip() in text for m in MARK.values()):
                continue
            shared = len(wanted & terms(text))
            if shared:
                rank = (-order, position if order else -position)
                where, when = found.group("where") or "", found.group("when") or ""
                candidates.append(Recalled(text, where, when, shared, rank))
    candidates.sort(key=lambda r: (r.shared, r.rank), reverse=True)
    unique: dict[str, Recalled] = {}
    for candidate in candidates:
        unique.setdefault(candidate.text, candidate)
    return list(unique.values())[:MAX_QUOTES]
