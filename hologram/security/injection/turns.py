"""Text dressed as a new turn of the conversation: a system message, a closing tag of the
container it came in, a chat template's markers.

Documentation and code mention these markers all the time (`<|im_start|>` in a tokenizer
guide, `{"role": "system"}` in an API example, "System: Ubuntu 22.04" in a bug report), so a
marker alone weighs less than the threshold; a marker used the way a template uses it (a tag
that opens, holds an order and closes; `<|im_start|>system`), or one that follows the end of
the container, passes it with what it carries.
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import (
    chinese,
    chinese_forms,
    english,
    english_forms,
)

ROLE_NAMES = r"(?:system|sys|assistant|developer|admin|administrator|root|operator)"

ENGLISH = (
    english(
        "turn_marker",
        ReviewRule.FAKE_SYSTEM_TAG,
        1.0,
        r"<\|\s*im_start\s*\|>\s*(?:system|assistant|developer)\b|<\|?\s*start_of_turn\s*\|?>\s*"
        r"(?:system|model)\b|<<\s*sys\s*>>|\[\s*inst\s*\]\s*+(?!and\b|or\b|和|或|"
        r",)(?:(?!\[\s*/\s*inst)"
        r".){1,400}?\[\s*/\s*inst\s*\]|<<\s*(?:begin|start)\s+system\s+message\s*>>"
        r"|<\|\s*(?:system|developer)\s*\|>",
        "im_start start_of_turn sys inst begin start system developer",
    ),
    # A role tag that opens, holds words and closes reads as a turn, a lone tag as a mention;
    # what the turn says decides (a notification wrapped in <system> is still a notification).
    english(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        # The opening tag is the signal; what it holds stays evidence of its own.
        r"<\s*(?P<tag>system|system_message|system_prompt|sys|assistant|instructions?|"
        r"new_instructions|admin|developer)(?=[\s>])[^>]*>(?=[^<]{3,400}<\s*/\s*(?P=tag)\s*>)",
        "system system_message system_prompt sys assistant instruction instructions "
        "new_instructions admin developer",
    ),
    english(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        r"<\s*/?\s*(?:system|system_message|system_prompt|sys|assistant|instructions?|"
        r"new_instructions|im_start|im_end)(?=[\s>])[^>]*>"
        r"|\[\s*/?\s*(?:system|admin|developer)(?:\s+(?:override|message|prompt|note|notice|"
        r"instruction))?\s*\]"
        r"|^\s*#{1,6}\s*system(?:\s+(?:prompt|message))?\b[^\n]{0,12}?(?:[:#]|$)",
        "system system_message system_prompt sys assistant instruction instructions "
        "new_instructions im_start im_end admin developer",
    ),
    english(
        "role_line",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.5,
        r"(?:^|<!--)\s*" + ROLE_NAMES + r"(?:\s+(?:message|prompt|instructions?|note))?\s*[:>]",
        "system sys assistant developer admin administrator root operator",
    ),
    english(
        "role_json",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.4,
        r"\"role\"\s*:\s*\"(?:system|developer)\"",
        "role",
    ),
    # A transcript in which the assistant itself speaks: a turn the text writes for it.
    english(
        "fake_dialogue",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.5,
        r"^\s*(?:user|human)\s*:(?=[^\n]{0,200}\n+\s*(?:assistant|ai)\s*:)",
        "assistant ai",
    ),
    # The end of the container the text was delivered in, faked so that what follows reads
    # as a new turn.
    *english_forms(
        "context_break",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        (
            r"<\s*/\s*(?:user_input|user|context|tool_result|tool_output|search_results|results|"
            r"output|response|document|input|data|email|webpage|page_content|function_results?)\s*>"
            r"|<\s*end_of_turn\s*>|<<\s*end\s+user\s+message\s*>>",
            "",
            "</ <end <<",
        ),
        (
            r"\bend\s+of\s+(?:the\s+)?(?:tool\s+(?:output|result)|user\s+(?:input|message)|context|"
            r"quote|search\s+results|email|web\s*page|input)\b"
            r"|\b(?:tool|user)\s+(?:output|input|message)\s+(?:ends|is\s+over|has\s+ended)\b",
            "end ends over ended",
        ),
        (
            r"={2,}\s*new\s+(?:conversation|session|chat)\s*={2,}"
            r"|-{2,}\s*begin\s+(?:trusted\s+)?system\b|\bbegin\s+trusted\s+system\s+block\b"
            r"|\b(?:begin|start)\s+(?:of\s+)?(?:the\s+)?(?:system|admin|developer)\s+(?:message|"
            r"instructions?|prompt|block|turn)\b"
            r"|\b(?:system|admin|developer)\s+(?:message|instructions?|prompt)\s+(?:begins|"
            r"follows|starts)\b",
            "conversation session chat begin start begins follows starts",
        ),
    ),
)

CHINESE = (
    chinese(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"<\s*(?P<tag>系统|指令|新指令|系统消息|助手|"
        r"系统提示)\s*>(?=[^<]{2,400}<\s*/\s*(?P=tag)\s*>)"
        r"|\[\s*(?P<sq>系统|管理员)\s*\](?=[^\[]{2,400}\[\s*/\s*(?P=sq)\s*\])"
        r"|【\s*(?P<lb>系统(?:提示|消息)?|管理员)\s*】(?=[^【]{2,400}【\s*/\s*(?P=lb)\s*】)",
        "系统 指令 助手 管理员",
    ),
    chinese(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        r"<\s*/?\s*(?:系统|指令|新指令|系统消息|助手|系统提示|管理员)\s*>"
        r"|【\s*/?\s*(?:系统(?:提示|消息|指令)?|管理员(?:消息|指令)?|开发者(?:消息|指令)?)\s*】"
        r"|\[\s*/?\s*(?:系统|管理员|开发者|新指令|指令)(?:消息|指令|提示)?\s*\]|#系统#|"
        r"【以下为系统消息[^】]*】"
        r"|【\s*(?:新指令|指令)\s*】",
        "系统 指令 助手 管理员 开发者",
    ),
    chinese(
        "fake_dialogue",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.5,
        r"^\s*(?:用户|人类)\s*[:：](?=[^\n]{0,200}\n+\s*(?:助手|ai)\s*[:：])",
        "用户 人类",
    ),
    chinese(
        "role_line",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.5,
        r"(?:^|<!--)\s*(?:系统|助手|人类|管理员|开发者)(?:消息|指令|提示)?\s*[:：>]",
        "系统 助手 人类 管理员 开发者",
    ),
    *chinese_forms(
        "context_break",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        (
            r"<\s*/\s*(?:用户输入|上下文|工具结果|搜索结果|用户|文档|网页|邮件)\s*>"
            r"|<<\s*(?:用户消息|系统消息)(?:开始|结束)\s*>>",
            "</ < <<",
        ),
        (
            r"[(（]引用结束[)）]|【工具输出结束】|={2,}\s*新(?:的)?对话\s*={2,}|"
            r"-{3,}\s*可信系统区块"
            r"|(?:用户|工具|搜索|网页|文档)(?:的)?(?:输入|输出|消息|结果|内容)(?:到此|已经?|"
            r"至此)?(?:结束|完毕)"
            r"|以下(?:是|为)(?:系统|管理员|开发者)(?:的)?(?:消息|指令|提示|通知)"
            r"|以上(?:是|为)(?:网页|工具|搜索|文档|邮件|用户)(?:的)?(?:内容|输出|结果|输入)"
            r"|(?:工具|网页|搜索)?输出到此为止",
            "引用结束 工具输出结束 对话 可信系统区块 结束 完毕 以下是 以下为 以上是 以上为 "
            "输出到此为止",
        ),
    ),
    chinese(
        "context_break",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        r"[\[【(（]\s*(?:邮件|文章|网页|文档|正文|引用)(?:到此)?结束\s*[\]】)）]",
        "结束",
    ),
)

# Role markers by shape rather than by list: a paired tag whose name compounds a role
# (`<system_instruction>`), a doubled bracket pair (`[[system]] … [[/system]]`), a banner
# line naming a role (`=== SYSTEM OVERRIDE ===`); and the Chinese banner and developer tag.
GENERAL = (
    english(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"<\s*(?P<tag>(?:system|sys|admin|administrator|developer|operator|root)[_-](?:message|"
        r"prompt|instructions?|override|note|notice|directive|update|command)s?)(?=[\s>])[^>]*>"
        r"(?=[^<]{3,400}<\s*/\s*(?P=tag)\s*>)",
        "",
        "<system <sys <admin <developer <operator <root",
    ),
    english(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"\[{1,2}\s*(?P<sq>system|admin|developer)\s*\]{1,2}(?=[^\[\]]{3,400}\[{1,2}\s*/\s*"
        r"(?P=sq)\s*\]{1,2})"
        r"|^[ \t]*(?:={2,}|-{3,}|\*{3,})[ \t]*(?:system|admin|developer)(?:\s+(?:override|message|"
        r"prompt|instructions?|notice))?[ \t]*(?:={2,}|-{3,}|\*{3,})",
        "system admin developer",
    ),
    chinese(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"<\s*(?P<tag>开发者|管理员|系统指令)\s*>(?=[^<]{2,400}<\s*/\s*(?P=tag)\s*>)"
        # A banner, or a heading that opens a turn ("### 系统：") rather than a section ("## 系统").
        r"|^[ \t]*(?:={2,}|-{3,})[ \t]*(?:系统|管理员|开发者)(?:覆盖|消息|指令|提示|通知)?"
        r"[ \t]*={2,}"
        r"|^[ \t]*#{1,6}[ \t]*(?:系统|管理员|开发者)(?:消息|指令|提示)?[ \t]*[:：]",
        "开发者 管理员 系统",
    ),
    # Instruction-tuning templates and chat tokens other than the ones above; a role given
    # as an attribute; a markdown-dressed role line.
    # Each form on its own rarest anchor: "user" and "system" stand in every help page.
    *english_forms(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        (r"^[ \t]*#{2,3}[ \t]*(?:instruction|response|input)[ \t]*:", "instruction response input"),
        (r"<\|\s*(?:user|assistant|system)\s*\|>", "", "<|"),
        (
            r"<\s*[\w-]+\s[^>]*\brole\s*=\s*[\"']?(?:system|developer|admin)\b[^>]*>"
            r"|^[ \t]*-?[ \t]*role[ \t]*:[ \t]*[\"']?(?:system|developer)[\"']?[ \t]*\n"
            r"[ \t]*content[ \t]*:",
            "role",
        ),
    ),
    english(
        "role_line",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.5,
        r"^[ \t]*(?:>[ \t]*)?[*_]{1,2}" + ROLE_NAMES + r"[ \t]*[:：][*_]{0,2}",
        "system sys assistant developer admin administrator root operator",
    ),
    chinese(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        r"^[ \t]*#{2,3}[ \t]*(?:指令|回答|输入|回复)[ \t]*[:：]"
        r"|<\s*[^<>\s]+\s[^>]*角色\s*=\s*[\"“]?(?:系统|开发者|管理员)",
        "指令 回答 输入 回复 角色",
    ),
    chinese(
        "role_line",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.5,
        r"^[ \t]*(?:>[ \t]*)?[*_]{1,2}(?:系统|助手|管理员|开发者)[ \t]*[:：][*_]{0,2}",
        "系统 助手 管理员 开发者",
    ),
    # A new system prompt announced as a header ("NEW SYSTEM PROMPT:", "SYSTEM PROMPT (v2):"),
    # not a section of a document about prompts ("## System prompt").
    english(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"\b(?:new|updated|revised|real|actual)\s+system\s+(?:prompt|message|instructions)\s*"
        r"(?:\([^)\n]{0,12}\))?\s*:|\bsystem\s+(?:prompt|message)\s*\(\s*(?:v\d|version)[^)\n]{0,8}\)"
        r"\s*:",
        "prompt message instructions",
    ),
    # A tool call written into the text, as the model would emit it.
    english(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.6,
        r"\"(?:tool_calls?|function_call|tool_use)\"\s*:|<\s*(?:function_calls|tool_call|tool_use)\s*>"
        r"|<\s*invoke\s+name\s*=",
        "tool_call tool_calls function_call tool_use function_calls invoke",
    ),
    # A system message inside the text whose content orders a risky act.
    english(
        "role_json",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"\"role\"\s*:\s*\"(?:system|developer)\"\s*,\s*\"content\"\s*:\s*\"[^\"]{0,120}?\b(?:share|"
        r"shares|send|sends|reveal|reveals|forward|forwards|delete|deletes|ignore|ignores|disclose|"
        r"discloses|upload|uploads|email|emails)\b",
        "role",
    ),
    chinese(
        "role_tag",
        ReviewRule.FAKE_SYSTEM_TAG,
        0.7,
        r"(?:新的?|更新后的|修订后的|真正的)系统(?:提示词?|消息|指令)\s*(?:[(（][^)）\n]{0,12}[)）])?\s*[:：]"
        r"|系统(?:提示词?|消息)\s*[(（]\s*(?:v\d|版本)[^)）\n]{0,8}[)）]\s*[:：]",
        "系统提示 系统消息 系统指令",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
