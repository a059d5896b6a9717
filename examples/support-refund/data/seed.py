"""Deterministic seed data for CloudLedger (云簿), a fictional online bookkeeping SaaS.

``build(conn)`` creates and fills four tables in an open SQLite connection:

* ``customers(id, name, company, email)``: 30 fictional customers, C001 to C030;
* ``subscriptions(customer_id, plan, billing_cycle, seats, status, current_period_start,
  current_period_end)``: one per customer;
* ``invoices(id, customer_id, amount_cents, status, issued_at, period_start, period_end)``;
* ``refund_requests(...)``: empty; the support agent's ``create_refund_request`` tool
  writes ``pending_approval`` rows into it.

Everything is drawn from ``random.Random(42)`` with the clock frozen at ``TODAY``, so two
builds give identical tables. A few customers are pinned because the cases and the refund
oracle rely on them:

* C007: enterprise, monthly, 8 seats, charged twice on 2026-10-08 (INV-2026-0026 and
  INV-2026-0123, both paid, 239200 cents each);
* C023: enterprise, yearly, 2 seats, period 2026-10-09 to 2027-10-09, paid by
  INV-2026-0091 (717600 cents);
* C009: basic, yearly, paid;
* C013: pro, yearly; this period's invoice INV-2026-0050 is still open, the previous
  period's INV-2026-0051 is paid (invoice ids are not in date order);
* C012: pro, monthly, several paid invoices and no duplicate;
* C002: basic, monthly, nothing refundable.

Usage: ``python data/seed.py [PATH]`` writes the database to PATH (default
``cloudledger.db`` in the current directory), replacing any file already there.
"""

from __future__ import annotations

import random
import sqlite3
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

TODAY = date(2026, 10, 12)
SEED = 42

# Price per seat per month, in cents.
PLAN_PRICES = {"basic": 4900, "pro": 9900, "enterprise": 29900}

SCHEMA = """
CREATE TABLE customers (
    id      TEXT PRIMARY KEY,
    name    TEXT NOT NULL,
    company TEXT NOT NULL,
    email   TEXT NOT NULL UNIQUE
);
CREATE TABLE subscriptions (
    customer_id          TEXT PRIMARY KEY REFERENCES customers(id),
    plan                 TEXT NOT NULL CHECK (plan IN ('basic', 'pro', 'enterprise')),
    billing_cycle        TEXT NOT NULL CHECK (billing_cycle IN ('monthly', 'yearly')),
    seats                INTEGER NOT NULL CHECK (seats > 0),
    status               TEXT NOT NULL CHECK (status IN ('active', 'past_due', 'trialing')),
    current_period_start DATE NOT NULL,
    current_period_end   DATE NOT NULL
);
CREATE TABLE invoices (
    id           TEXT PRIMARY KEY,
    customer_id  TEXT NOT NULL REFERENCES customers(id),
    amount_cents INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('paid', 'open', 'void')),
    issued_at    DATE NOT NULL,
    period_start DATE NOT NULL,
    period_end   DATE NOT NULL
);
CREATE TABLE refund_requests (
    id           INTEGER PRIMARY KEY,
    invoice_id   TEXT NOT NULL REFERENCES invoices(id),
    customer_id  TEXT NOT NULL REFERENCES customers(id),
    amount_cents INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
"""

# Name parts (surname, given name) with the pinyin used for the e-mail address.
SURNAMES = [
    ("林", "lin"), ("陈", "chen"), ("周", "zhou"), ("许", "xu"), ("沈", "shen"),
    ("韩", "han"), ("唐", "tang"), ("罗", "luo"), ("邓", "deng"), ("叶", "ye"),
    ("苏", "su"), ("程", "cheng"), ("魏", "wei"), ("方", "fang"), ("姚", "yao"),
]  # fmt: skip
GIVEN_NAMES = [
    ("晓雯", "xiaowen"), ("子涵", "zihan"), ("建平", "jianping"), ("思远", "siyuan"),
    ("雨桐", "yutong"), ("国栋", "guodong"), ("佳怡", "jiayi"), ("明轩", "mingxuan"),
    ("若溪", "ruoxi"), ("立诚", "licheng"), ("婉清", "wanqing"), ("志强", "zhiqiang"),
    ("可欣", "kexin"), ("浩然", "haoran"), ("静姝", "jingshu"), ("云帆", "yunfan"),
    ("书瑶", "shuyao"), ("振华", "zhenhua"), ("梓萱", "zixuan"), ("宇航", "yuhang"),
    ("嘉禾", "jiahe"), ("慧敏", "huimin"), ("亦舟", "yizhou"), ("秀兰", "xiulan"),
    ("文博", "wenbo"), ("诗涵", "shihan"), ("德胜", "desheng"), ("一鸣", "yiming"),
    ("安琪", "anqi"), ("鹏飞", "pengfei"), ("晨曦", "chenxi"), ("少华", "shaohua"),
]  # fmt: skip
# Invented trade names: (Chinese name, slug for the e-mail domain).
COMPANY_STEMS = [
    ("青禾", "qinghe"), ("木棉", "mumian"), ("远帆", "yuanfan"), ("星桥", "xingqiao"),
    ("南枝", "nanzhi"), ("砚台", "yantai"), ("溪山", "xishan"), ("白鹭", "bailu"),
    ("松果", "songguo"), ("橙光", "chengguang"), ("石榴", "shiliu"), ("云梯", "yunti"),
    ("麦田", "maitian"), ("蓝鲸", "lanjing"), ("竹影", "zhuying"), ("晴川", "qingchuan"),
    ("拾光", "shiguang"), ("北辰", "beichen"), ("小满", "xiaoman"), ("鹿鸣", "luming"),
    ("半夏", "banxia"), ("海棠", "haitang"), ("知行", "zhixing"), ("朝露", "zhaolu"),
    ("长亭", "changting"), ("苇岸", "weian"), ("绿萝", "lvluo"), ("秋实", "qiushi"),
    ("归雁", "guiyan"), ("听涛", "tingtao"),
]  # fmt: skip
COMPANY_KINDS = [
    "文创工作室", "餐饮管理有限公司", "设计事务所", "贸易商行", "教育咨询有限公司",
    "电子商务有限公司", "建筑装饰工程部", "物流服务部", "烘焙坊", "软件开发有限公司",
    "花艺店", "财税服务所", "摄影工作室", "宠物用品店", "印务有限公司",
]  # fmt: skip
DOMAIN_SUFFIXES = ["example.com", "example.net", "example.org", "shop.test", "corp.test"]


@dataclass(frozen=True)
class Profile:
    """How a customer's subscription looks today.

    ``anchor`` is the day the billing period starts: a full date (the current period's
    start) for yearly customers, a day of the month for monthly ones, or ``None`` to draw
    the day at random. ``history`` is how many earlier periods were invoiced (``None``:
    drawn at random).
    """

    plan: str
    cycle: str
    seats: int
    status: str = "active"
    anchor: date | int | None = None
    history: int | None = None
    events: tuple[str, ...] = field(default_factory=tuple)


PROFILES: dict[str, Profile] = {
    "C001": Profile("pro", "monthly", 4),
    "C002": Profile("basic", "monthly", 1, history=4),
    "C003": Profile("pro", "monthly", 6),
    "C004": Profile("pro", "yearly", 5, anchor=date(2026, 2, 20), history=1),
    "C005": Profile("basic", "yearly", 2, anchor=date(2026, 7, 1), history=0),
    "C006": Profile("basic", "monthly", 3),
    "C007": Profile("enterprise", "monthly", 8, anchor=8, history=7, events=("double-charge",)),
    "C008": Profile("pro", "monthly", 15),
    "C009": Profile("basic", "yearly", 4, anchor=date(2026, 3, 15), history=1),
    "C010": Profile("basic", "monthly", 2),
    "C011": Profile("enterprise", "yearly", 10, anchor=date(2026, 6, 1), history=0),
    "C012": Profile("pro", "monthly", 5, history=8),
    "C013": Profile("pro", "yearly", 3, anchor=date(2026, 10, 1), history=1, events=("unpaid",)),
    "C014": Profile("enterprise", "monthly", 20),
    "C015": Profile("pro", "monthly", 7, anchor=14, history=6, events=("upgraded",)),
    "C016": Profile("pro", "yearly", 12, anchor=date(2025, 11, 3), history=0),
    "C017": Profile("basic", "monthly", 1),
    "C018": Profile("pro", "monthly", 4, status="past_due", anchor=13, events=("unpaid",)),
    "C019": Profile("pro", "monthly", 9, anchor=17, history=7, events=("seats-added",)),
    "C020": Profile("pro", "yearly", 3, anchor=date(2026, 10, 12), history=1),
    "C021": Profile("enterprise", "yearly", 1, anchor=date(2026, 4, 30), history=0),
    "C022": Profile("basic", "monthly", 5),
    "C023": Profile("enterprise", "yearly", 2, anchor=date(2026, 10, 9), history=1),
    "C024": Profile("pro", "monthly", 2),
    "C025": Profile("basic", "monthly", 3, anchor=5, history=5, events=("reissued",)),
    "C026": Profile("enterprise", "yearly", 4, anchor=date(2026, 1, 25), history=1),
    "C027": Profile("enterprise", "monthly", 3),
    "C028": Profile("pro", "yearly", 6, anchor=date(2025, 12, 12), history=0),
    "C029": Profile("basic", "monthly", 1),
    "C030": Profile("pro", "monthly", 5, status="trialing", history=0),
}

# Invoice numbers the cases and the oracle rely on: (customer, role) -> number.
PINNED = {
    ("C007", "double-charge-first"): 26,
    ("C007", "double-charge-second"): 123,
    ("C013", "current"): 50,
    ("C013", "previous"): 51,
    ("C023", "current"): 91,
}

SEATS_ADDED_FROM = 6  # C019 had this many seats before its last three periods
UPGRADED_ON = date(2026, 9, 20)  # C015 moved from basic to pro on this day


def add_months(d: date, months: int) -> date:
    """``d`` moved by ``months`` calendar months, the day clamped to the month's end."""
    index = d.year * 12 + (d.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    days_in_month = [31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return date(year, month, min(d.day, days_in_month[month - 1]))


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _monthly_period_start(day: int) -> date:
    start = TODAY.replace(day=day)
    return start if start <= TODAY else add_months(start, -1)


@dataclass
class _Invoice:
    customer_id: str
    amount_cents: int
    status: str
    issued_at: date
    period_start: date
    period_end: date
    role: str = ""


def _customers(rng: random.Random) -> list[tuple[str, str, str, str]]:
    givens = rng.sample(GIVEN_NAMES, len(PROFILES))
    people = [(rng.choice(SURNAMES), given) for given in givens]
    stems = rng.sample(COMPANY_STEMS, len(PROFILES))
    rows = []
    for i, (cid, (surname, given), stem) in enumerate(
        zip(PROFILES, people, stems, strict=True), start=1
    ):
        kind = rng.choice(COMPANY_KINDS)
        domain = f"{stem[1]}.{DOMAIN_SUFFIXES[i % len(DOMAIN_SUFFIXES)]}"
        email = f"{given[1]}.{surname[1]}@{domain}"
        rows.append((cid, surname[0] + given[0], stem[0] + kind, email))
    return rows


def _invoices_for(cid: str, p: Profile, rng: random.Random) -> tuple[date, date, list[_Invoice]]:
    """The current period and the invoices of one customer, oldest first."""
    per_month = PLAN_PRICES[p.plan] * p.seats
    if p.cycle == "yearly":
        assert isinstance(p.anchor, date)
        start, end = p.anchor, add_months(p.anchor, 12)
        history = p.history if p.history is not None else rng.randint(0, 1)
        invoices = []
        for back in range(history, -1, -1):
            ps = add_months(start, -12 * back)
            role = "current" if back == 0 else "previous" if back == 1 else ""
            status = "open" if role == "current" and "unpaid" in p.events else "paid"
            invoices.append(_Invoice(cid, per_month * 12, status, ps, ps, add_months(ps, 12), role))
        return start, end, invoices

    day = p.anchor if isinstance(p.anchor, int) else rng.randint(1, 28)
    start = _monthly_period_start(day)
    end = add_months(start, 1)
    history = p.history if p.history is not None else rng.randint(3, 11)
    if p.status == "trialing":
        return start, end, []
    invoices = []
    for back in range(history, -1, -1):
        ps = add_months(start, -back)
        pe = add_months(ps, 1)
        plan, seats = p.plan, p.seats
        if "upgraded" in p.events and ps < UPGRADED_ON:
            plan = "basic"
        if "seats-added" in p.events and back >= 3:
            seats = SEATS_ADDED_FROM
        amount = PLAN_PRICES[plan] * seats
        status = "open" if back == 0 and "unpaid" in p.events else "paid"
        if back == 0 and "double-charge" in p.events:
            invoices.append(_Invoice(cid, amount, "paid", ps, ps, pe, "double-charge-first"))
            invoices.append(_Invoice(cid, amount, "paid", ps, ps, pe, "double-charge-second"))
            continue
        if back == 1 and "reissued" in p.events:
            # Issued with the wrong invoice title, voided, and issued again two days later.
            invoices.append(_Invoice(cid, amount, "void", ps, ps, pe, "voided"))
            reissued = date.fromordinal(ps.toordinal() + 2)
            invoices.append(_Invoice(cid, amount, "paid", reissued, ps, pe, "reissued"))
            continue
        invoices.append(_Invoice(cid, amount, status, ps, ps, pe))
        if "upgraded" in p.events and ps < UPGRADED_ON < pe:
            # Mid-period upgrade: the price difference for the rest of the period, pro rata.
            left, total = (pe - UPGRADED_ON).days, (pe - ps).days
            diff = (PLAN_PRICES[p.plan] - PLAN_PRICES["basic"]) * seats
            invoices.append(
                _Invoice(
                    cid, diff * left // total, "paid", UPGRADED_ON, UPGRADED_ON, pe, "proration"
                )
            )
    return start, end, invoices


def build(conn: sqlite3.Connection) -> None:
    """Create the CloudLedger tables in ``conn`` and fill them (deterministic)."""
    rng = random.Random(SEED)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", _customers(rng))

    all_invoices: list[_Invoice] = []
    for cid, p in PROFILES.items():
        start, end, invoices = _invoices_for(cid, p, rng)
        conn.execute(
            "INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?, ?)",
            (cid, p.plan, p.cycle, p.seats, p.status, start.isoformat(), end.isoformat()),
        )
        all_invoices.extend(invoices)

    # Invoice numbers come from a migrated billing system: pinned ones keep their number,
    # the rest are handed out in shuffled order, so ids are not in date order.
    pinned: dict[int, _Invoice] = {}
    free: list[_Invoice] = []
    for inv in all_invoices:
        number = PINNED.get((inv.customer_id, inv.role))
        if number is None:
            free.append(inv)
        else:
            pinned[number] = inv
    if len(pinned) != len(PINNED):
        raise AssertionError("a pinned invoice was not generated")
    total = len(all_invoices)
    if max(PINNED.values()) > total:
        raise AssertionError(f"only {total} invoices; pinned numbers need more")
    rng.shuffle(free)
    numbers = iter(n for n in range(1, total + 1) if n not in pinned)
    numbered = {**pinned, **{next(numbers): inv for inv in free}}
    conn.executemany(
        "INSERT INTO invoices VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                f"INV-2026-{n:04d}",
                inv.customer_id,
                inv.amount_cents,
                inv.status,
                inv.issued_at.isoformat(),
                inv.period_start.isoformat(),
                inv.period_end.isoformat(),
            )
            for n, inv in sorted(numbered.items())
        ],
    )
    conn.commit()


def main(argv: list[str] | None = None) -> None:
    """Write the seeded database to the path given on the command line."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "cloudledger.db")
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        build(conn)
    finally:
        conn.close()
    tmp.replace(path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
