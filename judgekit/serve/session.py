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

    from judgekit.rubrics import rubric_from_text
    from judgekit.store import open_store
    from judgekit.tui.app import make_app

    try:
        with open_store(args.db) as store:
            found = store.get_queue(args.queue)
            if found is None:
                raise JudgekitError(f"no labeling queue named {args.queue!r}")
            sha = found[0]["rubric_hash"]
            text = store.get_rubric_text(sha)
            if text is None:
                raise JudgekitError(f"queue {args.queue!r} names a rubric not in the store")
            rubric = rubric_from_text(text, path=f"<store:{sha[:12]}>")
            store.note_queue_opened(args.queue, args.annotator)
            app = make_app(store, rubric, args.queue, annotator=args.annotator, show_judge=False)
            app.run()
            return int(app.return_code or 0)
    except JudgekitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
