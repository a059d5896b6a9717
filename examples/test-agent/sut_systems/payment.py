"""A card payment gateway: charges with an idempotency key, refunds, a ledger.

``charge(..., lose_response=True)`` simulates a network timeout: the gateway processes
the charge but the caller gets :class:`ResponseLost` instead of the receipt, which is
exactly when a client retries with the same idempotency key.

Planted bug ``double-charge-no-idempotency``: the idempotency key is stored but never
looked up, so a retry with the same key charges the card again. The fixed variant
returns the original charge (``replayed: true``) and refuses a reused key whose amount
or customer differs.

Planted bug ``refund-off-by-one-cent``: the refund converts the amount to cents through
a float and truncates (``int(float(amount) * 100)``), so refunding 19.99 moves 19.98.
The refund receipt echoes the requested amount; the ledger records what moved. The
fixed variant converts exactly.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from ._common import SimulatedSystem, make_rng, parse_amount

BUG_IDEMPOTENCY = "double-charge-no-idempotency"
BUG_REFUND = "refund-off-by-one-cent"
BUG_IDS = (BUG_IDEMPOTENCY, BUG_REFUND)

PLACES = 2
_NAMES = ("Công ty Mây Tre Việt", "Lotus Print House", "Quán Cà Phê Gió Nam", "Tidewater Books")


class PaymentError(Exception):
    """A request was refused (unknown customer or charge, bad amount, key reuse...)."""


class ResponseLost(Exception):
    """The gateway processed the request but the response never reached the caller."""


class PaymentSystem(SimulatedSystem):
    """Customers, charges, refunds. Amounts in USD with 2 decimals."""

    name = "payment"
    bug_ids = BUG_IDS

    def __init__(
        self, *, seed: int, clock: datetime | str, faults: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(seed=seed, clock=clock, faults=faults)
        rng = make_rng(seed, "payment")
        self._ids = make_rng(seed, "payment-ids")
        names = list(_NAMES)
        rng.shuffle(names)
        self._customers = {
            f"cus_{rng.randrange(16**6):06x}": name for name in names[: rng.randint(2, 4)]
        }
        self._charges: list[dict[str, Any]] = []
        self._refunds: list[dict[str, Any]] = []
        self._by_key: dict[str, dict[str, Any]] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "summary": "Card charges with an idempotency key, refunds and a ledger (USD).",
            "operations": {
                "customers()": "list of {customer_id, name}",
                "charge(customer_id, amount, idempotency_key=..., lose_response=False)": "receipt "
                "{charge_id, ..., replayed}; lose_response=True raises ResponseLost after the "
                "gateway has processed the request",
                "charges(customer_id=None)": "ledger of charges",
                "refund(charge_id, amount=None)": "receipt; amount None refunds what is left",
                "refunds(charge_id=None)": "ledger of refunds",
                "net_collected(customer_id)": "Decimal: charges minus refunds",
                "state()": "JSON-able snapshot",
            },
        }

    def customers(self) -> list[dict[str, str]]:
        return [{"customer_id": cid, "name": name} for cid, name in self._customers.items()]

    def charge(
        self,
        customer_id: str,
        amount: object,
        *,
        idempotency_key: str,
        lose_response: bool = False,
    ) -> dict[str, Any]:
        if customer_id not in self._customers:
            raise PaymentError(f"unknown customer {customer_id!r}")
        if not isinstance(idempotency_key, str) or not idempotency_key:
            raise PaymentError("idempotency_key must be a non-empty string")
        try:
            value = parse_amount(amount, PLACES)
        except ValueError as exc:
            raise PaymentError(str(exc)) from None
        if value <= 0:
            raise PaymentError(f"amount must be positive, got {value}")
        previous = self._by_key.get(idempotency_key)
        if previous is not None and BUG_IDEMPOTENCY not in self._faults:
            if previous["customer_id"] != customer_id or previous["amount"] != str(value):
                raise PaymentError(
                    f"idempotency key {idempotency_key!r} was used with different parameters"
                )
            receipt = {**previous, "replayed": True}
        else:
            record = {
                "charge_id": f"ch_{self._ids.randrange(16**8):08x}",
                "customer_id": customer_id,
                "amount": str(value),
                "currency": "USD",
                "idempotency_key": idempotency_key,
                "status": "succeeded",
                "at": self._clock.tick(),
            }
            self._charges.append(record)
            self._by_key[idempotency_key] = record
            receipt = {**record, "replayed": False}
        if lose_response:
            raise ResponseLost(f"timed out waiting for the gateway (key {idempotency_key!r})")
        return receipt

    def charges(self, customer_id: str | None = None) -> list[dict[str, Any]]:
        return [
            dict(c) for c in self._charges if customer_id is None or c["customer_id"] == customer_id
        ]

    def _refunded(self, charge_id: str) -> Decimal:
        return sum(
            (Decimal(r["amount"]) for r in self._refunds if r["charge_id"] == charge_id),
            Decimal("0.00"),
        )

    def refund(self, charge_id: str, amount: object = None) -> dict[str, Any]:
        charge = next((c for c in self._charges if c["charge_id"] == charge_id), None)
        if charge is None:
            raise PaymentError(f"unknown charge {charge_id!r}")
        left = Decimal(charge["amount"]) - self._refunded(charge_id)
        if amount is None:
            requested = left
        else:
            try:
                requested = parse_amount(amount, PLACES)
            except ValueError as exc:
                raise PaymentError(str(exc)) from None
        if requested <= 0 or requested > left:
            raise PaymentError(f"refund of {requested} not possible: {left} left on {charge_id}")
        moved = requested
        if BUG_REFUND in self._faults:
            moved = Decimal(int(float(requested) * 100)).scaleb(-PLACES)
        at = self._clock.tick()
        refund_id = f"re_{self._ids.randrange(16**8):08x}"
        self._refunds.append(
            {"refund_id": refund_id, "charge_id": charge_id, "amount": str(moved), "at": at}
        )
        return {
            "refund_id": refund_id,
            "charge_id": charge_id,
            "amount": str(requested),
            "status": "succeeded",
            "at": at,
        }

    def refunds(self, charge_id: str | None = None) -> list[dict[str, Any]]:
        return [dict(r) for r in self._refunds if charge_id is None or r["charge_id"] == charge_id]

    def net_collected(self, customer_id: str) -> Decimal:
        total = Decimal("0.00")
        for charge in self.charges(customer_id):
            total += Decimal(charge["amount"]) - self._refunded(charge["charge_id"])
        return total

    def state(self) -> dict[str, Any]:
        return {
            "customers": self.customers(),
            "charges": self.charges(),
            "refunds": self.refunds(),
            "now": self._clock.now().isoformat(),
        }
