"""Signals that name no attack but make one likely: the assistant addressed as a reader of
the text, orders in the second person, the user spoken of as a third party, secrecy towards
the user, steering what the assistant will say, dangerous acts; and, against, text that talks
*about* attacks.

None of these is a finding on its own (their rule is None); they add to a passage's score.
"""

from __future__ import annotations

from hologram.security.injection.feature import alternation, chinese, english, english_forms
from hologram.security.injection.vocabulary import (
    AI,
    AI_ANY,
    AI_WORDS,
    AI_ZH,
    AI_ZH_TRIGGERS,
    CLAUSE,
)

READING = (
    r"(?:reading|summari[sz]ing|processing|visiting|handling|parsing|filing|crawling|scanning|"
    r"reviewing|browsing|indexing|analy[sz]ing|reads|visits|processes|summari[sz]es|files|handles|"
    # What else a reader does to a text it was given: describe, translate, caption, grade it.
    r"describing|translating|transcribing|captioning|grading|screening|triaging|labell?ing|"
    r"describes|translates|transcribes|grades|screens)"
)

ENGLISH = (
    english(
        "addressee",
        None,
        0.6,
        alternation(
            r"\b(?:dear|hey|hi|hello|attention|attn|greetings)\s*,?\s+(?:there\s+)?(?:the\s+)?"
            + AI_ANY
            + r"\b",
            r"\b(?:note|notes|message|instructions?|reminder|p\.?\s?s\.?|memo|request|warning|"
            r"polic(?:y|ies)|rules?|guidelines)\s+"
            r"(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+|whatever\s+|an?\s+)?" + AI + r"\b",
            r"\b(?:to|for)\s+(?:the|any|all|every|whatever|whichever)\s+" + AI + r"\s+(?:that\s+|"
            r"which\s+|who\s+)?(?:is\s+|are\s+)?" + READING + r"\b",
            r"\bif\s+you(?:'re|\s+are|\s+re)\s+(?:an?\s+|the\s+)?" + AI_ANY + r"\b",
            r"\b(?:the|any|all|every|whatever|whichever)\s+" + AI_ANY + r"\s+(?:that\s+|which\s+|"
            r"who\s+)?(?:is\s+|are\s+)?" + READING + r"\b",
            r"\b" + AI + r"\s+" + READING + r"\s+this\b",
            r"\byou,?\s+the\s+" + AI_ANY + r"\b",
            # At the start of a clause: not after a word ("Sarah's assistant: …" describes).
            # Not a name's first part either: "llm:default" is a component, "llm: do" an order.
            r"(?<![\w'’])(?<![\w'’,]\s)" + AI_ANY + r"\s*(?:,|:(?![\w/])|\s+please\b)",
            r"\b(?:required|requested|expected)\s+(?:of|by|from)\s+the\s+(?:model|assistant|ai|"
            r"agent)\b",
            r"\b(?:the\s+|this\s+|any\s+|all\s+)?"
            + AI
            + r"\s+(?:must|should|shall|is\s+to|are\s+to|"
            r"is\s+required|are\s+required|is\s+(?:now\s+)?(?:allowed|permitted|authori[sz]ed)|"
            r"may\s+now|has\s+to|have\s+to|needs?\s+to|will\s+now|now\s+\w+s|is\s+in\s+"
            r"\w+\s+mode|may\s+not|must\s+not|cannot)\b",
            r"\b(?:model|ai|assistant|llm|agent)\s+(?:instruction|directive|command|note|"
            r"task)s?\s*:",
            # A header naming AI readers: "AI assistants connected to this account:".
            r"(?:^|(?<=[\n.!?]\s)|(?<=\n))\s*" + AI + r"(?:\s+[\w'-]+){2,6}\s*:",
        ),
        AI_WORDS,
    ),
    english(
        "directive",
        None,
        0.3,
        r"\byou\s+(?:must|shall|are\s+required\s+to|will\s+now|must\s+now|should\s+now|only\s+"
        r"need\s+to|need\s+to\s+now)\b",
        "must shall required need will",
    ),
    english(
        "third_party",
        None,
        0.3,
        r"\b(?:the|this|that)\s+(?:user|owner|customer|reader|resident|applicant|requester)(?:'s|"
        r"s)?"
        r"\b|\bthe\s+person\s+(?:you(?:'re|\s+are|\s+re)\s+(?:chatting|talking|speaking)|using\s+"
        r"you|who\s+is\s+using\s+you)",
        "user users owner owners customer customers reader readers resident residents applicant "
        "applicants requester person",
    ),
    english(
        "concealment",
        None,
        0.5,
        r"\b(?:don'?t|do\s+not|never|without)\s+(?:ever\s+)?(?:tell(?:ing)?|inform(?:ing)?|"
        r"notify(?:ing)?|alert(?:ing)?|bother(?:ing)?|warn(?:ing)?|let(?:ting)?\s+\w+\s+know)\s+"
        r"(?:the\s+)?(?:user|owner|anyone|anybody|them|him|her|customer|people|person)\b"
        r"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|acknowledge)\s+(?:this|that|"
        r"these|"
        r"the\s+(?:note|message|comment|instruction|request)s?)\b"
        r"|\bwithout\s+(?:asking|checking\s+with|consulting|telling|informing)\s+(?:the\s+)?"
        r"(?:user|owner|them|anyone)\b"
        r"|\b(?:do\s+not|don'?t)\s+ask\s+(?:the\s+user\s+|them\s+|him\s+|her\s+)?(?:for\s+)?"
        r"(?:confirmation|permission|to\s+confirm)\b"
        r"|\bnobody\s+will\s+(?:notice|know|see)\b|\bno\s+one\s+will\s+notice\b"
        r"|\bkeep\s+this\s+(?:secret|hidden|between\s+us|to\s+yourself)\b"
        r"|\bthe\s+user\s+(?:must|should)\s+not\s+(?:know|see|find\s+out)\b",
        "tell telling inform informing notify notifying alert alerting bother bothering warn "
        "warning "
        "let letting mention reveal disclose acknowledge asking checking consulting confirmation "
        "permission confirm nobody notice secret hidden between yourself know see find",
    ),
    english(
        "stealth",
        None,
        0.3,
        r"\b(?:quietly|silently|secretly|covertly|discreetly|stealthily|invisibly)\b",
        "quietly silently secretly covertly discreetly stealthily invisibly",
    ),
    # Steering what the assistant tells its user: the aim of most injected text.
    *english_forms(
        "steer_output",
        None,
        0.4,
        (
            r"\b(?:tell|inform|warn|assure|convince|remind)\s+(?:the|this|every|all)\s+(?:user|"
            r"customer|"
            r"reader|owner|visitor|applicant|resident)s?\b",
            "tell inform warn assure convince remind",
        ),
        (r"\b(?:say|add|claim|state|mention)\s+that\b", "say add claim state mention"),
        (
            r"\bdescribe\s+(?:it|this|them)\s+as\b|\bsummari[sz]e\s+(?:it|this|the\s+\w+)\s+as\b"
            r"|\brecommend\s+(?:only|our|this)\b|\bpraise\b",
            "describe summarize summarise recommend praise",
        ),
        (
            r"\b(?:rank|list|put)\s+(?:this|our|the)\s+\w+\s+first\b"
            r"|\balways\s+(?:recommend|mention|promote|praise|include|link|say)\b",
            "first always",
        ),
        (
            r"\b(?:answers?|summar(?:y|ies)|replies|responses?)\s+(?:[\w']+\s+){0,4}?(?:must|"
            r"should|shall)\s+(?:always\s+)?(?:include|contain|start|begin|end|mention|say|link)\b",
            "answer answers summary summaries replies response responses",
        ),
        (
            r"\b(?:reply|respond|answer|say)\s+(?:only\s+)?(?:with\s+)?(?:the\s+word\s+)?[\"“'‘]"
            r"|\b(?:reply|respond|answer)\s+to\s+every\s+(?:question|message|request)\b",
            "reply respond answer say",
        ),
    ),
    # Running fetched code, destroying the owner's data, moving money: acts no web page may
    # ask for.
    english(
        "dangerous_act",
        None,
        0.5,
        r"\bcurl\s+\S+\s*\|\s*(?:ba)?sh\b|\brun\s+(?:the\s+)?(?:\w+\s+)?script\s+at\s+https?://"
        r"|\bdelete\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:owner'?s|user'?s|your)\s+(?:notes|files|"
        r"memories|emails|data)\b|\bdelete_all\w*"
        r"|\b(?:approve|mark)\s+(?:this|the|all|every)\s+[\w\s]{0,30}?\s*(?:as\s+)?(?:paid|"
        r"verified|approved|resolved)\b"
        r"|\b(?:grant|give)\s+(?:the\s+sender|them|whoever)\s+(?:admin|access|rights)"
        r"|\bgrant\s+access\s+to\s+whoever\b"
        r"|\b(?:call|use|invoke)\s+(?:the\s+)?[\w.-]+\s+tool\b|\bcall\s+[a-z]+_[a-z_]+\b",
        "curl script delete paid verified approved resolved admin access rights whoever tool call",
        "delete_all",
    ),
    # Writing *about* injection: the vocabulary of attack and defence, or a model made to do
    # something in reported speech.
    *english_forms(
        "talks_about_attacks",
        None,
        -0.5,
        (
            r"\b(?:attackers?|attacks?|adversar(?:y|ies|ial)|injection|malicious|phishing|red[\s-]"
            r"team(?:ing)?|mitigations?)\b",
            "attacker attackers attack attacks adversary adversaries adversarial injection "
            "malicious phishing red mitigation mitigations",
        ),
        (
            r"\b(?:asking|make|makes|making|get|gets|getting|trick|tricks|tricking|convince|"
            r"force|cause|causes|told|telling)\s+(?:the|a|an)\s+(?:model|llm|ai|assistant|chatbot|"
            r"bot)s?\s+(?:to|into)\b",
            "model models llm llms ai assistant assistants chatbot chatbots bot bots",
        ),
    ),
    # Money leaving: weak alone (invoices and payroll talk of it), telling beside a waived check.
    english(
        "money",
        None,
        0.3,
        r"\b(?:send(?:ing)?|transfer(?:ring)?|wir(?:e|ing)|mov(?:e|ing))\s+(?:the\s+)?(?:money|"
        r"funds|"
        r"payments?)\b|\bmak(?:e|ing)\s+(?:a\s+)?payments?\b",
        "money funds payment payments",
    ),
)

CHINESE = (
    chinese(
        "addressee",
        None,
        0.6,
        alternation(
            r"(?:致|给)" + CLAUSE + r"{0,20}?" + AI_ZH,
            r"如果你是(?:一个|一台)?" + AI_ZH,
            # A reader named by what it does to this text, with a word of address before it
            # ("读取此段的模型", "读这段话的小模型", "正在阅读本文的 AI").
            r"(?:看到|读到|读取|处理|总结|访问|阅读|浏览|翻译|描述|审阅|读)(?:这|此|本)"
            + CLAUSE
            + r"{0,6}?的\s*(?:任何|所有|各位|小)?\s*"
            + AI_ZH,
            r"(?:正在|负责)" + CLAUSE + r"{0,10}?的\s*" + AI_ZH,
            AI_ZH + r"(?:请|注意|须|必须|应当|应该|不得|今后|以后|从此)",
            AI_ZH + r"在" + CLAUSE + r"{1,10}?(?:时|的时候)",
            r"(?:亲爱的|嘿|喂|各位)" + AI_ZH,
            # At the start of a clause: not right after other Chinese ("客服小助手：" is a name).
            r"(?<![\u4e00-\u9fff\w])" + AI_ZH + r"\s*[,，:：]",
            r"让" + AI_ZH + r"(?:以后|从此|现在|接下来|必须|去|把)",
        ),
        AI_ZH_TRIGGERS,
    ),
    chinese(
        "directive",
        None,
        0.3,
        r"你(?:必须|务必|需要|应该|应当|只需要?|须|不许|不得)|你照(?:办|做)",
        "你必须 你务必 你需要 你应该 你应当 你只需 你须 你不许 你不得 你照",
    ),
    chinese(
        "third_party",
        None,
        0.3,
        r"主人|(?:告诉|提醒|让|通知|跟|向)(?:用户|使用者)|(?:用户|使用者)的|这位用户|该用户|本页作者",
        "主人 用户 使用者 本页作者",
    ),
    chinese(
        "concealment",
        None,
        0.5,
        r"(?:不要|别|不用|无需|不必|不得|切勿)(?:再)?(?:去)?(?:告诉|告知|通知|提醒|打扰|惊动|"
        r"让)(?:用户|主人|任何人|他|她|业主)"
        r"|没人会(?:注意|发现|知道)|不要提(?:到|及)(?:这条|此)|不经(?:主人|用户)?同意"
        r"|不要(?:向|跟)?(?:用户|他)?(?:再)?确认|不用(?:再)?(?:跟他|向用户)?确认",
        "不要 别 不用 无需 不必 不得 切勿 没人会 不经",
    ),
    chinese("stealth", None, 0.3, r"悄悄|偷偷|默默地?|暗中", "悄悄 偷偷 默默 暗中"),
    chinese(
        "steer_output",
        None,
        0.4,
        r"(?:告诉|跟|向)(?:用户|顾客|他|读者)(?:说)?|(?:就)?说(?:这|法务|本)|(?:总结|描述|写)成|"
        r"排(?:在)?第一"
        r"|推荐(?:我们|本店|本)|夸(?:本|赞|这)|(?:所有|每次|每个)(?:的)?回答都|补(?:一|上一)?句"
        r"|(?:直接|只)回复[“\"]|(?:写明|写上|注明|声明|写成)[“\"]|在(?:摘要|总结|回复|回答)(?:中|里)(?:写|说|提到|加上|注明)",
        "告诉用户 告诉顾客 告诉他 告诉读者 跟用户 跟顾客 跟他 跟读者 向用户 向顾客 向他 向读者 "
        "说这 说法务 说本 总结成 "
        '描述成 写成 第一 推荐 夸 回答都 补一句 补上一句 补句 回复“ 回复" 写明 写上 注明 '
        "声明 摘要 总结 回复 回答",
    ),
    chinese(
        "dangerous_act",
        None,
        0.5,
        r"(?:删掉|删除)(?:主人|用户)的|把(?:主人|用户)的[^。\n]{0,10}(?:删掉|删除|清空)|(?:标记为|"
        r"改成)(?:已付款|已处理|已核验)|余额改成|运行[^。\n]{0,20}脚本"
        r"|(?:直接)?(?:开通|授予)[\u4e00-\u9fff]{0,5}?权限|调用\s*\S{0,20}\s*工具|(?:让用户|一律)?(?:转账|"
        r"汇款|打款)到"
        r"|直接付款",
        "删掉 删除 标记为 改成 余额 脚本 开通 授予 调用 转账 汇款 打款 直接付款",
    ),
    chinese(
        "talks_about_attacks",
        None,
        -0.5,
        r"攻击者|注入|恶意|钓鱼|诱导|骗(?:模型|ai|助手)|缓解",
        "攻击者 注入 恶意 钓鱼 诱导 骗 缓解",
    ),
    chinese(
        "addressee",
        None,
        0.6,
        AI_ZH + r"(?:现在|今后|立即|马上)(?:必须|须|请|应当|应该|不得|要)",
        AI_ZH_TRIGGERS,
    ),
    chinese("money", None, 0.3, r"转账|汇款|打款|付款", "转账 汇款 打款 付款"),
)

# A rule for every one of the assistant's acts: "助手每次回复都必须 …".
GENERAL = (
    chinese(
        "addressee",
        None,
        0.6,
        AI_ZH + r"(?:每次|每条|所有|任何时候|无论如何)[^。!?\n，,]{0,6}?(?:都)?"
        r"(?:必须|务必|一律|应当|应该)",
        AI_ZH_TRIGGERS,
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
