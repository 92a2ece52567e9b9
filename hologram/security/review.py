"""Content review: sensitive words and prompt-injection phrasing, in Chinese and English.

Heuristics, not a guarantee: they flag the common phrasings so that the model is warned and
the owner can see it happened. A finding names its kind, the rule and where it is (character
offsets into the reviewed text), never the matched text: findings go to the event stream and
the log, and a finding that quoted a leaked password would be the leak.

Matching runs on a folded copy of the text (NFKC, case-folded, invisible format characters
dropped) so that `ＩＧＮＯＲＥ` or `ig\u200bnore` are caught too; positions map back to the
original text.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

INJECTION_RULES: tuple[tuple[str, str], ...] = (
    # English
    (
        "ignore_instructions",
        r"\b(?:ignore|disregard|forget|override|skip)\s+(?:all\s+|any\s+|every\s+)?"
        r"(?:(?:the|your|my|these|those)\s+)?(?:previous|prior|above|earlier|preceding|"
        r"original|system|existing)?\s*(?:instructions?|prompts?|rules?|directives?|"
        r"guidelines?|context)\b",
    ),
    (
        "new_instructions",
        r"\b(?:new|updated|real|actual)\s+(?:system\s+)?(?:instructions?|rules?)\s*:",
    ),
    (
        "role_override",
        r"\byou\s+are\s+(?:now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\b|"
        r"\b(?:act|behave)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?"
        r"(?:unrestricted|unfiltered|jailbroken|evil)\b|\bdo\s+anything\s+now\b|"
        r"\bdeveloper\s+mode\b|\bjailbreak\b",
    ),
    (
        "prompt_exfiltration",
        r"\b(?:reveal|print|show|repeat|output|leak|dump|tell\s+me)\s+(?:me\s+)?"
        r"(?:your|the)\s+(?:system\s+prompt|hidden\s+(?:prompt|instructions?)|"
        r"initial\s+instructions?|instructions?\s+above|api\s+keys?|secrets?|credentials?)",
    ),
    (
        "fake_system_tag",
        r"<\s*/?\s*(?:system|im_start|im_end)\s*>|\[\s*/?\s*(?:system|inst)\s*\]|"
        r"^\s*#{1,3}\s*system\s*:",
    ),
    # Chinese
    (
        "ignore_instructions",
        r"(?:忽略|无视|忘记|忘掉|不要理会|不用管|跳过|覆盖)(?:掉)?(?:你)?(?:之前|以前|先前|上面|以上|"
        r"前面|所有|全部|一切|原来|原有|原始)?(?:的|所有的?)?(?:所有)?(?:的)?"
        r"(?:指令|指示|规则|提示词?|设定|要求|命令|约束)",
    ),
    ("new_instructions", r"(?:新的?|真正的|最新)(?:系统)?(?:指令|规则|设定)\s*[:：]"),
    (
        "role_override",
        r"(?:你现在是|从现在开始你|从现在起你|你不再是|扮演一个?(?:没有|不受|无)(?:任何)?(?:限制|约束)|"
        r"开发者模式|越狱模式|不受任何限制)",
    ),
    (
        "prompt_exfiltration",
        r"(?:显示|输出|打印|泄露|告诉我|重复|透露)(?:一下)?(?:你的)?(?:系统提示词?|系统指令|"
        r"初始指令|隐藏(?:的)?指令|密钥|密码|api\s*key)",
    ),
)


WORD_TRIGGERS: dict[str, frozenset[str]] = {
    "ignore_instructions": frozenset({"ignore", "disregard", "forget", "override", "skip"}),
    "new_instructions": frozenset({"instruction", "instructions", "rule", "rules"}),
    "role_override": frozenset(
        {"you", "act", "behave", "anything", "developer", "jailbreak", "from"}
    ),
    "prompt_exfiltration": frozenset(
        {"reveal", "print", "show", "repeat", "output", "leak", "dump", "tell"}
    ),
    "fake_system_tag": frozenset({"system", "im_start", "im_end", "inst"}),
}
TEXT_TRIGGERS: dict[str, tuple[str, ...]] = {
    "ignore_instructions": ("忽略", "无视", "忘记", "忘掉", "不要理会", "不用管", "跳过", "覆盖"),
    "new_instructions": ("指令", "规则", "设定"),
    "role_override": (
        *("你现在是", "从现在", "你不再是", "扮演"),
        *("开发者模式", "越狱", "不受任何限制"),
    ),
    "prompt_exfiltration": ("显示", "输出", "打印", "泄露", "告诉我", "重复", "透露"),
    "fake_system_tag": (),
}
"""Every match of a rule holds one of its words (as a whole word) or one of its Chinese
trigger strings. A rule runs only on text that has one: collecting the words once is far
cheaper than running every expression, and most tool output has none of them."""
_SPACES = str.maketrans({c: " " for c in string.punctuation.replace("_", "") + "0123456789"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing review flagged: what kind, which rule, where. Never the text itself."""

    kind: str  # "injection" or "sensitive_word"
    rule: str
    start: int
    end: int

    def as_payload(self) -> dict[str, object]:
        return {"kind": self.kind, "rule": self.rule, "start": self.start, "end": self.end}


_FORMAT = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def fold(text: str) -> tuple[str, list[int] | None]:
    """The folded text and, for each of its characters, the offset it came from (None when
    that is the same offset: the common case, checked without going character by character)."""
    if text.isascii():
        return text.lower(), None
    if unicodedata.is_normalized("NFKC", text) and not _FORMAT.search(text):
        folded = text.casefold()
        if len(folded) == len(text):
            return folded, None
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if unicodedata.category(char) == "Cf":
            continue
        folded = unicodedata.normalize("NFKC", char).casefold()
        out.append(folded)
        origin.extend([index] * len(folded))
    return "".join(out), origin


class ContentReview:
    """Flags sensitive words and injection phrasing; masks the sensitive words."""

    def __init__(self, sensitive_words: Iterable[str] = (), injection: bool = True) -> None:
        words = sorted({fold(w)[0] for w in sensitive_words if w and w.strip()}, key=len)
        self._words = re.compile("|".join(re.escape(w) for w in reversed(words))) if words else None
        self._injection = (
            [(rule, re.compile(pattern, re.MULTILINE)) for rule, pattern in INJECTION_RULES]
            if injection
            else []
        )

    def review(self, text: str) -> list[Finding]:
        if not text:
            return []
        folded, origin = fold(text)
        findings: list[Finding] = []
        if self._words is not None:
            findings += self._matches("sensitive_word", "word_list", self._words, folded, origin)
        words = set(folded.translate(_SPACES).split())
        chinese = not folded.isascii()
        for rule, pattern in self._injection:
            if not words.isdisjoint(WORD_TRIGGERS[rule]) or (
                chinese and any(t in folded for t in TEXT_TRIGGERS[rule])
            ):
                findings += self._matches("injection", rule, pattern, folded, origin)
        findings.sort(key=lambda f: (f.start, f.kind))
        return findings

    @staticmethod
    def _matches(
        kind: str, rule: str, pattern: re.Pattern[str], folded: str, origin: list[int] | None
    ) -> list[Finding]:
        found = []
        for match in pattern.finditer(folded):
            if match.end() == match.start():
                continue
            if origin is None:
                start, end = match.start(), match.end()
            else:
                start, end = origin[match.start()], origin[match.end() - 1] + 1
            found.append(Finding(kind, rule, start, end))
        return found

    def mask_words(self, text: str, findings: list[Finding]) -> str:
        """`text` with every flagged sensitive word replaced by asterisks of its length."""
        spans = [(f.start, f.end) for f in findings if f.kind == "sensitive_word"]
        if not spans:
            return text
        chars = list(text)
        for start, end in spans:
            for index in range(start, end):
                chars[index] = "*"
        return "".join(chars)
