"""One browser session's app: ``python -m judgekit.serve.session --db … --queue … --annotator …``.

Started by the web bridge (never by a person): the server has already checked the
session's token, chosen the annotator from it and checked the queue is theirs.
The app is always blind, exactly as ``judgekit annotate`` without ``--show-judge``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError
from judgekit.serve.session_launch import launch, stored_rubric

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.tui.app import AnnotateApp


def queue_app(store: Store, queue: str, annotator: str) -> AnnotateApp:
    """The blind annotate app over the stored queue ``queue``."""
    from judgekit.tui.app import make_app

    found = store.get_queue(queue)
    if found is None:
        raise JudgekitError(f"no labeling queue named {queue!r}")
    rubric = stored_rubric(store, found[0]["rubric_hash"],
                           f"queue {queue!r} names a rubric not in the store")
    store.note_queue_opened(queue, annotator)
    return make_app(store, rubric, queue, annotator=annotator, show_judge=False)


def main(argv: list[str] | None = None) -> int:
    return launch("judgekit.serve.session", "queue", queue_app, argv)


if __name__ == "__main__":
    sys.exit(main())
