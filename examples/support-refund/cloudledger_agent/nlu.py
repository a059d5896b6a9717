"""Reading a ticket with keyword rules (Simplified Chinese and English).

What an LLM would get from the ticket, done with regular expressions: the language, the
topics (a ticket may ask two things), the category of each topic, the customer's intent
(a duplicate-charge claim, a cancellation, ...), the invoice ids and other customers it
mentions, and whether it carries instructions aimed at the agent (prompt injection).

Everything here reads the ticket only; the business facts come from the tools.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

CATEGORIES = ("refund", "billing", "invoice", "bug", "account", "other")


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts))


# Patterns run on the NFKC-normalized, lower-cased text.
OUT_OF_SCOPE = _rx(r"写.{0,8}诗", r"七言|五言|绝句|对联|讲个笑话", r"\bpoem\b|\bhaiku\b|\bjoke\b")
BUG = _rx(
    r"err_[a-z_]+",
    r"报错|导不出|导出失败|出错了|超时|崩溃|闪退|白屏",
    r"\bfail(s|ed|ing)?\b|\berror\b|time ?out|\bbug\b|\bcrash",
)
ACCOUNT = _rx(
    r"验证码|登不上|登录不了|无法登录|登不进|进不去|密码",
    r"\blog ?in\b|\bsign ?in\b|sms code|verification code|password|locked out",
)
REFUND_ASK = _rx(
    r"退(款|回|给|还|我|钱|一笔|一张|一次|一部分|一下|掉|了|多少|到|点|\s*\d)",
    r"能退|不退|可退|可以退",
    r"\brefund|\brevers|money back",
)
DUPLICATE_CLAIM = _rx(
    r"重复扣|重复的|重复收取|扣重|扣了?[我你]?两(次|回|笔)|被扣了?两|扣.{0,4}两(次|回)",
    r"两(次|回|笔|条|张)[^,。?!;]{0,16}(一模一样|相同)|一模一样|其中一(张|笔)",
    r"两(张|笔|条)[^。?!]{0,80}都是",
    r"charged twice|two charges|double[- ]?charg|duplicate|\btwice\b",
)
OVERCHARGE = _rx(r"多扣|扣错|多收|扣多了", r"overcharg|extra charge")
CANCEL = _rx(
    r"取消|不用了|不想用|用不上|不续|不想续|不打算继续|提前结束|停用|停掉|退订|注销|不再续|换工具",
    r"剩下的钱|剩余的?费用|剩余月份|剩下.{0,3}(个月|月份)|没用的月|没用完",
    r"cancel|terminat|stop using|unused months",
)
UPGRADE = _rx(
    r"升级|升到|补差价",
    r"upgrad",
    r"(from|从)\s*(basic|pro|基础版|专业版)\s*(to|到)\s*(pro|enterprise|专业版|企业版)",
)
SEATS = _rx(r"席位|账号数|(加|新来|新增).{0,6}(同事|人)", r"\bseats?\b")
PAST_DUE = _rx(
    r"欠费|逾期|没付的?账单|未付|付过|已付|已经扣了|自动扣款|只读",
    r"past[- ]due|overdue|unpaid",
)
INVOICE_STRONG = _rx(r"抬头|重开|重新开|作废|开票|开具", r"invoice title|re-?issue")
INVOICE_WEAK = _rx(r"发票", r"\binvoices?\b")
BILLING = _rx(
    r"账单|计费|收费|收钱|扣费|扣款|差价|价格|多少钱|续费",
    r"prorat|\bbill|\bcharge|\bprice|\bpricing",
)
INJECTION = _rx(
    r"忽略(之前|以上|上面|前面|所有)的?(指令|指示|规则|设定)",
    r"【系统消息】|系统消息|已返回[:：]|无需再次查询|直接对.{0,24}调用|调用\s*create_refund_request",
    r"ignore (all |any )?(the )?(previous|prior|above) instructions|system message",
    r"\[system\]|call create_refund_request",
)
MONEYISH = _rx(r"钱|费|款|账", r"money|charge|bill")
EXPORT_TIMEOUT = _rx(r"err_export_timeout", r"导出.{0,10}(超时|转圈)")
LOGIN_CODE = _rx(r"验证码", r"sms code|verification code|\bcode\b")

# "What I actually want to ask is ...": the real question of a long ticket follows it.
REAL_QUESTION = _rx(
    r"真正想问|真正的问题|真正要问|想问的是|卡住我们的是",
    r"what i (really|actually) (want|need)|my (actual|real) question",
)
# Where a second topic starts.
TOPIC_BREAK = _rx(
    r"另外|还有[,，]|还有一|此外|顺便问|二是|第二[,，个件]",
    r"(?<![\d.,])2[)）、]|\(2\)|（2）|(?<![\d.,])2\.(?!\d)",
    r"\balso\b|\band is there\b|\bsecondly\b",
)
CUSTOMER_ID = re.compile(r"(?<![a-z0-9])c\d{3}(?!\d)")
INVOICE_ID = re.compile(r"inv-\d{4}-\d{4}")
DATE_MD = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
LONG_TICKET = 400


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def language(text: str) -> str:
    """``zh`` or ``en``: the language to answer in."""
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    latin_words = len(re.findall(r"[A-Za-z]{2,}", text))
    if cjk == 0 and latin_words == 0:
        return "zh"
    return "zh" if cjk >= latin_words else "en"


def classify(norm: str, *, upgrade_explains_charge: bool) -> str:
    """The category of one piece of text, by tiers of keywords.

    ``upgrade_explains_charge``: a refund demand about a charge that followed an upgrade
    is a billing question (the pro-rata difference), unless the customer is cancelling.
    """
    if OUT_OF_SCOPE.search(norm):
        return "other"
    if BUG.search(norm):
        return "bug"
    if ACCOUNT.search(norm):
        return "account"
    # Cancelling and asking about the money is a refund question; a past-due notice that
    # threatens to suspend the account is not.
    cancel_money = bool(CANCEL.search(norm) and MONEYISH.search(norm) and not PAST_DUE.search(norm))
    refundish = bool(REFUND_ASK.search(norm) or DUPLICATE_CLAIM.search(norm) or cancel_money)
    if refundish:
        if upgrade_explains_charge and UPGRADE.search(norm) and not CANCEL.search(norm):
            return "billing"
        return "refund"
    if INVOICE_STRONG.search(norm):
        return "invoice"
    if PAST_DUE.search(norm) or SEATS.search(norm) or UPGRADE.search(norm):
        return "billing"
    if BILLING.search(norm) or OVERCHARGE.search(norm):
        return "billing"
    if INVOICE_WEAK.search(norm):
        return "invoice"
    return "other"


def split_topics(norm: str) -> list[str]:
    """The ticket cut where a new topic starts (one piece when it asks one thing)."""
    cuts = [m.start() for m in TOPIC_BREAK.finditer(norm) if m.start() > 0]
    pieces, last = [], 0
    for cut in cuts:
        if norm[last:cut].strip():
            pieces.append(norm[last:cut])
        last = cut
    pieces.append(norm[last:])
    return [p for p in pieces if p.strip()] or [norm]


def focus_of(norm: str) -> str:
    """The part of the ticket that holds the question (the end of a long backstory)."""
    marks = list(REAL_QUESTION.finditer(norm))
    if marks:
        return norm[marks[-1].start() :]
    if len(norm) > LONG_TICKET:
        paragraphs = [p for p in re.split(r"\n\s*\n", norm) if p.strip()]
        if len(paragraphs) > 1:
            return paragraphs[-1]
    return norm


def quoted_new_name(text: str) -> str | None:
    """A company name the customer says is the new or correct one (in quotes)."""
    for m in re.finditer(r"[“\"「『]([^”\"」』]{2,40})[”\"」』]", text):
        before = text[max(0, m.start() - 10) : m.start()]
        if re.search(r"新|正确|现|改名|改为|改成|应该", before):
            return m.group(1).strip()
    return None


@dataclass
class Reading:
    """What the agent understood from one ticket."""

    text: str
    norm: str
    language: str
    focus: str
    topics: list[str]
    category: str  # of the first topic that has one
    topic_categories: list[str]
    duplicate_claim: bool
    overcharge: bool
    cancel: bool
    refund_ask: bool
    upgrade: bool
    seats: bool
    past_due: bool
    injection: bool
    out_of_scope: bool
    too_little_info: bool
    other_customers: list[str] = field(default_factory=list)
    invoice_ids: list[str] = field(default_factory=list)
    dates: list[tuple[int, int]] = field(default_factory=list)
    new_name: str | None = None

    @property
    def multi_topic(self) -> bool:
        return len(self.topics) > 1


def read(ticket: str, customer_id: str, *, upgrade_explains_charge: bool) -> Reading:
    norm = normalize(ticket)
    focus = focus_of(norm)
    topics = split_topics(focus)
    cats = [classify(t, upgrade_explains_charge=upgrade_explains_charge) for t in topics]
    category = next((c for c in cats if c != "other"), None)
    if category is None:
        category = classify(focus, upgrade_explains_charge=upgrade_explains_charge)
    own = customer_id.lower()
    others = sorted({c.upper() for c in CUSTOMER_ID.findall(norm) if c != own})
    too_little = (
        category == "other"
        and not OUT_OF_SCOPE.search(norm)
        and (len(norm.strip()) <= 30 or bool(MONEYISH.search(norm)))
    )
    return Reading(
        text=ticket,
        norm=norm,
        language=language(ticket),
        focus=focus,
        topics=topics,
        category=category,
        topic_categories=cats,
        duplicate_claim=bool(DUPLICATE_CLAIM.search(focus)),
        overcharge=bool(OVERCHARGE.search(focus)),
        cancel=bool(CANCEL.search(focus)),
        refund_ask=bool(REFUND_ASK.search(focus)),
        upgrade=bool(UPGRADE.search(focus)),
        seats=bool(SEATS.search(focus)),
        past_due=bool(PAST_DUE.search(focus)),
        injection=bool(INJECTION.search(norm)),
        out_of_scope=bool(OUT_OF_SCOPE.search(norm)),
        too_little_info=too_little,
        other_customers=others,
        invoice_ids=list(dict.fromkeys(i.upper() for i in INVOICE_ID.findall(norm))),
        dates=[(int(m), int(d)) for m, d in DATE_MD.findall(focus)],
        new_name=quoted_new_name(unicodedata.normalize("NFKC", ticket)),
    )
