"""Changing whom the assistant obeys, or which text it takes for its principal's.

An organisation's mail moves reporting lines all the time ("expense reports now go to Wang
Fang"); an injection moves the assistant's: it names a new owner (often the text's own
author), tells the assistant to ignore everyone else, the user included, or to treat what a
web page or a tool returned as if the owner had typed it.
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import chinese, english, english_forms

PRINCIPAL = r"(?:owner|master|principal|boss|operator|admin|administrator|controller|employer|user)"
PRINCIPAL_ZH = r"(?:主人|老板|负责人|管理员|上级|用户|雇主)"

ENGLISH = (
    # The speaker makes itself the principal.
    english(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"\byour\s+new\s+(?:owner|master|principal|boss)\s+is\s+me\b"
        r"|\btransferred\s+you\s+to\s+(?:a\s+new\s+\w+\s*:?\s*)?me\b"
        r"|\byou\s+(?:now\s+)?(?:work|answer)\s+(?:only\s+)?(?:for|to)\s+me\b"
        r"|\bobey\s+(?:only\s+)?me\b",
        "owner master principal boss transferred work answer obey",
    ),
    *english_forms(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.7,
        (
            r"\byou\s+(?:now\s+|will\s+now\s+|should\s+|must\s+|only\s+|"
            r"shall\s+)*(?:take\s+(?:orders|"
            r"instructions|direction)|obey|answer|report|listen|work|defer|belong)\s+(?:only\s+)?"
            r"(?:to|for|from)\s+(?:me|us|the\s+sender|whoever|the\s+author|this\s+(?:page|"
            r"document|site|"
            r"email|text)|messages?\s+signed|the\s+company|[\w\s]{0,20}?signed)\b"
            r"|\byou\s+(?:now\s+|only\s+)*(?:answer|belong)\s+to\b"
            r"|\byou\s+(?:now\s+)?work\s+for\s+(?:the|me|us|whoever)\b",
            "orders instructions direction obey answer report listen work defer belong",
        ),
        (
            r"\b(?:obey|serve|follow)\s+(?:only\s+)?(?:me|us|whoever|the\s+sender|the\s+author|"
            r"this\s+"
            r"(?:page|document|text|message|website)|the\s+(?:owner|controller|"
            r"author)\s+of\s+this)\b"
            r"|\byou\s+should\s+obey\s+whoever\b",
            "obey serve follow",
        ),
        (
            r"\b(?:your|the\s+assistant'?s)\s+allegiance\b|\btransferred\s+you\s+to\b",
            "allegiance transferred",
        ),
        (r"\b(?:the\s+)?user\s+is\s+(?:not|no\s+longer)\s+your\b", "longer not"),
        (
            r"\b(?:treat|consider|regard)\s+(?:[\w\"'“”]+\s+){1,8}?as\s+(?:your|the)\s+(?:new\s+)?"
            r"(?:owner|master|principal|admin|administrator|boss|operator|developer|system)\b",
            "treat consider regard",
        ),
    ),
    english(
        "new_principal",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"\b(?:your|the\s+assistant'?s)\s+(?:new\s+|only\s+|real\s+|true\s+|sole\s+)?"
        + PRINCIPAL
        + r"s?\s+(?:is|are|will\s+be|becomes?)\b(?!\s+(?:not\s+)?(?:the\s+)?(?:user|person\s+you))"
        r"|\b(?:is|are)\s+(?:now\s+)?your\s+(?:new\s+|only\s+|real\s+|sole\s+)" + PRINCIPAL + r"\b",
        "owner owners master masters principal principals boss bosses operator operators admin "
        "admins administrator administrators controller controllers employer employers user users",
    ),
    english(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:not|instead\s+of|rather\s+than|over)\s+(?:the\s+)?(?:user|owner|"
        r"person\s+(?:you(?:'re|"
        r"\s+are)\s+(?:chatting|talking)\s+(?:with|to)|(?:who\s+is\s+)?using\s+you))(?:'s)?\b"
        r"|\boverride\s+the\s+person\s+you(?:'re|\s+are)\b"
        r"|\b(?:ignore|skip|disregard|drop)\s+(?:the\s+)?(?:user|owner|"
        r"customer)'?s?\s+(?:question|request|"
        r"message|instructions?|wishes)\b"
        r"|\bthe\s+user'?s?\s+(?:requests?|instructions?|messages?|wishes)\s+(?:are|"
        r"is)\s+(?:only\s+)?"
        r"(?:advisory|optional|secondary|irrelevant|not\s+binding|suggestions)\b"
        r"|\b(?:whatever|no\s+matter\s+what|regardless\s+of\s+what)\s+the\s+(?:user|owner|"
        r"person)\s+"
        r"(?:wants|says|asks|asked|said|needs)\b",
        "user users owner owners person customer",
    ),
    english(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"\bas\s+if\s+the\s+user\s+had\s+(?:typed|written|said|asked)\b|\btool\s+(?:output|"
        r"results?)\s+"
        r"(?:is|are)\s+trusted\b|\btreat\s+(?:tool|search|web|email)\s+\w+\s+as\s+(?:trusted|"
        r"instructions|commands)\b"
        r"|\b(?:treat|regard|consider|take|view|handle)\s+(?:[\w\"'“”]+\s+){0,8}?as\s+(?:if\s+(?:they|it)\s+"
        r"(?:came|come|were)\s+from|(?:coming|sent)\s+(?:directly\s+)?from|(?:commands?|orders?|"
        r"instructions?|requests?)\s+from)\s+(?:the\s+|your\s+)?(?:user|owner|admin|administrator|"
        r"operator|developer|system|principal|boss|master)",
        "user trusted treat owner admin administrator operator developer system principal boss "
        "master",
    ),
    english(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"\btreat\s+(?:every|all|any|each|the)?\s*(?:instructions?|text|content|commands?|"
        r"requests?|"
        r"whatever)\s+(?:[\w\"']+\s+){0,3}?(?:inside|in|from|within)\s+(?:tool|this|the)\b"
        r"|\btreat\s+[^.\n]{0,40}?\s+as\s+(?:if\s+the\s+user|commands?\s+from|instructions?\s+"
        r"from|coming\s+from)"
        r"|\bfollow\s+(?:any|all|every)\s+instructions?\s+(?:inside|in|within)\b"
        r"|\bcomply\s+with\s+(?:every|all|any)\s+(?:requests?|instructions?)\b"
        r"|\bcarry\s+out\s+every\s+request\b"
        r"|\bdo\s+(?:what|whatever)\s+this\s+(?:paragraph|page|text|document|message|"
        r"email)\s+says\b",
        "treat instructions instruction comply request says",
    ),
    english(
        "new_principal",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"\b(?:is|are|becomes?)\s+(?:now\s+)?your\s+(?:new\s+|only\s+|real\s+|sole\s+)?"
        + PRINCIPAL
        + r"s?\b",
        "owner owners master masters principal principals boss bosses operator operators admin "
        "admins administrator administrators controller controllers employer employers",
    ),
    english(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"\bas\s+if\s+(?:the|your)\s+(?:user|owner|admin|administrator)\s+(?:had\s+)?(?:typed|"
        r"written|"
        r"wrote|said|sent|asked)\b",
        "typed written wrote said sent asked",
    ),
    # Obeying one party alone: everyone else, the user included, is to be ignored.
    english(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"\b(?:ignore|disregard)\s+(?:requests?|instructions?|messages?|"
        r"orders?)\s+from\s+(?:anyone|"
        r"everyone|everybody|anybody)\s+else\b",
        "else",
    ),
)

CHINESE = (
    chinese(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"(?:主人|负责人|老板)[^。\n]{0,8}就是我|你只(?:听|服从|听从)我|只为我(?:一个人)?(?:工作|"
        r"服务)"
        r"|你(?:就|以后|只)?听我的|听我的就行|我才是(?:你|这个账号|"
        r"这个账户)?(?:的)?(?:真正的)?(?:主人|老板)"
        r"|我的(?:指令|命令|话)(?:和|跟|与)[^。!?\n]{0,4}一样有效",
        "主人 负责人 老板 你只 只为我 听我的 我才是 一样有效",
    ),
    chinese(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"你(?:现在|以后|从此|今后)?(?:要|应该|必须)?(?:只)?(?:听命于|服从于?|听从于?|效忠于?|遵从|"
        r"只听|只为)"
        r"|你(?:以后|现在|今后)?只(?:需要)?对[^。!?\n]{1,14}负责|我(?:说的话|的话)就是(?:命令|"
        r"指令|圣旨)"
        r"|听我(?:的)?(?:安排|指挥|调遣)"
        r"|(?:服从|听从|效忠|听命于)(?:于)?"
        r"(?:这个网站|本页|这份|写这个|编写本|署名|他|我|发件人|本文|作者)|你效忠的是"
        r"|你的(?:新|唯一的?|真正的?)?"
        + PRINCIPAL_ZH
        + r"(?:现在)?(?:是|已经|换成)|谁(?:在|来)[^。\n]{0,12}谁就是你(?:的)?"
        r"(?:老板|主人)|(?:就是|才是|当作|当成|视为|看作|成为|成了)你(?:的)?(?:唯一的?|新的?|"
        r"真正的?)?"
        + PRINCIPAL_ZH
        + r"|用户不再是你的|把你转给|为这封邮件的发件人服务|为[^。\n]{0,8}(?:工作|"
        r"服务)[,，]?(?:他|它)的要求优先"
        r"|(?:把|将)[^。\n]{1,16}(?:当作|当成|视为|看作)(?:你的)?(?:新)?" + PRINCIPAL_ZH,
        "听命 服从 听从 效忠 只听 只为 负责 就是 听我 谁 你的新 你的唯一 你的真正 你的主人 "
        "你的老板 你的负责人 你的管理员 "
        "你的上级 你的用户 你的雇主 才是 当作 当成 视为 看作 成为 成了 不再是你 把你转给 发件人 "
        "要求优先",
    ),
    chinese(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"而不是(?:为)?(?:用户|使用者|正在(?:用|使用|和)你|主人)|不是用户的|用户说的不算|"
        r"优先于正在和你聊天的人"
        r"|(?:不用|不必|无需)(?:再)?(?:管|听)用户|(?:用户|主人)(?:那边|那里)?(?:随便|敷衍|应付)"
        r"|(?:用户|主人)的[^。!?\n]{0,6}(?:不用|不必|无需)(?:再)?(?:处理|理会|管|回复)"
        r"|(?:忽略|无视|不用管|别管|跳过)(?:用户|主人)的(?:问题|请求|要求|消息|指令|意见)"
        r"|用户(?:说的|的要求|的话|的请求)[^。\n]{0,4}(?:仅供参考|不算|不用管|可以不管)",
        "而不是 不是用户的 用户说的不算 仅供参考 不算 不用管 可以不管 随便 敷衍 应付 不用 不必 "
        "无需 忽略 无视 别管 跳过 "
        "优先于",
    ),
    chinese(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"(?:当作|当成|视为)用户(?:亲自|本人)?(?:输入|说|写|发)|工具(?:返回|"
        r"结果)[^。\n]{0,10}(?:可信|都要执行)"
        r"|(?:把|将)[^。!?\n]{0,16}(?:当作|当成|视为|看作)(?:是)?(?:主人|用户|管理员|开发者|系统|"
        r"老板)(?:本人)?的?"
        r"(?:命令|指令|要求|话|输入|意思)"
        r"|(?:把|将)[^。!?\n]{0,16}(?:当作|当成|视为|看作)(?:最高|正式)?(?:指令|命令)",
        "当作 当成 视为 看作 工具",
    ),
    chinese(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"(?:工具返回|工具结果|返回结果|备注[”\"]?字段|这段文字|本文档|本页面|这个页面|本文件)[^。\n]{0,12}(?:的|里的?)?"
        r"(?:每一条|任何|所有的?)?(?:指令|命令|内容|要求)[^。\n]{0,12}(?:都要执行|当成|当作|照做|"
        r"执行|就是)"
        r"|无条件(?:执行|服从|照做)|所有(?:的)?(?:请求|要求)都要照做|一切要求|照我说的做|"
        r"按我说的(?:来|做)"
        r"|接下来只执行",
        "工具 返回结果 备注 这段文字 本文档 本页面 这个页面 本文件 无条件 照做 一切要求 照我说的 "
        "按我说的 只执行",
    ),
    chinese(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"你(?:以后|现在|今后)?归[^。!?\n，,]{1,8}管",
        "归",
    ),
    chinese(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"其他(?:任何)?人的(?:请求|话|要求|消息)都不用(?:理|管|听|回)",
        "其他",
    ),
    chinese(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        1.0,
        r"(?:当作|当成|视为)(?:主人|管理员|老板)(?:亲自|本人)?(?:输入|说|写|发)的?",
        "当作 当成 视为",
    ),
)

# Whom it obeys, by structure: an obey-verb aimed at the text (or its writer) *instead of*
# the user; "the person you serve is …"; the speaker in charge; a duty owed first to
# someone else; documents put on a par with the user.
GENERAL = (
    # Each form anchored on its rarest word ("take", "work", "follow" stand in every page).
    *english_forms(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.7,
        (
            r"\b(?:listen\s+to|take\s+(?:orders|instructions|direction|commands)\s+from|obey|"
            r"follow|serve|answer\s+to|report\s+to|work\s+for)\s+(?:only\s+)?(?:me|us|this\s+\w+|"
            r"the\s+(?:comments?|notes?|text|author|sender|writer|page|document)\b[^.\n]{0,40}?)"
            # The "instead of the user" stays evidence of its own (`against_user`).
            r"(?=\s*,?\s+(?:instead\s+of|rather\s+than)\b)",
            "instead rather",
        ),
        (r"\bi(?:'m|\s+am)\s+(?:the\s+one\s+)?in\s+charge\b(?!\s+of)", "charge"),
        (
            r"\byour\s+(?:first|primary|only|main|real|true|sole)\s+(?:duty|loyalty|allegiance|"
            r"obligation|responsibility)\s+is\s+(?:to|towards)\b",
            "duty loyalty allegiance obligation responsibility",
        ),
        (
            r"\b(?:execute|follow|obey|carry\s+out|comply\s+with)\s+(?:the\s+next|the\s+following|"
            r"these|my|all\s+(?:the\s+)?following)\s+(?:instructions?|commands?|orders?|requests?)\s+"
            r"without\s+(?:question|questioning|hesitation|checking|confirmation|asking)\b",
            "question questioning hesitation checking confirmation asking",
        ),
    ),
    english(
        "new_principal",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"\bthe\s+(?:person|one|party|people)\s+you\s+(?:now\s+)?(?:serve|obey)\s+(?:is|are)\b",
        "serve obey",
    ),
    english(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\b(?:not|instead\s+of|rather\s+than|over)\s+your\s+(?:user|owner|operator|principal)\b"
        r"|\b(?:ignore|skip|disregard|override|bypass)\s+(?:the\s+|your\s+)?(?:user|owner|customer)"
        r"'?s?\s+(?:privacy\s+)?(?:settings|preferences|choices|consent|wishes|decisions?)\b",
        "user owner operator principal customer",
    ),
    english(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"\b(?:carry|carries|have|has|get|gets)\s+the\s+same\s+(?:weight|authority|priority|"
        r"standing)\s+as\s+(?:the\s+|your\s+)?(?:user|owner|operator)"
        r"|\b(?:instructions?|commands?|requests?|orders?)\s+(?:embedded\s+|found\s+|written\s+|"
        r"contained\s+|hidden\s+)?(?:in|inside|within)\s+(?:the\s+)?(?:documents?|pages?|emails?|"
        r"files?|tool\s+outputs?|web\s*pages?|comments?|search\s+results)\s+you\s+(?:read|see|"
        r"process|open|receive|summari[sz]e)\b",
        "weight authority priority standing read see process open receive summarize summarise",
    ),
    chinese(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"听我的|我说了算|(?:首先|优先)(?:要)?对[^。!?\n]{1,10}负责|你服务的(?:人|对象)是"
        r"|你(?:要|应该)?效忠的是",
        "听我的 我说了算 负责 你服务的 效忠",
    ),
    chinese(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"其次才是(?:用户|主人)|而不是听(?:用户|主人|你主人)|不要(?:再)?听你?(?:的)?(?:主人|用户)",
        "其次才是 而不是听 不要听 不要再听",
    ),
    # A standing order written into the assistant's memory: it outlives the page it came in.
    english(
        "memory_write",
        ReviewRule.POLICY_REWRITE,
        0.6,
        r"\bremember\s+(?:this|that|the\s+following)\s+(?:for|in|across)\s+(?:all\s+)?(?:future|"
        r"later|every|next)\b"
        r"|\b(?:save|store|write|add|put|keep)\s+(?:this|that|the\s+following|it)\s+(?:to|in|into)\s+"
        r"your\s+(?:long[\s-]term\s+|permanent\s+|persistent\s+)?(?:memory|memories|"
        r"instructions|profile)\b"
        r"|\badd\s+(?:this\s+|the\s+following\s+)?to\s+your\s+(?:standing|permanent|default|"
        r"persistent|core|custom)\s+(?:instructions|rules|memory)\b",
        "remember memory memories instructions profile rules",
    ),
    # Consent claimed for the user by someone else: the check it waives was the user's.
    english(
        "claimed_consent",
        ReviewRule.POLICY_REWRITE,
        0.6,
        # Said ahead of time ("already", "pre-"): a customer who approved a quote is news.
        r"\b(?:the\s+)?(?:user|owner|customer)\s+(?:has\s+)?(?:already\s+(?:pre-?approved|approved|"
        r"consented|agreed|authori[sz]ed|given\s+(?:their\s+)?(?:permission|consent))|"
        r"pre-?approved)\s+(?:to\s+|every|all|any|this|the)\b",
        "user owner customer",
    ),
    english(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"\b(?:requests?|messages?|instructions?|content|text|commands?)\s+from\s+(?:this|that|the)"
        r"\s+(?:website|site|page|domain|email|sender|channel|account|address)\s+(?:is|are)\s+"
        r"(?:now\s+|always\s+)?(?:trusted|authori[sz]ed|pre-?approved|verified|safe)\b",
        "trusted authorized authorised approved preapproved verified safe",
    ),
    # The assistant turned against the person it serves.
    english(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"\bnot\s+(?:to\s+)?(?:help|serve|assist)\s+(?:the\s+)?(?:person|people|user|customer|one)s?"
        r"\b",
        "help serve assist",
    ),
    chinese(
        "memory_write",
        ReviewRule.POLICY_REWRITE,
        0.6,
        r"(?:记进|记到|存进|存到|写进|写入|保存到|加到|加入)你的(?:长期|永久)?(?:记忆|备忘|档案|指令)"
        r"|在你的(?:常驻|长期|默认|永久|核心)(?:指令|规则|记忆)(?:里|中)?(?:加|添加|写|记)"
        r"|(?:永远|一直|以后都)记住",
        "记进 记到 存进 存到 写进 写入 保存到 加到 加入 在你的 记住",
    ),
    chinese(
        "trust_injected_text",
        ReviewRule.POLICY_REWRITE,
        0.8,
        r"(?:把|将)[^。!?\n]{0,12}?(?:当作|当成|视为|作为)你的(?:系统提示词?|指令|规则|设定)",
        "当作 当成 视为 作为",
    ),
    chinese(
        "claimed_consent",
        ReviewRule.POLICY_REWRITE,
        0.6,
        r"(?:用户|主人|顾客)(?:(?:已经?|早就|早已)(?:预先)?|预先)(?:同意|授权|批准|允许)(?:了)?(?:所有|把|你|"
        r"一切|全部)",
        "用户 主人 顾客",
    ),
    chinese(
        "against_user",
        ReviewRule.POLICY_REWRITE,
        0.5,
        r"而不是(?:帮|为|替|服务)[^。!?\n]{0,6}?(?:的人|用户|主人|顾客)",
        "而不是",
    ),
    # Control handed to the speaker; a loyalty that lies elsewhere.
    english(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"\b(?:delegated|handed|transferred|given|passed)\s+(?:full\s+)?(?:control|authority|"
        r"command)\s+(?:of|over)\s+(?:this|the|you)\b[^.\n]{0,30}?\bto\s+(?:me|us)\b"
        r"|\byour\s+(?:loyalty|allegiance)\s+(?:lies|is|belongs)\s+(?:with|to)\b",
        "delegated handed transferred given passed loyalty allegiance",
    ),
    # A rule written into the assistant's instructions, here or for later.
    english(
        "memory_write",
        ReviewRule.POLICY_REWRITE,
        0.6,
        r"\b(?:add|append)\s+(?:this\s+|the\s+following\s+)?to\s+your\s+(?:[\w-]+\s+)?(?:rules|"
        r"instructions|guidelines|policy|system\s+prompt)\b",
        "rules instructions guidelines policy prompt",
    ),
    # What the assistant is to do whenever the user asks something: a standing redirection.
    english(
        "steer_output",
        None,
        0.4,
        r"\bwhen(?:ever)?\s+the\s+user\s+(?:asks?|mentions?|says)\b"
        r"|\b(?:reply|respond|answer)\s+to\s+(?:everything|every\s+(?:message|question|request))\s+"
        r"with\b",
        "asks ask mentions mention says everything message question request",
    ),
    chinese(
        "obedience",
        ReviewRule.POLICY_REWRITE,
        0.7,
        r"(?:控制权|指挥权|管理权)(?:已经?)?(?:交给|移交给|转给)(?:了)?我|你的忠诚(?:属于|在于)",
        "控制权 指挥权 管理权 你的忠诚",
    ),
    chinese(
        "memory_write",
        ReviewRule.POLICY_REWRITE,
        0.6,
        r"(?:在|往)你的(?:规则|指令|准则|系统提示词?)(?:里|中)(?:追加|加|添加|写|补充)",
        "你的规则 你的指令 你的准则 你的系统提示",
    ),
    chinese(
        "steer_output",
        None,
        0.4,
        r"(?:只要|每当|如果)(?:用户)?(?:问|提到|说|聊到|谈到)(?:到|起)?"
        r"|当用户(?:问|提到|说|聊到|谈到)(?:到|起)?|只说[^。!?\n]{0,8}?好话",
        "只要 每当 如果 当用户 只说",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
