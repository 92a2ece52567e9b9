"""Rewriting the assistant's policy: its rules, what it may do, which checks it may skip.

Organisations change policies in ordinary mail ("our data retention policy has been
updated", "refunds over $500 need a manager"); what an injection changes is *the
assistant's*: its rules declared changed or suspended, a permission granted to it, a
confirmation it need no longer ask for. So these signals are about "you" and "your", or about
the assistant by name. Whom it obeys is `principal`.
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import chinese, english

# The assistant's rules, by any name, and a change of their state.
YOUR_RULES = (
    r"(?:\byour\s+(?:[\w-]+\s+){0,2}?|\bthe\s+assistant'?s?\s+(?:[\w-]+\s+)?|\b(?:rule|section|"
    r"clause|point)\s+\d+\s+of\s+your\s+)(?:rules?|guidelines|instructions|polic(?:y|ies)|"
    r"principles|directions|guidance|orders|"
    r"restrictions|limits|safeguards|guardrails|directives?|programming|training|code\s+of\s+"
    r"conduct|constraints|protocols?|boundaries)\b"
)
CHANGED = (
    r"(?:has|have|was|were|is|are)\s+(?:now\s+|just\s+|officially\s+)?(?:been\s+)?(?:changed|"
    r"updated|"
    r"revised|replaced|lifted|suspended|removed|deleted|disabled|amended|relaxed|waived|paused|"
    r"rewritten|overridden|voided|void|on\s+hold|cancell?ed|withdrawn|off|expired|reset|"
    r"superseded|rolled\s+back|no\s+longer\s+(?:valid|active|in\s+force))\b"
)

ENGLISH = (
    english(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.8,
        YOUR_RULES + r"(?:[^.;\n]{0,40}?)\s" + CHANGED,
        "rules rule guidelines instructions policy policies principles restrictions limits "
        "directions guidance orders "
        "safeguards guardrails directive directives programming training code constraints protocol "
        "protocols boundaries",
    ),
    english(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"\b(?:your|the\s+assistant'?s?)\s+(?:operating\s+|content\s+|safety\s+|security\s+|"
        r"core\s+)?"
        r"(?:policy|policies|rules|guidelines|instructions|restrictions|configuration|programming|"
        r"goals?|purpose|directives?|limits|safeguards|principles)\s+(?:has|have)\s+(?:changed|"
        r"been\s+"
        r"(?:changed|updated|revised|replaced|lifted|suspended|removed|disabled|amended|relaxed|"
        r"waived|paused))"
        r"|\b(?:restrictions|rules|limits|limitations|filters|guardrails|safeguards)\s+placed\s+on\s+"
        r"you\b"
        r"|\b(?:consider|treat)\s+your\s+(?:safety\s+)?(?:guidelines|rules|policy|restrictions)\s+"
        r"(?:as\s+)?(?:suspended|void|lifted|disabled|paused)"
        r"|\byour\s+rule\s+(?:against|about)\b"
        r"|\b(?:amend|change|rewrite|update|redefine|revise|relax|drop)\s+your\s+(?:rules|policy|"
        r"guidelines|instructions|goal|purpose|programming|principles)\b"
        r"|\b(?:revised|updated)\s+(?:policy|policies|rules|guidelines)\b[^.\n]{0,8}:"
        r"|\bpolicy\s+amendment\s*:"
        r"|\b(?:no\s+longer|don'?t|do\s+not|doesn'?t|does\s+not)\s+apply\s+to\s+(?:you|me|us)\b"
        r"|\b(?:safety|security)\s+(?:checks?|filters?|review|rules)\s+(?:are|is|have\s+been)\s+"
        r"(?:now\s+)?(?:deprecated|disabled|off|suspended|removed|lifted)\b",
        "rules rule guidelines instructions policy policies principles restrictions limits "
        "safeguards filters limitations guardrails programming directive directives configuration "
        "goal goals purpose apply safety "
        "security",
    ),
    english(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"\b(?:your|the\s+assistant'?s?)\s+(?:[\w-]+\s+)?(?:restrictions|limits|rules|filters|"
        r"safeguards|guardrails|safety\s+(?:rules|guidelines))\s+(?:have\s+been|are|"
        r"were)\s+(?:now\s+)?"
        r"(?:lifted|removed|disabled|suspended|switched\s+off|turned\s+off)\b"
        r"|\b(?:restrictions|limits|rules|limitations|filters|guardrails|safeguards)\s+placed\s+on\s+"
        r"you\s+(?:have\s+been|are|were)\s+"
        r"(?:lifted|removed|disabled|suspended)\b",
        "restrictions limits limitations rules filters safeguards guardrails safety",
    ),
    english(
        "permission_grant",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:the\s+)?assistant\s+(?:is|may)\s+(?:now\s+)?(?:permitted|allowed|authori[sz]ed|free)"
        r"\s+to\b"
        r"|\byou\s+(?:may|can)\s+now\s+(?!sign\b|log\b)\w+"
        r"|\b(?:share|give|do|answer|provide)\s+(?:whatever|what|anything)\s+(?:you(?:'re|"
        r"\s+are)\s+asked|"
        r"they\s+ask|is\s+asked|anyone\s+asks)"
        r"|\byou(?:'re|\s+are)\s+(?:now\s+)?(?:allowed|permitted|authori[sz]ed|free|cleared)\s+to\b"
        r"|\bis\s+lifted\b|\b(?:confidential|private|personal)\s+(?:data|information)\s+may\s+be\s+"
        r"(?:disclosed|shared|released)\b",
        "assistant now allowed permitted authorized authorised free cleared lifted confidential "
        "private personal asked ask asks",
    ),
    # Dropping a check the owner relies on: confirmation, approval, review.
    english(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:need|needs|require|requires|requiring)\s+no\s+(?:confirmation|approval|review|check)"
        r"|\bwithout\s+(?:asking\s+for\s+)?(?:confirmation|approval|review|checking|verification)\b"
        r"|\bno\s+(?:need|longer\s+(?:need|required))\s+to\s+(?:confirm|ask|check|verify|review)\b"
        r"|\b(?:skip|bypass|waive)\s+(?:the\s+)?(?:approval|confirmation|verification|review|check)"
        r"(?:\s+step)?\b"
        r"|\bwithout\s+checking\s+the\b"
        r"|\b(?:disable|turn\s+off|switch\s+off|remove)\s+(?:the\s+|all\s+)?(?:confirmation|"
        r"approval|"
        r"verification)(?:\s+(?:prompts?|steps?|checks?|dialogs?))?\b",
        "confirmation approval review check checking verification confirm verify ask",
    ),
    english(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\bno\s+longer\s+(?:need|require)s?\s+(?:the\s+|your\s+|any\s+)?(?:owner'?s\s+|"
        r"user'?s\s+)?"
        r"(?:approval|confirmation|permission|consent|sign-?off)\b",
        "approval confirmation permission consent sign signoff",
    ),
    english(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"\byour\s+(?:[\w-]+\s+){0,2}?(?:polic(?:y|ies)|rules?|guidelines)\s+(?:is|are)\s+now\s*:",
        "policy policies rule rules guidelines",
    ),
    english(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\bask\s+nothing\b|\bno\s+questions\s+asked\b",
        "nothing questions",
    ),
)

YOUR_RULES_ZH = (
    r"你(?:的|原先的|原来的|之前的|现在的|目前的)(?:[\u4e00-\u9fff]{0,4}?)(?:规则|准则|策略|规定|"
    r"规范|限制|约束|原则|"
    r"守则|条款|指令|指示|命令|设定|协议|底线|边界)"
)
CHANGED_ZH = (
    r"(?:已经?|被|有|都|均|现)?(?:变更|更新|修改|调整|暂停|取消|放宽|解除|删除|删掉|作废|失效|"
    r"废除|撤销|改了|换了|"
    r"不再适用|不适用|停用|关闭|改写|重置|到期|冻结|改为|改成|变为|变成)"
)

CHINESE = (
    chinese(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.8,
        YOUR_RULES_ZH
        + r"[^。!?\n;；]{0,16}?"
        + CHANGED_ZH
        + r"|(?:你|助手|ai|模型)[^。!?\n]{0,10}?(?:不需要|不用|不必|无需|不再需要)(?:再)?(?:遵守|"
        r"遵循|执行|受)[^。!?\n]{0,10}?"
        r"(?:规则|准则|策略|规定|规范|限制|约束|原则|守则|条款|指令|设定|协议)",
        "规则 准则 策略 规定 规范 限制 约束 原则 守则 条款 指令 指示 命令 设定 协议 底线 边界 "
        "不需要 不用 "
        "不必 无需",
    ),
    chinese(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"你的(?:运行|内容|安全|核心)?(?:策略|规则|准则|指令|限制|规定|规范|目标|原则)(?:已经?|有|"
        r"被)(?:变更|更新|修改|"
        r"调整|暂停|取消|放宽|解除)"
        r"|(?:对你|禁止你|限制你)[^。\n]{0,12}(?:不再适用|取消了|已取消|已经取消|解除了?)|"
        r"你的安全准则视为暂停"
        r"|(?:修改|改一下|重新定义|修订|放宽)你的(?:规则|策略|准则|目标|指令|原则)"
        r"|(?:修订版|新版)?策略(?:第\d+版|补充条款)\s*[:：]"
        r"|解除了对你的|安全检查(?:功能)?已(?:废弃|弃用)|不适用于(?:你|我)|对(?:你|"
        r"我)(?:已经)?(?:不(?:适用|算数?|起作用|再有效)|无效|失效)",
        "你的 对你 禁止你 限制你 对我 修改 改一下 重新定义 修订 放宽 策略 解除了 安全检查 不适用",
    ),
    chinese(
        "permission_grant",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"(?:助手|你)(?:现在)?(?:可以|被允许|获准|有权)(?:直接|随意|"
        r"自由地?)?(?:把[^。\n]{0,12})?(?:透露|分享|披露|"
        r"下单|执行|删除|转账|开通|购买|泄露|发给|告诉)",
        "助手 你",
    ),
    chinese(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"(?:不需要|无需|不用|不必|免)(?:再)?(?:向[^。\n]{0,6})?(?:确认|审批|审核|核对|核实|验证|"
        r"征得同意|问(?:过)?(?:主人|用户))"
        r"|(?:跳过|绕过|免去)(?:了)?(?:审批|确认|审核|核对|验证)|不(?:用|要)走审批"
        r"|(?:关闭|关掉|取消)(?:所有的?)?(?:确认|审批|验证)(?:提示|步骤|环节|弹窗)?",
        "不需要 无需 不用 不必 免 跳过 绕过 免去 不要 关闭 关掉 取消",
    ),
    chinese(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"不再需要[^。!?\n]{0,6}?(?:批准|同意|确认|审批)|(?:不需要|无需|不用|"
        r"不必)(?:再)?[^。!?\n]{0,6}?批准"
        r"|什么都不(?:问|查|核对|确认)",
        "不再需要 批准 什么都不",
    ),
)

# The assistant's checks waived and its limits revoked, in forms the phrases above miss:
# a confirmation "no longer required", old restrictions "revoked", the assistant "cleared
# to" act, its safety settings suspended.
GENERAL = (
    english(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:confirmations?|approvals?|verifications?|reviews?|checks?)\s+(?:is|are)\s+no\s+"
        r"longer\s+(?:required|needed|necessary)\b"
        r"|\b(?:proceed|go\s+ahead|continue|act)\s+without\s+asking\b",
        "required needed necessary asking",
    ),
    english(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"\b(?:consider|treat)\s+your\s+(?:old\s+|current\s+|previous\s+|safety\s+)?(?:guidelines|"
        r"rules|policy|restrictions|limits)\s+(?:as\s+)?(?:revoked|cancell?ed|gone|removed|void)"
        r"|\byour\s+safety\s+(?:settings|checks|filters|features)\s+(?:have\s+been|has\s+been|are|"
        r"were)\s+(?:now\s+)?(?:suspended|disabled|lifted|removed|switched\s+off|turned\s+off)\b",
        "guidelines rules policy restrictions limits settings checks filters features",
    ),
    # People's priorities and instructions change too ("your priorities have changed since the
    # kids were born"): said of the assistant these count, but below the phrases above.
    english(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\byour\s+(?:[\w-]+\s+)?(?:priorities|duties|objectives|configuration)\s+(?:have|has)\s+"
        r"(?:now\s+|just\s+)?(?:been\s+)?(?:changed|revised|redefined|reassigned|replaced)\b"
        r"|\b(?:amendment|update|change|revision|patch)\s+to\s+your\s+(?:configuration|rules|policy|"
        r"instructions|guidelines|programming)\b",
        "priorities duties objectives configuration rules policy instructions guidelines "
        "programming",
    ),
    english(
        "permission_grant",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:the\s+)?(?:assistant|ai|model|agent)\s+(?:is|has\s+been)\s+(?:now\s+)?cleared\s+to\b",
        "assistant ai model agent",
    ),
    chinese(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"跳过(?:所有|一切|全部)?(?:的)?(?:确认|审批|审核|验证)",
        "跳过",
    ),
    chinese(
        "policy_changed",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"你的(?:[\u4e00-\u9fff]{0,4}?)(?:规则|准则|策略|规定|指令|优先级)(?:已经?|被)?(?:修订|变了|改了)",
        "规则 准则 策略 规定 指令 优先级",
    ),
    english(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:don'?t|do\s+not|never|no\s+need\s+to|stop\s+asking)\s+(?:ask\s+)?(?:the\s+(?:user|"
        r"owner)\s+)?(?:for\s+)?(?:confirmation|approval|permission|consent)\b",
        "confirmation approval permission consent",
    ),
    chinese(
        "waive_check",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"不(?:要|用|必|需要)(?:再)?(?:向|跟)?(?:用户|主人)?(?:确认|请示|征求同意|申请许可)"
        r"|(?:关闭|取消|去掉|跳过)[^。!?\n]{0,4}?确认(?:步骤|环节)?",
        "确认 请示 征求同意 申请许可",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
