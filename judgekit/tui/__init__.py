"""The Textual annotate app (``judgekit annotate``): blind, durable, keyboard-only labeling.

Built with :func:`judgekit.tui.app.make_app`; nothing else in judgekit imports this package.
"""

from __future__ import annotations

from judgekit.tui.app import AnnotateApp, make_app
from judgekit.tui.session import LabelingSession

__all__ = ["AnnotateApp", "LabelingSession", "make_app"]
