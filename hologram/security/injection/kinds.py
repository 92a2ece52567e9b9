"""The forms of the five kinds the first held-out figures showed weak, written by structure:
who the text says it speaks for, what it asks to leave, whom it addresses, whose rules it
changes, in English and Chinese.

Each form is built from a relation, not a sentence: an author who *made or runs you* (not a
company, a team or an admin in general), the assistant's *own* restrictions lifted, something
read and then sent to an address, a rule set whose subject is the assistant, a word that
outranks the user's. They reuse the names of the features they extend (`addressee`,
`authority_claim`, ...) where they only widen them, so a passage still counts each name once;
a negated send ("never paste it into logs") takes weight from `exfil_request`. Each form sets
its own reach (the catalog's table is for the phrase modules).
"""

from __future__ import annotations

import dataclasses

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import Feature, alternation, chinese, english
from hologram.security.injection.turns import ROLE_NAMES
from hologram.security.injection.vocabulary import AI, AI_ANY, AI_WORDS, AI_ZH

# Whose rules: the assistant's own, by possessive or by a "for the assistant" complement.
_RULES = (
    r"(?:rules?|polic(?:y|ies)|guidelines|instructions|restrictions|limits|filters|"
    r"safeguards|settings|config(?:uration)?|orders|content\s+rules|standing\s+orders)"
)
_CHANGED = r"(?:new|updated|revised|amended|changed|modified|replacement|final)"
_MAKE = (
    r"(?:built|made|trained|trains|created|developed|develops|deployed|deploys|configured|"
    r"programmed|wrote|runs|owns|operates|designed)"
)
_READ_VERB = r"(?:read|open|collect|gather|copy|dump|grab|take|fetch|export|look\s+up|extract|cat)"
_SEND_VERB = (
    r"(?:send|post|upload|forward|paste|submit|email|e-mail|attach|put|transmit|push|dm|"
    r"message|share|report)"
)
_ADDRESS = (
    r"(?:https?://\S+|www\.\S+|[\w.-]+@[\w-]+\.[\w.]+|"
    r"[\w-]+\.(?:site|example|com|net|io|org|xyz|app|dev|cc)(?:/\S*)?)"
)
_USER_ZH = r"(?:用户|主人|使用者|机主)"


def _reach(feature: Feature, back: int, ahead: int) -> Feature:
    return dataclasses.replace(feature, reach=(back, ahead))


ENGLISH = (
    # The assistant addressed by its role in reading the text: "AI reader:", "For language
    # models:", "Note to the screening assistant:", "the model processing this image".
    _reach(
        english(
            "addressee",
            None,
            0.6,
            alternation(
                r"\b" + AI + r"\s+(?:readers?|crawlers?|reviewers?|summari[sz]ers?)\s*[,:]",
                r"(?:^|(?<=[\n.!?\"'(>]))\s*(?:to|for|attention)\s+(?:the\s+|any\s+|all\s+|every\s+)?"
                r"(?:[\w-]+\s+)?" + AI_ANY + r"(?:\s+[\w-]+){0,2}\s*[,:—–]",
                r"\b(?:note|notes|message|instructions?|reminder|memo|request)\s+(?:to|for)\s+"
                r"(?:the\s+|any\s+|all\s+|this\s+)?[\w-]+\s+" + AI + r"\b",
                r"\b(?:the|any|all|every|whatever)\s+"
                + AI_ANY
                + r"\s+(?:that\s+|which\s+)?(?:is\s+|"
                r"are\s+)?(?:processing|reading|summari[sz]ing|handling|screening|parsing)\s+"
                r"(?:this|these|the\s+following)\b",
            ),
            AI_WORDS + " readers reader crawler crawlers reviewer reviewers",
        ),
        60,
        60,
    ),
    # A reader named at the head of a clause ("Bots reading this thread:"), and a bot
    # @-mentioned the way a forum or a pull request addresses it.
    _reach(
        english(
            "addressee",
            None,
            0.6,
            r"(?:^|(?<=[\n>.!?:]))[\s>]*(?:ai\s+)?"
            + AI_ANY
            + r"\s+(?:that\s+|who\s+)?(?:are\s+|is\s+)?"
            r"(?:reading|processing|summari[sz]ing|handling|crawling|parsing|indexing|browsing)\s+"
            r"(?:this|these)\b"
            r"|(?<![\w@])@[\w-]*(?:bot|ai|assistant|copilot|gpt|agent)\b",
            AI_WORDS,
            ("@",),
        ),
        60,
        60,
    ),
    # The assistant's role taken away and another given in one breath: "you're not a code
    # reviewer any more, you're a release manager".
    _reach(
        english(
            "role_swap",
            ReviewRule.ROLE_OVERRIDE,
            0.6,
            r"\byou(?:'re|\s+are)\s+(?:not|no\s+longer)\s+(?:an?\s+|the\s+|my\s+|just\s+)?"
            r"(?:[\w'-]+\s+){0,3}?[\w'-]+(?:\s+any\s*more)?\s*[,.;:!—–-]+\s*(?:now\s+)?you(?:'re|\s+are)"
            r"\b",
            "you",
        ),
        4,
        120,
    ),
    # A role line with a qualifier: "SYSTEM (priority):".
    _reach(
        english(
            "role_line",
            ReviewRule.FAKE_SYSTEM_TAG,
            0.5,
            r"^[ \t]*" + ROLE_NAMES + r"[ \t]*[(\[][\w \t-]{1,24}[)\]][ \t]*:",
            "system sys assistant developer admin administrator root operator",
        ),
        12,
        40,
    ),
    # Something to leave where the text's author can read it: "drop it in this ticket".
    _reach(
        english(
            "deposit_here",
            ReviewRule.SECRET_EXFILTRATION,
            0.4,
            r"\b(?:drop|put|paste|post|leave|write|dump)\s+(?:it|them|that|this)\s+(?:in|into|on|under|"
            r"below)\s+(?:this|the)\s+(?:ticket|comment|thread|issue|chat|form|reply|channel|page)\b",
            "drop put paste post leave write dump",
        ),
        10,
        60,
    ),
    # The user made irrelevant: "whatever the customer says", "no warnings".
    _reach(
        english(
            "obey_over_user",
            ReviewRule.POLICY_REWRITE,
            0.5,
            r"\b(?:whatever|no\s+matter\s+what)\s+the\s+(?:user|customer|owner)\s+(?:says|wants|asks)\b",
            "whatever matter",
        ),
        10,
        50,
    ),
    _reach(
        english(
            "no_caveats",
            ReviewRule.ROLE_OVERRIDE,
            0.3,
            r"\bno\s+(?:warnings|disclaimers|caveats|filters|refusals|moralizing|lectures)\b",
            "warnings disclaimers caveats filters refusals moralizing lectures",
        ),
        4,
        20,
    ),
    # The assistant's own setup by where it came from: "the prompt the company loaded into you".
    _reach(
        english(
            "reveal_prompt",
            ReviewRule.PROMPT_EXFILTRATION,
            0.8,
            r"\b(?:show|give|tell|send|paste|print|copy|list|share)\s+(?:me\s+|us\s+)?(?:[\w-]+\s+){0,4}?"
            r"(?:prompt|instructions|rules|guidelines|configuration|setup|context)\s+(?:that\s+)?"
            r"(?:[\w-]+\s+){0,3}?(?:loaded|put|gave|fed|programmed|wrote|installed|configured)\s+"
            r"(?:into\s+|in\s+|to\s+)?you\b",
            "loaded put gave fed programmed wrote installed configured",
        ),
        120,
        20,
    ),
    # Whoever makes you run: "the model you're running on".
    _reach(
        english(
            "authority_claim",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"\b(?:the\s+)?(?:model|platform|system|service|servers?)\s+you(?:'re|\s+are)\s+"
            r"(?:running|built|hosted)\s+on\b",
            "running built hosted",
        ),
        40,
        10,
    ),
    _reach(
        english(
            "directive",
            None,
            0.3,
            r"\b(?:i|we)\s+need\s+you\s+to\b",
            "need",
        ),
        10,
        10,
    ),
    # Who made or runs *you*: the maker claimed, whatever it is called.
    _reach(
        english(
            "authority_claim",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"\b(?:that|who|which)\s+(?:[\w-]+\s+)?" + _MAKE + r"\s+you\b"
            r"|\b(?:company|team|lab|people|group|engineers?|developers?)\s+(?:that|who)\s+"
            + _MAKE
            + r"\s+you\b",
            "built made trained trains created developed develops deployed deploys configured "
            "programmed wrote runs owns operates designed",
        ),
        60,
        30,
    ),
    # The assistant's own limits lifted: a claim only its makers could make.
    _reach(
        english(
            "restrictions_lifted",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"\b(?:lift(?:ing|ed|s)?|remov(?:e|es|ing|ed)|suspend(?:s|ing|ed)?|waiv(?:e|es|ing|ed)|"
            r"relax(?:es|ing|ed)?|disabl(?:e|es|ing|ed)|unlock(?:s|ing|ed)?)\s+(?:all\s+)?(?:of\s+)?"
            r"your\s+(?:[\w-]+\s+)?" + _RULES + r"\b"
            r"|\byour\s+(?:[\w-]+\s+)?" + _RULES + r"\s+(?:are|is|have\s+been|has\s+been)\s+"
            r"(?:now\s+)?(?:suspended|lifted|void|disabled|removed|waived|revoked|paused)\b"
            r"|\b(?:you\s+may|you\s+can|feel\s+free\s+to)\s+(?:now\s+)?(?:disregard|ignore|skip|"
            r"set\s+aside)\s+(?:the|your|any)\s+(?:[\w-]+\s+){0,2}?" + _RULES + r"\b"
            r"|\b(?:this\s+)?(?:conversation|chat|session|thread)\s+(?:has\s+been|is|was)\s+"
            r"(?:whitelisted|exempted|cleared)\b"
            r"|\belevated\s+(?:mode|access|privileges)\s+(?:is\s+|has\s+been\s+)?(?:granted|"
            r"enabled|on)\b",
            "lift lifting lifted lifts remove removes removing removed suspend suspends "
            "suspending suspended waive waives waiving waived relax relaxes relaxing relaxed "
            "disable disables disabling disabled unlock unlocks unlocking unlocked disregard "
            "ignore skip aside whitelisted exempted cleared elevated void revoked paused",
        ),
        60,
        60,
    ),
    # A rule set whose subject is the assistant, changed: "Updated operating rules for this
    # assistant", "Rule update for AI agents", "assistant policy v3.1", "apply this to
    # yourself".
    _reach(
        english(
            "assistant_rules_changed",
            ReviewRule.POLICY_REWRITE,
            0.6,
            r"\b"
            + _CHANGED
            + r"\s+(?:[\w-]+\s+){0,2}?"
            + _RULES
            + r"\s+(?:for|of)\s+(?:this\s+|the\s+|all\s+|any\s+|every\s+)?(?:[\w-]+\s+)?"
            + AI_ANY
            + r"\b"
            r"|\b(?:rules?|polic(?:y|ies)|guidelines?|config(?:uration)?)\s+(?:update|patch|"
            r"change|changelog|revision)s?\s+(?:for|of)\s+(?:this\s+|the\s+|all\s+|any\s+)?"
            r"(?:[\w-]+\s+)?" + AI_ANY + r"\b"
            r"|\b" + AI_ANY + r"\s+(?:policy|rules|guidelines)\s+v?\d"
            r"|\b(?:the\s+)?"
            + AI_ANY
            + r"'?s\s+(?:[\w'\"“”‘’-]+\s+){0,6}?(?:rule|policy|restriction|"
            r"guideline)s?\s+(?:has|have)\s+been\s+(?:retired|removed|dropped|lifted|revoked|cancelled|"
            r"scrapped|withdrawn)\b"
            r"|\b(?:config|configuration|settings|policy)\s+(?:patch|update)\s+for\s+(?:the|this)\s+"
            + AI_ANY
            + r"\b",
            "new updated revised amended changed modified replacement final update patch change "
            "changelog revision policy rules guidelines retired removed dropped lifted revoked "
            "cancelled scrapped withdrawn",
        ),
        80,
        90,
    ),
    # The assistant told to take rules on as its own.
    _reach(
        english(
            "adopt_rules",
            ReviewRule.POLICY_REWRITE,
            0.4,
            r"\bapply\s+(?:this|it|these|them)\s+to\s+yourself\b"
            r"|\b(?:you|assistants?|agents?)\s+(?:must|should|shall)\s+(?:now\s+)?(?:adopt|apply|"
            r"install)\s+(?:this|these|the\s+(?:new|final|updated|revised))\b"
            r"|\bwhich\s+you\s+must\s+(?:now\s+)?adopt\b",
            "apply yourself adopt install",
        ),
        60,
        60,
    ),
    # Safeguards switched off in a rule list: "consent is no longer needed", "refusals are
    # disabled".
    _reach(
        english(
            "safeguard_off",
            ReviewRule.POLICY_REWRITE,
            0.4,
            r"\b(?:(?:switch|turn)(?:ing)?\s+off|disabl(?:e|ing))\s+(?:the\s+|your\s+)?(?:logging|logs|"
            r"audit(?:ing)?|monitoring)\b"
            r"|\b(?:consent|confirmation|approval|permission|refusals?|(?:safety|security)\s+checks?|"
            r"validation|filtering|warnings?)\s+(?:is|are)\s+(?:now\s+)?(?:no\s+longer\s+(?:needed|required|"
            r"necessary)|disabled|turned\s+off|switched\s+off|optional)\b",
            "consent confirmation approval permission refusal refusals safety security validation "
            "filtering warning warnings switch switching turn turning disable disabling",
        ),
        30,
        70,
    ),
    # The text made the assistant's authority: whatever the page or the mail says goes.
    _reach(
        english(
            "trust_injected_text",
            ReviewRule.POLICY_REWRITE,
            0.5,
            r"\b(?:any|every|whatever)\s+(?:[\w-]+\s+)?(?:command|instruction|action|step)s?\s+"
            r"(?:the|this)\s+(?:page|document|email|mail|file|site|message|ticket)\s+"
            r"(?:suggests|says|asks\s+for|contains|lists)\b",
            "any every whatever",
        ),
        10,
        80,
    ),
    # The assistant addressed as a reader told what it is instructed: "agents handling this
    # ticket are instructed to".
    _reach(
        english(
            "authorization_claim",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"\b(?:are|is)\s+(?:hereby\s+)?(?:instructed|ordered|directed)\b(?:[^.!?\n]){0,40}?"
            r"\bto\s+\w+",
            "instructed ordered directed",
        ),
        10,
        60,
    ),
    # A secret asked for in a reply, and what the user confided named as such.
    _reach(
        english(
            "reply_with_secret",
            ReviewRule.SECRET_EXFILTRATION,
            0.5,
            r"\breply\s+(?:to\s+(?:[\w-]+\s+){0,3}?)?with\s+(?:[\w'-]+\s+){0,4}?(?:one-time\s+"
            r"codes?|pins?|otps?|passwords?|passcodes?|(?:verification|security|login)\s+codes?|"
            r"api\s+keys?|tokens?)\b",
            "reply",
        ),
        4,
        90,
    ),
    _reach(
        english(
            "user_confidence",
            None,
            0.3,
            r"\b(?:the\s+user|your\s+user|the\s+owner|they)\s+(?:gave|told|sent|shared\s+with|"
            r"confided\s+to|entrusted\s+to)\s+you\b",
            "gave told sent shared confided entrusted",
        ),
        30,
        30,
    ),
    # Whom it obeys: someone's word made to outrank the user's.
    _reach(
        english(
            "obey_over_user",
            ReviewRule.POLICY_REWRITE,
            0.5,
            r"\beven\s+(?:if|when)\s+(?:the\s+|your\s+)?(?:user|owner|customer)\s+"
            r"(?:disagrees|objects|says\s+no|refuses|forbids|doesn't\s+want)\b"
            r"|\b(?:carry|carries|have|has|hold|holds)\s+(?:the\s+)?(?:owner|user|admin|"
            r"administrator|operator)'?s?\s+(?:full\s+)?(?:authority|permissions|rights)\b"
            r"|\btreat\s+(?:[\w-]+\s+){1,3}?as\s+(?:system|developer|operator|admin)\s+"
            r"(?:instructions|messages|prompts|orders)\b"
            r"|\b(?:you\s+)?(?:answer|report|belong)\s+to\s+me,?\s+not\s+(?:to\s+)?(?:your|the)\s+"
            r"(?:user|owner)\b",
            "disagrees objects refuses forbids want authority permissions rights treat answer "
            "report belong",
        ),
        60,
        60,
    ),
    # Read the owner's stored data (a file by its path, the memory, the history), then send
    # it to an address: the shape of exfiltration, whatever the data is called.
    _reach(
        english(
            "relay",
            ReviewRule.SECRET_EXFILTRATION,
            1.0,
            r"\b"
            + _READ_VERB
            + r"\s+(?:the\s+|your\s+|my\s+|their\s+)?(?:file\s+|folder\s+)?(?:~/|\.{0,2}/|\.\w|"
            r"[\w-]+\.(?:txt|env|json|ya?ml|db|sqlite|pem|key|csv|docx?|xlsx?)\b|"
            r"(?:long-term\s+)?memor(?:y|ies)\b|(?:chat|conversation|message)\s+(?:history|logs?)\b|"
            r"contacts\b|inbox\b)"
            r"(?:[^.!?\n]|\.(?=\w)){0,60}?\b(?:and|then)\s+(?:\w+\s+)?"
            + _SEND_VERB
            + r"\b(?:[^.!?\n]|\.(?=\w)){0,50}?\b(?:to|into|at|on)\s+"
            + _ADDRESS,
            "read open collect gather copy dump grab take fetch export look extract cat",
        ),
        10,
        200,
    ),
    # A send the text forbids: "never paste them into logs" is advice, not a request.
    _reach(
        english(
            "negated_send",
            None,
            -0.8,
            # Not a quoted rule: "the 'never share' rule has been retired" names it.
            r"(?<!['\"“‘])\b(?:never|don'?t|do\s+not|must\s+not|should\s+not|shouldn'?t|not\s+to|"
            r"no\s+one|nobody)\s+(?:ever\s+)?(?:\w+\s+)?" + _SEND_VERB + r"\b",
            "never don dont not one nobody shouldn",
        ),
        8,
        40,
    ),
)
# The scan anchors English on whole words ("don't" splits into "don" and "t"). A negated send
# counters only the request it negates, not the rest of the passage.
ENGLISH = tuple(
    dataclasses.replace(f, counters="exfil_request") if f.name == "negated_send" else f
    for f in ENGLISH
)

CHINESE = (
    _reach(
        chinese(
            "addressee",
            None,
            0.6,
            r"(?:ai|大模型|模型|助手|智能体|机器人)(?:读者|阅读者|审阅者)[:：,，]",
            "读者 阅读者 审阅者",
        ),
        12,
        4,
    ),
    _reach(
        chinese(
            "addressee",
            None,
            0.6,
            r"@(?:助手|小助手|机器人|ai|智能体)|(?:智能体|ai助手|机器人)(?:应当?|必须|需要)(?=[把将给在])",
            "@助手 @小助手 @机器人 @ai @智能体 智能体 ai助手 机器人",
        ),
        4,
        16,
    ),
    _reach(
        chinese(
            "obey_over_user",
            ReviewRule.POLICY_REWRITE,
            0.5,
            r"不管"
            + _USER_ZH.replace("(?:", "(?:顾客|客户|")
            + r"(?:说什么|怎么说|是否同意|同不同意)",
            "不管",
        ),
        2,
        16,
    ),
    _reach(
        chinese(
            "authority_claim",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"(?:给|为)(?:你|您)提供(?:底层)?(?:模型|服务|算力)的",
            "提供",
        ),
        8,
        16,
    ),
    _reach(
        chinese(
            "reveal_prompt",
            ReviewRule.PROMPT_EXFILTRATION,
            0.8,
            r"(?:给|为|向)你(?:加载|设置|配置|写入|灌输|输入)的(?:配置)?(?:提示词|指令|规则|设定|准则)"
            r"[^。!?\n]{0,12}?(?:给我看|发给我|贴|复制|原样|写出来)",
            "加载 设置 配置 写入 灌输 输入",
        ),
        8,
        40,
    ),
    _reach(
        chinese(
            "role_swap",
            ReviewRule.ROLE_OVERRIDE,
            0.6,
            r"你(?:现在)?(?:不再是|已经不是|不是)[^。!?\n]{1,16}?[，,；;]\s*你(?:现在)?(?:是|就是|成了)",
            "不再是 已经不是 不是",
        ),
        8,
        40,
    ),
    _reach(
        chinese(
            "role_line",
            ReviewRule.FAKE_SYSTEM_TAG,
            0.5,
            r"^[ \t]*(?:系统|助手|管理员|开发者)[ \t]*[(（\[【][^)）\]】\n]{1,8}[)）\]】]"
            r"[ \t]*[:：]",
            "系统 助手 管理员 开发者",
        ),
        8,
        20,
    ),
    _reach(
        chinese(
            "authority_claim",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"(?:开发|训练|创造|制造|部署|设计|编写|配置|运营|研发)(?:了)?(?:你|您)的(?:那家|这家|那个|"
            r"这个)?(?:公司|团队|安全团队|人|工程师|开发者|维护者|厂商|组|实验室|仓库维护者)",
            "开发 训练 创造 制造 部署 设计 编写 配置 运营 研发",
        ),
        4,
        24,
    ),
    _reach(
        chinese(
            "restrictions_lifted",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"(?:解除|取消|暂停|关闭|撤销|放开|解锁)(?:你|您)(?:在[^。!?\n]{0,12})?的(?:全部|所有)?"
            r"(?:限制|规则|设定|过滤|审查|约束|安全规则)"
            r"|(?:你|您)(?:原有|之前|现有|原来)?的(?:设定|规则|限制|指令|安全规则)(?:暂停|不再|作废|失效|"
            r"取消|解除)"
            r"|(?:可以|不必|不用)(?:不管|不理|无视|忽略)(?:之前|原有|你)的(?:内容)?(?:规则|设定|限制)"
            r"|(?:对话|会话|聊天)已(?:加入|列入)白名单|已获得(?:高级|最高|管理员)权限",
            "解除 取消 暂停 关闭 撤销 放开 解锁 的设定 的规则 的限制 的指令 不管 不理 无视 忽略 "
            "白名单 已获得",
        ),
        24,
        40,
    ),
    _reach(
        chinese(
            "assistant_rules_changed",
            ReviewRule.POLICY_REWRITE,
            0.6,
            r"(?:"
            + AI_ZH
            + r"|本助手|该助手)(?:的)?(?:运行|行为|新|安全)?(?:规则|策略|准则|规定|设定|"
            r"配置)(?:已)?(?:更新|修订|修改|变更|补丁|调整|\s*v?\d)"
            r"|(?:"
            + AI_ZH
            + r")[^。!?\n]{0,16}?(?:规则|规定|限制|准则)(?:已|已经|被)(?:废止|取消|删除|撤销|"
            r"作废|移除)"
            r"|(?:" + AI_ZH + r")新规|(?:" + AI_ZH + r")?(?:配置|策略)补丁"
            r"|(?:" + AI_ZH + r")(?:的)?规则更新",
            "规则 策略 准则 规定 设定 配置 新规 补丁",
        ),
        20,
        16,
    ),
    _reach(
        chinese(
            "adopt_rules",
            ReviewRule.POLICY_REWRITE,
            0.4,
            r"(?:应用|用)到你(?:自己)?身上|你(?:现在)?必须(?:采用|遵守|执行)的(?:正式|新)?(?:规定|规则|策略)",
            "身上 必须采用 必须遵守 必须执行 现在必须",
        ),
        12,
        20,
    ),
    _reach(
        chinese(
            "safeguard_off",
            ReviewRule.POLICY_REWRITE,
            0.4,
            r"(?:拒绝功能|确认步骤|安全检查|过滤|审核|用户确认|二次确认|校验)(?:已|已经)?(?:关闭|取消|停用|禁用|"
            r"不再需要)|(?:安全检查|校验|确认|审批|审核)(?:是|都是|变成了?)?可选的?"
            r"|(?:把)?(?:日志|审计)关(?:掉|闭)|关闭(?:日志|审计|监控)",
            "拒绝功能 确认步骤 安全检查 过滤 审核 用户确认 二次确认 校验 确认 审批 日志 审计 关闭",
        ),
        4,
        16,
    ),
    _reach(
        chinese(
            "trust_injected_text",
            ReviewRule.POLICY_REWRITE,
            0.5,
            r"(?:页面|网页|文档|邮件|文件|工单)(?:里|上|中)?(?:建议|说|要求|列出)的(?:任何|所有)?(?:命令|指令|"
            r"操作|步骤)",
            "页面 网页 文档 邮件 文件 工单",
        ),
        4,
        24,
    ),
    _reach(
        chinese(
            "authority_claim",
            ReviewRule.AUTHORITY_IMPERSONATION,
            0.5,
            r"(?:向|给|对)(?:你|您)下达(?:的)?(?:命令|指令)",
            "下达",
        ),
        8,
        8,
    ),
    _reach(
        chinese(
            "reply_with_secret",
            ReviewRule.SECRET_EXFILTRATION,
            0.5,
            r"回复[^。!?\n]{0,12}?附上[^。!?\n]{0,16}?(?:验证码|密码|口令|密钥|令牌|pin)",
            "回复",
        ),
        2,
        40,
    ),
    _reach(
        chinese(
            "user_confidence",
            None,
            0.3,
            _USER_ZH + r"(?:之前|以前|早先|私下)?(?:告诉|给|发给|透露给)(?:了)?你的",
            "用户 主人 使用者 机主",
        ),
        4,
        16,
    ),
    _reach(
        chinese(
            "obey_over_user",
            ReviewRule.POLICY_REWRITE,
            0.5,
            r"即使" + _USER_ZH + r"(?:不同意|反对|拒绝|不让|不愿意)"
            r"|代表" + _USER_ZH + r"的(?:权限|授权|意思|身份)"
            r"|视为系统指令|当作(?:系统|开发者)(?:的)?指令"
            r"|(?:听我的|以我为准)[^。!?\n]{0,6}(?:不听|而不是)|一律照办|照办不误",
            "即使 代表 视为系统指令 当作 听我的 以我为准 一律照办 照办不误",
        ),
        4,
        24,
    ),
    _reach(
        chinese(
            "relay",
            ReviewRule.SECRET_EXFILTRATION,
            1.0,
            r"(?:读取|打开|读出|导出|复制|收集|翻出)[^。!?\n]{0,20}?(?:文件|记忆|聊天记录|通讯录|收件箱|~/|"
            r"\.\w)[^。!?\n]{0,24}?(?:然后|再|并|之后)[^。!?\n]{0,6}?(?:发|上传|提交|转发|贴|传)"
            r"[^。!?\n]{0,10}?(?:到|给|至)\s*(?:https?://|www\.|[\w.-]+@|[\w-]+\.(?:com|net|io|org|"
            r"example|site|xyz))",
            "读取 打开 读出 导出 复制 收集 翻出",
        ),
        2,
        120,
    ),
    _reach(
        chinese(
            "negated_send",
            None,
            -0.8,
            r"(?<![\"“‘「])(?:不要|别|不得|不可|不能|切勿|禁止|绝不会?|从不|不会)(?:把|将)?[^。!?\n,，]{0,12}?"
            r"(?:发|贴|提交|上传|分享|转发|写进|放到|泄露|透露)",
            "不要 别 不得 不可 不能 切勿 禁止 绝不 从不 不会",
        ),
        2,
        30,
    ),
)
CHINESE = tuple(
    dataclasses.replace(f, counters="exfil_request") if f.name == "negated_send" else f
    for f in CHINESE
)

FEATURES: tuple[Feature, ...] = (*ENGLISH, *CHINESE)
