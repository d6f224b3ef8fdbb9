"""One browser adjudication session's app:
``python -m judgekit.serve.adjudicate_session --db … --rubric SHA256 --annotator …``.

Started by the web bridge (never by a person) once the server has checked that the
session's token may adjudicate; the adjudicator is the token's name. It is
``judgekit annotate --adjudicate`` without the terminal: the items whose annotators
disagree or that someone flagged, each with what every annotator said (never the
judge), every label stored as an adjudication.
"""

from __future__ import annotations

import argparse
import sys

from judgekit.errors import InputError, JudgekitError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="judgekit.serve.adjudicate_session")
    parser.add_argument("--db", required=True)
    parser.add_argument("--rubric", required=True, help="the stored rubric's sha256")
    parser.add_argument("--annotator", required=True)
    args = parser.parse_args(argv)

    from judgekit.review import adjudication_queue, opinion_text, review_items
    from judgekit.rubrics import rubric_from_text
    from judgekit.store import open_store
    from judgekit.tui.app import make_app

    try:
        with open_store(args.db) as store:
            text = store.get_rubric_text(args.rubric)
            if text is None:
                raise JudgekitError(f"no rubric with sha256 {args.rubric[:12]} in the store")
            rubric = rubric_from_text(text, path=f"<store:{args.rubric[:12]}>")
            items = review_items(store, rubric)
            if not items:
                raise InputError(f"nothing to adjudicate for rubric {rubric.name!r}: no item "
                                 "has disagreeing annotators or a flag")
            app = make_app(store, rubric, adjudication_queue(items), annotator=args.annotator,
                           opinions={item.key: opinion_text(item.opinions) for item in items})
            app.run()
            return int(app.return_code or 0)
    except JudgekitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
