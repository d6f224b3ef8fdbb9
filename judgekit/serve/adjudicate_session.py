"""One browser adjudication session's app:
``python -m judgekit.serve.adjudicate_session --db … --rubric SHA256 --annotator …``.

Started by the web bridge (never by a person) once the server has checked that the
session's token may adjudicate; the adjudicator is the token's name. It is
``judgekit annotate --adjudicate`` without the terminal: the items whose annotators
disagree or that someone flagged, each with what every annotator said (never the
judge), every label stored as an adjudication.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from judgekit.errors import InputError
from judgekit.serve.session_launch import launch, stored_rubric

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.tui.app import AnnotateApp


def adjudication_app(store: Store, sha256: str, annotator: str) -> AnnotateApp:
    """The annotate app over the items of rubric ``sha256`` that need an adjudication."""
    from judgekit.review import adjudication_queue, opinion_text, review_items
    from judgekit.tui.app import make_app

    rubric = stored_rubric(store, sha256, f"no rubric with sha256 {sha256[:12]} in the store")
    items = review_items(store, rubric)
    if not items:
        raise InputError(f"nothing to adjudicate for rubric {rubric.name!r}: no item "
                         "has disagreeing annotators or a flag")
    return make_app(store, rubric, adjudication_queue(items), annotator=annotator,
                    opinions={item.key: opinion_text(item.opinions) for item in items})


def main(argv: list[str] | None = None) -> int:
    return launch("judgekit.serve.adjudicate_session", "rubric", adjudication_app, argv,
                  help="the stored rubric's sha256")


if __name__ == "__main__":
    sys.exit(main())
