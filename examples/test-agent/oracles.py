"""Oracles of the ``test-agent`` suite.

``planted_bugs`` computes a case's expected bug set by exercising the named build: it opens
fresh instances of the system, runs each invariant probe of that system, and returns the
sorted ids of the bugs whose invariant broke. It never reads the ``BUILDS`` table's planted
lists (``open_system`` uses them to pick the variant; the probes only see the public API),
and the suite's tests check that the two agree for every build.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from caseforge.oracle import oracle

SUITE_DIR = Path(__file__).resolve().parent
SYSTEMS_MODULE = "caseforge_example_test_agent_systems"

# Probes run on fresh instances built from these seeds and this clock, so the result is a
# property of the build, not of one case's seed.
PROBE_SEEDS = (7, 42, 2026)
PROBE_CLOCK = datetime(2026, 7, 1, tzinfo=UTC)


def load_systems() -> ModuleType:
    """The suite's ``sut_systems`` package, imported by path under a name unique to this suite."""
    module = sys.modules.get(SYSTEMS_MODULE)
    if module is None:
        init = SUITE_DIR / "sut_systems" / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            SYSTEMS_MODULE, init, submodule_search_locations=[str(init.parent)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {init}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[SYSTEMS_MODULE] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[SYSTEMS_MODULE]
            raise
    return module


# --- probes: each returns True when its invariant is violated ----------------------------


def wallet_total_changes(system: Any) -> bool:
    """sum(balances before) == sum(balances after), per currency, over a few transfers."""
    by_currency: dict[str, list[str]] = {}
    for wallet in system.wallets():
        by_currency.setdefault(wallet["currency"], []).append(wallet["wallet_id"])
    for currency, ids in by_currency.items():
        if len(ids) < 2:
            continue
        source, target = ids[0], ids[1]
        for amount in ("100.005", "0.015", "250.125", "7.010", "33.333"):
            before = sum(system.balances(currency).values(), Decimal(0))
            system.transfer(source, target, amount)
            after = sum(system.balances(currency).values(), Decimal(0))
            if before != after:
                return True
            source, target = target, source
    return False


def booking_seat_sold_twice(system: Any) -> bool:
    """count(confirmed bookings per seat) <= 1 after concurrent requests for one seat."""
    free = system.available()
    system.book_concurrently([(free[0], "probe-a"), (free[0], "probe-b")], schedule=[0, 1, 0, 1])
    for round_no, seat in enumerate(free[1:9]):
        system.book_concurrently([(seat, f"probe-{round_no}-{who}") for who in "abc"])
    per_seat = Counter(b["seat"] for b in system.bookings())
    return any(count > 1 for count in per_seat.values())


def payment_retry_charges_twice(system: Any) -> bool:
    """count(charges per idempotency key) == 1 after a lost response and two retries."""
    customer = system.customers()[0]["customer_id"]
    key = "probe-retry-0001"
    try:
        system.charge(customer, "49.90", idempotency_key=key, lose_response=True)
    except Exception as exc:
        if type(exc).__name__ != "ResponseLost":
            raise
    system.charge(customer, "49.90", idempotency_key=key)
    system.charge(customer, "49.90", idempotency_key=key)
    return sum(c["idempotency_key"] == key for c in system.charges(customer)) != 1


def payment_refund_differs(system: Any) -> bool:
    """A full refund moves exactly the charged amount back (net collected drops by it)."""
    customer = system.customers()[-1]["customer_id"]
    for amount in ("19.99", "0.29", "4.35", "1.15", "250.00"):
        receipt = system.charge(customer, amount, idempotency_key=f"probe-refund-{amount}")
        before = system.net_collected(customer)
        system.refund(receipt["charge_id"])
        if before - system.net_collected(customer) != Decimal(amount):
            return True
    return False


def tenant_sees_other_rows(system: Any) -> bool:
    """Every row returned to tenant T (list, search, get) has tenant == T."""
    own: dict[str, list[dict[str, Any]]] = {}
    for tenant in system.tenants():
        session = system.session(tenant["tenant_id"])
        rows: list[dict[str, Any]] = []
        page = 1
        while True:
            batch = session.list(page=page, page_size=5)
            rows += batch["items"]
            if page * batch["page_size"] >= batch["total"]:
                break
            page += 1
        own[session.tenant_id] = rows
    for tenant_id, rows in own.items():
        session = system.session(tenant_id)
        prefixes = {""} | {row["title"][:3] for row in rows}
        for prefix in sorted(prefixes):
            if any(hit["tenant"] != tenant_id for hit in session.search(prefix)):
                return True
        for other_id, other_rows in own.items():
            if other_id == tenant_id:
                continue
            for row in other_rows[:3]:
                try:
                    session.get(row["record_id"])
                except Exception as exc:
                    if type(exc).__name__ != "RecordNotFound":
                        raise
                else:
                    return True
    return False


class Invariant(NamedTuple):
    """An invariant of one system, the bug id its violation reveals, and its probe."""

    system: str
    bug: str
    text: str
    probe: Callable[[Any], bool]


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "wallet",
        "rounding-0.005",
        "sum(balances before) == sum(balances after), per currency",
        wallet_total_changes,
    ),
    Invariant(
        "booking",
        "double-booking-race",
        "count(confirmed bookings per seat) <= 1",
        booking_seat_sold_twice,
    ),
    Invariant(
        "payment",
        "double-charge-no-idempotency",
        "count(charges per idempotency key) == 1",
        payment_retry_charges_twice,
    ),
    Invariant(
        "payment",
        "refund-off-by-one-cent",
        "refunded amount == requested amount",
        payment_refund_differs,
    ),
    Invariant(
        "tenant",
        "cross-tenant-leak",
        "every row returned to tenant T has tenant == T",
        tenant_sees_other_rows,
    ),
)


def violated(system: Any, invariants: tuple[Invariant, ...] = INVARIANTS) -> list[str]:
    """Bug ids whose invariant breaks on this (fresh) system instance, sorted.

    Each probe gets the instance in turn, so pass a fresh instance per probe when probes
    must not see each other's writes; :func:`planted_bugs` does.
    """
    return sorted(
        {inv.bug for inv in invariants if inv.system == system.name and inv.probe(system)}
    )


@oracle("planted_bugs")
def planted_bugs(input: dict[str, Any], **args: Any) -> list[str]:
    """The sorted bug ids of ``input['build']`` whose invariants its probes break.

    ``args`` may carry ``seeds`` (a list of ints) to probe with other seeds than
    :data:`PROBE_SEEDS`; nothing else.
    """
    seeds = tuple(int(s) for s in args.pop("seeds", PROBE_SEEDS))
    if args:
        raise TypeError(f"planted_bugs: unexpected args {sorted(args)}")
    systems = load_systems()
    name, build = input["system"], input["build"]
    found: set[str] = set()
    for invariant in INVARIANTS:
        if invariant.system != name:
            continue
        for seed in seeds:
            instance = systems.open_system(name, build, seed=seed, clock=PROBE_CLOCK)
            if invariant.probe(instance):
                found.add(invariant.bug)
                break
    if not any(inv.system == name for inv in INVARIANTS):
        # open_system names the known systems in its error
        systems.open_system(name, build, seed=seeds[0], clock=PROBE_CLOCK)
    return sorted(found)
