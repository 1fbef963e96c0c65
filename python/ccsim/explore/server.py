# SPDX-License-Identifier: MIT
"""The explorer's HTTP side: the Starlette app (the page, the catalog, run requests, job events)
and ``serve``, which runs it under uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from .catalog import Catalog, RequestError
from .jobs import Engine


def create_app(results: Path, experiments: Path, host: str = "127.0.0.1", workers: int = 2) -> Any:
    """The ASGI app (Starlette) over ``experiments`` (plans), writing runs under ``results``."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request as HttpRequest
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    from .page import PAGE

    catalog = Catalog(experiments)
    engine = Engine(results, workers)
    # Load what the first point needs (SciPy for the CI: ~2 s) now, not on the first request.
    from ccsim.experiment.stats import mean_ci

    mean_ci([1.0, 2.0])
    plotly_js: list[str] = []

    async def index(_: HttpRequest) -> Response:
        return HTMLResponse(PAGE)

    async def plotly(_: HttpRequest) -> Response:
        if not plotly_js:
            import plotly.offline

            plotly_js.append(plotly.offline.get_plotlyjs())
        return Response(plotly_js[0], media_type="application/javascript",
                        headers={"Cache-Control": "max-age=86400"})  # fmt: skip

    async def papers(_: HttpRequest) -> Response:
        return JSONResponse(catalog.describe())

    async def run(request: HttpRequest) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the request is not JSON"}, status_code=400)
        try:
            req = catalog.request(body)
        except RequestError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        job = engine.submit(req)
        return JSONResponse({"job": job.id})

    async def cancel(request: HttpRequest) -> Response:
        ok = engine.cancel(request.path_params["job"])
        return JSONResponse({"cancelled": ok}, status_code=200 if ok else 404)

    async def events(request: HttpRequest) -> Response:
        job = engine.jobs.get(request.path_params["job"])
        if job is None:
            return JSONResponse({"error": "no such job"}, status_code=404)

        async def stream() -> AsyncIterator[str]:
            i = 0
            while True:
                n = len(job.events)
                while i < n:
                    yield f"data: {json.dumps(job.events[i])}\n\n"
                    i += 1
                if job.finished and i >= len(job.events):
                    return
                if await request.is_disconnected():
                    job.cancelled = True
                    return
                await asyncio.sleep(0.01)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})  # fmt: skip

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        yield
        # Shutting down (Ctrl-C): stop every run within one progress report, so the server's
        # threads do not hold the process for the rest of a long run.
        engine.close()

    hosts = [host, "localhost", "127.0.0.1"] if host not in ("0.0.0.0", "::") else ["*"]
    app = Starlette(
        lifespan=lifespan,
        routes=[
            Route("/", index),
            Route("/plotly.min.js", plotly),
            Route("/api/papers", papers),
            Route("/api/run", run, methods=["POST"]),
            Route("/api/jobs/{job}/events", events),
            Route("/api/jobs/{job}/cancel", cancel, methods=["POST"]),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
    )
    app.state.engine = engine
    app.state.catalog = catalog
    return app


def serve(results: Path, experiments: Path, host: str = "127.0.0.1", port: int = 8765,
          workers: int = 2) -> None:  # fmt: skip
    """Serve the explorer until interrupted."""
    import uvicorn

    app = create_app(results, experiments, host, workers)
    shown = f"[{host}]" if ":" in host else host
    print(f"ccsim explore: http://{shown}:{port}/ (runs stored under {results}/; Ctrl-C stops)")
    uvicorn.run(app, host=host, port=port, log_level="warning")
