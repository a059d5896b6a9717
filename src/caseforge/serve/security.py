"""The web app's guards: the Host names it answers, a token for non-loopback hosts, CSRF
and Origin checks on every state-changing request, and ``--read-only``.

- Host: every request (GETs too) must name this server in its ``Host`` header, or it is
  refused (403). That stops DNS rebinding, where a page on the attacker's name, rebound to
  this machine's address, would read and write through the victim's browser: its requests
  carry the attacker's name. On a loopback bind only the loopback names are answered; on
  any other bind also the machine's own names, any IP address (an address cannot be
  rebound) and each ``--allow-host``. :class:`HostNames`.
- Token: beyond loopback, the server prints a URL with a token. Visiting it trades the
  token for a random session id of that browser alone, kept in an HttpOnly, SameSite=Strict
  cookie; the token itself is never a cookie. The URL can be traded again (a team can share
  it) until ``--token-uses`` trades are used up. :class:`Guard`.
- CSRF: a random per-browser token in a cookie, which pages hand back in the
  ``X-CSRF-Token`` header (htmx sends it on every request); a POST must carry it and an
  ``Origin`` (or ``Referer``) naming this very server.
"""

from __future__ import annotations

import hmac
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from caseforge.errors import UsageError
from caseforge.network import host_name, host_of_header, is_address, is_loopback

SESSION_COOKIE = "caseforge_session"
CSRF_COOKIE = "caseforge_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")  # as the README and start-up say them


@dataclass(frozen=True)
class HostNames:
    """The names a request's ``Host`` header may give (any port): the loopback names
    always (``localhost`` and loopback addresses), then ``names``, and with
    ``any_address`` any IP address."""

    names: frozenset[str] = frozenset()  # spelled as caseforge.network.host_name does
    any_address: bool = False

    @classmethod
    def for_bind(cls, bind: str, allow: Iterable[str] = ()) -> HostNames:
        """What a server listening on ``bind`` answers: beyond loopback, also the machine's
        host name, its fully qualified name, the bound name and any address; and ``allow``
        (``--allow-host``) on any bind."""
        added = {_allowed(value) for value in allow}
        if is_loopback(bind):
            return cls(frozenset(added))
        machine = (socket.gethostname(), socket.getfqdn(), bind)
        found = {n for n in map(host_name, machine) if n is not None and not is_address(n)}
        return cls(frozenset(found | added), any_address=True)

    def allows(self, header: str) -> bool:
        """Whether a request whose ``Host`` header is ``header`` is answered."""
        host = host_of_header(header)
        if host is None:
            return False
        return is_loopback(host) or host in self.names or (self.any_address and is_address(host))

    def describe(self) -> str:
        """The names answered, for the start-up message."""
        shown = [*LOOPBACK_NAMES, *sorted(f"[{n}]" if ":" in n else n for n in self.names)]
        return ", ".join(dict.fromkeys(shown)) + (", any IP address" if self.any_address else "")


def _allowed(value: str) -> str:
    name = host_name(value)
    if name is None:
        bare = value.rpartition(":")[0]
        hint = " without a port" if bare and host_name(bare) is not None else ""
        raise UsageError(f"--allow-host {value!r}: give a host name or an IP address{hint}")
    return name


@dataclass(eq=False)
class Guard:
    """The settings the guards enforce, and the sessions the token was traded for."""

    token: str | None = None  # required when the server listens beyond loopback
    read_only: bool = False
    hosts: HostNames = field(default_factory=HostNames)
    token_uses: int | None = None  # how many times the token can be traded; None: any
    _sessions: set[str] = field(default_factory=set, init=False, repr=False)
    _traded: int = field(default=0, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def for_host(
        cls,
        host: str,
        read_only: bool = False,
        allow_hosts: Iterable[str] = (),
        token_uses: int | None = None,
    ) -> Guard:
        """The guard of a server listening on ``host``: a token beyond loopback, and the
        Host names :meth:`HostNames.for_bind` gives."""
        loopback = is_loopback(host)
        if token_uses is not None and token_uses < 1:
            raise UsageError(f"--token-uses must be 1 or more, not {token_uses}")
        if token_uses is not None and loopback:
            raise UsageError(
                f"--token-uses limits the token of a server listening beyond loopback; "
                f"on {host} there is no token (pass --host too, or leave --token-uses out)"
            )
        return cls(
            token=None if loopback else secrets.token_urlsafe(24),
            read_only=read_only,
            hosts=HostNames.for_bind(host, allow_hosts),
            token_uses=token_uses,
        )

    def trade(self, given: str) -> str | None:
        """A new session id for the right token while trades are left; else None."""
        if self.token is None or not _same(given, self.token):
            return None
        with self._lock:
            if self.token_uses is not None and self._traded >= self.token_uses:
                return None
            self._traded += 1
            session = secrets.token_urlsafe(32)
            self._sessions.add(session)
        return session

    def in_session(self, cookie: str) -> bool:
        """Whether ``cookie`` is a session id this server handed out."""
        with self._lock:
            return cookie in self._sessions

    @property
    def used_up(self) -> bool:
        with self._lock:
            return self.token_uses is not None and self._traded >= self.token_uses


class GuardMiddleware(BaseHTTPMiddleware):
    def __init__(self, app: object, guard: Guard) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self.guard = guard

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        guard = self.guard
        host = request.headers.get("host", "")
        if not guard.hosts.allows(host):
            return _refuse(
                403,
                f"refused: this caseforge server does not answer to the name {host!r} "
                "(`caseforge serve --allow-host NAME` adds a name)",
            )
        if guard.token is not None:
            refused = _session_refusal(request, guard)
            if refused is not None:
                return refused
        csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        request.state.csrf = csrf
        request.state.read_only = guard.read_only
        if request.method not in SAFE_METHODS:
            refusal = _refusal(request, csrf, guard.read_only)
            if refusal:
                return _refuse(403, refusal)
        response = await call_next(request)
        if CSRF_COOKIE not in request.cookies:
            response.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="strict")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
        )
        return response


def _session_refusal(request: Request, guard: Guard) -> Response | None:
    """None when the request belongs to a session; a redirect that sets the session cookie
    when it brings the token; else the refusal (401)."""
    in_session = guard.in_session(request.cookies.get(SESSION_COOKIE, ""))
    given = request.query_params.get("token")
    if given is not None:
        clean = str(request.url.remove_query_params("token"))
        if in_session:  # this browser traded already: no use of the token is spent
            return RedirectResponse(clean, status_code=303)
        session = guard.trade(given)
        if session is not None:
            response = RedirectResponse(clean, status_code=303)
            response.set_cookie(SESSION_COOKIE, session, httponly=True, samesite="strict")
            return response
        if guard.token is not None and _same(given, guard.token) and guard.used_up:
            return _refuse(
                401,
                f"this caseforge server's token was used {guard.token_uses} time(s) "
                "(--token-uses), which is all it allows: ask whoever started it to restart it "
                "for a new one",
            )
    if in_session:
        return None
    return _refuse(
        401, "this caseforge server needs its token: open the URL it printed at start-up"
    )


def _refuse(status: int, text: str) -> Response:
    return PlainTextResponse(
        text, status_code=status, headers={"X-Content-Type-Options": "nosniff"}
    )


def _same(given: str, expected: str) -> bool:
    """A constant-time comparison that takes any text (``hmac`` refuses non-ASCII str)."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _refusal(request: Request, csrf: str, read_only: bool) -> str | None:
    if read_only:
        return "this caseforge server is read-only (--read-only)"
    sent = request.headers.get(CSRF_HEADER, "")
    if CSRF_COOKIE not in request.cookies or not _same(sent, csrf):
        return "missing or wrong CSRF token: reload the page and try again"
    origin = request.headers.get("origin") or request.headers.get("referer") or ""
    parts = urlsplit(origin)
    own = request.headers.get("host", "")
    if not origin or parts.netloc != own or parts.scheme not in ("http", "https"):
        return f"refused: the request came from {origin or 'an unknown origin'}, not this server"
    return None
