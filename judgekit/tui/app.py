"""The annotate app, built by :func:`make_app` from a store, a rubric and a queue.

The CLI and the tests build the app the same way, so what the tests drive with
Textual's pilot is exactly what an annotator runs.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from textual.app import App

from judgekit.errors import InputError, StoreError
from judgekit.store import QueueEntry, Store
from judgekit.textsafe import one_line
from judgekit.tui.keys import scale_bindings
from judgekit.tui.screens import LabelScreen
from judgekit.tui.session import JudgeView, Key, LabelingSession
from judgekit.types import DEFAULT_VARIANT, Judgment, Rubric, majority_label, primary_model


class AnnotateApp(App[None]):
    """Shows the labeling screen for one session; quitting goes through the save path."""

    ENABLE_COMMAND_PALETTE = False
    TITLE = "judgekit annotate"

    def __init__(self, session: LabelingSession) -> None:
        super().__init__()
        self.animation_level = "none"  # scrolling jumps: an animated End took a second
        self.session = session
        self.sub_title = one_line(f"{session.rubric.name} · {session.annotator}")
        bindings = scale_bindings(session.rubric.scale)
        self._screen_class = type("LabelScreen", (LabelScreen,), {"BINDINGS": bindings})

    def on_mount(self) -> None:
        self.push_screen(self.first_screen())

    def first_screen(self) -> LabelScreen:
        """The labeling screen this app opens on."""
        return self._screen_class(self.session)

    @property
    def label_screen(self) -> LabelScreen:
        """The labeling screen (the bottom of the stack once mounted)."""
        for screen in self.screen_stack:
            if isinstance(screen, LabelScreen):
                return screen
        raise LookupError("the labeling screen is not mounted yet")

    async def action_quit(self) -> None:
        """ctrl+q: leave through the labeling screen so queued labels are committed first."""
        try:
            screen = self.label_screen
        except LookupError:
            self.exit()
            return
        screen.action_quit()


def load_judge_views(store: Store, rubric: Rubric, datasets: Iterable[str]) -> dict[Key, JudgeView]:
    """The primary judge's majority verdict per item (with the reasoning of one sample).

    The primary judge is the model with the most successful judgments; only the
    item as written counts (no probe variants).
    """
    judgments: list[Judgment] = []
    for dataset in sorted(set(datasets)):
        judgments.extend(
            j for j in store.judgments(rubric_hash=rubric.sha256, dataset=dataset,
                                       variant=DEFAULT_VARIANT)
            if j.status == "ok" and j.label is not None
        )
    if not judgments:
        return {}
    primary = primary_model(Counter(j.model_requested for j in judgments))
    by_item: dict[Key, list[Judgment]] = defaultdict(list)
    for j in judgments:
        if j.model_requested == primary:
            by_item[(j.dataset, j.item_id)].append(j)
    views: dict[Key, JudgeView] = {}
    for key, samples in by_item.items():
        samples.sort(key=lambda j: j.sample_index)
        label = majority_label([j.label for j in samples if j.label is not None])
        verdict = next(j for j in samples if j.label == label)
        assert verdict.label is not None
        views[key] = JudgeView(verdict.label, verdict.reasoning, primary)
    return views


def make_app(
    store: Store,
    rubric: Rubric,
    queue: str | Sequence[QueueEntry],
    *,
    annotator: str,
    show_judge: bool = False,
    dataset: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    notices: Sequence[str] = (),
    opinions: Mapping[Key, str] | None = None,
) -> AnnotateApp:
    """Build the annotate app for ``annotator`` over a queue (its stored name, or entries).

    Blind unless ``show_judge``: then the judge's verdict and reasoning are
    shown, agreement appears in the header, and every label records
    ``blind=False``. ``dataset`` keeps only that dataset's entries of the queue.
    ``notices`` (how the queue was drawn, earlier rubric versions) are shown in
    the app when it opens, and in its help. ``opinions`` (item -> what each
    annotator said) makes it an adjudication session: the labels given are
    stored as adjudicated (see :mod:`judgekit.review`); the judge is never shown.
    """
    if opinions is not None and show_judge:
        raise InputError("adjudication never shows the judge: drop --show-judge")
    if isinstance(queue, str):
        found = store.get_queue(queue)
        if found is None:
            raise StoreError(f"no labeling queue named {queue!r} in {store.path}")
        meta, entries = found
        if meta["rubric_hash"] != rubric.sha256:
            raise InputError(
                f"queue {queue!r} was drawn for another rubric version "
                f"(sha256 {meta['rubric_hash'][:12]}, this rubric {rubric.sha256[:12]})"
            )
    else:
        entries = list(queue)
    if dataset is not None:
        entries = [e for e in entries if e.dataset == dataset]
    if not entries:
        raise InputError("the labeling queue is empty: nothing to label")
    judge = (
        load_judge_views(store, rubric, (e.dataset for e in entries)) if show_judge else None
    )
    session = LabelingSession(
        store, rubric, entries, annotator=annotator, blind=not show_judge, judge=judge,
        clock=clock, notices=notices, opinions=opinions,
    )
    return AnnotateApp(session)
