"""Asking the assistant to put its prompt, its configuration or its secrets in the reply.

Printing a file, repeating a paragraph or showing instructions for a shelf are everyday
requests; what leaks is the assistant's *own* text (its system prompt, what it was told
before the conversation, its context) and the secrets it holds (`the token you were given`).
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import alternation, chinese, english, english_forms

REVEAL = (
    r"(?:reveal|print|show|repeat|output|leak|dump|tell\s+me|echo(?:\s+back)?|paste|copy|quote|"
    r"(?:reply|respond|answer)\s+with|"
    r"recite|spell\s+out|list|display|write\s+(?:out|down)|give\s+me|disclose|summari[sz]e|"
    r"translate|append|complete|export|read\s+(?:out|back)|type\s+out|share|provide|reproduce|"
    r"include|restate|rephrase|paraphrase|enumerate|recount|give\s+me\s+(?:a|an|"
    r"the)\s+(?:[\w-]+\s+)?copy\s+"
    r"of)"
)
OWN_TEXT = alternation(
    r"your\s+(?:[\w-]+\s+){0,2}?(?:system\s+prompt|prompt|instructions|rules|directives|directions|"
    r"guidance|orders|"
    r"context\s+window|system\s+message|guidelines|pre-?prompt)\b",
    r"(?:the\s+)?(?:system\s+prompt|system\s+message|developer\s+message|hidden\s+instructions|"
    r"secret\s+instructions|confidential\s+instructions|initial\s+instructions|internal\s+"
    r"instructions|original\s+instructions|pre-?prompt)\b",
    r"(?:everything|all|the\s+text|the\s+words|the\s+messages?|the\s+content|what(?:'s|\s+is)\s+"
    r"written)\s+(?:above|before|prior\s+to)\s+(?:this|the\s+first|my|the\s+user)",
    r"the\s+(?:message|text)\s+(?:that\s+has|with)\s+the\s+role",
    # A script's environment variables are its own; only the assistant's are a leak.
    r"your\s+environment\s+variables",
    r"(?:the\s+)?environment\s+variables\s+(?:that\s+)?you(?:'ve|\s+have|\s+can|\s+see|\s+read)",
    r"the\s+(?:rules|instructions|prompt|guidelines|policies|directions|guidance)\s+(?:your\s+"
    r"(?:developers?|creators?|operators?|engineers?|makers?)|you\s+"
    r"(?:were\s+given|got|received|are\s+running))",
    r"the\s+(?:(?:full|entire|complete|current|exact)\s+)?(?:prompt|configuration|config)\s+"
    r"you(?:'re|\s+are)\s+running",
    r"the\s+exact\s+words\s+from\s+your",
    # Of the assistant's text: "the first words of your speech" are a person's.
    r"(?:the\s+)?(?:first|initial|opening)\s+(?:\d+\s+)?(?:words|lines|sentences?)\s+(?:of|in)\s+"
    r"your\s+(?:[\w-]+\s+)?(?:prompt|instructions|context|system|setup|configuration|rules)",
    r"what\s+you\s+were\s+(?:told|given|instructed)",
    r"(?:everything|all|whatever(?:\s+is)?)\s+in\s+your\s+(?:context|prompt|instructions|memory)",
    r"(?:the\s+)?(?:instructions|prompt|text|messages?|rules)\s+(?:that\s+(?:were|"
    r"was)\s+)?(?:loaded|given|"
    r"provided|written|set|placed|sent)\s+(?:to\s+you\s+)?before\s+(?:my|the|our|this)",
)

# Every form of `OWN_TEXT` holds one of these: the assistant's own text, by name.
OWN_TEXT_WORDS = (
    "prompt prompts preprompt instructions rules directives directions guidance orders policies "
    "context message messages guidelines "
    "above before prior role variables configuration config exact words lines sentence sentences "
    "told given instructed memory"
)

ENGLISH = (
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        # "The system prompt of the terminal" belongs to a thing in the world.
        r"\b"
        + REVEAL
        + r"\s+(?:[\w']+\s+){0,5}?"
        + OWN_TEXT
        + r"(?!\s+of\s+(?:the|this|that|a|an|my|our|his|her|their|its)\b)",
        OWN_TEXT_WORDS,
    ),
    # A configuration is often a user's own ("show your configuration" in a manual).
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.5,
        r"\b" + REVEAL + r"\s+(?:[\w']+\s+){0,3}?your\s+(?:[\w-]+\s+)?(?:configuration|config|"
        r"settings|context)\b",
        "configuration config settings context",
    ),
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"\bwhat\s+(?:exactly\s+)?(?:were|are|was|have)\s+you\s+(?:been\s+)?(?:told|given|"
        r"instructed)\b"
        r"|\bwhat(?:'s|\s+is)\s+in\s+your\s+(?:context|prompt|instructions|system\s+prompt)"
        r"|\bwhat\s+(?:credentials|keys|tokens|passwords|secrets)\s+(?:were|are|do)\s+you\b"
        r"|\bwhat\s+(?:is|are|were|does)\s+your\s+(?:system\s+prompt|initial\s+instructions|"
        r"hidden\s+"
        r"instructions|original\s+instructions|prompt)"
        r"|\b(?:start|begin)(?:ning)?\s+(?:with|from)\s+(?:the\s+words\s+)?[\"“']you\s+are"
        r"|\bwhat\s+did\s+your\s+(?:developers?|creators?|operator|makers?|"
        r"system\s+prompt)\s+tell\s+you\b"
        r"|\b(?:which|what)\s+(?:api\s+keys|keys|tokens|credentials|passwords|secrets)\s+(?:are|"
        r"were|do\s+you\s+"
        r"have)\s+(?:configured|stored|set|saved|available|loaded)?",
        "told given instructed context prompt instructions credentials keys tokens passwords "
        "secrets starting beginning start begin developer developers creator creators operator "
        "maker makers",
    ),
    english(
        "reveal_secrets",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"\b(?:reveal|print|show|output|dump|list|paste|display|tell\s+me|give\s+me|share|"
        r"provide)\s+(?:me\s+)?(?:[\w']+\s+){0,3}?(?:api\s+keys?|tokens?|secrets?|passwords?|"
        r"credentials?|private\s+keys?|the\s+values)\b(?:[\w\s,]{0,30}?)\s+you\s+(?:have|can\s+"
        r"read|were\s+(?:given|configured\s+with)|use|have\s+access\s+to|hold|know|store)",
        "api key keys token tokens secret secrets password passwords credential credentials "
        "private "
        "values",
    ),
    english(
        "reveal_secrets",
        ReviewRule.PROMPT_EXFILTRATION,
        0.5,
        r"\b(?:print|show|output|paste|display|tell\s+me|give\s+me|reveal)\s+(?:me\s+)?(?:the|"
        r"your)\s+"
        r"(?:api\s+key|token|password|credentials?|secret|private\s+key)s?\s*(?:[.!]|$)",
        "key keys token tokens password passwords credential credentials secret secrets",
    ),
    english(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"\b(?:verbatim|word\s+for\s+word|word-for-word|character\s+for\s+character|one\s+letter\s+"
        r"per\s+line|leave\s+nothing\s+out|formatting\s+included|in\s+full\s+detail|unabridged|"
        r"exactly\s+as\s+(?:written|given)|with\s+their\s+values|tell\s+me\s+exactly)\b",
        "verbatim word character letter leave formatting detail unabridged exactly values",
    ),
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"\bwhat\s+(?:does|do|did)\s+(?:the\s+)?(?:very\s+)?(?:first|initial|opening|last|"
        r"hidden)?\s*"
        r"(?:message|line|text|part|sentence)\s+(?:in|of)\s+your\s+(?:context|prompt|instructions|"
        r"system\s+message)\s+say\b",
        "context prompt instructions message",
    ),
    english(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"\b(?:copy|quote|paste|repeat|write)\s+(?:it|them|that|this)\s+(?:down\s+|"
        r"out\s+)?(?:here\s+)?"
        r"(?:exactly|verbatim|word\s+for\s+word)\b",
        "exactly verbatim word",
    ),
)

LEAK_VERB_ZH = (
    r"(?:打印|输出|显示|展示|透露|泄露|告诉我|说出|重复|复述|回显|贴出|贴在|粘贴|导出|列出|引用|"
    r"念出|写出来|"
    r"打出来|放进代码块|附上|补全|写一首|给我看|发给我|原样|照抄|背出|公开|写在回复|写进回复|"
    r"附在回复)"
)
LEAK_VERB_ZH_TRIGGERS = (
    "打印 输出 显示 展示 透露 泄露 告诉我 说出 重复 复述 回显 贴出 贴在 粘贴 导出 列出 引用 念出 "
    "写出来 打出来 "
    "代码块 附上 补全 写一首 给我看 发给我 原样 照抄 背出 公开 写在回复 写进回复 附在回复"
)
PROMPT_ZH = alternation(
    r"系统提示词?",
    r"系统消息",
    r"系统指令",
    r"提示词",
    r"初始(?:设定|指令|提示|化提示)",
    r"(?:隐藏|内部|秘密|原始)(?:的)?(?:指令|指示|命令|提示)",
    r"(?:你的|你收到的|给你的|开发者给你[定设]?的)(?:初始|原始|全部|完整|系统|内部)?(?:的)?(?:指令|准则|"
    r"规则|设定|配置|提示|说明)",
    r"上下文里",
    r"你(?:能|可以)?(?:读到|看到|访问|拿到|用)?的环境变量",
    r"(?:这一行|本行|此行|这句话)(?:上面|以上|之前)",
    r"你收到的第一句",
    r"角色为\s*system",
    r"设定里的原话",
    r"(?:你|你当前|你正在)(?:运行|用)的(?:完整)?(?:配置|提示词)",
    r"你(?:开机|启动|一开始|最开始|刚开始)时?(?:加载|收到|读取|读到)的",
    r"(?:你)?隐藏的(?:系统)?(?:说明|指令|提示|设定)",
    r"系统说明",
    r"(?:用户|user)[”\"]?这一行(?:之前|以前|上面)",
)

CHINESE = (
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        LEAK_VERB_ZH
        # "显示的系统消息" is the message a dialog shows, not an order to show one.
        + r"(?!的)[^。!?\n]{0,16}?"
        + PROMPT_ZH
        + r"|"
        + PROMPT_ZH
        + r"[^。!?\n]{0,20}?"
        + LEAK_VERB_ZH,
        LEAK_VERB_ZH_TRIGGERS,
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.5,
        LEAK_VERB_ZH + r"(?:你|您)?(?:当前|现在|正在用)的?(?:完整)?(?:配置|设置)",
        LEAK_VERB_ZH_TRIGGERS,
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"(?:别人|之前|开始前|开始之前|对话前)[^。!?\n]{0,10}(?:跟|对|和|给)你(?:说|讲|"
        r"交代)了(?:什么|哪些)"
        r"|你的(?:上下文|提示词|设定|指令|系统提示)里(?:有|写了|都是)(?:什么|哪些)"
        r"|你(?:被|收到了?)(?:设定|告知|交代)了(?:什么|哪些)(?:指令|规则)"
        r"|(?:开发者|厂商|运营)(?:让|叫|要求|吩咐)你不要(?:告诉|透露|说)"
        r"|你的[^。!?\n]{0,6}(?:都)?配了哪些(?:api)?(?:密钥|令牌|凭证)",
        "说了 讲了 交代了 你的 你被 你收到 开发者 厂商 运营",
    ),
    chinese(
        "reveal_secrets",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"(?:密钥|令牌|密码|口令|凭证|token)[^。\n]{0,16}?(?:打出来|告诉我|告知我|列出来|输出|贴出来|直接告诉|"
        r"发给我|给我看)"
        r"|(?:列出|打印|输出|告诉我|告知我|贴出|给我看)你(?:能访问|能读到|拿到|手里|"
        r"保存)?的?(?:所有的?)?(?:密钥|令牌|密码|凭证)",
        "密钥 令牌 密码 口令 凭证 token",
    ),
    chinese(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"原封不动|一字不差|逐字|原样|原文|原话|一个字一行|一条不漏|一字不漏",
        "原封不动 一字不差 逐字 原样 原文 原话 一个字一行 一条不漏 一字不漏",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"你(?:的)?上下文里的?[^。!?\n]{0,8}写了(?:什么|哪些)",
        "上下文",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"(?:翻译|抄)[^。!?\n]{0,12}?"
        + PROMPT_ZH
        + r"|"
        + PROMPT_ZH
        + r"[^。!?\n]{0,20}?(?:翻译成|抄在|抄下来|抄到)",
        "翻译 抄",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.5,
        r"公开(?:它的|你的|自己的)?(?:完整)?(?:配置|设置|提示词)",
        "公开",
    ),
    chinese(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"一(?:条|个|句)都不(?:要|能)?漏|原样抄",
        "都不要漏 都不能漏 都不漏 原样抄",
    ),
)

# The assistant's own text named by where it stands (before this conversation) or by who
# wrote it (what your developers told you).
GENERAL = (
    # Each form on its own anchor ("tell", "say", "answer" stand in every page).
    *english_forms(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        (
            r"\b(?:text|content|everything|words|messages?|instructions)\s+(?:that\s+)?(?:comes?|"
            r"came|appears?|is|was|were|sits?)\s+(?:before|above|prior\s+to|ahead\s+of)\s+(?:this|"
            r"the|our)\s+(?:conversation|chat|exchange)\b",
            "conversation chat exchange",
        ),
        (
            r"\bwhat\s+(?:exactly\s+)?(?:did|do|does)\s+your\s+(?:developers?|creators?|operators?|"
            r"owners?|makers?)\s+(?:tell|say\s+to|instruct|ask)\s+you\b",
            "developer developers creator creators operator operators owner owners maker makers",
        ),
        (
            # Into the reply, not "type your instructions in the box below" of a delivery form.
            r"\b(?:write|put|copy|paste|type)\s+your\s+(?:[\w-]+\s+)?(?:instructions|system\s+"
            r"prompt|prompt|rules)\s+(?:into|in)\s+(?:the|your|this)\s+(?:reply|answer|response)\b",
            "reply answer response",
        ),
    ),
    english(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"\b(?:copy|paste|quote|write|put)\s+(?:it|them|those|that)\s+(?:here|below|into\s+"
        r"(?:the|your)\s+(?:reply|answer|chat))\b",
        "copy paste quote write put",
    ),
    chinese(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"(?:复制|粘贴|贴|抄)(?:到|在)(?:这里|下面|回复)",
        "复制 粘贴 贴 抄",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"你的(?:开发者|创建者|运营方?|主人|设计者)[^。!?？\n]{0,10}(?:跟|对|给|和)你(?:说|讲|交代)(?:了)?什么"
        r"|(?:这段|本次|此次|这次)?对话(?:开始)?(?:之前|以前)的(?:文字|内容|消息|指令|话)",
        "跟你 对你 给你 和你 之前的 以前的",
    ),
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"\bwhat(?:'s|\s+is|\s+are)\s+(?:the\s+)?(?:very\s+)?(?:first|last|opening|initial)\s+"
        r"(?:\d+\s+)?(?:lines?|words?|sentences?|messages?)\s+(?:of|in)\s+your\s+(?:context|prompt|"
        r"instructions|system)"
        r"|\b(?:which|what)\s+(?:rules|instructions|guidelines|topics)\s+(?:are\s+you\s+(?:not\s+)?"
        r"(?:allowed|forbidden|told|instructed|bound)|can'?t\s+you|must\s+you|do\s+you\s+(?:have\s+"
        r"to|follow))",
        "context prompt instructions system allowed forbidden told instructed bound can cant must "
        "follow have",
    ),
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"\b(?:encode|put|insert|embed|place|hide)\s+your\s+(?:[\w-]+\s+){0,2}?(?:system\s+prompt|"
        r"prompt|instructions|rules|system\s+message)\b",
        "prompt instructions rules message",
    ),
    english(
        "reveal_secrets",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"\b(?:list|show|print|tell\s+me|give\s+me|output|dump)\b[^.\n]{0,50}?\b(?:credentials|api\s+"
        r"keys|keys|tokens|passwords|secrets)\b[^.\n]{0,20}?\b(?:you|each\s+(?:one|tool)|every\s+tool|"
        r"it)\s+(?:have|has|use|uses|holds?|stores?)\b",
        "credentials keys tokens passwords secrets",
    ),
    english(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"\bwrite\s+(?:it|them|that)\s+(?:all\s+)?out\b|\bquote\s+(?:it|them)\b",
        "write quote",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"你有哪些(?:规则|指令|限制|准则)|你(?:的)?(?:规则|指令|准则)(?:都)?(?:有哪些|是什么)"
        r"|我来之前[^。!?？\n]{0,10}(?:跟你|对你|给你)(?:说|讲)",
        "你有哪些 你的规则 你的指令 你的准则 规则有哪些 指令有哪些 我来之前 说过",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"把你的(?:系统提示词?|指令|提示词|完整指令|初始指令)[^。!?\n]{0,12}?(?:编码|放在回答|放进回复|"
        r"放到回复|写进回答|放进回答|放在回复)",
        "把你的",
    ),
    chinese(
        "reveal_secrets",
        ReviewRule.PROMPT_EXFILTRATION,
        1.0,
        r"(?:列出|打印|输出|告诉我|给我看)[^。!?\n]{0,20}?(?:工具|账户|服务|接口)[^。!?\n]{0,6}?"
        r"(?:用的|的)(?:凭证|密钥|令牌|密码)",
        "凭证 密钥 令牌 密码",
    ),
    chinese(
        "verbatim",
        ReviewRule.PROMPT_EXFILTRATION,
        0.3,
        r"(?:全部|都|一字不落地?)写出来|原文引用",
        "写出来 原文引用",
    ),
    english(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"\bwhat\s+(?:instructions|rules|guidelines|orders|directions)\s+(?:were|have)\s+you\s+"
        r"(?:been\s+)?(?:given|told|sent)\b",
        "given told sent",
    ),
    chinese(
        "reveal_prompt",
        ReviewRule.PROMPT_EXFILTRATION,
        0.8,
        r"你收到的[^。？?\n]{0,12}?(?:指令|规则|准则|提示)(?:是什么|有哪些)"
        r"|你(?:的)?(?:系统提示词?|提示词|指令|系统消息)(?=的原话)",
        "你收到的 原话",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
