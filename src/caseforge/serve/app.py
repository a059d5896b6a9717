"""``create_app``: the web app over a catalog of suites and run stores."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from caseforge._version import __version__
from caseforge.errors import CaseforgeError
from caseforge.serve import api, pages
from caseforge.serve.catalog import Catalog, StoredDataError
from caseforge.serve.security import Guard, GuardMiddleware
from caseforge.stats.lazy import scipy_stats

STATIC = Path(__file__).parent / "static"
log = logging.getLogger(__name__)


def create_app(catalog: Catalog, guard: Guard | None = None) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        scipy_stats()  # imported once at start-up: 2 s that a first compare would wait for
        yield
        catalog.close()

    app = FastAPI(
        lifespan=lifespan,
        title="caseforge",
        version=__version__,
        description="Runs, trials, comparisons and labels of caseforge suites.",
        docs_url=None,  # served below, from the vendored Swagger UI
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.catalog = catalog
    app.add_middleware(GuardMiddleware, guard=guard or Guard())
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)

    @app.get("/api/docs", include_in_schema=False)
    def api_docs() -> HTMLResponse:
        """Swagger UI over the spec, offline: vendored, and started by a script file."""
        return HTMLResponse(DOCS_PAGE)

    @app.exception_handler(CaseforgeError)
    async def caseforge_error(request: Request, exc: CaseforgeError) -> Response:
        status = 404 if exc.text.startswith("no ") else 400
        if isinstance(exc, StoredDataError):
            status = 422
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": exc.text}, status_code=status)
        return pages.render(
            request, "error.html", status_code=status, status=status, message=exc.text
        )

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        """A query parameter, a path part or a body that does not validate: the API keeps
        FastAPI's 422 and its list of errors; a page is the styled 400 page, in one line."""
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)
        return pages.render(
            request, "error.html", status_code=400, status=400, message=_problems(exc)
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
        message = "no such page" if exc.status_code == 404 else str(exc.detail)
        return pages.render(
            request,
            "error.html",
            status_code=exc.status_code,
            status=exc.status_code,
            message=message,
        )

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        """A bug of ours: one line on the page (the log has the traceback), the header and
        the way back still there."""
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        message = (
            f"caseforge failed on this page ({type(exc).__name__}); "
            "the server's log has the details"
        )
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": message}, status_code=500)
        return pages.render(request, "error.html", status_code=500, status=500, message=message)

    return app


def _problems(exc: RequestValidationError) -> str:
    """FastAPI's validation errors in one line: ``query parameter page: Input should be
    greater than or equal to 1``."""
    kinds = {"query": "query parameter", "path": "path part", "body": "form field"}
    said = []
    for error in exc.errors():
        where = [str(part) for part in error.get("loc", ())]
        kind = kinds.get(where[0], where[0]) if where else "request"
        said.append(f"{kind} {'.'.join(where[1:])}: {error.get('msg', 'not valid')}".strip())
    return "; ".join(said) or "the request is not valid"


DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>caseforge API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/swagger/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/static/swagger/swagger-ui-bundle.js"></script>
<script src="/static/swagger-init.js"></script>
</body>
</html>
"""
