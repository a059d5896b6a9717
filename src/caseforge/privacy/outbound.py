"""What leaves the machine: the exact payload of a synthesis request, checked before it goes.

Every payload is written to the private store (``payloads/<run>.json``) whether it is sent,
blocked or only printed (``--dry-run``). Before any send it is compared with the original:

- ``structure`` mode (the default): the full overlap check (``overlap``) — no run of text,
  number, date, name or identifier of the original may appear in it, in any fold;
- ``substituted`` mode (an explicit per-suite opt-in): the payload *is* the original text with
  its identifiers swapped, so runs are expected; identifiers, numbers, dates and glossary
  terms are checked in every fold.

``substituted`` payloads go only to endpoints the suite allow-lists, matched on the scheme,
host and port of the base URL (for example a self-hosted model on the team's network).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from caseforge.errors import CaseforgeError
from caseforge.privacy.overlap import Finding, Original

SendMode = Literal["structure", "substituted"]
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass
class Payload:
    """One request as it would go on the wire (the chat messages and the answer schema)."""

    mode: SendMode
    endpoint: str | None
    model: str | None
    messages: list[dict[str, str]]
    schema: Mapping[str, object]
    parts: dict[str, str] = field(default_factory=dict)  # the user-supplied parts, checked

    def to_json(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "endpoint": self.endpoint,
            "model": self.model,
            "messages": self.messages,
            "response_schema": self.schema,
        }

    def render(self) -> str:
        """The payload as the dry run prints it."""
        return json.dumps(self.to_json(), ensure_ascii=False, indent=1)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    port = parts.port if parts.port is not None else _DEFAULT_PORTS.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def endpoint_allowed(endpoint: str, allowed: Iterable[str]) -> bool:
    """Whether ``endpoint``'s scheme, host and port equal one of ``allowed``'s."""
    here = _origin(endpoint)
    return bool(here[1]) and any(_origin(a) == here for a in allowed)


def check_payload(payload: Payload, original: Original) -> list[Finding]:
    """What the payload shares with the original (empty: it may go). The parts a person
    wrote (the domain, the shape, the flag meanings) are checked by name first, so a finding
    says which of them to rewrite; then the whole messages."""
    fields: list[tuple[str, str]] = [(f"payload.{k}", v) for k, v in payload.parts.items()]
    fields += [
        (f"payload.messages[{i}]", str(m.get("content", "")))
        for i, m in enumerate(payload.messages)
    ]
    if payload.mode == "structure":
        # default deny: a run of the original's wording is blocked however ordinary its
        # words (a rewrite is held to uncommon runs only: common words never leak)
        return original.findings(fields, ordinary_runs=True)
    return original.findings(fields, runs=False)


def require_allowed(payload: Payload, allowed: list[str]) -> None:
    """Refuse a substituted-text payload to an endpoint the suite does not allow-list."""
    if payload.mode != "substituted":
        return
    if payload.endpoint is None or not endpoint_allowed(payload.endpoint, allowed):
        listed = ", ".join(allowed) or "none"
        raise CaseforgeError(
            f"privacy.send is 'substituted' but {payload.endpoint or 'the default endpoint'} is "
            f"not in privacy.allowed_endpoints ({listed}): substituted text goes only to "
            "allow-listed endpoints (scheme, host and port)"
        )
