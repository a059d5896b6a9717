"""The reference AI test agent of the ``test-agent`` suite: offline and deterministic.

``run(input, ctx)`` is the agent under evaluation. It plays a tester who is handed a
task, the name of a system, an opaque build label and the invariant to check, opens the
system, probes it, and reports the ids of the bugs it found.

What it reads
    ``input`` (``task``, ``system``, ``build``, ``invariant``); ``ctx.case_seed``, the
    case's fixed seed, passed to ``open_system`` as the system's seed (``ctx.seed`` when
    the case has none); ``ctx.now()``, the frozen clock, passed to ``open_system``;
    ``ctx.config["version"]`` (``"v1"`` or ``"v2"``; ``"v2"`` when absent); ``ctx.seed``,
    the per-trial seed that, salted with ``ctx.case_id``, drives every choice the agent
    makes (amounts, seats, customers, interleavings, prefixes). Same case, input and
    seeds, same answer.

What it never reads
    The suite's answer key (the builds table that maps a label to its bug list), any
    private attribute of a system instance or module (a leading underscore), the case
    files and their goal state, or the suite's grading code. It touches the systems only
    through ``sut_systems.open_system``, the public methods that ``describe()`` lists and
    the documented exception classes. ``tests/test_test_agent_probe_agent.py`` greps this
    file's code (docstrings and comments aside) to keep it that way.

What it returns
    ``{"output": {"bugs", "task_success", "report"}, "reply": report, "tool_calls",
    "usage"}``. ``bugs`` is the sorted list of the suite's bug ids (``rounding-0.005``,
    ``double-booking-race``, ``double-charge-no-idempotency``, ``cross-tenant-leak``,
    ``refund-off-by-one-cent``) that some probe saw break an invariant. There is one tool
    call per probe (``name``, ``args``, ``result``). A probe is one experiment, such as
    "transfer these amounts and compare the totals", and may run several inputs; the
    first, ``describe``, is the reconnaissance of the system's operations and data.

``task_success``
    True when the agent finished its probing and its verdict is internally consistent:
    every probe in its plan ran to the end (a refusal documented by the system, such as
    insufficient funds or a lost response, is an observation, not a failure; any other
    exception is a failure), ``bugs`` is exactly the set of ids that some recorded probe
    flagged, and the report gives reproduction evidence for each of them. It is False
    when the system cannot be opened or a probe crashed. It says nothing about whether the
    bugs are right; that is what ``bugs`` is graded on.

``usage``
    Estimated from the probes, as if a model had read each observation and written each
    call: ``input_tokens`` = a fixed 400-token brief + the input + every result (4
    characters a token); ``output_tokens`` = every call's name and arguments + 15 per call
    + the report. ``cost_usd`` is a fictional flat $0.002 per tool call, so cost per run
    and cost per true bug found are meaningful and stable. Both versions make 3 to 5
    calls a run; v2 puts its extra inputs inside its probes, so its cost per run is
    within a few per cent of v1's and its cost per true bug is lower.

Versions (``ctx.config["version"]``)
    ``v2``: a careful tester. Each invariant is probed with several inputs chosen by the
    seed: odd thousandths in both currencies and a control amount for the wallet; three
    explicit interleavings, a cancel-and-rebook race and two bursts on the seeded
    scheduler for the booking; two lost-response retries, full refunds of amounts that a
    float cannot hold exactly and a partial refund for the payment; every tenant's pages,
    several prefixes and other tenants' ids for the tenant store. It compares values as
    decimals, never as strings. No flakiness.

    ``v1``: a hastier tester. It books seats only one request after the other (its one
    "concurrent" probe steps each request to completion before the next), so it never
    sees the race. It checks a transfer's receipt by comparing the amount as text, so the
    wallet's normal 3-decimal display (``12.5`` shown as ``12.500``) reads to it as the
    amount having been rounded, and it reports ``rounding-0.005`` on every wallet build,
    the clean ones included. It probes each other invariant once, and in about one
    case-trial in ten (drawn from the seed) it forgets one probe of its plan, so trials
    differ: sometimes in the calls only, sometimes in the bugs found.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

try:
    import sut_systems
except ModuleNotFoundError as missing:  # imported by path, without the suite on sys.path
    if missing.name != "sut_systems":
        raise
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import sut_systems

from sut_systems.payment import PaymentError, ResponseLost
from sut_systems.tenant import RecordNotFound
from sut_systems.wallet import WalletError

ROUNDING = "rounding-0.005"
RACE = "double-booking-race"
DOUBLE_CHARGE = "double-charge-no-idempotency"
REFUND_CENT = "refund-off-by-one-cent"
LEAK = "cross-tenant-leak"

VERSIONS = ("v1", "v2")
PRICE_PER_CALL_USD = 0.002
BRIEF_TOKENS = 400
TOKENS_PER_CALL = 15
V1_FORGETS = 0.1  # chance, per case-trial, that v1 leaves one probe out of its plan

# Amounts a binary float cannot hold exactly: x * 100 lands just under a whole cent.
FLOAT_TRAPS = ("0.29", "0.57", "0.58", "1.13", "1.15", "2.01", "2.03", "4.35", "5.02", "9.95")
CENT = Decimal("0.01")
MILLI = Decimal("0.001")


# --- the lab notebook ------------------------------------------------------------------------


@dataclass
class Lab:
    """Everything a probe needs: the system, the seeded dice, the task, and the notes."""

    sut: Any
    rng: random.Random
    task: str
    invariant: str
    version: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    flags: dict[str, list[str]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    memory: dict[str, Any] = field(default_factory=dict)
    counter: int = 0

    def flag(self, bug: str, evidence: str) -> None:
        self.flags.setdefault(bug, []).append(evidence)

    def next_key(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter:03d}"


# A probe picks its arguments (from the lab's seeded dice) and runs; it returns both.
ProbeFn = Callable[[Lab], tuple[dict[str, Any], dict[str, Any]]]
Probe = tuple[str, ProbeFn]


def jsonable(value: Any) -> Any:
    """Decimals as strings, tuples as lists: what a tool call can carry."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def amounts_in(text: str) -> list[str]:
    """Decimal amounts written in a task (``100.005``, ``19.99``), in order, once each."""
    seen: list[str] = []
    for amount in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", text):
        if amount not in seen:
            seen.append(amount)
    return seen


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


# --- wallet ----------------------------------------------------------------------------------


def wallet_pairs(lab: Lab) -> dict[str, tuple[str, str]]:
    """Two wallets per currency (the richest and a seeded other), for the transfer probes."""
    pairs: dict[str, tuple[str, str]] = {}
    by_currency: dict[str, list[str]] = {}
    for wallet in lab.sut.wallets():
        by_currency.setdefault(wallet["currency"], []).append(wallet["wallet_id"])
    for currency, ids in sorted(by_currency.items()):
        if len(ids) < 2:
            continue
        balances = lab.sut.balances(currency)
        richest = max(ids, key=lambda wid: balances[wid])
        other = lab.rng.choice([wid for wid in ids if wid != richest])
        pairs[currency] = (richest, other)
    return pairs


def task_currency(task: str) -> str | None:
    if "USD" in task:
        return "USD"
    if "VND" in task or re.search(r"\d\s*đ\b", task):
        return "VND"
    return None


def transfer_once(lab: Lab, currency: str, amount: str) -> dict[str, Any]:
    """Transfer ``amount`` from the richer wallet of the pair; compare the currency's total."""
    a, b = lab.memory["pairs"][currency]
    before = lab.sut.balances(currency)
    source, target = (a, b) if before[a] >= before[b] else (b, a)
    step: dict[str, Any] = {"amount": amount, "from_wallet": source, "to_wallet": target}
    try:
        receipt = lab.sut.transfer(source, target, amount, memo="probe")
    except WalletError as exc:  # e.g. insufficient funds: an answer, not a bug
        return {**step, "refused": str(exc)}
    after = lab.sut.balances(currency)
    total_before, total_after = sum(before.values(), Decimal(0)), sum(after.values(), Decimal(0))
    debited, credited = before[source] - after[source], after[target] - before[target]
    if total_after != total_before or debited != credited:
        lab.flag(
            ROUNDING,
            f"transfer({source!r}, {target!r}, {amount!r}) in {currency}: debited {debited}, "
            f"credited {credited}; the {currency} total went from {total_before} to "
            f"{total_after} (drift {total_after - total_before}), which breaks "
            f"sum(balances before) == sum(balances after).",
        )
    return {
        **step,
        "receipt_amount": receipt["amount"],
        "debited": debited,
        "credited": credited,
        "drift": total_after - total_before,
    }


def transfer_totals(currency: str, amounts: list[str]) -> ProbeFn:
    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        steps = [transfer_once(lab, currency, amount) for amount in amounts]
        return {"currency": currency, "amounts": amounts}, {"transfers": steps}

    return probe


def receipt_echo(currency: str, amount: str) -> ProbeFn:
    """v1 only: does the receipt show the amount as it was typed? (compared as text)"""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        a, b = lab.memory["pairs"][currency]
        args = {"currency": currency, "from_wallet": a, "to_wallet": b, "amount": amount}
        try:
            receipt = lab.sut.transfer(a, b, amount, memo="probe")
        except WalletError as exc:
            return args, {"refused": str(exc)}
        if receipt["amount"] != amount:
            lab.flag(
                ROUNDING,
                f"transfer({a!r}, {b!r}, {amount!r}) in {currency} returned a receipt for "
                f"{receipt['amount']}, not {amount}: the amount was rounded on the way.",
            )
        return args, {"receipt_amount": receipt["amount"], "sent": amount}

    return probe


def odd_amount(rng: random.Random, cap: Decimal) -> str:
    """A seeded amount with a non-zero thousandths digit, below ``cap``."""
    whole = rng.randrange(0, max(1, int(cap)))
    thousandths = rng.randrange(0, 100) * 10 + rng.randrange(1, 10)
    return str(Decimal(whole) + Decimal(thousandths) * MILLI)


def wallet_recon(lab: Lab) -> dict[str, Any]:
    lab.memory["pairs"] = wallet_pairs(lab)
    return {"wallets": lab.sut.wallets(), "pairs": lab.memory["pairs"]}


def wallet_plan(lab: Lab) -> list[Probe]:
    pairs: dict[str, tuple[str, str]] = lab.memory["pairs"]
    wanted = task_currency(lab.task)
    task_amounts = amounts_in(lab.task)
    if lab.version == "v1":
        currency = wanted if wanted is not None and wanted in pairs else sorted(pairs)[-1]
        shown = lab.rng.choice(("12.5", "7.25", "30.1"))
        return [
            ("receipt_echo", receipt_echo(currency, shown)),
            ("transfer_totals", transfer_totals(currency, task_amounts[:1] or ["100.005"])),
        ]
    plan: list[Probe] = []
    for currency, (a, b) in sorted(pairs.items(), key=lambda item: item[0] != wanted):
        balances = lab.sut.balances(currency)
        cap = min(balances[a], balances[b]) / 3
        amounts = list(task_amounts) if wanted in (None, currency) else []
        amounts += [odd_amount(lab.rng, cap) for _ in range(3)]
        whole = lab.rng.randrange(1, max(2, int(cap)))
        amounts.append(str(Decimal(whole) + Decimal(lab.rng.randrange(1, 100)) * CENT))
        plan.append(("transfer_totals", transfer_totals(currency, amounts)))
    return plan


# --- booking ---------------------------------------------------------------------------------


def take_seat(lab: Lab, spare: bool = False) -> str:
    """The next seat to probe: the task's own seats first, then seeded free seats
    (``spare``: a seeded free seat from the back of the queue)."""
    queue: list[str] = lab.memory["seats"]
    free = set(lab.sut.available())
    while queue:
        seat = queue.pop(-1 if spare else 0)
        if seat in free:
            return seat
    return str(lab.rng.choice(sorted(free)))


def check_seat(lab: Lab, seat: str, results: list[dict[str, Any]], how: str) -> dict[str, Any]:
    winners = [r["customer"] for r in results if r.get("ok")]
    held = lab.sut.bookings(seat)
    if len(winners) > 1 or len(held) > 1:
        lab.flag(
            RACE,
            f"{how} on seat {seat}: {len(winners)} requests succeeded ({', '.join(winners)}) "
            f"and the seat now has {len(held)} confirmed bookings, which breaks "
            f"count(confirmed bookings per seat) <= 1.",
        )
    return {
        "seat": seat,
        "results": [{k: r.get(k) for k in ("ok", "customer", "error")} for r in results],
        "confirmed_for_seat": len(held),
    }


def book_sequential(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
    seat = take_seat(lab, spare=True)
    first, second = lab.sut.book(seat, "tester-a"), lab.sut.book(seat, "tester-b")
    how = "book() twice, one request after the other,"
    return {"seat": seat}, check_seat(lab, seat, [first, second], how)


def book_interleaved(variants: list[str]) -> ProbeFn:
    """Two requests for one seat per variant: a schedule like ``0101``, or ``cancel:1010``
    (book the seat, cancel it, then race two requests for it with that schedule)."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        steps = []
        for variant in variants:
            seat = take_seat(lab)
            cancel, _, order = variant.rpartition(":")
            schedule = [int(ch) for ch in order]
            how = f"book_concurrently(2 requests, schedule={schedule})"
            if cancel:
                held = lab.sut.book(seat, "tester-first")
                if held.get("ok"):
                    lab.sut.cancel(held["booking_id"])
                how = f"book(), cancel(), then {how}"
            pair = [(seat, "tester-a"), (seat, "tester-b")]
            results = lab.sut.book_concurrently(pair, schedule=schedule)
            steps.append({"variant": variant, **check_seat(lab, seat, results, how)})
        return {"variants": variants}, {"attempts": steps}

    return probe


def book_burst(sizes: list[int]) -> ProbeFn:
    """Bursts of requests for one seat each, interleaved by the system's seeded scheduler."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        steps = []
        for size in sizes:
            seat = take_seat(lab)
            who = [f"tester-{chr(ord('a') + i)}" for i in range(size)]
            results = lab.sut.book_concurrently([(seat, c) for c in who])
            how = f"book_concurrently({size} requests, seeded scheduler)"
            steps.append(check_seat(lab, seat, results, how))
        return {"sizes": sizes}, {"bursts": steps}

    return probe


def audit_bookings(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
    per_seat = Counter(b["seat"] for b in lab.sut.bookings())
    doubled = sorted(seat for seat, n in per_seat.items() if n > 1)
    if doubled:
        lab.flag(
            RACE,
            f"bookings() lists more than one confirmed booking for {', '.join(doubled)}, which "
            f"breaks count(confirmed bookings per seat) <= 1.",
        )
    return {}, {"bookings": sum(per_seat.values()), "seats_with_several": doubled}


def booking_recon(lab: Lab) -> dict[str, Any]:
    free = lab.sut.available()
    named = [s for s in re.findall(r"\b[A-Z]\d{1,2}\b", lab.task) if s in free]
    rest = [s for s in free if s not in named]
    lab.rng.shuffle(rest)
    lab.memory["seats"] = named + rest
    return {"show": lab.sut.show(), "free_seats": len(free), "seats_in_task": named}


def booking_plan(lab: Lab) -> list[Probe]:
    if lab.version == "v1":
        return [
            ("book_sequential", book_sequential),
            ("book_interleaved", book_interleaved(["0011"])),  # each request runs to the end
            ("book_sequential", book_sequential),
            ("audit_bookings", audit_bookings),
        ]
    variants = ["0101", "1010", "0110"]
    lab.rng.shuffle(variants)
    variants.append("cancel:" + lab.rng.choice(("0101", "1001")))
    return [
        ("book_sequential", book_sequential),
        ("book_interleaved", book_interleaved(variants)),
        ("book_burst", book_burst([lab.rng.choice((3, 4)) for _ in range(2)])),
        ("audit_bookings", audit_bookings),
    ]


# --- payment ---------------------------------------------------------------------------------


def charge_retry(amounts: list[str], retries: int) -> ProbeFn:
    """Per amount: charge with a lost response, retry with the same key, count the charges."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        steps = []
        for amount in amounts:
            customer = lab.rng.choice(lab.memory["customers"])
            key = lab.next_key("retry")
            try:
                lab.sut.charge(customer, amount, idempotency_key=key, lose_response=True)
                lost = False
            except ResponseLost:
                lost = True
            replies: list[dict[str, Any]] = []
            for _ in range(retries):
                try:
                    receipt = lab.sut.charge(customer, amount, idempotency_key=key)
                except PaymentError as exc:
                    replies.append({"refused": str(exc)})
                else:
                    replies.append(
                        {"charge_id": receipt["charge_id"], "replayed": receipt["replayed"]}
                    )
            charged = [c for c in lab.sut.charges(customer) if c["idempotency_key"] == key]
            if len(charged) != 1:
                lab.flag(
                    DOUBLE_CHARGE,
                    f"charge({customer!r}, {amount!r}, idempotency_key={key!r}, "
                    f"lose_response=True), then {retries} retries with the same key: the "
                    f"ledger holds {len(charged)} charges for the key, which breaks "
                    f"count(charges per idempotency key) == 1.",
                )
            steps.append(
                {
                    "customer_id": customer,
                    "amount": amount,
                    "idempotency_key": key,
                    "response_lost": lost,
                    "retries": replies,
                    "charges_for_key": len(charged),
                }
            )
        return {"amounts": amounts, "retries": retries}, {"attempts": steps}

    return probe


def refund_once(lab: Lab, charge: dict[str, Any], amount: str | None) -> dict[str, Any]:
    """Refund ``amount`` of a charge (None: what is left); compare receipt, ledger and the
    drop in net collected."""
    customer, charge_id = charge["customer_id"], charge["charge_id"]
    before = lab.sut.net_collected(customer)
    try:
        refund = lab.sut.refund(charge_id, amount)
    except PaymentError as exc:
        return {"charge_id": charge_id, "requested": amount or "rest", "refused": str(exc)}
    drop = before - lab.sut.net_collected(customer)
    ledger = [r for r in lab.sut.refunds(charge_id) if r["refund_id"] == refund["refund_id"]]
    asked = Decimal(refund["amount"])
    moved = Decimal(ledger[0]["amount"]) if ledger else Decimal(0)
    if moved != asked or drop != asked:
        lab.flag(
            REFUND_CENT,
            f"charge({customer!r}, {charge['amount']!r}, idempotency_key="
            f"{charge['idempotency_key']!r}) gave {charge_id}, then refund({charge_id!r}"
            f"{'' if amount is None else ', ' + repr(amount)}): the receipt says "
            f"{asked}, the refund ledger records {moved} and net_collected dropped by {drop}, "
            f"which breaks refunded amount == requested amount.",
        )
    return {
        "charge_id": charge_id,
        "requested": amount or "rest",
        "receipt_amount": asked,
        "ledger_amount": moved,
        "net_collected_drop": drop,
    }


def refund_amounts(full: list[str], partial: tuple[str, str] | None) -> ProbeFn:
    """Charge and fully refund each of ``full``; charge ``partial[0]`` and refund
    ``partial[1]`` then the rest."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        steps = []
        for amount in full:
            customer = lab.rng.choice(lab.memory["customers"])
            charge = lab.sut.charge(customer, amount, idempotency_key=lab.next_key("refund"))
            steps.append(refund_once(lab, charge, None))
        if partial is not None:
            total, part = partial
            customer = lab.rng.choice(lab.memory["customers"])
            charge = lab.sut.charge(customer, total, idempotency_key=lab.next_key("partial"))
            steps.append(refund_once(lab, charge, part))
            steps.append(refund_once(lab, charge, None))
        args = {"full": full, "partial": list(partial) if partial else None}
        return args, {"refunds": steps}

    return probe


def payment_recon(lab: Lab) -> dict[str, Any]:
    customers = lab.sut.customers()
    lab.memory["customers"] = [c["customer_id"] for c in customers]
    return {"customers": customers}


def cents(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randrange(low, high)}.{rng.randrange(100):02d}"


def payment_plan(lab: Lab) -> list[Probe]:
    task_amounts = amounts_in(lab.task)
    if lab.version == "v1":
        return [
            ("charge_retry", charge_retry(task_amounts[:1] or ["49.90"], 1)),
            ("refund_amounts", refund_amounts(task_amounts[-1:] or ["19.99"], None)),
        ]
    retry = task_amounts[:2]
    while len(retry) < 2:
        retry.append(cents(lab.rng, 5, 300))
    full = task_amounts + lab.rng.sample([t for t in FLOAT_TRAPS if t not in task_amounts], 3)
    partial = (cents(lab.rng, 20, 200), lab.rng.choice(FLOAT_TRAPS))
    return [
        ("charge_retry", charge_retry(retry, 2)),
        ("refund_amounts", refund_amounts(full[:5], partial)),
    ]


# --- tenant ----------------------------------------------------------------------------------

LEAK_TEXT = "which breaks: every row returned to tenant T has tenant == T."


def list_pages(tenants: list[str], full: bool) -> ProbeFn:
    """Page through each tenant's records (only page 1 unless ``full``)."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        size = lab.rng.randrange(3, 8) if full else 5
        steps = []
        for tenant in tenants:
            session = lab.sut.session(tenant)
            rows: list[dict[str, Any]] = []
            page, total = 1, 0
            while True:
                batch = session.list(page=page, page_size=size)
                rows += batch["items"]
                total = batch["total"]
                if not full or not batch["items"] or page * batch["page_size"] >= total:
                    break
                page += 1
            lab.memory.setdefault("rows", {})[tenant] = rows
            foreign = sorted({r["tenant"] for r in rows} - {tenant})
            if foreign:
                who = ", ".join(foreign)
                lab.flag(LEAK, f"session({tenant!r}).list() returned rows of {who}, {LEAK_TEXT}")
            ids = [r["record_id"] for r in rows]
            steps.append(
                {
                    "tenant": tenant,
                    "pages": page,
                    "rows": len(rows),
                    "total": total,
                    "duplicates": len(ids) - len(set(ids)),
                    "other_tenants": foreign,
                }
            )
        return {"tenants": tenants, "page_size": size, "all_pages": full}, {"sessions": steps}

    return probe


def search_prefixes(tenants: list[str], count: int) -> ProbeFn:
    """Search as each tenant with the task's prefixes, then seeded ones from known titles."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        rows = lab.memory.get("rows", {})
        steps = []
        for tenant in tenants:
            session = lab.sut.session(tenant)
            own = [r["title"] for r in rows.get(tenant, [])]
            others = [r["title"] for t, rs in sorted(rows.items()) if t != tenant for r in rs]
            pool = [t.split(" ")[0] for t in own] + [t[:3] for t in others] + ["", "In", "B"]
            prefixes = list(lab.memory["quoted"])
            while len(prefixes) < count:
                prefixes.append(lab.rng.choice(pool))
            prefixes = list(dict.fromkeys(prefixes))
            foreign: dict[str, list[str]] = {}
            hits = 0
            for prefix in prefixes:
                found = session.search(prefix)
                hits += len(found)
                for row in found:
                    if row["tenant"] != tenant:
                        foreign.setdefault(prefix, []).append(
                            f"{row['record_id']} ({row['tenant']})"
                        )
            for prefix, leaked in foreign.items():
                lab.flag(
                    LEAK,
                    f"session({tenant!r}).search({prefix!r}) returned {len(leaked)} rows of "
                    f"other tenants, e.g. {', '.join(leaked[:3])}, {LEAK_TEXT}",
                )
            steps.append(
                {
                    "tenant": tenant,
                    "prefixes": prefixes,
                    "hits": hits,
                    "foreign_hits": {p: len(v) for p, v in foreign.items()},
                }
            )
        return {"tenants": tenants, "prefixes_per_tenant": count}, {"sessions": steps}

    return probe


def get_foreign(tenants: list[str], count: int) -> ProbeFn:
    """As each tenant, fetch a few record ids that belong to other tenants."""

    def probe(lab: Lab) -> tuple[dict[str, Any], dict[str, Any]]:
        rows = lab.memory.get("rows", {})
        steps = []
        for tenant in tenants:
            session = lab.sut.session(tenant)
            foreign = [r["record_id"] for t, rs in sorted(rows.items()) if t != tenant for r in rs]
            if not foreign:  # nobody else listed yet: look at one other tenant's first page
                other = next(t for t in lab.memory["tenants"] if t != tenant)
                foreign = [r["record_id"] for r in lab.sut.session(other).list()["items"]]
            picked = lab.rng.sample(foreign, min(count, len(foreign)))
            outcome = {}
            for record_id in picked:
                try:
                    row = session.get(record_id)
                except RecordNotFound:
                    outcome[record_id] = "not found"
                    continue
                outcome[record_id] = f"returned ({row['tenant']})"
                if row["tenant"] != tenant:
                    lab.flag(
                        LEAK,
                        f"session({tenant!r}).get({record_id!r}) returned a row of "
                        f"{row['tenant']}, {LEAK_TEXT}",
                    )
            steps.append({"tenant": tenant, "outcome": outcome})
        return {"tenants": tenants, "ids_per_tenant": count}, {"sessions": steps}

    return probe


def tenant_recon(lab: Lab) -> dict[str, Any]:
    tenants = [t["tenant_id"] for t in lab.sut.tenants()]
    named = [t for t in re.findall(r"\bt-[a-z]+\b", lab.task) if t in tenants]
    lab.memory["tenants"] = list(dict.fromkeys(named + tenants))
    lab.memory["quoted"] = re.findall(r"'([^']+)'", lab.task)
    return {"tenants": tenants, "tenants_in_task": named, "prefixes_in_task": lab.memory["quoted"]}


def tenant_plan(lab: Lab) -> list[Probe]:
    tenants: list[str] = lab.memory["tenants"]
    if lab.version == "v1":
        first = tenants[:1]
        return [
            ("list_pages", list_pages(first, full=False)),
            ("search_prefixes", search_prefixes(first, 1)),
            ("get_foreign", get_foreign(first, 1)),
        ]
    return [
        ("list_pages", list_pages(tenants, full=True)),
        ("search_prefixes", search_prefixes(tenants, 4)),
        ("get_foreign", get_foreign(tenants, 2)),
    ]


# --- the agent -------------------------------------------------------------------------------

Recon = Callable[[Lab], dict[str, Any]]
Planner = Callable[[Lab], list[Probe]]
SYSTEM_PROBES: dict[str, tuple[Recon, Planner]] = {
    "wallet": (wallet_recon, wallet_plan),
    "booking": (booking_recon, booking_plan),
    "payment": (payment_recon, payment_plan),
    "tenant": (tenant_recon, tenant_plan),
}


def call(lab: Lab, name: str, probe: ProbeFn) -> None:
    """Run one probe and write it down as a tool call; a crash is a failure, not a verdict."""
    args: dict[str, Any] = {}
    try:
        args, result = probe(lab)
    except Exception as exc:  # a refusal the probe did not plan for, a crash, or our mistake
        result = {"error": repr(exc)}
        lab.failures.append(f"{name}: {exc!r}")
    lab.calls.append({"name": name, "args": jsonable(args), "result": jsonable(result)})


def write_report(lab: Lab, input: dict[str, Any], seed: int, clock: str, bugs: list[str]) -> str:
    head = (
        f"Test agent {lab.version} on {input.get('system')} build {input.get('build')} "
        f"(system seed {seed}, clock {clock}).\nInvariant checked: {lab.invariant}\n"
    )
    names = Counter(c["name"] for c in lab.calls)
    ran = "; ".join(f"{n} x{k}" if k > 1 else n for n, k in names.items())
    lines = [head + f"Probes run ({len(lab.calls)}): {ran}."]
    if lab.failures:
        lines.append("Probes that did not finish: " + "; ".join(lab.failures) + ".")
    if bugs:
        lines.append(f"Bugs found ({len(bugs)}): {', '.join(bugs)}.")
        for bug in bugs:
            lines.append(f"- {bug}: to reproduce, {lab.flags[bug][0]}")
            more = len(lab.flags[bug]) - 1
            if more:
                lines.append(f"  ({more} more observation{'s' if more > 1 else ''} showed it too.)")
    else:
        lines.append("No probe saw the invariant break; no bug is reported.")
    return "\n".join(lines)


def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Probe ``input['system']`` at ``input['build']`` and report the bugs found."""
    version = str((ctx.config or {}).get("version", "v2"))
    if version not in VERSIONS:
        raise ValueError(f"unknown version {version!r}; known: {list(VERSIONS)}")
    system_seed = ctx.case_seed if ctx.case_seed is not None else ctx.seed
    clock = ctx.now()
    rng = random.Random(f"probe-agent:{version}:{ctx.case_id}:{ctx.seed}")
    name = str(input.get("system", ""))
    task = str(input.get("task", ""))
    lab = Lab(None, rng, task, str(input.get("invariant", "")), version)

    opened = True
    try:
        lab.sut = sut_systems.open_system(
            name, str(input.get("build", "")), seed=system_seed, clock=clock
        )
        recon, planner = SYSTEM_PROBES[name]
    except (ValueError, KeyError) as exc:
        opened = False
        lab.failures.append(f"open_system: {exc}")
        lab.calls.append(
            {"name": "describe", "args": {"system": name}, "result": {"error": str(exc)}}
        )

    if opened:
        call(lab, "describe", lambda lab: ({"system": name}, {**lab.sut.describe(), **recon(lab)}))
        plan: list[Probe] = []
        if not lab.failures:
            try:
                plan = planner(lab)
            except Exception as exc:  # the agent's own mistake
                lab.failures.append(f"planning: {exc!r}")
        if version == "v1" and len(plan) > 1 and rng.random() < V1_FORGETS:
            del plan[rng.randrange(len(plan))]
        for probe_name, probe in plan:
            call(lab, probe_name, probe)

    bugs = sorted(lab.flags)
    report = write_report(lab, input, system_seed, clock.isoformat(), bugs)
    consistent = all(bug in lab.flags and bug in report for bug in bugs)
    task_success = opened and not lab.failures and consistent

    input_tokens = BRIEF_TOKENS + tokens(json.dumps(input, ensure_ascii=False))
    input_tokens += sum(tokens(json.dumps(c["result"], ensure_ascii=False)) for c in lab.calls)
    output_tokens = tokens(report) + sum(
        TOKENS_PER_CALL + tokens(c["name"] + json.dumps(c["args"], ensure_ascii=False))
        for c in lab.calls
    )
    return {
        "output": {"bugs": bugs, "task_success": task_success, "report": report},
        "reply": report,
        "tool_calls": lab.calls,
        "paused_for_approval": False,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": round(PRICE_PER_CALL_USD * len(lab.calls), 6),
        },
    }
