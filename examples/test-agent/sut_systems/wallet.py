"""A wallet service: wallets in VND or USD, transfers with amounts to 3 decimals.

Planted bug ``rounding-0.005``: the credit leg of a transfer passes through a 2-decimal
formatting step (banker's rounding) while the debit leg keeps 3 decimals. A transfer of
``100.005`` debits 100.005 and credits 100.00, so 0.005 disappears; ``0.015`` credits
0.02, so 0.005 appears from nowhere. The receipt still shows the requested amount; only
the balances tell. The fixed variant moves the exact amount on both legs.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from ._common import SimulatedSystem, make_rng, parse_amount

BUG_ROUNDING = "rounding-0.005"
BUG_IDS = (BUG_ROUNDING,)

PLACES = 3
_CENT = Decimal("0.01")
_OWNERS = ("Nguyễn Thu Hà", "Trần Quốc Bảo", "Lê Mỹ Linh", "Phạm Gia Huy", "Đỗ Khánh Vy")
# (currency, number of wallets, lowest and highest opening balance in thousandths)
_LAYOUT = (("VND", 3, 500_000_000, 90_000_000_000), ("USD", 2, 5_000_000, 900_000_000))


class WalletError(Exception):
    """A transfer was refused (unknown wallet, currency mismatch, insufficient funds...)."""


class WalletSystem(SimulatedSystem):
    """Wallets with balances, transfers and a transaction history. Deterministic per seed."""

    name = "wallet"
    bug_ids = BUG_IDS

    def __init__(
        self, *, seed: int, clock: datetime | str, faults: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(seed=seed, clock=clock, faults=faults)
        rng = make_rng(seed, "wallet")
        self._ids = make_rng(seed, "wallet-ids")
        self._wallets: dict[str, dict[str, Any]] = {}
        owners = list(_OWNERS)
        rng.shuffle(owners)
        for currency, count, low, high in _LAYOUT:
            for _ in range(count):
                wallet_id = self._new_id("W")
                self._wallets[wallet_id] = {
                    "wallet_id": wallet_id,
                    "owner": owners.pop(),
                    "currency": currency,
                    "balance": Decimal(rng.randrange(low, high)).scaleb(-PLACES),
                }
        self._history: list[dict[str, Any]] = []

    def _new_id(self, prefix: str) -> str:
        while True:
            candidate = f"{prefix}{self._ids.randrange(10_000, 100_000)}"
            if candidate not in self._wallets:
                return candidate

    def describe(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "summary": "Wallets in VND or USD; transfers between wallets of one currency, "
            "amounts with up to 3 decimals.",
            "operations": {
                "wallets()": "list of {wallet_id, owner, currency}",
                "balance(wallet_id)": "Decimal balance",
                "balances(currency=None)": "{wallet_id: Decimal}",
                "transfer(from_wallet, to_wallet, amount, memo='')": "receipt; raises WalletError",
                "history()": "list of receipts, oldest first",
                "state()": "JSON-able snapshot",
            },
        }

    def wallets(self) -> list[dict[str, str]]:
        return [
            {"wallet_id": w["wallet_id"], "owner": w["owner"], "currency": w["currency"]}
            for w in self._wallets.values()
        ]

    def _wallet(self, wallet_id: str) -> dict[str, Any]:
        try:
            return self._wallets[wallet_id]
        except KeyError:
            raise WalletError(f"unknown wallet {wallet_id!r}") from None

    def balance(self, wallet_id: str) -> Decimal:
        return Decimal(self._wallet(wallet_id)["balance"])

    def balances(self, currency: str | None = None) -> dict[str, Decimal]:
        return {
            wid: Decimal(w["balance"])
            for wid, w in self._wallets.items()
            if currency is None or w["currency"] == currency
        }

    def transfer(
        self, from_wallet: str, to_wallet: str, amount: object, memo: str = ""
    ) -> dict[str, Any]:
        try:
            value = parse_amount(amount, PLACES)
        except ValueError as exc:
            raise WalletError(str(exc)) from None
        if value <= 0:
            raise WalletError(f"amount must be positive, got {value}")
        source, target = self._wallet(from_wallet), self._wallet(to_wallet)
        if source is target:
            raise WalletError("cannot transfer a wallet to itself")
        if source["currency"] != target["currency"]:
            raise WalletError(
                f"currency mismatch: {source['currency']} wallet to {target['currency']} wallet"
            )
        if source["balance"] < value:
            raise WalletError(f"insufficient funds in {from_wallet}")
        debit = value
        credit = value
        if BUG_ROUNDING in self._faults:
            credit = value.quantize(_CENT, rounding=ROUND_HALF_EVEN).quantize(debit)
        source["balance"] -= debit
        target["balance"] += credit
        receipt = {
            "txn_id": f"TX-{self._ids.randrange(16**8):08x}",
            "at": self._clock.tick(),
            "from_wallet": from_wallet,
            "to_wallet": to_wallet,
            "currency": source["currency"],
            "amount": str(value),
            "memo": memo,
            "status": "completed",
        }
        self._history.append(receipt)
        return dict(receipt)

    def history(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._history]

    def state(self) -> dict[str, Any]:
        return {
            "wallets": [{**w, "balance": str(w["balance"])} for w in self._wallets.values()],
            "history": self.history(),
            "now": self._clock.now().isoformat(),
        }
