"""One browser session's app: ``python -m judgekit.serve.session --db … --queue … --annotator …``.

Started by the web bridge (never by a person): the server has already checked the
session's token, chosen the annotator from it and checked the queue is theirs.
The app is always blind, exactly as ``judgekit annotate`` without ``--show-judge``;
a queue drawn for a multi-criteria file opens every criterion on one screen.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from judgekit.serve.session_launch import launch

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.tui.app import AnnotateApp


def queue_app(store: Store, queue: str, annotator: str) -> AnnotateApp:
    """The blind annotate app over the stored queue ``queue``."""
    from judgekit.tui.criteria_app import app_for_queue

    app = app_for_queue(store, queue, annotator=annotator)
    store.note_queue_opened(queue, annotator)
    return app


def main(argv: list[str] | None = None) -> int:
    return launch("judgekit.serve.session", "queue", queue_app, argv)


if __name__ == "__main__":
    sys.exit(main())
