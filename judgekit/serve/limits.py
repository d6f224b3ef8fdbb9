"""What one ``judgekit serve`` lets a request, a connection and a browser session cost.

A service on a team's network meets slow, huge and many requests, by mistake or not;
each limit below bounds one of them, is a ``judgekit serve`` option, and is listed
in docs/serve.md ("Security model"). The defaults suit a team of a few dozen people.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from judgekit.errors import InputError

#: Default cap on a request body: a POST of 5,000 labels with notes fits in it.
DEFAULT_MAX_BODY = 4 * 1024 * 1024
#: Cap on the login form's body (one token).
LOGIN_MAX_BODY = 4096
#: Default caps on live browser sessions (one app process each).
DEFAULT_MAX_SESSIONS = 32
DEFAULT_SESSIONS_PER_TOKEN = 3
#: A browser session without a key press or resize for this long is closed.
DEFAULT_IDLE_S = 30 * 60.0
#: How often a live session checks that its token is still active.
REVOCATION_CHECK_S = 2.0
#: Largest terminal a session may ask for (columns, rows): the app's memory grows with it.
MAX_COLUMNS = 400
MAX_ROWS = 200
#: Connections and their timeouts (uvicorn): open connections at once, seconds for a
#: request's headers and body to arrive, seconds an idle keep-alive connection is kept.
DEFAULT_MAX_CONNECTIONS = 200
DEFAULT_REQUEST_TIMEOUT_S = 15.0
KEEP_ALIVE_S = 5
#: Largest websocket message of a browser session (key presses and resizes are tiny).
WS_MAX_MESSAGE = 64 * 1024

_SIZE = re.compile(r"^\s*(\d+)\s*(b|kb|kib|k|mb|mib|m|gb|gib|g)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2,
          "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3}


def parse_size(text: str, option: str = "--max-body") -> int:
    """Bytes from ``4MB``, ``512k``, ``1048576`` (binary units); an :class:`InputError` else."""
    found = _SIZE.match(text)
    if found is None:
        raise InputError(f"{option} must be a size such as 4MB, 512KB or 1048576, got {text!r}")
    size = int(found.group(1)) * _UNITS[(found.group(2) or "").lower()]
    if size < 1024:
        raise InputError(f"{option} must be at least 1KB, got {text!r}")
    return size


def describe_size(size: int) -> str:
    """``4 MiB``, ``512 KiB`` or ``1500 bytes``: a limit as an error names it."""
    for unit, name in ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size:,} bytes"


@dataclass(frozen=True)
class ServeLimits:
    """The limits of one server (``judgekit serve`` options; tests lower them)."""

    max_body: int = DEFAULT_MAX_BODY
    #: Origins besides the server's own that may send state-changing requests and open
    #: websockets (a proxy's public origin, e.g. ``https://judgekit.example``).
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
    max_sessions: int = DEFAULT_MAX_SESSIONS
    sessions_per_token: int = DEFAULT_SESSIONS_PER_TOKEN
    idle_s: float = DEFAULT_IDLE_S
    revocation_check_s: float = REVOCATION_CHECK_S
    #: ``Secure`` on the login cookie: None decides per request (https or not loopback).
    secure_cookie: bool | None = None
    #: Report builds (gate, estimate, reports): at most this many at once, each answered
    #: within this many seconds (else 503; :mod:`judgekit.serve.report_builds`).
    max_report_builds: int = 2
    report_timeout_s: float = 120.0


__all__ = ["DEFAULT_MAX_BODY", "ServeLimits", "describe_size", "parse_size"]
