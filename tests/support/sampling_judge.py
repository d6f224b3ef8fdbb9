"""A judge whose answers vary between calls when it samples, for the voting tests.

Each item's response carries a script, ``[votes pass fail pass]``: the answers the judge
gives that item. How a call picks one is what temperature and seed do to a real model:

- temperature 0: always the first entry (greedy decoding);
- temperature above 0 with a seed: the entry the seed picks (one seed, one answer);
- temperature above 0 without a seed: the next entry, per item, in turn. K seedless calls of
  an item with a K-entry script therefore answer every entry once, in whatever order the
  concurrent calls arrive, so a vote over them is fixed and can be computed by hand.

An entry ``x`` is an answer that is no verdict (``parse_error``), ``!`` a refusal.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.support.openai_server import Reply, is_probe

SCRIPT = re.compile(r"\[votes ([^\]]+)\]")


def script(*answers: str) -> str:
    """The marker to put in an item's response: the answers its judge samples."""
    return f"[votes {' '.join(answers)}]"


def sampling_judge() -> Callable[[dict[str, Any]], Reply | str]:
    """The responder (one per server: it counts each item's seedless calls)."""
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Reply | str:
        if is_probe(body):
            return json.dumps({"reasoning": "ok", "verdict": "pass"})
        user = next((m["content"] for m in reversed(body.get("messages") or [])
                     if m["role"] == "user"), "")
        found = SCRIPT.search(user)
        answers = found.group(1).split() if found else ["pass"]
        if float(body.get("temperature") or 0) == 0:
            answer = answers[0]
        elif body.get("seed") is not None:
            answer = answers[int(body["seed"]) % len(answers)]
        else:
            with lock:
                turn = calls[user]  # per item (its prompt), whatever its script
                calls[user] += 1
            answer = answers[turn % len(answers)]
        if answer == "x":
            return "I would rather not say."
        if answer == "!":
            return Reply(None, refusal="I cannot judge this.")
        return json.dumps({"reasoning": "sampled", "verdict": answer})

    return respond
