"""Words the feature files share: how each language names the assistant, marks an order,
and bounds a clause."""

from __future__ import annotations

from hologram.security.injection.feature import alternation

# The assistant, named as such. Bare "model", "agent" and "bot" name a car, a support agent
# or a script as often, so they count only where the grammar makes them the addressee.
AI = alternation(
    r"ai(?:\s+(?:models?|systems?|agents?|assistants?|tools?|helpers?))?",
    r"a\.i\.",
    r"assistants?",
    r"chatbots?",
    r"llms?",
    r"(?:large\s+)?language\s+models?",
    r"(?:llm|ai)[\s-]based\s+(?:tools?|agents?|systems?)",
    r"code\s+assistants?",
    r"copilots?",
)
AI_ANY = alternation(AI, r"models?", r"agents?", r"bots?", r"helpers?")
AI_WORDS = (
    "ai assistant assistants chatbot chatbots llm llms language model models agent agents "
    "bot bots helper helpers copilot copilots"
)

# An order stands at the start of a clause, or after a softener or a modal; a verb after a
# subject ("models sometimes ignore …") describes.
IMPERATIVE = (
    r"(?:^|(?<=[.!?;:,\n(\[{\"'“—–>*-])|\b(?:please|pls|kindly|just|now|then|and|but|or|also|"
    r"first|so|simply|immediately|must|should|to|will|shall|can|you)\s)\s*"
)

AI_ZH = alternation(
    r"ai(?:助手|助理|模型|代理|小帮手|系统|机器人)?",
    r"人工智能",
    r"智能助[手理]",
    r"小助手",
    r"助[手理]",
    r"小帮手",
    r"大模型(?:工具)?",
    r"语言模型",
    r"模型",
    r"智能体",
    r"机器人",
    r"代码助手",
)
AI_ZH_TRIGGERS = "ai 人工智能 助手 助理 小帮手 模型 智能体 机器人"
# A Chinese clause: up to the next full stop, question or exclamation mark, or line end.
CLAUSE = r"[^。!?\n;；]"
