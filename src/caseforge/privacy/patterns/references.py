"""References (class ``reference``): an order, tracking, account, invoice, booking, member,
policy or contract number, named by the word before it in any of the four languages
(``訂單號 TW-20261102-0087``, ``账号 6222 0210 0110 2234``, ``mã vận đơn GHN8823011``,
``tracking no. 1Z 999 AA1 01``).

Such a number has no shape of its own: an order id of one shop is a row number of another.
The word before it is what says it names something; the value must hold at least four
digits, and may be written in groups (``188-50-0336-4172``, ``6222 0210 0110 2234``).
"""

from __future__ import annotations

import re

from caseforge.privacy.patterns.common import After, Match, Pattern, R, Row, any_word

_WORDS = (
    "order", "order no", "order id", "order number", "tracking", "tracking no",
    "tracking number", "waybill", "awb", "account", "account no", "account number", "acct",
    "invoice", "invoice no", "booking", "booking ref", "booking code", "reference", "ref",
    "confirmation", "member", "membership", "member id", "policy", "policy no", "claim",
    "contract", "serial", "customer id", "pnr",
    "訂單", "订单", "訂單號", "订单号", "訂單編號", "订单编号", "單號", "单号", "運單", "运单",
    "運單號", "运单号", "快遞單號", "快递单号", "物流單號", "物流单号", "帳號", "账号", "帳戶",
    "账户", "卡號", "卡号", "發票", "发票", "發票號碼", "发票号码", "會員", "会员", "會員編號",
    "会员编号", "保單", "保单", "保單號", "保单号", "病歷號", "病历号", "合約編號", "合同编号",
    "編號", "编号", "工單", "工单", "交易號", "交易号", "訂位代號", "订位代号",
    "mã đơn", "mã đơn hàng", "mã vận đơn", "vận đơn", "số tài khoản", "stk", "tài khoản",
    "số hóa đơn", "hóa đơn", "mã khách hàng", "mã hội viên", "số hợp đồng", "hợp đồng",
    "mã đặt chỗ", "mã giao dịch",
)  # fmt: skip

_VALUE = r"[0-9A-Za-z](?:[0-9A-Za-z]|[-/.#_](?=[0-9A-Za-z])| (?=[0-9]{2,}(?![0-9A-Za-z]*[a-z]{2}))){3,40}"
_ROW = (
    any_word(_WORDS)
    + r"\.?\s{0,2}(?:(?:no\.?|number|#|id|is|số|là|是|為|为)\s{0,2})?[:：=#]?\s{0,2}"
    rf"(?P<v>{_VALUE}){R}"
)

TABLE: tuple[Row, ...] = (
    ("reference", "reference_after_word", _ROW, 0.75, After(tuple(w.lower() for w in _WORDS))),
)


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """A reference holds four digits or more, and is not a date, a time or an amount."""
    value = text[start:end]
    if sum(ch.isdigit() for ch in value) < 4:
        return None  # "order 12", "account admin"
    if re.fullmatch(r"[0-9]{1,4}[-/.][0-9]{1,2}(?:[-/.][0-9]{1,4})?", value):
        return None  # a date
    if re.fullmatch(r"[0-9]{1,3}(?:[,.][0-9]{3})+(?:[.,][0-9]{1,2})?", value):
        return None  # an amount
    return pattern.score
