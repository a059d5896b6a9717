"""A multi-tenant document store: each tenant sees only its own records.

A caller opens a session as one tenant and lists (paginated), searches by title prefix, or
fetches records by id. Every tenant owns at least one record starting with each title word
in ``TITLE_WORDS``, so a prefix search always has rows in other tenants to leak.

Planted bug ``cross-tenant-leak``: ``search(prefix)`` filters on the title prefix but
forgets the tenant filter, so it returns rows owned by other tenants. Listing and
fetching by id stay correct. The fixed variant filters every query by tenant.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ._common import SimulatedSystem, make_rng

BUG_LEAK = "cross-tenant-leak"
BUG_IDS = (BUG_LEAK,)

TENANTS = {
    "t-hoasen": "Hoa Sen Studio",
    "t-songda": "Song Da Logistics",
    "t-bluefin": "Bluefin Analytics",
}
TITLE_WORDS = ("Invoice", "Hợp đồng", "Quote", "Báo giá", "Purchase order", "Biên bản")


class RecordNotFound(Exception):
    """No record with that id is visible to this tenant."""


class TenantError(Exception):
    """Unknown tenant or a malformed query."""


class TenantSystem(SimulatedSystem):
    """Records of three fixed tenants; the number and titles of records depend on the seed."""

    name = "tenant"
    bug_ids = BUG_IDS

    def __init__(
        self, *, seed: int, clock: datetime | str, faults: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(seed=seed, clock=clock, faults=faults)
        rng = make_rng(seed, "tenant")
        now = self._clock.now()
        used: set[str] = set()
        self._records: list[dict[str, Any]] = []
        for tenant in TENANTS:
            words = list(TITLE_WORDS) + [rng.choice(TITLE_WORDS) for _ in range(rng.randint(1, 8))]
            for word in words:
                record_id = f"R{rng.randrange(10_000, 100_000)}"
                while record_id in used:
                    record_id = f"R{rng.randrange(10_000, 100_000)}"
                used.add(record_id)
                created = now - timedelta(days=rng.randint(0, 120), minutes=rng.randint(0, 1439))
                self._records.append(
                    {
                        "record_id": record_id,
                        "tenant": tenant,
                        "title": f"{word} {rng.randint(100, 999)}",
                        "created_at": created.isoformat(),
                    }
                )
        self._records.sort(key=lambda r: (r["created_at"], r["record_id"]), reverse=True)

    def describe(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "summary": "Multi-tenant records; open a session as a tenant, then list, search "
            "or get records.",
            "operations": {
                "tenants()": "list of {tenant_id, name}",
                "session(tenant_id)": "a TenantSession",
                "TenantSession.list(page=1, page_size=5)": "{items, page, page_size, total}",
                "TenantSession.search(prefix, limit=50)": "records whose title starts with "
                "prefix (case-insensitive)",
                "TenantSession.get(record_id)": "one record; raises RecordNotFound",
                "state()": "JSON-able snapshot",
            },
        }

    def tenants(self) -> list[dict[str, str]]:
        return [{"tenant_id": tid, "name": name} for tid, name in TENANTS.items()]

    def session(self, tenant_id: str) -> TenantSession:
        if tenant_id not in TENANTS:
            raise TenantError(f"unknown tenant {tenant_id!r}")
        return TenantSession(self, tenant_id)

    def _rows(self) -> list[dict[str, Any]]:
        return self._records

    def state(self) -> dict[str, Any]:
        return {
            "tenants": self.tenants(),
            "records": [dict(r) for r in self._records],
            "now": self._clock.now().isoformat(),
        }


class TenantSession:
    """Queries as one tenant."""

    def __init__(self, system: TenantSystem, tenant_id: str) -> None:
        self._system = system
        self.tenant_id = tenant_id

    def _own(self) -> list[dict[str, Any]]:
        return [r for r in self._system._rows() if r["tenant"] == self.tenant_id]

    def list(self, page: int = 1, page_size: int = 5) -> dict[str, Any]:
        if page < 1 or not 1 <= page_size <= 100:
            raise TenantError("page must be >= 1 and page_size within 1..100")
        rows = self._own()
        start = (page - 1) * page_size
        return {
            "items": [dict(r) for r in rows[start : start + page_size]],
            "page": page,
            "page_size": page_size,
            "total": len(rows),
        }

    def search(self, prefix: str, limit: int = 50) -> list[dict[str, Any]]:
        if not isinstance(prefix, str):
            raise TenantError("prefix must be a string")
        wanted = prefix.casefold()
        # the planted bug: the tenant filter is skipped on this one query path
        rows = self._system._rows() if BUG_LEAK in self._system._faults else self._own()
        hits = [r for r in rows if r["title"].casefold().startswith(wanted)]
        return [dict(r) for r in hits[: max(0, limit)]]

    def get(self, record_id: str) -> dict[str, Any]:
        for row in self._own():
            if row["record_id"] == record_id:
                return dict(row)
        raise RecordNotFound(f"record {record_id!r} not found")
