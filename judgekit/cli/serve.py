"""``judgekit serve``: the store as a service (JSON API, HTML report, annotate app in a browser).

Needs the ``serve`` extra (FastAPI, uvicorn, textual-serve). Binds to 127.0.0.1
unless ``--host`` says otherwise; beyond loopback it warns, because tokens travel in
clear unless TLS is terminated in front of it.
"""

from __future__ import annotations

import ipaddress
import logging
import socket

import click

from judgekit.cli._common import db_option, read_store
from judgekit.errors import InputError
from judgekit.serve.limits import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_REQUEST_TIMEOUT_S,
    DEFAULT_SESSIONS_PER_TOKEN,
    KEEP_ALIVE_S,
    WS_MAX_MESSAGE,
    ServeLimits,
    parse_size,
)

DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin(text: str) -> str:
    """``scheme://host[:port]`` as browsers send it in ``Origin``; an InputError else."""
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise InputError(f"--allow-origin must be scheme://host[:port], got {text!r}")
    return f"{parts.scheme}://{parts.netloc}".lower()


@click.command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback needs TLS in front of it.")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@click.option("--max-body", default="4MB", show_default=True, metavar="SIZE",
              help="Largest request body (e.g. 512KB, 4MB); a larger one is refused with 413.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="URL",
              help="Another origin (scheme://host[:port]) whose pages may POST and open "
              "sessions, e.g. the public URL of a proxy in front (repeatable).")
@click.option("--max-sessions", type=click.IntRange(1, 10_000), default=DEFAULT_MAX_SESSIONS,
              show_default=True,
              help="Most browser sessions open at once (each is one app process, ~40 MB).")
@click.option("--sessions-per-token", type=click.IntRange(1, 1000),
              default=DEFAULT_SESSIONS_PER_TOKEN, show_default=True,
              help="Most browser sessions one token may have open at once.")
@click.option("--idle-timeout", type=click.FloatRange(1.0, 7 * 86_400.0),
              default=DEFAULT_IDLE_S, show_default=True, metavar="SECONDS",
              help="Close a browser session without a key press for this long.")
@click.option("--forwarded-allow-ips", default="127.0.0.1", show_default=True, metavar="IPS",
              help="Comma-separated addresses of proxies whose X-Forwarded-Proto/-For headers "
              "are trusted (a proxy on the same machine: the default); '*' trusts any.")
@click.option("--max-connections", type=click.IntRange(1, 100_000),
              default=DEFAULT_MAX_CONNECTIONS, show_default=True,
              help="Most HTTP connections open at once; one more is closed at once.")
@click.option("--request-timeout", type=click.FloatRange(1.0, 3600.0),
              default=DEFAULT_REQUEST_TIMEOUT_S, show_default=True, metavar="SECONDS",
              help="A request's headers and body must arrive within this (else 408).")
@click.option("--report-timeout", type=click.FloatRange(1.0, 86_400.0), default=120.0,
              show_default=True, metavar="SECONDS",
              help="Answer 503 when a report, estimate or gate takes longer than this.")
@click.option("--max-report-builds", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Reports, estimates and gates built at once; one more is answered 503.")
def command(db: str, host: str, port: int, max_body: str, allow_origins: tuple[str, ...],
            max_sessions: int, sessions_per_token: int, idle_timeout: float,
            forwarded_allow_ips: str, max_connections: int, request_timeout: float,
            report_timeout: float, max_report_builds: int) -> None:
    """Serve the store to a team: API under /api/v1/, /report/RUBRIC, /annotate.

    Every request needs a token (judgekit tokens create --name NAME --role ROLE).
    Annotators log in once at /login in a browser (the token goes in a form,
    never in a URL) and label their assigned queue (judgekit queue assign); CI
    reads /api/v1/gate?rubric=NAME. Limits and what to put in front: docs/serve.md.
    """
    limits = ServeLimits(max_body=parse_size(max_body, "--max-body"),
                         allowed_origins=tuple(_origin(o) for o in allow_origins),
                         max_sessions=max_sessions, sessions_per_token=sessions_per_token,
                         idle_s=idle_timeout, secure_cookie=not is_loopback(host),
                         report_timeout_s=report_timeout, max_report_builds=max_report_builds)
    with read_store(db) as store:  # a missing or unreadable store fails here, in one line
        path = store.path
    try:
        import uvicorn

        from judgekit.serve.app import make_server_app
        from judgekit.serve.connections import install_filter, protocol_class
    except ImportError as exc:
        raise InputError(f"judgekit serve needs the serve extra: pip install 'judgekit[serve]' "
                         f"({exc.name} is missing)") from None
    if not is_loopback(host):
        click.echo(f"warning: listening on {host} without TLS: tokens and labels travel in "
                   "clear; put a TLS-terminating proxy in front of it", err=True)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    config = uvicorn.Config(make_server_app(path, limits=limits), host=host, port=port,
                            access_log=False, log_level="warning", proxy_headers=True,
                            forwarded_allow_ips=forwarded_allow_ips,
                            http=protocol_class(request_timeout, max_connections),
                            timeout_keep_alive=KEEP_ALIVE_S, ws_max_size=WS_MAX_MESSAGE)
    install_filter()  # after uvicorn set up its log handlers

    class AnnouncingServer(uvicorn.Server):
        """Says where it listens once the socket is bound (``--port 0`` picks one)."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.servers:
                bound = self.servers[0].sockets[0].getsockname()[1]
                click.echo(f"serving {path} on http://{host}:{bound} "
                           "(API /api/v1/, report /report/RUBRIC, annotate /annotate)", err=True)

    AnnouncingServer(config).run()
