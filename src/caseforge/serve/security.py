"""The web app's guards: a token for non-loopback hosts, CSRF and Origin checks on every
state-changing request, and ``--read-only``.

- Token: printed at start-up, passed once as ``?token=``, then kept in an HttpOnly cookie.
- CSRF: a random per-browser token in a cookie, which pages hand back in the
  ``X-CSRF-Token`` header (htmx sends it on every request); a POST must carry it and an
  ``Origin`` (or ``Referer``) naming this very server.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from caseforge.network import is_loopback

TOKEN_COOKIE = "caseforge_token"
CSRF_COOKIE = "caseforge_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


@dataclass(frozen=True)
class Guard:
    token: str | None = None  # required when the server listens beyond loopback
    read_only: bool = False

    @classmethod
    def for_host(cls, host: str, read_only: bool = False) -> Guard:
        return cls(
            token=None if is_loopback(host) else secrets.token_urlsafe(24), read_only=read_only
        )


class GuardMiddleware(BaseHTTPMiddleware):
    def __init__(self, app: object, guard: Guard) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self.guard = guard

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        guard = self.guard
        if guard.token is not None:
            given = request.query_params.get("token")
            if given is not None and hmac.compare_digest(given, guard.token):
                clean = request.url.remove_query_params("token")
                response: Response = RedirectResponse(str(clean), status_code=303)
                response.set_cookie(TOKEN_COOKIE, guard.token, httponly=True, samesite="strict")
                return response
            cookie = request.cookies.get(TOKEN_COOKIE, "")
            if not hmac.compare_digest(cookie, guard.token):
                return PlainTextResponse(
                    "this caseforge server needs its token: open the URL it printed at start-up",
                    status_code=401,
                )
        csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        request.state.csrf = csrf
        request.state.read_only = guard.read_only
        if request.method not in SAFE_METHODS:
            refused = _refusal(request, csrf, guard.read_only)
            if refused:
                return PlainTextResponse(refused, status_code=403)
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


def _refusal(request: Request, csrf: str, read_only: bool) -> str | None:
    if read_only:
        return "this caseforge server is read-only (--read-only)"
    sent = request.headers.get(CSRF_HEADER, "")
    if CSRF_COOKIE not in request.cookies or not hmac.compare_digest(sent, csrf):
        return "missing or wrong CSRF token: reload the page and try again"
    origin = request.headers.get("origin") or request.headers.get("referer") or ""
    parts = urlsplit(origin)
    own = request.headers.get("host", "")
    if not origin or parts.netloc != own or parts.scheme not in ("http", "https"):
        return f"refused: the request came from {origin or 'an unknown origin'}, not this server"
    return None
