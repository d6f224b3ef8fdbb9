"""How many browser sessions ``judgekit serve`` has open, as the store records it.

The server writes its live sessions to ``store_meta`` under :data:`SESSIONS_KEY`
with its pid at every open and close (:class:`judgekit.serve.sessions.SessionRegistry`);
``judgekit queues`` reads them from another process. A record whose server is no
longer running (killed, say) counts as no session. Needs no web dependency.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

from judgekit.store import Store

#: ``store_meta`` key of the live sessions of the server running on the store.
SESSIONS_KEY = "serve_sessions"


def open_sessions(store: Store) -> Counter[tuple[str, str]]:
    """Live browser sessions per (queue, annotator) (a dead server's: none)."""
    text = store.get_meta(SESSIONS_KEY)
    if not text:
        return Counter()
    try:
        found: Any = json.loads(text)
        if not _alive(int(found["pid"])):
            return Counter()
        return Counter((str(s["queue"]), str(s["annotator"])) for s in found["sessions"])
    except (ValueError, KeyError, TypeError):
        return Counter()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


__all__ = ["SESSIONS_KEY", "open_sessions"]
