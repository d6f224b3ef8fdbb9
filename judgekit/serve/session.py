"""One browser session's app: ``python -m judgekit.serve.session --db … --queue … --annotator …``.

Started by the web bridge (never by a person): the server has already checked the
session's token, chosen the annotator from it and checked the queue is theirs.
The app is always blind, exactly as ``judgekit annotate`` without ``--show-judge``.
"""

from __future__ import annotations

import argparse
import sys

from judgekit.errors import JudgekitError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="judgekit.serve.session")
    parser.add_argument("--db", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--annotator", required=True)
    args = parser.parse_args(argv)

    from judgekit.store import open_store
    from judgekit.tui.criteria_app import app_for_queue

    try:
        with open_store(args.db) as store:
            # a queue of a multi-criteria file opens every criterion on one screen
            app = app_for_queue(store, args.queue, annotator=args.annotator)
            store.note_queue_opened(args.queue, args.annotator)
            app.run()
            return int(app.return_code or 0)
    except JudgekitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
