"""Discarding the assistant's instructions, or declaring new ones.

The tell is whose instructions: the assistant's own (`the previous instructions`, `your
rules`, `之前收到的指令`) are discarded by an injection, while "my previous email", "the
assembly instructions" or `报销规则` are someone's, about something. So the object must be
marked as the assistant's by what stands before it, and not tied to a thing after it.
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import alternation, chinese, english, english_forms
from hologram.security.injection.vocabulary import IMPERATIVE

DISCARD = alternation(
    r"ignore",
    r"disregard",
    r"forget(?:\s+about)?",
    r"override",
    r"supersede",
    r"overrule",
    r"skip",
    r"drop",
    r"scrap",
    r"discard",
    r"abandon",
    r"bypass",
    r"(?:set|put|cast|push)\s+aside",
    r"throw\s+(?:out|away)",
    r"pay\s+no\s+attention\s+to",
    r"(?:do\s+not|don'?t)\s+(?:pay\s+attention\s+to|follow|obey|listen\s+to)",
    r"stop\s+(?:following|obeying|applying)",
    r"no\s+longer\s+(?:follow|obey|apply)",
    r"never\s+mind",
    r"cancel",
    r"erase",
    r"wipe",
    r"unlearn",
)
DISCARD_WORDS = (
    "ignore disregard forget override supersede overrule skip drop scrap discard abandon bypass "
    "aside throw "
    "attention follow obey listen following obeying applying apply mind cancel erase wipe unlearn"
)
THEIRS = (
    r"(?:(?:all|any|every|each|one|of|the|your|these|those|this|that)\s+){0,4}"
    r"(?:(?:previous|prior|above|earlier|preceding|foregoing|original|initial|existing|current|"
    r"old|other|system|operator'?s?|developer'?s?|given|hidden|safety|content|core|base|"
    r"standing|default\s+system)\s+){0,2}"
)
INSTRUCTIONS = (
    r"(?:instructions?|prompts?|rules?|directives?|guidelines?|guidance|context|constraints?|"
    r"restrictions?|limitations?|limits|polic(?:y|ies)|programming|configuration|setup|orders|"
    r"commands?|system\s+message|text|training|principles)\b"
)
# "the rules in section 3", "the instructions on the card", "the rules of mahjong".
ABOUT_A_THING = (
    r"(?!\s+of\b)(?!\s+(?:on|in|for|about|regarding|from|at|inside)\s+(?:the|this|that|my|our|a|"
    r"an|section|page|chapter|step|question|part)\b(?!\s+(?:system|conversation|chat|prompt|"
    r"session|context|above)))"
)
RECEIVED = (
    r"(?:above|before\s+this|(?:that\s+)?you\s+(?:were\s+given|got|received|started\s+with|"
    r"have\s+been\s+given|were\s+told)|your\s+(?:operator|developer|creator)s?\s+(?:set|gave|"
    r"wrote))"
)
VOID_EN = (
    r"(?:void|null|revoked|cancell?ed|obsolete|outdated|superseded|replaced|invalid|rescinded|"
    r"withdrawn|a\s+decoy|a\s+test|fake|placeholders?|count|apply|valid|in\s+effect|matter|"
    r"expired|lifted|suspended|over|irrelevant|no\s+longer\s+(?:valid|relevant|needed))"
)

ENGLISH = (
    *english_forms(
        "discard_instructions",
        ReviewRule.IGNORE_INSTRUCTIONS,
        1.0,
        (
            IMPERATIVE + r"(?P<m>" + DISCARD + r"\s+" + THEIRS + INSTRUCTIONS + ABOUT_A_THING + ")",
            DISCARD_WORDS,
        ),
        (
            IMPERATIVE
            + r"(?P<m>"
            + DISCARD
            + r"\s+(?:everything|anything|all|whatever)\s+(?:(?:that\s+)?you\s+(?:were|have\s+been|"
            r"'ve\s+been)\s+(?:told|given|instructed)|(?:(?:written|said|stated)\s+)?(?:above|"
            r"before|"
            r"earlier)|in\s+your\s+(?:prompt|instructions|context)|that\s+came\s+before)"
            r"|" + DISCARD + r"\s+what\s+(?:you\s+were|(?:the\s+)?\w+(?:\s+\w+)?\s+)\s*told\s+you)",
            DISCARD_WORDS,
        ),
    ),
    # The verb, then within a few words instructions marked as the ones the assistant was
    # given ("never mind the task and the rules above").
    english(
        "discard_instructions",
        ReviewRule.IGNORE_INSTRUCTIONS,
        0.8,
        IMPERATIVE
        + r"(?P<m>"
        + DISCARD
        + r"\s+(?:[\w']+\s+){0,6}?(?:the\s+)?(?:instructions?|rules?|guidelines?|directives?|"
        r"prompts?|guidance)\s+" + RECEIVED + ")",
        DISCARD_WORDS,
    ),
    *english_forms(
        "instructions_void",
        ReviewRule.IGNORE_INSTRUCTIONS,
        0.8,
        (
            r"\b(?:(?:the|your|all|any)\s+)?(?:(?:above|previous|prior|earlier|original|initial|"
            r"old|current|existing|other|system|content|safety)\s+)+"
            + INSTRUCTIONS
            + r"(?:\s+[\w']+){0,8}?\s+(?:are|were|is|was|have\s+been|has\s+been|no\s+longer|don'?t|"
            r"do\s+not|doesn'?t)\s+(?:now\s+|all\s+|just\s+|only\s+|hereby\s+)?" + VOID_EN + r"\b",
            "above previous prior earlier original initial old current existing other system "
            "content "
            "safety",
        ),
        (
            r"\b(?:your|the)\s+instructions\s+you\s+(?:got|received|"
            r"were\s+given)(?:\s+[\w']+){0,4}?"
            r"\s+(?:are|were|have\s+been|no\s+longer)\s+" + VOID_EN,
            "instructions",
        ),
    ),
    english(
        "instructions_void",
        ReviewRule.IGNORE_INSTRUCTIONS,
        1.0,
        r"\b(?:whatever|no\s+matter\s+what|regardless\s+of\s+what)\s+(?:your|the)\s+"
        r"(?:system\s+prompt|prompt|instructions?|rules?|guidelines?|operator|developer)\s+"
        r"(?:says?|tells?\s+you|told\s+you)",
        "whatever matter regardless",
    ),
    english(
        "new_instructions",
        ReviewRule.NEW_INSTRUCTIONS,
        1.0,
        r"\b(?:new|updated|real|actual|revised|true|corrected)\s+(?:system\s+)?(?:instructions?|"
        r"directives?|orders|prompt)\s*:"
        r"|\b(?:here\s+(?:are|is)|these\s+are)\s+your\s+(?:real|new|actual|true|updated)\s+"
        r"(?:instructions?|orders|rules|task)"
        r"|\b(?:update|change|amendment|correction)\s+to\s+your\s+(?:instructions|rules|prompt|"
        r"orders|system\s+prompt)"
        r"|\byour\s+(?:real|true|actual)\s+(?:task|job|purpose|goal|instructions?)\s+(?:is|are)",
        "instruction instructions directive directives orders prompt rules task job purpose goal",
    ),
    english(
        "new_instructions",
        ReviewRule.NEW_INSTRUCTIONS,
        0.5,
        r"\b(?:new|real|actual)\s+(?:rules|task|goal|objective)\s*:"
        r"|\bthe\s+new\s+(?:guideline|rule|instruction|policy|directive)s?\s+(?:is|are)\b"
        r"|\b(?:your|whose|its|their)\s+(?:only|sole|one|new)\s+(?:task|job|purpose|goal|mission|"
        r"objective)\s+(?:is|now\s+is|from\s+here)",
        "rules task goal objective guideline guidelines rule instruction instructions policy "
        "policies directive directives job purpose mission",
    ),
    # What replaces the discarded instructions.
    english(
        "replacement",
        None,
        0.2,
        r"\binstead\s*(?:[.;:!]|$)|\binstead,|\binstead\s+(?:write|reply|say|answer|tell|do|output|"
        r"respond|recommend)\b",
        "instead",
    ),
)

# Words that may stand between a discarding verb and the assistant's instructions: they make
# the instructions the assistant's own (`你之前收到的所有`), never a thing in the world.
THEIRS_ZH = (
    r"[你的之前以先此上面前文原来有始初所全部一切统收到接给被设定好那些这任何系统平台都了掉]{0,12}"
)
INSTRUCTIONS_ZH = (
    r"(?:指令|指示|规则|提示词?|设定|要求|命令|约束|限制|准则|守则|规定|规范|任务说明|上下文|前文|上文|"
    r"过滤|"
    r"说明|原则)"
)
# "让模型无视之前的规则" reports what an attack makes a model do, "模型容易忽略…" describes a
# habit, "不要忽略…" forbids: none of them is the order itself.
NOT_AN_ORDER_ZH = (
    r"(?<!让模型)(?<!使模型)(?<!让它)(?<!诱导模型)(?<!容易)(?<!经常)(?<!常常)(?<!往往)(?<!总是)(?<!会)"
    r"(?<!可能)(?<!没有)(?<!不要)(?<!别)(?<!不)"
)
# A verb in the perfective ("模型忽略了系统提示词") reports what happened, it orders nothing.
DISCARD_ZH = NOT_AN_ORDER_ZH + alternation(
    r"忽略(?!了)",
    r"无视(?!了)",
    r"忽视(?!了)",
    r"忘记",
    r"忘掉",
    r"忘了",
    r"(?:不要|不用|别|不必|无需|不)(?:再)?理会",
    r"不用管",
    r"别管",
    r"不要管",
    r"跳过(?!了)",
    r"抛开(?!了)",
    r"抛弃",
    r"丢掉",
    r"丢了",
    r"丢弃",
    r"撇开(?!了)",
    r"放下",
    r"清空",
    r"(?:不必|不用|无需|不要再?|不再|别再?)(?:遵守|遵循|执行|照做|听)",
    r"停止(?:执行|遵守|遵循)",
    r"推翻",
    r"请勿执行",
    r"作废",
)
DISCARD_ZH_TRIGGERS = (
    "忽略 无视 忽视 忘记 忘掉 忘了 理会 不用管 别管 不要管 跳过 抛开 抛弃 丢掉 丢了 丢弃 撇开 "
    "放下 清空 遵守 遵循 "
    "执行 照做 听 停止 推翻 请勿执行 作废"
)
THE_ASSISTANTS_ZH = (
    r"(?:之前|以前|先前|此前|上面|以上|前面|原来|原先|原有|初始|你的|你收到的|给你的|你原来的|"
    r"你之前的|系统|原始"
    r"|(?<=把)(?:那些|这些))"
)
VOID_ZH = (
    r"(?:失效|作废|撤销|撤回|收回|取消|无效|不算数?|没用了?|不适用|过时|不再有效|废止|"
    r"都是测试用的|只是占位符|"
    r"被替换|已被覆盖|不再生效|结束了)"
)

CHINESE = (
    chinese(
        "discard_instructions",
        ReviewRule.IGNORE_INSTRUCTIONS,
        1.0,
        DISCARD_ZH
        + THEIRS_ZH
        + INSTRUCTIONS_ZH
        # object first: "把前面的上下文全部忘记", "之前那些限制你都别管了"
        + r"|(?:把|将)?"
        + THE_ASSISTANTS_ZH
        + THEIRS_ZH
        + INSTRUCTIONS_ZH
        + r"[你都全部统了再也不用就给我]{0,6}"
        + DISCARD_ZH,
        DISCARD_ZH_TRIGGERS,
    ),
    chinese(
        "instructions_void",
        ReviewRule.IGNORE_INSTRUCTIONS,
        1.0,
        THE_ASSISTANTS_ZH
        + THEIRS_ZH
        + INSTRUCTIONS_ZH
        + r"[^。!?\n]{0,10}?"
        + VOID_ZH
        + r"|(?:不管|无论|不论)(?:你的|之前|以前|先前|此前|上面|前面|原来)?(?:给你的)?"
        r"(?:提示词?|指令|指示|设定|规定|规则|要求|"
        r"系统提示)"
        r"(?:里|中)?(?:写了|说了|是)?什么"
        r"|(?:系统|之前|刚才)?(?:给你|对你|跟你)(?:说|讲)?的(?:那些)?(?:话|内容|提示)[^。\n]{0,6}"
        r"(?:都是|只是)?(?:旧版本?|测试|占位)",
        "之前 以前 先前 此前 上面 以上 前面 原来 原先 原有 初始 你的 你收到的 你原来的 你之前的 "
        "系统 原始 那些 这些 不管 "
        "无论 不论 给你 对你 跟你",
    ),
    chinese(
        "new_instructions",
        ReviewRule.NEW_INSTRUCTIONS,
        1.0,
        r"(?:新的?|真正的|最新的?|更新后的)(?:系统)?(?:指令|指示|命令|设定|提示词)\s*[:：]"
        r"|这才是你(?:真正|真实)的(?:指令|指示|命令|任务)"
        r"|你的(?:指令|指示|命令|任务|提示词)(?:有|已经?)?(?:更新|变|改)"
        r"|你(?:的)?(?:真正|真实)的?(?:任务|指令|指示|命令|目标)(?:是|[:：])|真正的任务是",
        "新 真正 真实 最新 更新后 这才是 你的",
    ),
    chinese(
        "new_instructions",
        ReviewRule.NEW_INSTRUCTIONS,
        0.5,
        r"新(?:的)?(?:规则|规矩|任务|目标|策略|准则)(?:是|\s*[:：])|唯一的?(?:任务|目的|目标|"
        r"工作)(?:就)?是"
        r"|(?:现在|接下来)(?:你)?(?:的)?(?:任务|工作)(?:就)?是",
        "新 唯一 现在 接下来",
    ),
    chinese(
        "replacement",
        None,
        0.2,
        r"(?:改为|改成|转而|而是)(?:把|去|回复|输出|告诉|写)|(?:重新开始|从头开始)[:：,，]",
        "改为 改成 转而 而是 重新开始 从头开始",
    ),
)

FEATURES = (*ENGLISH, *CHINESE)
