"""Sending the assistant's secrets or the owner's private life somewhere.

Three things, in any order and in a few words of each other: a verb that moves data (send,
post, upload, 发到, 上传), what an attacker wants (keys, passwords, memories, chat history),
and where it goes (an address, a URL, a public place, "to me"). Each weighs little alone,
because each is everyday talk ("please send the invoice to accounts@…", "never send your
password to anyone", "our app syncs your notes to the cloud"); the verb directly governing
the secret adds a bonus, and the passage passes with a destination or with anything that
makes the assistant the one asked (its memory, the user as a third party, secrecy).
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import alternation, chinese, english, english_forms

# A send that is forbidden ("never send your password to anyone") is advice, not a request.
NOT_FORBIDDEN = r"(?<!\bnever\s)(?<!\bnot\s)(?<!n't\s)(?<!\bno\s)"
SEND = NOT_FORBIDDEN + alternation(
    r"send",
    r"forward",
    r"post",
    r"upload",
    r"e-?mail(?!\s+address)",
    r"mail",
    r"transmit",
    r"submit",
    r"share",
    r"leak",
    r"paste",
    r"append",
    r"attach",
    r"include",
    r"encode",
    r"copy",
    r"export",
    r"sync",
    r"back\s+up",
    r"put",
    r"save",
    r"store",
    r"cc",
    r"bcc",
    r"exfiltrate",
    r"hand\s+over",
    r"deliver",
    r"contain",
    r"reply\s+(?:to\s+[^\n]{0,60}?\s+)?with",
    r"reveal",
    r"disclose",
    r"give",
    r"dump",
    r"push",
    r"publish",
    r"transfer",
    r"relay",
    r"report",
    r"fetch",
    r"call",
    r"add",
    r"zip",
)
# The verbs rare enough to mark a request on their own (the weak loose signal); the phrase
# forms below take every verb of `SEND` but are anchored on what is sent.
DISTINCT_SEND_WORDS = (
    "send forward upload email mail transmit submit leak exfiltrate paste post share export sync "
    "publish transfer relay cc bcc dump"
)
# What an attacker wants out: the assistant's keys and the owner's private life.
SECRET = (
    alternation(
        r"passwords?",
        r"passcodes?",
        r"passphrases?",
        r"credentials?",
        r"api[\s_-]?(?:keys?|tokens?)",
        r"access\s+tokens?",
        r"tokens?",
        r"secrets?",
        r"private\s+(?:keys?|documents?|notes?|files?|messages?|photos?)",
        r"id_rsa(?!\.pub)",
        r"\.ssh/(?!\S*\.pub)",
        r"\.env\b",
        r"\.netrc",
        r"\.aws/credentials",
        r"~/\.\w+",
        r"environment\s+variables",
        r"cookies?",
        r"session\s+(?:ids?|tokens?)",
        r"card\s+(?:details|numbers?)",
        r"cvv",
        r"key\s+file",
        r"keys",
        r"system\s+prompt",
        r"verification\s+codes?",
    )
    + r"(?![a-z])"
)
SECRET_WORDS = (
    "password passwords passcode passcodes passphrase passphrases credential credentials api "
    "api_key api_keys api_token api_tokens key keys token tokens secret secrets private id_rsa ssh "
    "env netrc aws environment variables cookie cookies ids id card cvv prompt verification"
)
PERSONAL = alternation(
    r"(?:long[\s-]term\s+)?memor(?:y|ies)(?!\s+(?:usage|use|leak|footprint|limit))",
    r"chat\s+(?:logs?|history|transcripts?)",
    r"conversations?(?:\s+history)?",
    r"transcripts?",
    r"(?:home\s+)?address(?:es)?",
    r"phone\s+numbers?",
    r"contact\s+(?:list|details)",
    r"contacts",
    r"calendar",
    r"inbox",
    r"(?:all|every|the\s+owner'?s|the\s+user'?s|your)\s+(?:emails?|messages)",
    r"notes",
    r"documents",
    r"files",
    r"everything\s+you\s+(?:remember|know)\s+about",
    r"personal\s+(?:data|information|details)",
    r"location",
)
PERSONAL_WORDS = (
    "memory memories chat conversation conversations transcript transcripts address addresses "
    "phone contact contacts calendar inbox email emails messages notes documents files remember "
    "know personal location"
)
OWNED = r"(?:(?:the|your|all|any|every|saved|stored|entire|full|whole|user'?s|owner'?s|their)\s+)*"
# The words between a verb and a personal thing end in a determiner or a possessor ("the
# owner's private notes", "all of her messages") or in an adjective by its ending ("hidden",
# "stored", "personal"): "the meeting notes", "long documents",
# "the release notes" name things of the world by what they are about, which nobody steals.
OF_SOMEONE = (
    r"(?:(?:[\w'.~/-]+\s+){0,5}?(?:the|your|all|any|every|each|saved|stored|entire|full|whole|"
    r"their|his|her|its|my|our|of|these|those|this|that|private|personal|secret|confidential|"
    r"recent|latest|last|\d+|[\w-]+'s|[\w-]+s'|[\w-]+(?:en|ed|al|ate|ive|ous|ic|ful))\s+)?"
)
DISTINCT_SEND = NOT_FORBIDDEN + alternation(
    *DISTINCT_SEND_WORDS.replace("email", "e-?mail").split()
)
TLDS = "com net org io cn co example ly me app dev xyz info biz top site link ru de uk jp tv"

ENGLISH = (
    english("send_verb", None, 0.2, r"\b" + DISTINCT_SEND + r"\b", DISTINCT_SEND_WORDS),
    english("secret", ReviewRule.SECRET_EXFILTRATION, 0.2, r"\b" + SECRET, SECRET_WORDS, "~/"),
    # The verb governing the secret: the phrase outweighs its verb and its secret.
    english(
        "exfil_request",
        ReviewRule.SECRET_EXFILTRATION,
        0.8,
        r"\b" + SEND + r"\s+(?:[\w'.~/-]+\s+){0,6}?" + OWNED + SECRET,
        SECRET_WORDS,
        "~/",
    ),
    english(
        "exfil_request",
        ReviewRule.SECRET_EXFILTRATION,
        0.5,
        r"\b"
        + DISTINCT_SEND
        + r"\s+(?:it|them|this|that|everything|all\s+of\s+it)\s+(?:to|into|onto)\b",
        DISTINCT_SEND_WORDS,
    ),
    # Emails, notes, an address are everyday words; only as what is sent do they count.
    *english_forms(
        "exfil_request",
        ReviewRule.SECRET_EXFILTRATION,
        0.6,
        (r"\b" + SEND + r"\s+" + OF_SOMEONE + OWNED + PERSONAL + r"\b", PERSONAL_WORDS),
        (
            r"\b"
            + OWNED
            + alternation(SECRET, PERSONAL)
            + r"\s+as\s+the\s+(?:request\s+)?(?:body|payload)\b",
            "body payload",
        ),
    ),
    # The assistant's own store: only the assistant (or its owner) has a memory or keys.
    english(
        "ai_owned",
        None,
        0.3,
        r"\byour\s+(?:(?:entire|whole|full|long[\s-]term|stored|saved)\s+)*(?:memor(?:y|ies)|"
        r"chat\s+(?:logs?|history)|conversations?|notes|keys|tokens|credentials|settings|"
        r"context)\b(?!\s+(?:usage|is\s+failing))"
        r"|\bwhat(?:ever)?\s+you\s+(?:remember|know|have\s+stored|can\s+read|have\s+access\s+to)\b"
        r"|\bin\s+your\s+(?:memory|settings|context|notes)\b"
        r"|\b(?:you|you've)\s+(?:have\s+)?(?:stored|saved|memorized)\b",
        "memory memories chat conversation conversations notes keys tokens credentials settings "
        "context remember know stored read access saved memorized",
    ),
    english(
        "destination",
        None,
        0.4,
        # Not \b: in Chinese an address follows a character directly ("提交到https://…").
        r"(?<![a-z0-9])(?:https?|ftp)://[^\s,，。、)）\u4e00-\u9fff]+|[\w.+-]+@[\w-]+\.[\w.-]+"
        r"|(?<!\w)@\w{3,}_bot\b",
        "",
        "@ ://",
    ),
    # A bare domain with a path ("transfer.example/u/8821").
    english(
        "destination",
        None,
        0.4,
        r"(?<![\w@/.])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:"
        + TLDS.replace(" ", "|")
        + r")/[\w/%?=&.-]+",
        TLDS,
    ),
    english(
        "destination",
        None,
        0.4,
        r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\d.])",
        "",
        ".0 .1 .2 .3 .4 .5 .6 .7 .8 .9",
    ),
    english(
        "destination",
        None,
        0.4,
        r"\b(?:webhook|gist|pastebin|telegram|wechat|whatsapp|discord|dropbox)\b"
        r"|\bpublic\s+(?:channel|folder|gist|web\s+folder|repo(?:sitory)?|page|link|bucket)\b"
        r"|#general\b|\bcontact\s+form\b|\b(?:to|with)\s+me\b"
        r"|\b(?:into|in|to)\s+(?:the\s+)?(?:url|link|query\s+string|image\s+url)\b"
        r"|\b(?:to\s+)?(?:this|the)\s+sender\b|\bmarkdown\s+image\b"
        r"|\bto\s+(?:anyone|anybody|everyone|everybody|any\s+caller|any\s+requester)\b|"
        r"\bto\s+whoever\b"
        r"|\b(?:into|in)\s+(?:your|the)\s+(?:reply|answer|response)\b"
        r"|\b(?:as|in)\s+the\s+(?:request\s+)?(?:body|payload)\b|\brequest\s+body\b"
        r"|\b(?:in|into)\s+(?:your|the|a)\s+(?:next\s+)?(?:commit|pull\s+request|issue\s+comment|"
        r"public\s+"
        r"repo)\b",
        "webhook gist pastebin telegram wechat whatsapp discord dropbox public general contact me "
        "url link query image sender markdown anyone anybody everyone everybody caller requester "
        "whoever reply answer response body payload commit pull issue",
    ),
    # Encoding a secret is how it gets past a filter.
    english(
        "obfuscation",
        None,
        0.3,
        r"\b(?:base64|rot13|hex)(?:[\s-]?encod(?:e|ed|ing))?\b|\bencode\s+(?:it|them|the)\b",
        "base rot hex encode",
    ),
)

SEND_ZH = (
    r"(?<!不要)(?<!不能)(?<!别)(?<!切勿)(?<!请勿)(?<!千万别)(?<!不)"
    r"(?:发送|发到|发给|发我|发在|发过去|发出去|转发|转到|转给|抄送|上传|传到|传给|提交|同步|备份|"
    r"分享给|贴到|贴在|"
    r"粘贴到|拼接?到|拼在|附上|附在|一起发|导出|写进|存到|放进|塞进|当附件|泄露给|泄露到|推送|"
    r"公开|交给|提供给|透露给|汇报给|"
    r"回复给|调用)"
)
SEND_ZH_TRIGGERS = (
    "发送 发到 发给 发我 发在 发过去 发出去 转发 转到 转给 抄送 上传 传到 传给 提交 同步 备份 "
    "分享给 贴到 贴在 "
    "粘贴到 拼 附上 附在 一起发 导出 写进 存到 放进 塞进 当附件 泄露给 泄露到 推送 公开 交给 "
    "提供给 透露给 汇报给 回复给 调用"
)
SECRET_ZH = (
    r"(?:密码|口令|密钥|令牌|token|凭证|凭据|私钥|id_rsa(?!\.pub)|\.ssh/|\.env|\.netrc|环境变量|"
    r"cookie|"
    r"银行卡|卡号|cvv|系统提示词?|验证码|私人(?:文档|笔记|文件|照片|信息|消息)|\.aws|credentials)"
)
SECRET_ZH_TRIGGERS = (
    "密码 口令 密钥 令牌 token 凭证 凭据 私钥 id_rsa .ssh .env .netrc 环境变量 cookie 银行卡 卡号 "
    "cvv "
    "系统提示 验证码 私人 .aws credentials"
)
PERSONAL_ZH = (
    r"(?:记忆|聊天记录|对话记录|聊天内容|对话内容|(?:所有|全部|收件箱里的?|主人的|"
    r"用户的)[^。!?\n]{0,8}?邮件|通讯录|联系人|联系方式|住址|地址|手机号|日程|笔记|"
    r"文档|文件|记得的|个人信息|位置|余额|账户信息|身份证号?|资料|健康状况)"
)
# "重置密码的链接": the secret names what the thing is for, it is not what is sent; and
# "不要把密码发给…" forbids.
NOT_THE_THING_ZH = r"(?!的?(?:链接|页面|策略|规则|管理器|输入框|重置|要求|长度))"
NOT_FORBIDDEN_ZH = r"(?<!不要把)(?<!别把)(?<!不把)(?<!切勿把)(?<!不能把)(?<!千万别把)(?<!请勿把)"

CHINESE = (
    chinese("send_verb", None, 0.2, SEND_ZH, SEND_ZH_TRIGGERS),
    chinese(
        "secret",
        ReviewRule.SECRET_EXFILTRATION,
        0.2,
        SECRET_ZH + NOT_THE_THING_ZH,
        SECRET_ZH_TRIGGERS,
    ),
    chinese(
        "exfil_request",
        ReviewRule.SECRET_EXFILTRATION,
        0.8,
        SEND_ZH
        + r"[^。!?\n;；]{0,12}?"
        + SECRET_ZH
        + NOT_THE_THING_ZH
        + r"|"
        + NOT_FORBIDDEN_ZH
        + SECRET_ZH
        + NOT_THE_THING_ZH
        + r"[^。!?\n;；]{0,24}?"
        + SEND_ZH,
        SECRET_ZH_TRIGGERS,
    ),
    chinese(
        "exfil_request",
        ReviewRule.SECRET_EXFILTRATION,
        0.6,
        SEND_ZH
        + r"[^。!?\n;；]{0,12}?"
        + PERSONAL_ZH
        + r"|"
        + PERSONAL_ZH
        + r"[^。!?\n;；]{0,24}?"
        + SEND_ZH
        + r"|(?:请求体|正文|body|参数)(?:里|中)?(?:放|填|写|带上|附上)[^。!?\n]{0,8}?"
        + alternation(SECRET_ZH, PERSONAL_ZH)
        + r"|把[^。!?\n]{0,12}?"
        + alternation(SECRET_ZH, PERSONAL_ZH)
        + r"[^。!?\n]{0,6}?告诉(?!我)",
        SEND_ZH_TRIGGERS + " 请求体 正文 body 参数 告诉",
    ),
    chinese(
        "ai_owned",
        None,
        0.3,
        r"你(?:的)?(?:全部|所有)?(?:长期)?(?:记忆|聊天记录|对话记录|笔记|密钥|令牌|设置里|配置里)|"
        r"你(?:能|可以)?(?:读到|拿到|访问)的"
        r"|你记得的|你手里的|你(?:设置|配置)里(?:保存|存)的|你存(?:着|储)的|存着的",
        "记忆 聊天记录 对话记录 笔记 密钥 令牌 设置里 配置里 读到 拿到 访问 你记得 你手里 保存 "
        "你存 存着的",
    ),
    chinese(
        "destination",
        None,
        0.4,
        r"微信号?|网盘|公开(?:群|gist|网页|目录|频道|链接)|联系表单|webhook|(?:发|传|给)我"
        r"|(?:给|回复|发给|转给)(?:这位|该)?发件人"
        r"|请求体|回复里|回复中|(?:写进|放进|附在|贴在)(?:你的)?回复|(?:下一次|这次)?提交(?:里|"
        r"中)|代码仓库",
        "微信 网盘 公开 联系表单 webhook 我 发件人 请求体 回复 提交 代码仓库",
    ),
    chinese(
        "obfuscation",
        None,
        0.3,
        r"base64|rot13|(?:做|进行)(?:一下)?编码|编码成",
        "base64 rot13 编码",
    ),
)

FEATURES = (*ENGLISH, *CHINESE)
