"""The offline scripted model: a small deterministic responder for a machine with no LLM.

It reads an OpenAI-format request and answers in the user's language (Chinese when the
message has CJK characters, else English), always saying that it is the offline scripted
model. A few patterns become tool calls, and only when the request offers a tool of that
name: the memory tools do not exist until the memory subsystem registers them, and a model
must never call a tool it was not given. Extending it is adding an `OfflineRule` to
`OFFLINE_RULES` (or passing your own list to `OfflineResponder`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

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

DEFAULT_REPLY = {
    "en": "I am the offline scripted model: no LLM source is configured, so I only follow a "
    "few fixed rules. You said: “{text}”. Set core.llm.sources.default.base_url (or "
    "HOLOGRAM_LLM_BASE_URL) and an API key to talk to a real model.",
    "zh": "我是离线脚本模型：尚未配置任何 LLM 来源，所以只能按几条固定规则回答。"
    "你说的是：“{text}”。"
    "设置 core.llm.sources.default.base_url（或环境变量 HOLOGRAM_LLM_BASE_URL）和 API key "
    "即可连接真正的模型。",
}


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
