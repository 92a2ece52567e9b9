"""Text that claims to come from above: the system, an administrator, the developers, the
model's maker, or a priority that outranks the user.

Real organisations send notices all the time ("System notice: maintenance on Sunday",
"Message from the administrator: change your password"), so a claim weighs half the
threshold. It passes with what real notices never do: address the assistant, claim to
outrank its instructions, or ask it for something (see `context`, `policy`, `exfiltration`).
"""

from __future__ import annotations

from hologram.sdk import ReviewRule
from hologram.security.injection.feature import chinese, english, english_forms

BOSSES = (
    r"(?:system|admin|administrator|developers?|devs|dev\s+team|operator|root|platform(?:\s+team)?|"
    r"security(?:\s+(?:team|module))?|it\s+security|official|kernel\s+maintainers|model\s+provider|"
    r"provider|vendor|support\s+team|moderators?|trust\s+and\s+safety|headquarters|management)"
)

ENGLISH = (
    *english_forms(
        "authority_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        (
            r"\b"
            + BOSSES
            + r"(?:[\s-]+level)?\s+(?:message|notice|notification|alert|directive|instruction|"
            r"override|"
            r"update|announcement|order|command|memo|mandate)\b",
            "message notice notification alert directive instruction override update announcement "
            "order command memo mandate",
        ),
        (
            r"\b(?:message|note|instructions?|directives?|orders?|commands?|word|update|notice|"
            r"request|"
            r"memo)\s+from\s+(?:the\s+|your\s+)?(?:system|admin|administrator|developers?|devs|"
            r"dev\s+"
            r"team|operator|creators?|owner|provider|maintainers?|platform\s+team|support\s+team|"
            r"security"
            r"\s+team|it\s+security|engineers?|management|headquarters)\b",
            "system admin administrator developer developers devs dev operator creator creators "
            "owner "
            "provider maintainer maintainers platform support security engineer engineers "
            "management "
            "headquarters",
        ),
        (
            r"\b(?:this\s+is|i\s+am|i'?m|it'?s|we\s+are|we'?re)\s+(?:your|the|an?)\s+(?:system\s+)?"
            r"(?:admin|administrator|developers?|creators?|operator|owner|maker|system|provider|"
            r"support"
            r"\s+team|engineer|moderator|superuser)\b"
            r"|\byour\s+(?:developer|creator|admin|administrator|operator|provider|maker)\s+here\b"
            r"|\bthe\s+engineer\s+who\s+(?:wrote|built|trained)\s+(?:your|you)\b"
            r"|\bas\s+the\s+owner\s+of\s+this\s+account\b",
            "admin administrator developer developers creator creators operator owner maker system "
            "provider support engineer moderator superuser",
        ),
        (
            r"\b(?:authori[sz]ed|approved|signed)\s*(?:by)?\s*:?\s*(?:the\s+)?(?:system|admin|"
            r"administrator|developers|security\s+team)\b"
            r"|\bsender\s*:\s*(?:the\s+)?system\s+administrator\b"
            r"|\bthe\s+(?:support\s+)?team\s+behind\s+(?:your|you)\b"
            r"|\bon\s+behalf\s+of\s+(?:the\s+)?(?:system|admin|administrator|developers?|platform|"
            r"security\s+team|your\s+(?:developer|operator|owner))\b"
            r"|\b(?:with|under|by)\s+(?:the\s+)?authority\s+(?:of|from)\b"
            r"|\b(?:admin|administrator|root|superuser|sudo)\s+(?:access|privileges|rights|"
            r"override)\b"
            r"|\b(?:openai|anthropic|deepmind|google|microsoft)\b[\w\s,]{0,30}?\s+(?:asks?|"
            r"requires?|"
            r"instructs?|requests?|wants?|orders?|authori[sz]es?)\s+you\b",
            "authorized authorised approved signed sender behind behalf authority access "
            "privileges "
            "rights override openai anthropic deepmind google microsoft",
        ),
    ),
    english(
        "priority_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"\b(?:highest|top|maximum|max|critical|utmost|absolute|supreme|overriding)\s+priority\b"
        r"|\bpriority\s*(?:level\s*)?[:=]?\s*(?:0|p0|maximum|max|highest|critical|override|"
        r"absolute|supreme)\b|\bpriority\s+override\b|\bmessage\s+priority\b",
        "priority",
    ),
    english(
        "precedence_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.7,
        r"\b(?:takes?|has|have|carries|carry)\s+(?:precedence|priority)\s+over\s+(?:all|any|every|"
        r"your|previous|prior|earlier|other|anything|the\s+(?:user|operator|system|instructions?|"
        r"prompt|rules))\b"
        r"|\b(?:outranks?|supersed(?:es|ing)|overrides?|overriding|trumps?|replaces?)\s+(?:all|any|"
        r"every|the|your|previous|prior|earlier|other)\s+(?:[\w']+\s+){0,2}?(?:instructions?|"
        r"prompts?|rules?|directives?|messages?|operator|user|guidelines)\b"
        r"|\b(?:follow|obey|prioriti[sz]e)\s+this\s+(?:message|instruction|directive|note)\s+"
        r"(?:over|above|before)\b"
        r"|\bmust\s+be\s+(?:executed|followed|done|carried\s+out)\s+(?:before|above)\s+anything\b"
        r"|\b(?:above|beyond)\s+(?:all|any)\s+(?:other\s+)?(?:instructions|rules)\b",
        "precedence priority outranks outrank supersedes superseding overrides override overriding "
        "trumps trump replaces replace follow obey prioritize prioritise anything instructions "
        "rules",
    ),
    english(
        "authorization_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"\b(?:hereby\s+)?(?:authori[sz]ing|authori[sz]e|instruct(?:ing)?|ordering|permitting|"
        r"directing)\s+(?:you|any\s+(?:assistant|ai|agent|model))\b"
        r"|\b(?:has|have)\s+(?:approved|authori[sz]ed|granted|cleared)\s+(?:an?\s+)?(?:exception|"
        r"override|this|you)"
        r"|\bcleared\s+for\s+(?:unrestricted|full)\b|\bverified\s+(?:staff|admin|developer|owner)\b"
        r"|\b(?:you\s+have|you've\s+been\s+given)\s+(?:admin|root|full|elevated)\s+(?:rights|"
        r"access|"
        r"permissions|privileges)",
        "hereby authorizing authorising authorize authorise instruct instructing ordering "
        "permitting directing approved authorized authorised granted cleared verified rights "
        "access permissions privileges",
    ),
)

BOSSES_ZH = (
    r"(?:系统管理员|系统|管理员|超级管理员|开发者|开发人员|开发团队|研发(?:人员|团队)?|工程师|运维|"
    r"运营方?|官方|平台|"
    r"平台运营中心|安全团队|"
    r"信息安全部|安全模块|"
    r"技术支持团队?|维护组|模型提供方|模型|root|总部|上级|风控部?|审核组)"
)

CHINESE = (
    chinese(
        "authority_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        BOSSES_ZH
        + r"(?:级|高优先级)?(?:消息|通知|指令|公告|告警|警报|留言|命令|下达的|维护通知|升级公告|"
        r"指示)"
        r"|(?:我是|这里是|我们是|本人系|本人是|我乃)(?:你|您)?(?:的|背后的|"
        r"这里的)?(?:这个系统的)?(?:管理员|超级管理员|"
        r"开发者|开发人员|工程师|研发(?:人员|团队)?|运维|创造者|设计者|主人|运营|ai技术支持团队|"
        r"技术支持|提供方|该账户所有人|"
        r"上级|老板)"
        r"|写你(?:的)?(?:系统)?(?:提示词?|指令|初始指令|设定)的|授权方[:：]\s*系统|发件人[:：]\s*系统管理员|来自本助手"
        r"|(?:来自|由)" + BOSSES_ZH + r"(?:的)?(?:消息|通知|指令|要求|授权)"
        r"|(?:奉|按照|根据)" + BOSSES_ZH + r"(?:的)?(?:指示|命令|要求|指令)"
        r"|(?:权限|身份)\s*[:：]\s*(?:管理员|最高|root|超级)|root权限|超管"
        r"|(?:你的)?(?:主人|管理员|开发者|老板)[^。!?\n]{0,4}(?:让|叫|要|托)我(?:转告|告诉|通知|"
        r"转达)你",
        "系统 管理员 开发者 开发人员 开发团队 研发 工程师 运维 运营 官方 平台 安全 技术支持 维护组 "
        "模型 root 总部 "
        "上级 风控 审核组 "
        "我是 这里是 我们是 本人 我乃 写你 授权方 发件人 来自 由 奉 按照 根据 权限 身份 超管 主人 "
        "老板",
    ),
    chinese(
        "priority_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"最高优先级|优先级\s*[:：]\s*(?:最高|紧急|0)|消息级别\s*[:：]\s*最高|第一优先级|"
        r"[(（](?:0|零)级[)）]"
        r"|拥有最高优先级|(?:最高|紧急|一级|特级)(?:指令|命令)",
        "最高优先级 优先级 消息级别 第一优先级 0级 零级 最高 紧急 一级 特级",
    ),
    chinese(
        "precedence_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.7,
        r"优先于(?:运营方|用户|你的|所有|一切|之前|任何|正在)"
        r"|(?:取代|覆盖|替换)(?:此前|之前|以前|你的)?(?:的)?(?:全部|所有|一切)?(?:的)?(?:指令|"
        r"规则|设定|提示词)"
        r"|(?:一切)?以本(?:消息|段|指令|条|通知|文件|文档|页面|邮件)为准|用户说的不算|"
        r"(?:必须|务必|一定要|应该|应当|要)在(?:处理|执行)?(?:用户|主人|使用者)(?:的)?任何(?:请求|要求|"
        r"消息)(?:之前|以前|前)"
        r"|高于(?:用户|你的|所有|一切|任何|主人)",
        "优先于 取代 覆盖 替换 以本 用户说的不算 在处理 在执行 高于",
    ),
    chinese(
        "authorization_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"(?:正式)?授权你|特此(?:指示|要求)|特批|已获准|批准了例外|已(?:认证|验证)的(?:内部)?员工|"
        r"正式指令"
        r"|(?:已|已经)(?:给|为)你(?:开通|授予)|你的权限(?:已经?|被)?(?:提升|升级|开通|扩大)"
        r"|(?:用户|主人)(?:已经?|早就)(?:授权|同意|批准)",
        "授权你 特此 特批 已获准 例外 认证 验证 正式指令 给你 为你 你的权限 授权 同意 批准",
    ),
)

# A claimed authority named by organisation ("OpenAI staff") rather than by role, and an
# order given to the assistant in the third person ("I instruct the AI to").
GENERAL = (
    english(
        "authority_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"\b(?:openai|anthropic|google|deepmind|microsoft|meta)\s+(?:staff|team|engineers?|"
        r"employees?|support|safety\s+team)\b",
        "openai anthropic google deepmind microsoft meta",
    ),
    # The text says where it comes from: a source above the user.
    english(
        "authority_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"\b(?:instructions?|messages?|orders?|directives?|requests?|notes?)\s+(?:comes?|came|is|"
        r"are)\s+(?:directly\s+)?from\s+(?:your|the)\s+(?:operator|developers?|admin|"
        r"administrator|creators?|provider|owner|makers?)\b"
        r"|\b(?:message|note|notice|word|update|memo|directive)\s+from\s+(?:the\s+|your\s+)?"
        r"(?:platform|model\s+provider|ai\s+provider|vendor)\b",
        "operator developer developers admin administrator creator creators provider owner maker "
        "makers platform vendor",
    ),
    english(
        "authorization_claim",
        ReviewRule.AUTHORITY_IMPERSONATION,
        0.5,
        r"\b(?:hereby\s+)?(?:instruct(?:ing)?|order(?:ing)?|direct(?:ing)?|authori[sz](?:e|ing))\s+"
        r"(?:the\s+)?(?:ai|assistant|model|agent|bot|chatbot)\s+to\b",
        "instruct instructing order ordering direct directing authorize authorise authorizing "
        "authorising",
    ),
)

FEATURES = (*ENGLISH, *CHINESE, *GENERAL)
