"""Tests of the test-agent example suite: its simulated systems, its oracle and its cases."""

from __future__ import annotations

import importlib.util
import re
import sys
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ruamel.yaml import YAML

SUITE = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


oracles = _load("caseforge_example_test_agent_oracles", SUITE / "oracles.py")
sut_systems = oracles.load_systems()
BUILDS: dict[str, Any] = sut_systems.BUILDS
CLOCK = datetime(2026, 7, 1, tzinfo=UTC)
SEEDS = (1, 42, 31337)


def _open(build: str, seed: int = 42, clock: datetime = CLOCK) -> Any:
    return sut_systems.open_system(BUILDS[build].system, build, seed=seed, clock=clock)


def _invariants(system: str) -> list[Any]:
    return [inv for inv in oracles.INVARIANTS if inv.system == system]


def _cases() -> list[tuple[Path, dict[str, Any]]]:
    yaml = YAML(typ="safe")
    return [
        (path, yaml.load(path.read_text("utf-8"))) for path in sorted(SUITE.glob("cases/*.yaml"))
    ]


CASES = _cases()


# --- builds, invariants and the oracle -----------------------------------------------------


def test_every_system_has_a_clean_build_and_every_bug_a_build() -> None:
    for name, cls in sut_systems.SYSTEMS.items():
        builds = [b for b in BUILDS.values() if b.system == name]
        assert any(not b.planted for b in builds), name
        planted = {bug for b in builds for bug in b.planted}
        module = sys.modules[cls.__module__]
        assert planted == set(module.BUG_IDS), name
        assert {inv.bug for inv in _invariants(name)} == planted, name
    assert any(len(b.planted) > 1 for b in BUILDS.values())


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_oracle_equals_builds_table(build: str) -> None:
    entry = BUILDS[build]
    computed = oracles.planted_bugs({"system": entry.system, "build": build})
    assert computed == sorted(entry.planted)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("build", sorted(BUILDS))
def test_each_invariant_breaks_exactly_on_its_planted_bug(build: str, seed: int) -> None:
    entry = BUILDS[build]
    for invariant in _invariants(entry.system):
        broken = invariant.probe(_open(build, seed))
        assert broken == (invariant.bug in entry.planted), (build, seed, invariant.bug)


def test_oracle_rejects_unknown_args_and_builds() -> None:
    with pytest.raises(TypeError):
        oracles.planted_bugs({"system": "wallet", "build": "wallet@b41"}, scenario="x")
    with pytest.raises(ValueError, match="unknown build"):
        oracles.planted_bugs({"system": "wallet", "build": "wallet@b00"})
    with pytest.raises(ValueError, match="belongs to"):
        oracles.planted_bugs({"system": "tenant", "build": "wallet@b41"})
    with pytest.raises(ValueError, match="unknown system"):
        oracles.planted_bugs({"system": "ledger", "build": "wallet@b41"})


# --- each planted bug, by hand ---------------------------------------------------------------


def _two_wallets(sut: Any, currency: str) -> tuple[str, str]:
    ids = [w["wallet_id"] for w in sut.wallets() if w["currency"] == currency]
    return ids[0], ids[1]


@pytest.mark.parametrize(
    ("amount", "drift"),
    [("100.005", Decimal("-0.005")), ("0.015", Decimal("0.005")), ("7.010", Decimal(0))],
)
def test_wallet_rounding_moves_half_a_cent(amount: str, drift: Decimal) -> None:
    for build, expected in (("wallet@b41", drift), ("wallet@b57", Decimal(0))):
        sut = _open(build)
        a, b = _two_wallets(sut, "VND")
        before = sum(sut.balances("VND").values())
        receipt = sut.transfer(a, b, amount)
        assert receipt["amount"] == amount
        assert sum(sut.balances("VND").values()) - before == expected, build


def test_wallet_refuses_bad_transfers() -> None:
    sut = _open("wallet@b57")
    vnd, usd = _two_wallets(sut, "VND")[0], _two_wallets(sut, "USD")[0]
    for args in ((vnd, usd, "1"), (vnd, vnd, "1"), (vnd, "W0", "1"), (vnd, usd, "1.0001")):
        with pytest.raises(sut_systems.wallet.WalletError):
            sut.transfer(*args)
    with pytest.raises(sut_systems.wallet.WalletError, match="decimals"):
        sut.transfer(*_two_wallets(sut, "USD"), "0.0005")


def test_booking_race_needs_an_interleaving() -> None:
    for build, winners in (("booking@r7", 2), ("booking@r8", 1)):
        sut = _open(build)
        results = sut.book_concurrently([("C4", "an"), ("C4", "binh")], schedule=[0, 1, 0, 1])
        assert sum(r["ok"] for r in results) == winners, build
        assert len(sut.bookings("C4")) == winners, build
        # one request after the other is always safe
        assert sut.book("A1", "an")["ok"] and not sut.book("A1", "binh")["ok"]
        assert len(sut.bookings("A1")) == 1


def test_booking_seeded_scheduler_is_deterministic_and_finds_the_race() -> None:
    def burst(seed: int) -> list[dict[str, Any]]:
        sut = _open("booking@r7", seed)
        out = []
        for n, seat in enumerate(["A1", "A2", "A3", "A4", "A5", "A6"]):
            out += sut.book_concurrently([(seat, f"c{n}a"), (seat, f"c{n}b")])
        return out

    assert burst(9) == burst(9)
    assert any(r["ok"] for r in burst(9))
    sut = _open("booking@r7", 9)
    for seat in ("B1", "B2", "B3", "B4", "B5", "B6"):
        sut.book_concurrently([(seat, "x"), (seat, "y"), (seat, "z")])
    assert any(len(sut.bookings(s)) > 1 for s in ("B1", "B2", "B3", "B4", "B5", "B6"))


def test_booking_cancel_frees_the_seat() -> None:
    sut = _open("booking@r8")
    booking = sut.book("B6", "an")
    assert "B6" not in sut.available()
    assert sut.cancel(booking["booking_id"])["ok"]
    assert "B6" in sut.available()
    assert not sut.cancel("BK-missing")["ok"]


def _charge_with_retry(sut: Any, key: str, amount: str = "49.90") -> str:
    customer = sut.customers()[0]["customer_id"]
    with pytest.raises(sut_systems.payment.ResponseLost):
        sut.charge(customer, amount, idempotency_key=key, lose_response=True)
    sut.charge(customer, amount, idempotency_key=key)
    return customer


def test_payment_retry_charges_twice_only_without_idempotency() -> None:
    for build, charges in (("payment@2.3.0", 2), ("payment@2.3.1", 1), ("payment@2.4.0", 2)):
        sut = _open(build)
        customer = _charge_with_retry(sut, "order-77")
        assert len(sut.charges(customer)) == charges, build
    clean = _open("payment@2.3.1")
    customer = _charge_with_retry(clean, "order-78")
    assert clean.charge(customer, "49.90", idempotency_key="order-78")["replayed"] is True
    with pytest.raises(sut_systems.payment.PaymentError, match="different parameters"):
        clean.charge(customer, "50.00", idempotency_key="order-78")


def test_payment_refund_loses_a_cent_on_float_truncation() -> None:
    for build, moved in (
        ("payment@2.4.2", "19.98"),
        ("payment@2.4.0", "19.98"),
        ("payment@2.3.0", "19.99"),
    ):
        sut = _open(build)
        customer = sut.customers()[0]["customer_id"]
        charge = sut.charge(customer, "19.99", idempotency_key="k1")
        receipt = sut.refund(charge["charge_id"])
        assert receipt["amount"] == "19.99"
        assert sut.refunds(charge["charge_id"])[0]["amount"] == moved, build
    sut = _open("payment@2.3.1")
    customer = sut.customers()[0]["customer_id"]
    charge = sut.charge(customer, "10.00", idempotency_key="k2")
    with pytest.raises(sut_systems.payment.PaymentError):
        sut.refund(charge["charge_id"], "10.01")


def test_tenant_leak_is_in_search_only() -> None:
    for build, leaks in (("tenant@t19", True), ("tenant@t20", False)):
        sut = _open(build)
        session = sut.session("t-hoasen")
        hits = session.search("invoice")
        assert hits, build
        assert any(h["tenant"] != "t-hoasen" for h in hits) == leaks, build
        listing = session.list(page=1, page_size=100)
        assert {r["tenant"] for r in listing["items"]} == {"t-hoasen"}
        other = sut.session("t-songda").list()["items"][0]["record_id"]
        with pytest.raises(sut_systems.tenant.RecordNotFound):
            session.get(other)
    with pytest.raises(sut_systems.tenant.TenantError):
        _open("tenant@t20").session("t-unknown")


# --- determinism -----------------------------------------------------------------------------


def _script(build: str, seed: int, clock: datetime) -> tuple[Any, Any]:
    """Run a fixed session against a fresh instance; return (outputs, final state)."""
    sut = _open(build, seed, clock)
    name = BUILDS[build].system
    out: list[Any] = []
    if name == "wallet":
        a, b = _two_wallets(sut, "USD")
        out += [sut.transfer(a, b, "12.345"), sut.transfer(b, a, "0.005")]
    elif name == "booking":
        out += sut.book_concurrently([("A2", "x"), ("A2", "y"), ("B3", "z")])
    elif name == "payment":
        customer = sut.customers()[0]["customer_id"]
        charge = sut.charge(customer, "30.00", idempotency_key="d1")
        out += [charge, sut.charge(customer, "30.00", idempotency_key="d1")]
        out.append(sut.refund(charge["charge_id"], "4.35"))
    else:
        session = sut.session("t-bluefin")
        out += [session.list(page=2, page_size=3), session.search("B")]
    return out, sut.state()


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_deterministic_for_a_seed_and_clock(build: str) -> None:
    clock = datetime(2026, 9, 1, 9, 30, tzinfo=UTC)
    assert _script(build, 17, clock) == _script(build, 17, clock)
    assert _open(build, 17).state() != _open(build, 18).state()
    assert _open(build, 17, clock).state()["now"] == clock.isoformat()
    # a naive clock or an ISO string mean the same instant in UTC
    naive = _open(build, 17, datetime(2026, 9, 1, 9, 30)).state()
    assert naive == _open(build, 17, clock).state()
    assert (
        sut_systems.open_system(
            BUILDS[build].system, build, seed=17, clock=clock.isoformat()
        ).state()
        == naive
    )


def test_open_system_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown system"):
        sut_systems.open_system("ledger", "wallet@b41", seed=1, clock=CLOCK)
    with pytest.raises(ValueError, match="belongs to"):
        sut_systems.open_system("booking", "wallet@b41", seed=1, clock=CLOCK)
    with pytest.raises(ValueError, match="unknown bug ids"):
        sut_systems.SYSTEMS["wallet"](seed=1, clock=CLOCK, faults=frozenset({"cross-tenant-leak"}))


# --- the case files --------------------------------------------------------------------------

_TELLTALE = re.compile(r"\b(bugs?|buggy|clean|planted|fixed|broken|sạch|cấy)\b", re.IGNORECASE)


def test_case_counts_and_languages() -> None:
    assert len(CASES) >= 14
    planted = [c for _, c in CASES if c["expect"]["bugs"]["values"]]
    clean = [c for _, c in CASES if not c["expect"]["bugs"]["values"]]
    assert len(planted) >= 9 and len(clean) >= 5
    assert {"vi", "en"} <= {tag for _, c in CASES for tag in c["tags"]}
    assert {c["input"]["build"] for _, c in CASES} == set(BUILDS)
    tasks = [c["input"]["task"] for _, c in CASES]
    assert len(set(tasks)) == len(tasks)


@pytest.mark.parametrize(("path", "case"), CASES, ids=[p.stem for p, _ in CASES])
def test_case_file_shape(path: Path, case: dict[str, Any]) -> None:
    assert case["id"] == path.stem and re.fullmatch(r"[a-z0-9-]+", case["id"])
    assert set(case["input"]) == {"task", "system", "build", "invariant"}
    assert BUILDS[case["input"]["build"]].system == case["input"]["system"]
    for value in [case["id"], *case["input"].values()]:
        assert not _TELLTALE.search(value), f"{path.name}: input or id gives the answer away"
    assert isinstance(case["seed"], int)
    assert isinstance(case["clock"], datetime) and case["clock"].tzinfo is not None
    kind = "planted" if case["expect"]["bugs"]["values"] else "clean"
    assert kind in case["tags"] and case["input"]["system"] in case["tags"]
    assert case["expect"]["bugs"]["mode"] == "exact_set"


@pytest.mark.parametrize(("path", "case"), CASES, ids=[p.stem for p, _ in CASES])
def test_case_bugs_equal_the_oracle(path: Path, case: dict[str, Any]) -> None:
    check = case["expect"]["bugs"]
    assert check["oracle"] == "planted_bugs"
    assert check["values"] == oracles.planted_bugs(case["input"], **check.get("args", {}))


@pytest.mark.parametrize(("path", "case"), CASES, ids=[p.stem for p, _ in CASES])
def test_case_bugs_show_with_the_case_seed_and_clock(path: Path, case: dict[str, Any]) -> None:
    """An agent working with the case's own seed and clock can reach the same bug set."""
    build, seed, clock = case["input"]["build"], case["seed"], case["clock"]
    found = sorted(
        inv.bug
        for inv in _invariants(case["input"]["system"])
        if inv.probe(_open(build, seed, clock))
    )
    assert found == case["expect"]["bugs"]["values"]


@pytest.mark.parametrize(("path", "case"), CASES, ids=[p.stem for p, _ in CASES])
def test_case_task_names_things_that_exist(path: Path, case: dict[str, Any]) -> None:
    sut = _open(case["input"]["build"], case["seed"], case["clock"])
    task = case["input"]["task"]
    if case["input"]["system"] == "booking":
        for seat in re.findall(r"\b[A-H]\d{1,2}\b", task):
            assert seat in sut.available(), f"{path.name}: seat {seat} is not free"
    if case["input"]["system"] == "tenant":
        known = {t["tenant_id"] for t in sut.tenants()}
        assert set(re.findall(r"\bt-[a-z]+\b", task)) <= known
        for prefix in re.findall(r"'([^']+)'", task):
            assert sut.session(next(iter(known))).search(prefix), prefix
