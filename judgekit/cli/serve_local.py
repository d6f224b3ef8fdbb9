"""``judgekit serve-local``: run the bundled local judge standalone until Ctrl-C.

Useful to share one loaded model between several commands
(``judgekit judge --base-url URL --model smollm2-135m-instruct``). The port is
fixed by default: judgments are cached by endpoint URL, so a stable URL lets a
later session reuse them.
"""

from __future__ import annotations

import signal
from types import FrameType

import click

from judgekit.errors import LocalJudgeError
from judgekit.judging.local import LocalJudge

#: A fixed default port, so the endpoint URL (part of every cache key) is stable.
DEFAULT_PORT = 8421


@click.command("serve-local")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=DEFAULT_PORT,
              show_default=True,
              help="Port to listen on (0 = any free one). Keep it stable: cached judgments "
                   "are keyed by the endpoint URL.")
@click.option("--n-ctx", type=click.IntRange(min=256), default=2048, show_default=True,
              help="Context window in tokens.")
def command(host: str, port: int, n_ctx: int) -> None:
    """Serve the local judge (llama.cpp + SmolLM2-135M) on an OpenAI-compatible URL.

    Ctrl-C (SIGINT) or SIGTERM stops the server within a few seconds and exits 0.
    """
    judge = LocalJudge(host=host, port=port or None, n_ctx=n_ctx)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    # A process started in the background by a shell inherits SIGINT as ignored, and Python
    # then never raises KeyboardInterrupt: `kill -INT` would leave the server running.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        judge.start()
        click.echo(f"local judge serving at {judge.base_url} (model {judge.model})")
        click.echo(f"use it: judgekit judge --base-url {judge.base_url} --model {judge.model} "
                   "--rubric R --data FILE")
        click.echo("press Ctrl-C to stop")
        code = judge.wait()
    except KeyboardInterrupt:
        click.echo("stopping the local judge")
        judge.stop()
        click.echo("local judge stopped")
        return
    finally:
        judge.stop()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
    if code != 0:
        raise LocalJudgeError(f"the local judge server exited with code {code}")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a service manager stopping us) ends ``serve-local`` like Ctrl-C."""
    raise KeyboardInterrupt
