"""Fixtures: external responses recorded verbatim per case, replayed on later runs.

``SUITE/fixtures/<case_id>.json`` holds, for each request an agent made (identified by the
service name and the canonical JSON of the request), the responses in the order they came.
In ``replay`` mode the n-th identical request of a trial gets the n-th recorded response;
a request with no recording is an error for that case-trial that names the case and the
request — never a silent live call. In ``record`` mode the real call is made and its
response stored. ``off`` makes real calls and stores nothing.
"""

from __future__ import annotations

import base64
import inspect
import json
from collections import defaultdict
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Required, TypedDict, cast

import httpx

from caseforge.errors import CaseforgeError
from caseforge.files import write_atomic

FIXTURES_DIR = "fixtures"


class FixtureMode(StrEnum):
    RECORD = "record"
    REPLAY = "replay"
    OFF = "off"


class FixtureMissingError(CaseforgeError):
    """Replay mode met a request that was never recorded for this case."""


class Recording(TypedDict):
    """One request of a case's fixtures file and its responses, in the order they came."""

    service: str
    request: object  # JSON-able: what the agent passed as the request
    responses: list[object]  # what the call returned, verbatim (JSON)


# (service, request, index, response): a response recorded during one case-trial.
Recorded = tuple[str, object, int, object]


class FixturesUsed(TypedDict):
    """How one case-trial used the fixtures: the mode, and each request replayed, recorded
    or missing, in call order (``report.model.FixtureUse`` once stored)."""

    mode: str
    replayed: list[str]
    recorded: list[str]
    missing: list[str]


def request_key(service: str, request: object) -> str:
    """The canonical identity of a request: service plus sorted-key JSON."""
    return service + " " + json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)


class FixtureStore:
    """The fixtures of one suite, read lazily per case and written atomically."""

    def __init__(
        self,
        suite_dir: Path,
        mode: FixtureMode,
        folder: Path | None = None,
        record_hint: str = "run with --fixtures record to record them",
    ) -> None:
        self.folder = folder or suite_dir / FIXTURES_DIR
        self.mode = mode
        self.record_hint = record_hint  # how to record what replay lacks, for its error
        # case id -> request key -> {"service", "request", "responses": [...]}
        self._cache: dict[str, dict[str, Recording]] = {}
        self._dirty: set[str] = set()

    @staticmethod
    def default_mode(suite_dir: Path) -> FixtureMode:
        """``replay`` when the suite has recorded fixtures, else ``off``."""
        folder = suite_dir / FIXTURES_DIR
        has_any = folder.is_dir() and any(folder.glob("*.json"))
        return FixtureMode.REPLAY if has_any else FixtureMode.OFF

    def path(self, case_id: str) -> Path:
        return self.folder / f"{case_id}.json"

    def recordings(self, case_id: str) -> dict[str, Recording]:
        """The recordings of a case, by request key."""
        if case_id not in self._cache:
            path = self.path(case_id)
            data: dict[str, Recording] = {}
            # Recording replaces a case's recordings: start from nothing, not the old file.
            if path.is_file() and self.mode is not FixtureMode.RECORD:
                try:
                    items = json.loads(path.read_text(encoding="utf-8"))["recordings"]
                    for item in items:
                        data[request_key(item["service"], item["request"])] = item
                except (ValueError, KeyError, TypeError) as exc:
                    raise CaseforgeError(
                        f"{path}: not a fixtures file ({type(exc).__name__}: {exc}); "
                        "re-record it with --fixtures record"
                    ) from None
            self._cache[case_id] = data
        return self._cache[case_id]

    def session(self, case_id: str) -> FixtureSession:
        """A per-trial view that counts repeated requests."""
        return FixtureSession(self, case_id)

    def record(
        self, case_id: str, service: str, request: object, index: int, response: object
    ) -> None:
        """Keep the ``index``-th response to this request (the first recording wins)."""
        key = request_key(service, request)
        entry = self.recordings(case_id).setdefault(
            key, {"service": service, "request": request, "responses": []}
        )
        if index == len(entry["responses"]):
            entry["responses"].append(response)
            self._dirty.add(case_id)

    def flush(self) -> None:
        """Write every case whose recordings changed."""
        for case_id in sorted(self._dirty):
            entries = [self._cache[case_id][key] for key in sorted(self._cache[case_id])]
            text = json.dumps(
                {"case_id": case_id, "recordings": entries}, ensure_ascii=False, indent=2
            )
            write_atomic(self.path(case_id), text + "\n")
        self._dirty.clear()


class FixtureSession:
    """Fixture access for one case-trial."""

    def __init__(self, store: FixtureStore, case_id: str) -> None:
        self.store = store
        self.case_id = case_id
        self.counts: dict[str, int] = defaultdict(int)
        self.missing: list[str] = []
        self.replayed: list[str] = []
        self.recorded: list[str] = []
        self.new_recordings: list[Recorded] = []
        self.per_turn = False  # a multi-turn case: recordings are keyed by turn too
        self.turn: int | None = None

    def use(self) -> FixturesUsed | None:
        """How this case-trial used the fixtures (None when it made no request through them):
        the mode, and each request replayed, recorded or missing, in call order."""
        if not (self.replayed or self.recorded or self.missing):
            return None
        return {
            "mode": self.store.mode.value,
            "replayed": self.replayed,
            "recorded": self.recorded,
            "missing": self.missing,
        }

    async def external(self, service: str, request: object, call: Callable[[], object]) -> object:
        if self.per_turn:  # a conversation: the same request in another turn is another one
            request = {"turn": self.turn, "request": request}
        key = request_key(service, request)
        index = self.counts[key]
        self.counts[key] += 1
        if self.store.mode is FixtureMode.REPLAY:
            entry = self.store.recordings(self.case_id).get(key)
            responses = entry["responses"] if entry else []
            if index >= len(responses):
                shown = key if len(key) <= 300 else key[:297] + "..."
                message = (
                    f"case {self.case_id}: no recorded response for {shown} "
                    f"(call #{index + 1}; fixtures are in replay mode, "
                    f"{self.store.record_hint})"
                )
                self.missing.append(message)
                raise FixtureMissingError(message)
            self.replayed.append(_shown(key, index))
            return responses[index]
        result = call()
        response = await result if inspect.isawaitable(result) else result
        if self.store.mode is FixtureMode.RECORD:
            self.store.record(self.case_id, service, request, index, response)
            self.new_recordings.append((service, request, index, response))
            self.recorded.append(_shown(key, index))
        return response


def _shown(key: str, index: int) -> str:
    """A request as ``show`` prints it: its key, cut to 200 characters, and its call number."""
    text = key if len(key) <= 200 else key[:197] + "..."
    return f"{text} (call #{index + 1})"


class _HTTPRecording(TypedDict, total=False):
    """An HTTP response as a fixtures file keeps it: the body as text, else base64."""

    status_code: Required[int]
    headers: Required[dict[str, str]]
    body: str
    body_b64: str


class FixtureTransport(httpx.AsyncBaseTransport):
    """An httpx transport that records and replays HTTP exchanges through a session."""

    def __init__(
        self, session: FixtureSession, real: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.session = session
        self.real = real or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        try:
            payload: object = json.loads(body) if body else None
        except ValueError:
            payload = base64.b64encode(body).decode("ascii")
        # The path, not the host: recordings replay against any base URL of the same API.
        path = request.url.raw_path.decode("ascii")
        described = {"method": request.method, "path": path, "body": payload}

        async def send() -> _HTTPRecording:
            response = await self.real.handle_async_request(request)
            content = await response.aread()
            stored: _HTTPRecording = {
                "status_code": response.status_code,
                "headers": {
                    k: v
                    for k, v in response.headers.items()
                    if k.lower() not in {"content-encoding", "transfer-encoding", "content-length"}
                },
            }
            try:
                stored["body"] = content.decode("utf-8")  # verbatim, readable in review
            except UnicodeDecodeError:
                stored["body_b64"] = base64.b64encode(content).decode("ascii")
            return stored

        # What send() returned, or its recording.
        stored = cast("_HTTPRecording", await self.session.external("http", described, send))
        content = (
            stored["body"].encode("utf-8")
            if "body" in stored
            else base64.b64decode(stored.get("body_b64", ""))
        )
        return httpx.Response(
            status_code=stored["status_code"],
            headers=stored["headers"],
            content=content,
            request=request,
        )

    async def aclose(self) -> None:
        await self.real.aclose()
