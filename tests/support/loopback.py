"""The start/stop part every test HTTP server shares: 127.0.0.1, a daemon thread, ``with``.

:class:`~tests.support.openai_server.OpenAIServer`,
:class:`~tests.support.hostile_server.HostileServer` and
:class:`~tests.support.batch_server.BatchServer` differ in what they answer, not
in how they listen; each passes its request handler class to
:class:`LoopbackServer` and inherits the rest.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _HTTPServer(ThreadingHTTPServer):
    """Large listen backlog: benchmarks open many connections at once."""

    request_queue_size = 512
    daemon_threads = True


class _QuietHTTPServer(_HTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (killed, timed out) are the point of some tests, not errors."""


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (``port`` 0: a free one) served from a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, port: int = 0,
                 quiet_errors: bool = False) -> None:
        server_class = _QuietHTTPServer if quiet_errors else _HTTPServer
        self._httpd = server_class(("127.0.0.1", port), handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread (a server run as a script)."""
        self._httpd.serve_forever()

    def close_socket(self) -> None:
        """Close the listening socket of a server that was never started."""
        self._httpd.server_close()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
