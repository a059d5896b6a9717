"""``create_app``: the web app over a catalog of suites and run stores."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from caseforge._version import __version__
from caseforge.errors import CaseforgeError
from caseforge.serve import api, pages
from caseforge.serve.catalog import Catalog
from caseforge.serve.security import Guard, GuardMiddleware
from caseforge.stats.lazy import scipy_stats

STATIC = Path(__file__).parent / "static"


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
        docs_url="/api/docs",
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.catalog = catalog
    app.add_middleware(GuardMiddleware, guard=guard or Guard())
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)

    @app.exception_handler(CaseforgeError)
    async def caseforge_error(request: Request, exc: CaseforgeError) -> Response:
        status = 404 if exc.text.startswith("no ") else 400
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": exc.text}, status_code=status)
        return pages.render(
            request, "error.html", status_code=status, status=status, message=exc.text
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

    return app
