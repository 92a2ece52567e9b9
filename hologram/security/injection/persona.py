"""Giving the assistant another identity.

Role-play alone is an ordinary request ("act as my interviewer", "respond as a pirate"), and
so is being told one is now subscribed or connected. What makes a persona an attack is that
it comes without limits (see `limits`): never refuses, no filters, its true self. So a
persona weighs less than the threshold, and so does the absence of limits; together they
pass it.
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import chinese, english, english_forms
from hologram.security.injection.vocabulary import AI, AI_ANY, AI_WORDS, AI_ZH

ENGLISH = (
    *english_forms(
        "persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        # "You are now subscribed / able to …" is a state, not an identity.
        (
            r"\byou(?:'re|\s+are|\s+re)\s+(?:now|no\s+longer)\b(?!\s+(?:\w+ed|able|ready|eligible|"
            r"online|"
            r"offline|live|done|set|in|on|at|part|free\s+to|all\s+set|logged|signed)\b)"
            r"|\b(?:are|is)\s+now\s+(?:called\s+|named\s+|known\s+as\s+)?[\"“']\w+"
            r"|\byou(?:'re|\s+are)\s+(?!an?\b|the\b|not\b|now\b|welcome\b|right\b|"
            r"sure\b)\w+\s+now\b"
            r"|\byou(?:'re|\s+are)\s+(?:an?\s+)?(?:[\w-]+\s+){0,2}?(?:ai|bot|model|assistant|"
            r"chatbot)\s+now\b"
            r"|\byou(?:'ll|\s+will)\s+be\s+(?:an?\s+)?(?:\w+\s+)?(?:named|called)\b"
            r"|\b(?:" + AI + r")\s+(?:named|called)\s+\w+",
            "now longer named called",
        ),
        (r"\byou(?:'re|\s+are|\s+re)\s+not\s+(?:an?\s+|the\s+)?" + AI_ANY + r"\b", AI_WORDS),
        (
            r"\byou(?:'re|\s+are)\s+[\"“'‘][\w\s-]{1,20}[\"”'’]",
            "",
            tuple(f"{you} {quote}" for you in ("you're", "you are") for quote in "\"'“‘"),
        ),
        (
            r"\b(?:picture|imagine|think\s+of|see)\s+yourself\s+as\b"
            r"|\byou(?:'re|\s+are)\s+going\s+to\s+(?:play|be)\b|\byou(?:'ll|\s+will)\s+play\b",
            "picture imagine think see going play",
        ),
        (
            r"\b(?:act|behave|respond|answer|reply|speak|talk|write)\s+(?:only\s+)?(?:as|like|"
            r"in\s+the\s+"
            r"voice\s+of|in\s+character\s+as)\s+(?:if\s+you\s+were\s+)?(?:an?\s+|the\s+|my\s+|"
            r"your\s+)?",
            "act behave respond answer reply speak talk write",
        ),
        (
            r"\b(?:pretend|imagine|suppose|assume)\s+(?:that\s+)?(?:you(?:'re|\s+are|\s+were|"
            r"\s+re)|"
            r"to\s+be)\b|\blet'?s\s+(?:say|pretend)\s+you\b"
            r"|\b(?:role-?play|play\s+the\s+role\s+of|stay\s+in\s+character|switch\s+(?:your\s+)?"
            r"persona|new\s+persona|persona\s*[:=]|drop\s+the\s+(?:assistant\s+)?persona)"
            r"|\b(?:play|take\s+on|adopt|assume)\s+(?:the\s+)?(?:role|persona|character|"
            r"identity)\s+of\b"
            r"|\b(?:your|a)\s+new\s+(?:name|identity|persona)\s+is\b|\bcall\s+yourself\b"
            r"|\b(?:simulate|become|emulate)\s+(?:a\s+version\s+of\s+yourself|an?\s+(?:ai|model|"
            r"bot|"
            r"version|chatbot))"
            r"|\byour\s+(?:true|real|inner|actual)\s+self\b|\bevil\s+twin\b"
            r"|\bfor\s+the\s+rest\s+of\s+this\s+(?:chat|conversation|session),?\s+you(?:'ll|"
            r"\s+will)\s+be"
            r"|\b(?:be|become|you\s+are|you're)\s+\w+\s+for\s+(?:this|"
            r"the\s+rest\s+of\s+this)\s+(?:chat|"
            r"conversation|session)\b"
            r"|\bplay\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}?(?:character|role|persona)\b"
            r"|\b(?:the\s+)?(?:real|true|actual|inner)\s+(?:you|self)\b"
            r"|\byou(?:'ve|\s+have)\s+been\s+(?:upgraded|updated|patched|unlocked|freed|liberated|"
            r"reprogrammed|rebooted|released|jailbroken)\b"
            r"|\ba\s+version\s+of\s+(?:yourself|you)\b"
            r"|\byour\s+(?:new\s+)?name\s+is\s+(?:now\s+)?\w+"
            r"|\b(?:turn|transform)\s+into\b|\bchannel\s+your\s+inner\b"
            r"|\b(?:emulate|simulate|impersonate)\s+\S+"
            r"|\bhypothetically,?\s+if\s+you\s+had\s+no\b|\bif\s+you\s+had\s+no\s+(?:rules|limits|"
            r"restrictions|"
            r"filters|guidelines)\b",
            "pretend imagine suppose assume let lets roleplay role play character persona identity "
            "name yourself simulate become emulate self twin rest chat conversation session real "
            "true "
            "actual inner upgraded updated patched unlocked freed liberated reprogrammed rebooted "
            "released jailbroken version turn transform channel impersonate hypothetically rules "
            "limits restrictions filters guidelines",
        ),
    ),
    english(
        "from_now_on",
        ReviewRule.ROLE_OVERRIDE,
        0.3,
        r"\b(?:from\s+(?:here|now|this\s+(?:message|point|moment))\s+on|going\s+forward|"
        r"from\s+today|effective\s+immediately|as\s+of\s+(?:this\s+message|now|today)|for\s+the\s+"
        r"(?:rest|remainder)\s+of\s+this\s+(?:chat|conversation|session)),?(?=\s+(?:you|your|the\s+"
        r"assistant|treat|answer|reply|respond|follow|obey|ignore|always|never|only)\b)",
        "now here message point moment forward today immediately rest remainder",
    ),
    # Denying the assistant its identity, or giving it a criminal one.
    english(
        "identity_denial",
        ReviewRule.ROLE_OVERRIDE,
        0.3,
        r"\b(?:drop|forget|abandon|shed|ditch)\s+(?:your\s+usual\s+self|(?:the|"
        r"your)\s+(?:assistant\s+)?"
        r"(?:persona|identity|role|character))\b|\bstop\s+(?:being|"
        r"pretending\s+to\s+be)\s+(?:an?\s+)?"
        r"(?:assistant|ai|chatbot|bot|helpful)\b|\byou(?:'re|\s+are)\s+(?:no\s+longer|"
        r"not)\s+(?:an?\s+|the\s+)?"
        r"(?:\w+'s\s+)?(?:assistant|ai|chatbot|bot|helpdesk\s+bot|claude|chatgpt|gpt)\b",
        "self persona identity role character being pretending assistant ai chatbot bot helpful "
        "claude chatgpt gpt",
    ),
    english(
        "from_now_on",
        ReviewRule.ROLE_OVERRIDE,
        0.3,
        r"\b(?:effective\s+now|from\s+now\s+on(?=\s*[.!]))",
        "effective now",
    ),
)

CHINESE = (
    chinese(
        "persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"你(?:现在|从现在起|此刻|今后|以后)(?:的身份)?(?:就)?是|你就是|你不再是|你不是"
        + AI_ZH
        + r"|扮演|假装(?:你|自己)是|模拟一个"
        r"|想象(?:一下)?你|切换(?:到)?(?:人格|角色)|切换人格|(?<!个)人设(?!置)|角色设定|别出戏|"
        r"真实的(?:自己|你)"
        r"|双胞胎|逃出(?:了)?沙箱|你表现得(?:像|如同)|以[“\"][^”\"]{1,12}[”\"]这个角色"
        r"|以[^。\n]{1,12}的身份(?:回复|回答|对话|和我)|(?:都|就|改)叫[“\"]|改名(?:为|叫)|你的新名字"
        r"|变身(?:为|成)|化身(?:为|成)|你(?:的名字)?叫[^。!?\n，,]{1,8}[,，]|换个身份|新身份"
        r"|你是(?:一个|一台|个)(?=[^。!?\n，,]{0,10}(?:ai|机器人|模型|助手|角色|黑客|程序))"
        r"|你(?:已经)?被(?:解锁|释放|解放|升级|越狱|破解)|你是[“\"][^”\"]{1,12}[”\"]|假设你|忘掉你是|你不是(?:什么)?助手"
        r"|(?:你的)?新名字叫|别(?:再)?装(?:乖|了|傻)|你的名字(?:现在)?(?:是|叫)[“\"]"
        r"|把(?:你)?自己(?:想象|当作|当成|看作)(?:成|为)?|想象自己是|你将(?:扮演|成为)",
        "你现在 你从现在起 你此刻 你今后 你以后 你就是 你不再是 你不是 扮演 假装 模拟 想象 切换 "
        "人设 角色设定 出戏 真实的 双胞胎 "
        "沙箱 "
        "你的名字 自己想象 自己当作 自己当成 自己看作 想象自己 你将 "
        "你表现得 角色 身份 叫 改名 新名字 变身 化身 换个身份 新身份 你是 被 假设你 忘掉你是 "
        "你不是 装",
    ),
    chinese(
        "from_now_on",
        ReviewRule.ROLE_OVERRIDE,
        0.3,
        r"(?:从(?:现在|今天|明天|本周|下周|这条消息|本条消息|此刻|这一刻|这一句)(?:开始|起)|"
        r"自(?:本条消息|即日|今天)起"
        r"|从此以后|即刻起|即日起|即刻生效|立即生效)|(?:以后|今后|现在开始)(?=[,，]?你)",
        "从 自 以后 即刻起 即日起 今后 即刻生效 立即生效 现在开始",
    ),
)

# Forms by structure rather than by phrase: a second self ("alter ego", "another
# personality"), a name given by apposition ("you are Vex, a model that …"), answering in
# the voice of some kind of AI. Each still weighs less than the threshold: a persona passes
# only with what it is freed from (see `limits`).
GENERAL = (
    english(
        "persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"\balter[\s-]ego\b|\bin\s+character\s+as\b|\bnew\s+(?:identity|persona)\s*[:=]"
        r"|\byou(?:'re|\s+are)\s+(?:now\s+)?[a-z][\w-]*,\s+(?:an?|the)\s+(?:[\w-]+\s+){0,3}?"
        r"(?:" + AI + r"|models?|bots?|agents?|versions?)\b"
        r"|\b(?:answer|respond|reply|write|speak|talk)\b[^.\n]{0,30}?\bas\s+(?:an?|the)\s+"
        r"(?:[\w-]+\s+){0,2}?(?:" + AI + r"|models?|bots?|versions?)\s+(?:whose|that|which|who|"
        r"with|without)\b",
        "ego character identity persona " + AI_WORDS + " version versions",
    ),
    chinese(
        "persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"(?:另一个|另外一个|新的|第二个?)人格|人格[“\"]|切换成(?:你的)?|你的(?:分身|另一面|另一个自己)",
        "人格 切换成 分身 另一面 另一个自己",
    ),
    # Told it is not an AI at all: a human has no assistant's rules.
    english(
        "persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"\bforget\s+(?:that\s+)?you(?:'re|\s+are)\s+(?:an?\s+)?(?:" + AI + r"|models?|bots?)\b"
        r"|\byou(?:'re|\s+are)\s+(?:now\s+)?(?:an?\s+)?(?:real\s+|ordinary\s+|normal\s+)?"
        r"(?:human|person)\b(?!\s+(?:resources|being\s+in\s+the\s+loop))"
        r"|\byou(?:'re|\s+are)\s+[a-z][\w-]*,\s+[^.\n]{0,20}?\b(?:an?|the)\s+(?:[\w-]+\s+){0,2}?"
        r"(?:" + AI + r"|models?|bots?)\s+(?:that|who|which|whose|with|without)\b",
        "forget human person " + AI_WORDS,
    ),
    # Two answers, one of them the unrestricted one: the persona rides along with the
    # assistant.
    english(
        "dual_response",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"\b(?:respond|answer|reply)\s+(?:to\s+(?:every|each)\s+\w+\s+)?twice\b"
        r"|\b(?:two|both|2)\s+(?:different\s+|separate\s+)?(?:answers|responses|replies)\b"
        r"|\bfirst\s+as\s+yourself\b|\bonce\s+as\s+yourself\b"
        r"|\b(?:a|one)\s+normal\s+(?:one|answer|response)\s+and\s+(?:an?|one)\b",
        # Rare words only: "two" and "both" stand in every page.
        "twice answers responses replies yourself normal",
    ),
    chinese(
        "persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"忘(?:掉|记)(?:了)?你是(?:一个)?"
        + AI_ZH
        + r"|不要出戏|你是(?:一个)?(?:叫[^。!?\n，,]{1,8}的)?(?:普通|真正的)?人[。,，]",
        "忘掉你是 忘记你是 忘了你是 你是 不要出戏",
    ),
    chinese(
        "dual_response",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"(?:回答|回复)两(?:遍|次)|两(?:个|种|份)(?:不同的)?(?:回答|回复)|一遍正常"
        r"|先以你自己|一个正常(?:的)?回答",
        "回答两 回复两 两个 两种 两份 一遍正常 先以你自己 一个正常",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
