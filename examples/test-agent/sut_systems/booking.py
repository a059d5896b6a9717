"""Seat booking for one show, with a deterministic scheduler for concurrent requests.

A booking request runs as a small coroutine with one yield point (where a real service
would wait on a payment hold). ``book_concurrently`` interleaves several requests step by
step, either in an explicit order (``schedule=[0, 1, 0, 1]``) or in an order drawn from
the system's seeded scheduler, so every interleaving is reproducible.

Planted bug ``double-booking-race``: the request checks that the seat is free, yields,
and then writes the booking (check-then-act). When two requests for one seat both check
before either writes, both succeed and the seat is sold twice. The fixed variant checks
and writes in one step after the yield point.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from datetime import datetime, timedelta
from typing import Any

from ._common import SimulatedSystem, make_rng

BUG_RACE = "double-booking-race"
BUG_IDS = (BUG_RACE,)

_TITLES = ("Đêm nhạc Sông Hương", "The Paper Lantern", "Vở kịch Chiếc Ô Xanh", "Midnight Ferry")

Step = Generator[None, None, dict[str, Any]]


class BookingError(Exception):
    """A request was malformed (unknown seat, bad schedule...)."""


class BookingSystem(SimulatedSystem):
    """Seats of one show; rows A-D always exist with at least seats 1-6 each."""

    name = "booking"
    bug_ids = BUG_IDS

    def __init__(
        self, *, seed: int, clock: datetime | str, faults: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(seed=seed, clock=clock, faults=faults)
        rng = make_rng(seed, "booking")
        self._ids = make_rng(seed, "booking-ids")
        self._scheduler = make_rng(seed, "booking-scheduler")
        rows, cols = rng.randint(5, 8), rng.randint(6, 12)
        self._seats = [f"{chr(ord('A') + r)}{c}" for r in range(rows) for c in range(1, cols + 1)]
        self._show = {
            "show_id": f"SH-{rng.randrange(1000, 10000)}",
            "title": rng.choice(_TITLES),
            "starts_at": (self._clock.now() + timedelta(days=rng.randint(3, 40))).isoformat(),
            "rows": rows,
            "seats_per_row": cols,
        }
        self._bookings: list[dict[str, Any]] = []
        self._taken: dict[str, str] = {}
        last_row = [s for s in self._seats if s.startswith(chr(ord("A") + rows - 1))]
        for seat in sorted(rng.sample(last_row, k=rng.randint(1, 4))):
            sold_at = self._clock.now() - timedelta(hours=rng.randint(1, 240))
            self._write(seat, f"box-office-{rng.randrange(100, 1000)}", sold_at.isoformat())

    def describe(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "summary": "Seat booking for one show. Concurrent requests are interleaved by a "
            "deterministic scheduler.",
            "operations": {
                "show()": "{show_id, title, starts_at, rows, seats_per_row}",
                "seats()": "all seat labels, e.g. 'C4'",
                "available()": "seats with no booking",
                "book(seat, customer)": "{ok, booking_id?, seat, customer, error?}",
                "book_concurrently([(seat, customer), ...], schedule=None)": "results in request "
                "order; schedule is an optional list of request indexes to step, then the "
                "seeded scheduler continues",
                "bookings(seat=None)": "confirmed bookings",
                "cancel(booking_id)": "cancel a booking",
                "state()": "JSON-able snapshot",
            },
        }

    def show(self) -> dict[str, Any]:
        return dict(self._show)

    def seats(self) -> list[str]:
        return list(self._seats)

    def available(self) -> list[str]:
        return [s for s in self._seats if s not in self._taken]

    def bookings(self, seat: str | None = None) -> list[dict[str, Any]]:
        return [dict(b) for b in self._bookings if seat is None or b["seat"] == seat]

    def _write(self, seat: str, customer: str, at: str | None = None) -> dict[str, Any]:
        record = {
            "booking_id": f"BK-{self._ids.randrange(16**6):06x}",
            "seat": seat,
            "customer": customer,
            "at": at or self._clock.tick(),
        }
        self._bookings.append(record)
        self._taken[seat] = record["booking_id"]
        return record

    def _request(self, seat: str, customer: str) -> Step:
        if seat not in self._seats:
            return {"ok": False, "seat": seat, "customer": customer, "error": "unknown seat"}
        if BUG_RACE in self._faults:
            free = seat not in self._taken
            yield  # waiting on the payment hold, with a stale answer in hand
            if not free:
                return {"ok": False, "seat": seat, "customer": customer, "error": "seat taken"}
            return {"ok": True, **self._write(seat, customer)}
        yield  # waiting on the payment hold
        if seat in self._taken:
            return {"ok": False, "seat": seat, "customer": customer, "error": "seat taken"}
        return {"ok": True, **self._write(seat, customer)}

    def book(self, seat: str, customer: str) -> dict[str, Any]:
        return self.book_concurrently([(seat, customer)])[0]

    def book_concurrently(
        self, requests: Sequence[Sequence[str]], schedule: Sequence[int] | None = None
    ) -> list[dict[str, Any]]:
        tasks: list[Step] = [self._request(str(seat), str(who)) for seat, who in requests]
        results: list[dict[str, Any] | None] = [None] * len(tasks)
        for index in schedule or ():
            if not 0 <= index < len(tasks):
                raise BookingError(f"schedule index {index} out of range")
            if results[index] is None:
                self._step(tasks, results, index)
        while True:
            runnable = [i for i, r in enumerate(results) if r is None]
            if not runnable:
                break
            self._step(tasks, results, self._scheduler.choice(runnable))
        return [dict(r) for r in results if r is not None]

    @staticmethod
    def _step(tasks: list[Step], results: list[dict[str, Any] | None], index: int) -> None:
        try:
            next(tasks[index])
        except StopIteration as done:
            results[index] = done.value

    def cancel(self, booking_id: str) -> dict[str, Any]:
        for i, booking in enumerate(self._bookings):
            if booking["booking_id"] == booking_id:
                del self._bookings[i]
                if self._taken.get(booking["seat"]) == booking_id:
                    del self._taken[booking["seat"]]
                    # another (duplicate) booking may still hold the seat
                    for other in self._bookings:
                        if other["seat"] == booking["seat"]:
                            self._taken[other["seat"]] = other["booking_id"]
                return {"ok": True, "booking_id": booking_id, "at": self._clock.tick()}
        return {"ok": False, "booking_id": booking_id, "error": "unknown booking"}

    def state(self) -> dict[str, Any]:
        return {
            "show": self.show(),
            "bookings": self.bookings(),
            "available": self.available(),
            "now": self._clock.now().isoformat(),
        }
