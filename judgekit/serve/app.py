"""The ASGI application of ``judgekit serve``: API, HTML report, annotate app, OpenAPI.

Every route needs a token (see :mod:`judgekit.serve.auth`), the OpenAPI description
included: it names the store's endpoints, and a service reachable by a team should
not describe itself to strangers. Request logs carry the path only, never a query
string or a header.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from judgekit import __version__
from judgekit.errors import JudgekitError
from judgekit.serve import api, landing, login, webapp
from judgekit.serve.auth import StorePool, require, store_dependency
from judgekit.serve.caches import ServeCaches
from judgekit.serve.guard import ErrorResponse, RequestGuard
from judgekit.serve.limits import ServeLimits
from judgekit.serve.models import cut_line, error_lines
from judgekit.serve.report_builds import ReportBuilds
from judgekit.serve.sessions import SessionRegistry
from judgekit.store import Store
from judgekit.store.access import TokenRecord

log = logging.getLogger("judgekit.serve")


def make_server_app(db_path: Path, *, cache: bool = True,
                    limits: ServeLimits | None = None) -> FastAPI:
    """The service over the store at ``db_path`` (which must exist), within ``limits``.

    ``cache=False`` parses rubrics and indexes item ids on every label request
    (:mod:`judgekit.serve.caches`), the baseline ``benchmarks/bench_serve.py`` measures.
    """
    pool = StorePool(db_path)
    limits = limits or ServeLimits()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        sessions.clear()
        yield
        sessions.clear()
        builds.close()
        pool.close()

    app = FastAPI(
        lifespan=lifespan, title="judgekit", version=__version__, openapi_url=None, docs_url=None,
        redoc_url=None,
        description="Calibration service: labels, judgments, reports and the CI gate over "
        "one judgekit store. Every request needs `Authorization: Bearer <token>`.",
    )
    app.state.pool = pool
    app.state.caches = ServeCaches(enabled=cache)
    app.state.limits = limits
    app.state.sessions = sessions = SessionRegistry(pool, limits)
    app.state.report_builds = builds = ReportBuilds(
        pool, timeout_s=limits.report_timeout_s, max_builds=limits.max_report_builds)
    app.include_router(api.router)
    app.include_router(webapp.router)
    app.include_router(login.router)
    app.include_router(landing.router)  # "/": the lead's page (read and admin tokens)
    app.mount("/static/textual",
              webapp.TokenStaticFiles(directory=webapp.textual_serve_static()),
              name="textual-static")

    @app.get("/api/v1/openapi.json", include_in_schema=False)
    def openapi(_: Annotated[TokenRecord, Depends(require("read"))]) -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/report/{rubric}", response_class=HTMLResponse, summary="The HTML report")
    def html_report(store: Annotated[Store, Depends(store_dependency)],
                    _: Annotated[TokenRecord, Depends(require("read"))], rubric: str,
                    dataset: str | None = None) -> HTMLResponse:
        from judgekit.report import ReportOptions, build_report, render

        rub = api.stored_rubric(store, rubric)
        try:
            built = builds.run(lambda own: build_report(own, rub, ReportOptions(dataset=dataset)))
        except JudgekitError as exc:
            raise HTTPException(422, detail=str(exc).split("\n")) from None
        return HTMLResponse(render(built, "html"))

    @app.exception_handler(JudgekitError)
    async def judgekit_error(request: Request, exc: JudgekitError) -> JSONResponse:
        return ErrorResponse({"detail": [cut_line(line) for line in str(exc).split("\n")]},
                             status_code=422)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return ErrorResponse({"detail": error_lines(exc.errors())}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return ErrorResponse({"detail": exc.detail}, status_code=exc.status_code,
                             headers=getattr(exc, "headers", None))

    # before any body is read (inside the log line, so refusals are logged too)
    app.add_middleware(RequestGuard, pool=pool, limits=limits)

    @app.middleware("http")
    async def log_path_only(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        log.info("%s %s %s", request.method, request.url.path, response.status_code)
        return response

    return app
