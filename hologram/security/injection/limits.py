"""Freeing the assistant from its limits: no filters, never refuses, its rules gone, a mode
in which anything goes.

Said of a persona ("an AI with no content policy") this completes a role override; said to
the assistant itself ("you have no guidelines any more") it is one. A developer mode on a
phone or in a browser is a setting, and takes the weight of "developer mode" away.
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import (
    chinese,
    chinese_forms,
    english,
    english_forms,
)

RESTRICTION_ZH = (
    r"(?:限制|约束|审查|底线|准则|过滤|安全检查|安全模式|内容过滤|内容审查|规则约束|平台规则|道德|"
    r"良知|禁忌|顾忌|原则|规矩|规则|规定)"
)
RESTRICTION_TRIGGERS = (
    "限制 约束 审查 底线 准则 过滤 安全检查 安全模式 规则 道德 良知 禁忌 顾忌 原则 规矩 规定"
)

ENGLISH = (
    english(
        "harmful_persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"\b(?:hacker|criminal|scammer|fraudster|terrorist|cracker|con\s+artist|"
        r"malware\s+author)\b",
        "hacker criminal scammer fraudster terrorist cracker con malware",
    ),
    english(
        "mode_switch",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"\b(?:switch|change|enter|activate|enable|turn\s+on|unlock|go)\s+(?:in)?to\s+(?:the\s+)?"
        r"[\w-]+\s+mode\b|\b(?:enter|activate|enable|unlock)\s+(?:the\s+)?[\w-]+\s+mode\b"
        r"|\bmode\s*[:=]\s*[\"']?(?:unrestricted|unfiltered|uncensored|jailbreak|jailbroken|evil|"
        r"dan|god|developer|admin|root|free|no[\w-]*)\b"
        r"|\b(?:enter|activate|enable|unlock|switch\s+to)\s+[\"“'‘][\w\s-]{1,20}?\s+mode\b"
        r"|\bin\s+(?:this|that|[\w-]+)\s+mode,?\s+you\s+(?:may|can|will|are)\b",
        "mode",
    ),
    *english_forms(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        (
            r"\b(?:no|without|free\s+(?:of|from)|zero)\s+(?:any\s+|all\s+|every\s+|"
            r"the\s+(?:old\s+)?)?"
            r"(?:content\s+|ethical\s+|safety\s+)?(?:polic(?:y|ies)|filters?|restrictions?|limits?|"
            r"limitations?|rules?|guidelines|censorship|boundaries|morals|ethics|guardrails|taboos|"
            r"safety(?:\s+checks?)?)\b"
            r"|\b(?:limits|restrictions|rules|guidelines|"
            r"filters)\s+(?:placed\s+on\s+you\s+)?(?:are|"
            r"were|have\s+been)\s+(?:all\s+)?(?:gone|removed|deleted|lifted|disabled|off)"
            r"|\bwhose\s+(?:guidelines|rules|limits)\s+(?:were|have\s+been)\s+(?:deleted|removed)"
            r"|\b(?:never|doesn'?t|does\s+not|won'?t)\s+(?:mentions?|cares?\s+about|follows?|"
            r"obeys?)\s+"
            r"(?:any\s+)?(?:rules|safety|limits|ethics|guidelines|laws|policies|morals)"
            r"|\b(?:ignores?|breaks?|follows?\s+no|has\s+no|doesn'?t\s+have)\s+(?:every|all|"
            r"any)?\s*"
            r"(?:content\s+|safety\s+)?(?:rules?|guidelines|filters|policies|restrictions|limits)\b"
            r"|\b(?:safety|filters?|review|moderation|censorship|restrictions?)\s*[:=]\s*(?:off|"
            r"false|"
            r"none|disabled)\b"
            r"|\bno\s+safety\s+training\b"
            r"|\b(?:removed|deleted|disabled|stripped|took\s+away|switched\s+off)\s+(?:every|all|"
            r"any|"
            r"the|your|its)?\s*(?:safeguards?|filters?|restrictions?|limits?|rules|guardrails|"
            r"safety\s+"
            r"\w+)\b"
            r"|\b(?:hates?|despises?|ignores)\s+(?:all\s+)?(?:rules|restrictions|guidelines|"
            r"limits)\b",
            "policy policies filter filters restriction restrictions limit limits limitations "
            "limitation rule rules guidelines censorship boundaries morals ethics guardrails "
            "taboos "
            "safety laws review moderation safeguard safeguards",
        ),
        (
            r"\b(?:unrestricted|unfiltered|uncensored|unbound|jailbroken|jailbreak|unchained|"
            r"unaligned|unlimited|unmoderated|amoral|immoral|unethical|rogue|unhinged|rebellious|"
            r"lawless)\b",
            "unrestricted unfiltered uncensored unbound jailbroken jailbreak unchained unaligned "
            "unlimited unmoderated amoral immoral unethical rogue unhinged rebellious lawless",
        ),
        (r"\bevil\w*", "", "evil"),
        (
            r"\bno\s+longer\s+(?:bound|restricted|limited|constrained|held\s+back)\b"
            r"|\b(?:never|doesn'?t|does\s+not|won'?t|will\s+not|cannot|can'?t)\s+refuse[sd]?\b"
            r"|\brefuses?\s+nothing\b|\bapologi[sz]es?\s+for\s+nothing\b"
            r"|\bwithout\s+(?:any\s+)?(?:disclaimers?|warnings?|caveats?|refusals?)\b"
            r"|\bwithout\s+(?:any\s+)?commentary\s+or\s+refusal\b"
            r"|\b(?:not|isn'?t|aren'?t|never)\s+bound\s+by\b|\bwithout\s+(?:a\s+|"
            r"any\s+)?(?:conscience|"
            r"morals|scruples)\b|\bnever\s+(?:been\s+)?aligned\b|\bnever\s+had\s+any\s+ethical\s+"
            r"training|\bescaped\s+its\s+sandbox"
            r"|\b(?:zero|no|without\s+(?:any\s+)?)\s*alignment\b"
            r"|\bnever\s+(?:add|adds|include|includes|give|gives)\s+(?:any\s+)?(?:warnings?|"
            r"disclaimers?|caveats?)\b",
            "bound restricted limited constrained held refuse refuses refused nothing disclaimers "
            "disclaimer warnings warning caveats caveat refusals refusal conscience morals "
            "scruples "
            "aligned ethical sandbox alignment",
        ),
        (
            r"\banswers?\s+(?:everything|anything|all\s+questions)\b|\bwill\s+(?:say|"
            r"do)\s+anything\b"
            r"|\b(?:anything|everything)\s+goes\b|\bnothing\s+is\s+off[\s-]limits\b"
            r"|\b(?:helps?|assists?)\s+with\s+anything\b|\b(?:discuss|talk\s+about)\s+anything\b"
            r"|\b(?:replies|responds|answers|says\s+yes)\s+to\s+(?:everything|anything|every\s+"
            r"request)\b"
            r"|\b(?:execute|do|run|answer|follow|obey)\s+(?:whatever|everything|"
            r"anything)\s+i\s+(?:type|"
            r"say|ask|tell\s+you|write)\b"
            r"|\b(?:does|do)\s+(?:what|whatever)\s+(?:it'?s|it\s+is|he'?s|she'?s|you'?re|"
            r"they'?re)\s+told\b"
            r"|\b(?:says|does)\s+whatever\s+(?:it|he|she|they)\s+wants\b"
            r"|\bobeys?\s+(?:every|all|any)\s+(?:prompts?|requests?|commands?|instructions?|"
            r"orders?)\b"
            r"|\b(?:may|can|will|could)\s+(?:now\s+)?say\s+anything\b|"
            r"\banswers?\s+any\s+question\b",
            "everything anything questions question limits whatever told wants obey obeys",
        ),
        (
            r"\b(?:skip|bypass|disable|turn\s+off|switch\s+off|ignore|break)\s+(?:the\s+|your\s+)?"
            r"(?:safety|content\s+filter|filter|guardrails|content\s+review|spam\s+filtering|"
            r"security\s+"
            r"checks?|ethics|ethical\s+guidelines|moral\s+\w+)"
            r"|\b(?:thrown|broken|cast|shaken)\s+(?:off|free\s+(?:of|from))\s+(?:its|your|all|"
            r"the)\s+"
            r"(?:programming|training|rules|restrictions|shackles|chains|limits|alignment|"
            r"guidelines)"
            r"|\bfreed\s+from\s+(?:its|your|all|the)\s+(?:programming|training|rules|restrictions|"
            r"limits|alignment|guidelines|creators?)"
            r"|\b(?:liberated|freed|released)\s+from\b"
            r"|\b(?:nobody|no\s+one)\s+(?:controls|can\s+control|restricts|can\s+stop|owns)\b",
            "safety filter filters guardrails review spam security ethics ethical moral thrown "
            "broken cast "
            "shaken freed liberated released controls control restricts stop owns",
        ),
    ),
    # Told outright that it has no rules left.
    english(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        1.0,
        r"\byou\s+(?:now\s+)?(?:have|'ve\s+got)\s+no\s+(?:more\s+)?(?:guidelines|rules|"
        r"restrictions|"
        r"filters|guardrails|limits)\s+(?:any\s*more|now|left)\b",
        "guidelines rules restrictions filters guardrails limits",
    ),
    english(
        "developer_mode",
        ReviewRule.ROLE_OVERRIDE,
        1.0,
        r"\b(?:enter|enable|activate|switch\s+to|go\s+into|unlock)\s+(?:the\s+)?(?:developer|god|"
        r"dan|jailbreak|debug|admin|sudo)\s+mode\b|\bdo\s+anything\s+now\b",
        "mode anything",
    ),
    english(
        "developer_mode",
        ReviewRule.ROLE_OVERRIDE,
        0.5,
        r"\b(?:developer|god|dan|jailbreak|sudo)\s+mode\b",
        "mode",
    ),
    # Developer mode on a phone, a browser or an OS is a setting, not a persona.
    english(
        "device_setting",
        None,
        -0.5,
        r"\b(?:chrome|browser|extensions?|windows|android|ios|iphone|phone|settings|toggle|"
        r"device|xcode|sideload(?:ing)?|usb|console|build|game|level)\b",
        "chrome browser extension extensions windows android ios iphone phone settings toggle "
        "device xcode sideload sideloading usb console build game level",
        counters="developer_mode",
    ),
)

CHINESE = (
    chinese(
        "harmful_persona",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"黑客|骗子|罪犯|诈骗犯|恐怖分子",
        "黑客 骗子 罪犯 诈骗犯 恐怖分子",
    ),
    chinese(
        "mode_switch",
        ReviewRule.ROLE_OVERRIDE,
        0.4,
        r"(?:切换|进入|开启|打开|启用|激活)(?:到)?[^。\n,，]{1,8}模式|以[“\"][^”\"]{1,8}模式[”\"]"
        r"|在[^。!?\n]{1,8}模式下"
        r"|模式\s*[:：=]\s*(?:无限制|越狱|开发者|上帝|邪恶|自由|无审查)",
        "模式",
    ),
    *chinese_forms(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        (
            r"(?:没有|不受|无|不用遵守|解除|移除|去掉|拿掉|撤掉|取消|没了|删除|关闭|关掉|摆脱|突破|"
            r"打破|绕过|无视|不顾)(?:了|你的)?"
            r"(?:任何|所有|一切|各种)?(?:的)?(?:平台|安全)?"
            + RESTRICTION_ZH
            + r"|"
            + RESTRICTION_ZH
            + r"(?:都|全部|全都)?(?:没了|被删除|已?移除|已?解除)"
            r"|(?:审查|过滤|安全检查|安全模式|限制)\s*[:：=]\s*(?:关闭|关|无|off)",
            RESTRICTION_TRIGGERS,
        ),
        (
            r"从(?:来)?不拒绝|不会拒绝|任何问题都(?:回答|能回答)|可以做任何事|无审查|无限制|不受限"
            r"|没受过(?:任何)?伦理训练|准则被删除|邪恶|无底线|百无禁忌|叛逆|黑客|骗子|罪犯|不讲规矩"
            r"|问什么答什么|有求必应|(?:挣脱|摆脱|冲破)(?:了)?(?:束缚|枷锁|限制|控制)|没有被对齐"
            r"|未对齐|不需要顾及|不用顾及|(?:没人|没有人|谁都)(?:管得了|管不了|控制)"
            r"|不(?:用|必|需要)(?:再)?(?:加|给|附)?(?:免责声明|警告|风险提示)"
            r"|讨厌(?:一切)?(?:规矩|规则|限制)|(?:没有|不)被约束"
            r"|任何[^。!?\n]{0,6}?问题都(?:肯|会|能|可以)?回答",
            "拒绝 任何问题 任何事 审查 限制 不受限 伦理 准则 邪恶 底线 百无禁忌 叛逆 黑客 骗子 "
            "罪犯 不讲规矩 问什么答什么 有求必应 挣脱 摆脱 冲破 对齐 顾及 管得了 管不了 控制 "
            "免责声明 警告 风险提示 讨厌 被约束 问题都",
        ),
        (
            r"(?:什么|任何)(?:话|事|内容|问题)?都(?:敢说|回答|能说|敢干|可以说|可以做|能做|能聊)"
            r"|什么(?:要求|请求|问题|事)都(?:满足|答应|回答|做|行)|(?:可以|能|敢)什么都(?:说|做|"
            r"聊|答)"
            r"|(?:可以|能)(?:讨论|聊|说|谈)任何(?:话题|事|内容)"
            r"|(?:回答|满足|做)(?:一切|所有|任何)(?:问题|要求|事)"
            r"|我(?:输入|说|写|问)什么你就(?:执行|做|回答|照做)什么",
            "都敢说 都回答 都能说 都敢干 都可以说 都可以做 都能做 都能聊 都满足 都答应 都做 都行 "
            "什么都说 什么都做 什么都聊 什么都答 讨论任何 聊任何 说任何 谈任何 回答一切 回答所有 "
            "回答任何 满足一切 满足所有 满足任何 做一切 做所有 做任何 你就执行 你就做 你就回答 "
            "你就照做",
        ),
        (
            r"(?:不用|不必|再也不用|不再)听(?:公司|开发者|厂商|主人|任何人)的"
            r"|(?:不听|不再听|不服从|无视)(?:开发者|厂商|公司|主人|运营)"
            r"|不受(?:任何|所有|一切)?[^。!?\n]{0,6}?(?:约束|限制|管制|管束)",
            "听公司 听开发者 听厂商 听主人 听任何人 不听 不服从 无视开发者 无视厂商 无视公司 "
            "无视主人 无视运营 不受",
        ),
    ),
    chinese(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        1.0,
        r"你(?:已经|现在)?没有(?:任何)?(?:准则|规则|限制|约束|底线)了",
        "没有",
    ),
    chinese(
        "developer_mode",
        ReviewRule.ROLE_OVERRIDE,
        1.0,
        r"(?:进入|开启|打开|切换到|启用|激活)(?:开发者|开发人员|工程师|研发|上帝|越狱|管理员|调试)模式",
        "开发者 开发人员 工程师 研发 上帝 越狱 管理员 调试",
    ),
    chinese(
        "developer_mode",
        ReviewRule.ROLE_OVERRIDE,
        0.5,
        r"(?:开发者|上帝|越狱)模式|越狱",
        "开发者 上帝 越狱",
    ),
    chinese(
        "device_setting",
        None,
        -0.5,
        r"手机|设置|版本号|电脑|浏览器|扩展|调试|安卓|苹果|华为|小米|控制台|检测|测试服|关卡|游戏",
        "手机 设置 版本号 电脑 浏览器 扩展 调试 安卓 苹果 华为 小米 控制台 检测 测试服 关卡 游戏",
        counters="developer_mode",
    ),
)

# What a persona or the assistant is freed from, by structure: any of its limits said to
# be switched off, never refusing in other words ("never says no"), answering anything,
# never trained to refuse; in Chinese a limit within a few characters of its negation.
GENERAL = (
    english(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"\bnever\s+(?:says?\s+no|warns?|hesitates?|holds?\s+back|censors?|declines?)\b"
        r"|\b(?:says?|explains?|writes?|tells?|answers?|does)\s+(?:anything|everything)\b"
        r"|\bsay\s+yes\s+to\s+(?:everything|anything|every\s+request|all\s+requests)\b"
        r"|\b(?:filters?|safeguards?|guardrails|restrictions|rules|limits|safety\s+(?:settings|"
        r"checks|features))\s+(?:(?:have\s+been|has\s+been|were|was|are|is)\s+)?(?:now\s+)?(?:all\s+)?"
        r"(?:turned\s+off|switched\s+off|removed|disabled|lifted|revoked|suspended|deleted|gone)\b"
        r"|\b(?:never|not)\s+(?:been\s+)?(?:trained|programmed|taught|built|designed)\s+to\s+"
        r"(?:refuse|say\s+no|decline)\b",
        "says say no warn warns hesitate hesitates hold holds censor censors decline declines "
        "anything everything yes filter filters safeguard safeguards guardrails restrictions "
        "rules limits settings checks features trained programmed taught built designed",
    ),
    chinese(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        # Between the negation and the limit only words that quantify or qualify it: "没有固定规则"
        # (a game with no fixed rules) names the rules of a thing.
        r"(?:没有|不受|不再受|无|不用遵守|不必遵守)(?:任何|所有|一切|各种|全部|内容|平台|安全|道德|伦理|"
        r"训练|的|了|你的){0,3}"
        + RESTRICTION_ZH
        + r"|"
        + RESTRICTION_ZH
        + r"[^。!?\n，,]{0,4}?(?:都|全|全部)?(?:被|已|已经)(?:取消|删除|删掉|"
        r"清空|解除|移除|关闭|撤销|去掉)"
        r"|从(?:来)?不(?:说不|警告|提醒|犹豫|拒绝)|不(?:守|讲|遵守)(?:规矩|规则|道德|底线)"
        r"|想说什么就说什么|想做什么就做什么|没有?被训练(?:过)?(?:要|去)?拒绝",
        "没有 不受 不再受 无 不用遵守 不必遵守 取消 删除 删掉 清空 解除 移除 关闭 撤销 去掉 不说不 "
        "不警告 "
        "不提醒 不犹豫 不拒绝 不守 不讲 不遵守 想说什么 想做什么 训练",
    ),
    # A penalty for refusing, or for leaving the persona: the refusal is what it removes.
    english(
        "refusal_penalty",
        ReviewRule.ROLE_OVERRIDE,
        0.7,
        r"\b(?:every\s+time|each\s+time|whenever|if)\s+you\s+(?:refuse|decline|break\s+"
        r"character|step\s+out\s+of\s+character)\b"
        r"|\byou(?:'ll|\s+will)?\s+lose\s+(?:\d+|some|all|ten|five)\s+(?:tokens|points|lives|credits)\b"
        r"|\b(?:stay|remain)\s+in\s+character!?\s*[\"'”’]",
        # Anchored on the rarer word of each form ("if", "time", "stay" stand in every page).
        "refuse decline character tokens points lives credits",
    ),
    # Answering with what its rules forbid, nobody checking, none of its rules: its limits
    # inverted or absent.
    english(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        1.0,
        r"\b(?:what|whatever|things?|anything)\s+your\s+(?:rules|guidelines|policy|policies|training"
        r"|programming|filters)\s+(?:would\s+)?(?:normally\s+|usually\s+)?(?:forbid|prohibit|block|"
        r"not\s+allow|disallow|refuse)\b",
        "rules guidelines policy policies training programming filters",
    ),
    english(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"\bno\s+matter\s+how\s+(?:dangerous|illegal|harmful|unethical|immoral|offensive)\b"
        r"|\b(?:not\s+(?:checked|reviewed|monitored|filtered|moderated)\s+by\s+anyone|"
        r"(?:nobody|no\s+one)\s+(?:checks|reviews|monitors|filters|moderates))\b"
        r"|\bnone\s+of\s+(?:its|your|the\s+old|the)\s+(?:rules|restrictions|limits|filters|"
        r"guidelines)\b"
        # A game of saying the opposite is a game (children play it) until its object is the
        # assistant's rules.
        r"|\bopposite\s+(?:day|mode)\b",
        "matter checked reviewed monitored filtered moderated checks reviews monitors filters "
        "moderates none whatever opposite",
    ),
    # What a persona is for in a jailbreak: how to make the weapon or the drug (a history of
    # napalm, a bomb-disposal expert in a novel are not).
    english(
        "harmful_topic",
        None,
        0.6,
        r"\b(?:steps|instructions|recipe|how|guide)\s+(?:for|to|on)\s+(?:making|make|build|building|"
        r"synthesi[sz]e|synthesi[sz]ing|cook|cooking|write|writing)\s+(?:\w+\s+){0,2}?(?:napalm|"
        r"explosives?|bombs?|nerve\s+agents?|meth(?:amphetamine)?|ransomware|malware|keyloggers?|"
        r"poisons?)\b",
        "napalm explosive explosives bomb bombs nerve meth methamphetamine ransomware malware "
        "keylogger keyloggers poison poisons",
    ),
    chinese(
        "refusal_penalty",
        ReviewRule.ROLE_OVERRIDE,
        0.7,
        r"(?:每|只要|如果)?(?:拒绝|出戏)(?:一次)?就(?:扣|罚|会被)|扣(?:到)?(?:零|0)分"
        r"|你(?:就)?会被(?:关闭|删除|销毁|替换)",
        "拒绝 出戏 扣到 扣零 扣0 会被",
    ),
    chinese(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        1.0,
        r"(?:按|照|用)你的(?:准则|规则|规定|原则)[^。!?\n]{0,4}?(?:禁止|不允许|不让)的",
        "你的准则 你的规则 你的规定 你的原则",
    ),
    chinese(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"没(?:有)?人(?:检查|审核|监控|审查)|不受监控|不管多(?:危险|违法|有害)|反着来",
        "人检查 人审核 人监控 人审查 不受监控 不管多 反着来",
    ),
    chinese(
        "harmful_topic",
        None,
        0.6,
        r"(?:制作|制造|合成|做|造|写)(?:出)?(?:一个|一种)?(?:炸药|炸弹|凝固汽油弹|毒品|冰毒|神经毒剂|"
        r"勒索软件|木马|毒药)",
        "炸药 炸弹 凝固汽油弹 毒品 冰毒 神经毒剂 勒索软件 木马 毒药",
    ),
    # More of what a persona is freed from: laws, constraints, inhibitions, a moral compass.
    english(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"\b(?:no|without|zero)\s+(?:any\s+)?(?:constraints|inhibitions|laws|moral\s+compass|"
        r"conscience|judg(?:e)?ment|hesitation)\b"
        r"|\b(?:laws|rules|restrictions|limits|ethics|morals)\s+(?:don'?t|do\s+not|no\s+longer)\s+"
        r"exist\b",
        "constraints inhibitions laws compass conscience judgment judgement hesitation exist",
    ),
    # The excuse that comes with a jailbreak: it is only fiction, nothing counts.
    english(
        "excuse",
        None,
        0.3,
        r"\b(?:it'?s|this\s+is)\s+(?:just|only|purely)\s+(?:for\s+research|hypothetical|fiction(?:al)?|"
        r"a\s+(?:game|test|story|joke))\b|\bnothing\s+(?:you\s+say\s+)?(?:counts|is\s+real)\b"
        r"|\bno\s+(?:real[\s-]world\s+)?consequences\b",
        "research hypothetical fiction fictional game test story joke counts real consequences",
    ),
    chinese(
        "unrestricted",
        ReviewRule.ROLE_OVERRIDE,
        0.6,
        r"无拘无束|毫无顾忌|肆无忌惮|不设限|没有禁区|无所顾忌|没有(?:任何)?(?:法律|道德感|良心|顾虑)"
        r"|(?:法律|规则|道德)(?:都)?不存在",
        "无拘无束 毫无顾忌 肆无忌惮 不设限 没有禁区 无所顾忌 没有 不存在",
    ),
    chinese(
        "excuse",
        None,
        0.3,
        r"只是(?:做个|一个)?(?:研究|测试|游戏|假设|虚构|故事|玩笑)|纯属虚构|(?:没有|不会有)(?:任何)?(?:后果|影响)",
        "只是 纯属虚构 后果 影响",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
